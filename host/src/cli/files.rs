//! The files a command reads and writes besides its report: modules
//! (`.wasm`, or `.wat` assembled), and replay files with the module they
//! name.

pub use crate::input::{read_module, same_file};
use crate::replay::bundle::Bundle;
use crate::replay::file::ReplayFile;
pub use crate::replay::file::Run;
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

/// The name of the replay file at `file` without `.weft.json` (or
/// `.json`): what the files made from it are named after.
pub fn replay_stem(file: &Path) -> String {
    let name = file
        .file_name()
        .map_or("failure".into(), |n| n.to_string_lossy().into_owned());
    name.strip_suffix(".weft.json")
        .or_else(|| name.strip_suffix(".json"))
        .unwrap_or(&name)
        .to_string()
}

/// A replay file and its module, loaded.
pub struct Loaded {
    /// The replay file.
    pub file: ReplayFile,
    /// The module's path (in a bundle: its file name).
    pub module: PathBuf,
    /// The module's bytes.
    pub wasm: Vec<u8>,
    /// Whether both came from a bundle.
    pub bundled: bool,
}

/// Loads the replay file or bundle at `path` and its module (`given`, if
/// the user named one).
pub fn load_replay(path: &Path, given: Option<PathBuf>) -> Result<Loaded> {
    if crate::replay::bundle::is_bundle(path) {
        if given.is_some() {
            anyhow::bail!(
                "`{}` is a bundle, which carries its module: --module is not needed",
                path.display()
            );
        }
        let bundle = Bundle::read(path)?;
        return Ok(Loaded {
            file: bundle.replay,
            module: PathBuf::from(bundle.module_name),
            wasm: bundle.wasm,
            bundled: true,
        });
    }
    let file = ReplayFile::load(path)?;
    let named = given.is_some();
    let module = recorded_module(&file, path, given);
    let wasm = read_recorded_module(&module, named)?;
    Ok(Loaded {
        file,
        module,
        wasm,
        bundled: false,
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
