//! The files a command reads and writes besides its report: modules
//! (`.wasm`, or `.wat` assembled), and replay files with the module they
//! name.

use super::args::OutputArgs;
pub use crate::input::{read_module, same_file};
use crate::replay::file::{FoundBy, ReplayFile};
pub use crate::replay::file::{Run, write_replay};
use crate::runtime::{ExecutionResult, Failure};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

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

/// Writes the replay file of `result` (of `run`) unless `output` says
/// not to; returns its path.
pub fn save_replay(
    output: &OutputArgs,
    run: Run<'_>,
    result: &ExecutionResult,
    failure: &Failure,
    found_by: FoundBy,
) -> Result<Option<PathBuf>> {
    if output.no_save {
        return Ok(None);
    }
    let path = output.save_failure.clone().unwrap_or_else(|| {
        let stem = run
            .module
            .file_stem()
            .map_or("module".into(), |s| s.to_string_lossy().into_owned());
        PathBuf::from(format!("{stem}.weft.json"))
    });
    if same_file(&path, run.module) {
        anyhow::bail!(
            "`{}` is the module itself: the replay file would overwrite it (choose another --save-failure)",
            path.display()
        );
    }
    write_replay(&path, run, result, failure, found_by)?;
    Ok(Some(path))
}
