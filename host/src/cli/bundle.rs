//! `weft bundle`: a replay file and its module in one file, for a bug
//! report.

use super::files::{Loaded, load_replay, replay_stem};
use crate::output_paths::{Kind, Outputs};
use crate::replay::bundle::{Bundle, EXTENSION};
use crate::replay::replay;
use anyhow::{Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};

/// Pack a replay file and its module into one compressed file (`BUG.weft`)
/// that `weft replay` and `weft minimize` take as it is: attach it to a
/// bug report. The replay is checked to reproduce first. (It is a tar
/// archive: `tar xzf BUG.weft` gives back the two files.)
#[derive(Args, Debug)]
pub struct BundleArgs {
    /// The replay file (`*.weft.json`).
    file: PathBuf,
    /// Where to write the bundle (default: beside the replay file,
    /// `<name>.weft`).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// The module, if not where the replay file records it.
    #[arg(long)]
    module: Option<PathBuf>,
}

pub fn run(args: BundleArgs) -> Result<u8> {
    let Loaded {
        file,
        module,
        wasm,
        bundled,
    } = load_replay(&args.file, args.module.clone())?;
    if bundled {
        anyhow::bail!("`{}` is a bundle already", args.file.display());
    }
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| bundle_path(&args.file));
    Outputs::new()
        .input("the replay file", &args.file)
        .input("the module", &module)
        .output("--output", Kind::Bundle, Some(&output))
        .check()?;
    replay(&file, &wasm).with_context(|| {
        format!(
            "`{}` does not replay, so a bundle of it would not either",
            args.file.display()
        )
    })?;
    let module_name = module
        .file_name()
        .map_or("module.wasm".into(), |n| n.to_string_lossy().into_owned());
    Bundle {
        replay: file,
        module_name,
        wasm,
    }
    .write(&output)?;
    let size = std::fs::metadata(&output).map_or(0, |m| m.len());
    eprintln!(
        "weft: bundled `{}` and its module into `{}` ({} KiB); it replays with: weft replay {}",
        args.file.display(),
        output.display(),
        size.div_ceil(1024),
        crate::report::text::shell_word(&output)
    );
    Ok(super::EXIT_PASS)
}

/// `dir/name.weft.json` becomes `dir/name.weft`.
fn bundle_path(file: &Path) -> PathBuf {
    file.with_file_name(format!("{}.{EXTENSION}", replay_stem(file)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundle_sits_beside_the_replay_file() {
        assert_eq!(
            bundle_path(Path::new("out/lu.weft.json")),
            Path::new("out/lu.weft")
        );
        assert_eq!(bundle_path(Path::new("bug.json")), Path::new("bug.weft"));
    }
}
