//! The files a command reads and writes besides its report: modules
//! (`.wasm`, or `.wat` assembled), and replay files with the module they
//! name.

use super::args::{ModuleArgs, OutputArgs};
use crate::execution::Setup;
use crate::replay::file::{FORMAT, FoundBy, ModuleRef, ReplayFile, VERSION};
use crate::runtime::{ExecutionResult, Failure};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// Whether `a` and `b` name the same existing file.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The module a replay file at `replay_path` runs: `given` if the user
/// named one, else the recorded path; when that is relative and not found
/// from here (it is relative to where the file was written), the recorded
/// path beside the replay file, then a file of the recorded name beside
/// it.
pub fn recorded_module(file: &ReplayFile, replay_path: &Path, given: Option<PathBuf>) -> PathBuf {
    given.unwrap_or_else(|| {
        let recorded = PathBuf::from(&file.module.path);
        if recorded.exists() || recorded.is_absolute() {
            return recorded;
        }
        let dir = replay_path.parent().unwrap_or(Path::new(""));
        [
            Some(dir.join(&recorded)),
            recorded.file_name().map(|name| dir.join(name)),
        ]
        .into_iter()
        .flatten()
        .find(|candidate| candidate.exists())
        .unwrap_or(recorded)
    })
}

/// Reads the module of a replay file, saying how to name it when it is
/// not where the file says (`named`: the user named it).
pub fn read_recorded_module(path: &Path, named: bool) -> Result<Vec<u8>> {
    if named {
        return read_module(path);
    }
    read_module(path).with_context(|| {
        format!(
            "the replay file's module is not at `{}`: name it with --module",
            path.display()
        )
    })
}

/// Reads a module file, assembling `.wat` text.
pub fn read_module(path: &Path) -> Result<Vec<u8>> {
    let bytes = crate::input::read_file(path, crate::input::MODULE_LIMIT)
        .with_context(|| format!("cannot read module `{}`", path.display()))?;
    if path.extension().is_some_and(|e| e == "wat") || bytes.starts_with(b"(") {
        return wat::parse_bytes(&bytes)
            .map(|b| b.into_owned())
            .with_context(|| format!("cannot assemble `{}`", path.display()));
    }
    Ok(bytes)
}

/// Writes the replay file of `result` unless told not to; returns its path.
pub fn save_replay(
    output: &OutputArgs,
    module: &ModuleArgs,
    wasm: &[u8],
    result: &ExecutionResult,
    failure: &Failure,
    found_by: FoundBy,
) -> Result<Option<PathBuf>> {
    if output.no_save {
        return Ok(None);
    }
    let path = output.save_failure.clone().unwrap_or_else(|| {
        let stem = module
            .module
            .file_stem()
            .map_or("module".into(), |s| s.to_string_lossy().into_owned());
        PathBuf::from(format!("{stem}.weft.json"))
    });
    if same_file(&path, &module.module) {
        anyhow::bail!(
            "`{}` is the module itself: the replay file would overwrite it (choose another --save-failure)",
            path.display()
        );
    }
    let run = Run {
        module: &module.module,
        wasm,
        instrument: module.instrument_options(),
        setup: module.run_config(),
    };
    write_replay(&path, run, result, failure, found_by)?;
    Ok(Some(path))
}

/// A module and how it was run, as a replay file records them.
pub struct Run<'a> {
    /// The module's path.
    pub module: &'a Path,
    /// Its bytes.
    pub wasm: &'a [u8],
    /// Its instrumentation.
    pub instrument: crate::instrument::InstrumentOptions,
    /// The setup of its executions.
    pub setup: Setup,
}

/// Writes the replay file of `result`'s `failure` to `path`.
pub fn write_replay(
    path: &Path,
    run: Run<'_>,
    result: &ExecutionResult,
    failure: &Failure,
    found_by: FoundBy,
) -> Result<()> {
    let file = ReplayFile {
        format: FORMAT.into(),
        version: VERSION,
        module: ModuleRef {
            path: run.module.display().to_string(),
            blake3: blake3::hash(run.wasm).to_hex().to_string(),
        },
        instrument: run.instrument,
        run: run.setup,
        found_by,
        decisions: result.decisions.clone(),
        values: result.values.clone(),
        trace_hash: result.trace_hash,
        failure: Some(failure.clone()),
    };
    std::fs::write(path, file.to_json())
        .with_context(|| format!("cannot write the replay file `{}`", path.display()))
}
