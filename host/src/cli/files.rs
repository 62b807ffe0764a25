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
/// named one, else the recorded path from the replay file's folder (where
/// replay files record it from), else from here (older replay files
/// recorded it from the directory weft ran in), else a file of the
/// recorded name beside the replay file.
pub fn recorded_module(file: &ReplayFile, replay_path: &Path, given: Option<PathBuf>) -> PathBuf {
    given.unwrap_or_else(|| {
        let recorded = PathBuf::from(&file.module.path);
        let dir = replay_path.parent().unwrap_or(Path::new(""));
        let beside = dir.join(&recorded);
        [
            Some(beside.clone()),
            Some(recorded.clone()),
            recorded.file_name().map(|name| dir.join(name)),
        ]
        .into_iter()
        .flatten()
        .find(|candidate| candidate.is_file())
        .unwrap_or(beside)
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
    let Some(path) = output.replay_path(run.module) else {
        return Ok(None);
    };
    if same_file(&path, run.module) {
        anyhow::bail!(
            "`{}` is the module itself: the replay file would overwrite it (choose another --save-failure)",
            path.display()
        );
    }
    write_replay(&path, run, result, failure, found_by)?;
    Ok(Some(path))
}
