//! `weft minimize`: the failure of a replay file under a smaller schedule.

use super::args::OutputArgs;
use super::files::{Loaded, load_replay, replay_stem};
use super::output::print_report;
use crate::output_paths::{Kind, Outputs};
use crate::replay::bundle::Bundle;
use crate::replay::file::{ModuleRef, ReplayFile, module_path_from};
use crate::replay::minimize::{MOST_TIME, budget, minimize_failure};
use crate::replay::{Replayed, replay};
use crate::report::text::Report;
use anyhow::{Context, Result, bail};
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Replay a saved failure, search for the same failure with the fewest
/// preemptions and steps, and save it as a new replay file.
#[derive(Args, Debug)]
pub struct MinimizeArgs {
    /// The replay file (`*.weft.json`) or bundle (`*.weft`); it is never
    /// changed.
    file: PathBuf,
    /// Where to write the minimized replay file (default: beside the input,
    /// `<name>.min.weft.json`; of a bundle, a bundle: `<name>.min.weft`).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// The module, if not at the path the file records.
    #[arg(long)]
    module: Option<PathBuf>,
    /// Print one JSON object on stdout instead of the human report.
    #[arg(long)]
    json: bool,
    /// Show every step of the interleaving, the guest's runtime included.
    #[arg(long)]
    full_trace: bool,
    /// Show the interleaving as a table with one column per thread.
    #[arg(long)]
    table: bool,
    /// Also write the report as a self-contained HTML page.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

pub fn run(args: MinimizeArgs) -> Result<u8> {
    let Loaded {
        file,
        module,
        wasm,
        bundled,
    } = load_replay(&args.file, args.module.clone())?;
    let output_path = args
        .output
        .clone()
        .unwrap_or_else(|| minimized_path(&args.file));
    if file.failure.is_none() {
        bail!(
            "`{}` records no failure: there is nothing to minimize",
            args.file.display()
        );
    }
    Outputs::new()
        .input("the replay file", &args.file)
        .input("the module", &module)
        .output(
            "--output",
            if bundled { Kind::Bundle } else { Kind::Replay },
            Some(&output_path),
        )
        .output("--html", Kind::Report, args.html.as_deref())
        .check()?;
    let start = Instant::now();
    let Replayed {
        mut result,
        failure,
        mut program,
    } = replay(&file, &wasm).with_context(|| format!("cannot replay `{}`", args.file.display()))?;
    let Some(mut failure) = failure else {
        bail!("`{}` no longer shows a failure", args.file.display());
    };
    let output = OutputArgs {
        json: args.json,
        save_failure: None,
        no_save: true,
        full_trace: args.full_trace,
        table: args.table,
        html: args.html.clone(),
        replay_tag: None,
        no_minimize: false,
    };
    let minimization = minimize_failure(
        &mut program,
        &file.run,
        &mut result,
        &mut failure,
        budget(MOST_TIME),
    );
    let minimized = ReplayFile {
        decisions: result.decisions.clone(),
        values: result.values.clone(),
        trace_hash: result.trace_hash,
        failure: Some(failure.clone()),
        ..file
    };
    let module_bytes = bundled.then_some(wasm.as_slice());
    write_minimized(minimized, &module, module_bytes, &output_path)?;
    let headline = match minimization {
        Some(_) => format!(
            "minimized the {} failure of `{}`",
            failure.kind.name(),
            args.file.display()
        ),
        // (Livelocks: the state that repeats is found under the fair
        // schedule that follows the step limit, and a shorter schedule
        // would move where that limit falls.)
        None => format!(
            "kept the {} failure of `{}` as it is: weft does not minimize the schedule of a {}, whose evidence is a state repeated after the step limit",
            failure.kind.name(),
            args.file.display(),
            failure.kind.name()
        ),
    };
    let report = Report {
        module: &module,
        wasm: &wasm,
        sites: program.sites(),
        executions: minimization.map_or(0, |m| m.executions),
        distinct_traces: 1,
        elapsed: start.elapsed(),
        headline,
        result: Some(&result),
        failure: Some(&failure),
        replay_file: Some(output_path),
        minimization,
        inconclusive: None,
        advice: None,
        extra: serde_json::json!({ "from": args.file }),
    };
    Ok(print_report(&report, &output))
}

/// Writes the `minimized` replay file of `module` to `path`: in a bundle
/// with the module's bytes when `bundled_module` has them, else naming the
/// module as seen from the file's folder.
fn write_minimized(
    minimized: ReplayFile,
    module: &Path,
    bundled_module: Option<&[u8]>,
    path: &Path,
) -> Result<()> {
    if let Some(wasm) = bundled_module {
        return Bundle {
            replay: minimized,
            module_name: module.display().to_string(),
            wasm: wasm.to_vec(),
        }
        .write(path);
    }
    let minimized = ReplayFile {
        module: ModuleRef {
            path: module_path_from(path, module).display().to_string(),
            ..minimized.module
        },
        ..minimized
    };
    std::fs::write(path, minimized.to_json())
        .with_context(|| format!("cannot write `{}`", path.display()))
}

/// `dir/name.weft.json` becomes `dir/name.min.weft.json`, a bundle
/// `dir/name.weft` becomes `dir/name.min.weft`.
fn minimized_path(file: &Path) -> PathBuf {
    let name = file
        .file_name()
        .map_or("failure".into(), |n| n.to_string_lossy().into_owned());
    if let Some(stem) = name.strip_suffix(".weft") {
        return file.with_file_name(format!("{stem}.min.weft"));
    }
    file.with_file_name(format!("{}.min.weft.json", replay_stem(file)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_minimized_file_sits_beside_the_input() {
        assert_eq!(
            minimized_path(Path::new("out/lu.weft.json")),
            Path::new("out/lu.min.weft.json")
        );
        assert_eq!(
            minimized_path(Path::new("bug.json")),
            Path::new("bug.min.weft.json")
        );
        assert_eq!(
            minimized_path(Path::new("out/bug.weft")),
            Path::new("out/bug.min.weft")
        );
    }
}
