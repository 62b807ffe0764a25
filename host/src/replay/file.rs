//! The replay file: everything needed to re-run one execution exactly.
//!
//! Layout (JSON, `version` 2; version 1 files hashed traces in another
//! encoding):
//! ```text
//! {
//!   "format": "weft-replay",        fixed marker
//!   "version": 2,                   bumped on any incompatible change
//!   "module": { "path": "...", "blake3": "<64 hex>" },
//!   "point_model": "library-calls" | "sync-internals",
//!                                   how library calls are scheduled (files
//!                                   written before it existed name none:
//!                                   theirs is the one `instrument` gives)
//!   "instrument": { "points": "sync" | "memory", "library_steps": true },
//!   "run": { "args": [...], "random_seed": 0, "limits": { ... } },
//!   "found_by": { "strategy": "random" | "pct", "seed": 7, "pct_depth": 3, "execution": 12 },
//!   "decisions": [0, 1, 1, ...],     thread chosen wherever several could run
//!   "values": [7, 0, ...],           the guest's nondeterministic values (if any)
//!   "trace_hash": "<32 hex>",        hash of the expected trace
//!   "failure": { "kind": "...", "message": "...", "thread": 0 }
//! }
//! ```
//! Replaying checks the module hash before running and the trace hash after;
//! either mismatch is reported, never silently accepted.

use crate::execution::Setup;
use crate::instrument::{InstrumentOptions, PointModel};
use crate::runtime::Failure;
use crate::sched::Strategy;
use crate::trace::{ThreadId, TraceHash};
use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The marker in the `format` field.
pub const FORMAT: &str = "weft-replay";

/// The version this build writes and reads. (4: instrumentation checks
/// every access to a shared memory, which changes where fuel runs out, so a
/// version-3 schedule may no longer fit. 6: with the race check, a
/// runtime's private plain accesses are no longer logged, which moves where
/// fuel runs out again.)
pub const VERSION: u32 = 6;

/// Which module a replay file belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModuleRef {
    /// Where the module is, relative to the replay file's folder (so that
    /// the two travel together, and a replay from any directory finds
    /// it); absolute when no relative path leads there. (Files written
    /// before this held the path relative to the directory weft ran in;
    /// `weft replay` tries that too.)
    pub path: String,
    /// blake3 hash of the module bytes, as 64 hex digits.
    pub blake3: String,
}

/// How the failing execution was found (informational: replay uses only the
/// decisions).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoundBy {
    /// Exploration strategy.
    pub strategy: Strategy,
    /// Seed of the failing execution's scheduler.
    pub seed: u64,
    /// PCT depth, where PCT was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pct_depth: Option<u32>,
    /// 1-based index of the execution within its exploration.
    pub execution: u64,
}

/// A saved failing (or any) execution.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`] for files this build writes.
    pub version: u32,
    /// The module.
    pub module: ModuleRef,
    /// The point model it was made with: always written now; a file
    /// written before names none, and its model is the one its
    /// instrumentation gives ([`PointModel::of`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point_model: Option<PointModel>,
    /// Instrumentation options.
    pub instrument: InstrumentOptions,
    /// Arguments, random seed and limits.
    pub run: Setup,
    /// How it was found.
    pub found_by: FoundBy,
    /// The schedule.
    pub decisions: Vec<ThreadId>,
    /// The guest's nondeterministic values (`weft.choose`), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<u64>,
    /// Hash of the expected trace.
    pub trace_hash: TraceHash,
    /// The failure the execution shows, if any.
    pub failure: Option<Failure>,
}

/// Errors reading a replay file.
#[derive(Debug, thiserror::Error)]
pub enum ReplayFileError {
    /// The file could not be read.
    #[error("cannot read `{path}`")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: crate::input::InputError,
    },
    /// The file is not valid JSON of the expected shape.
    #[error("`{path}` is not a weft replay file: {message}")]
    Malformed {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The file was made under a point model this build does not know.
    #[error(
        "`{path}` was made under the point model `{found}`, which this weft does not know (it knows {}): replay it with the weft that wrote it",
        known_models()
    )]
    UnknownModel {
        /// The file.
        path: String,
        /// The model it names.
        found: String,
    },
    /// The file has a version this build cannot read.
    #[error("`{path}` has replay format version {found}; this weft reads version {VERSION}")]
    Version {
        /// The file.
        path: String,
        /// Its version.
        found: u32,
    },
}

impl ReplayFile {
    /// Parses a replay file from JSON text; `path` is only used in errors.
    ///
    /// # Errors
    ///
    /// [`ReplayFileError::Malformed`] or [`ReplayFileError::Version`].
    pub fn parse(text: &str, path: &str) -> Result<Self, ReplayFileError> {
        let malformed = |message: String| ReplayFileError::Malformed {
            path: path.to_string(),
            message,
        };
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| malformed(e.to_string()))?;
        if value.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
            return Err(malformed(format!("missing `\"format\": \"{FORMAT}\"`")));
        }
        let version = match value.get("version") {
            None => return Err(malformed("missing `\"version\"`".into())),
            Some(v) => v
                .as_u64()
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| malformed(format!("`\"version\"` is {v}, not a version number")))?,
        };
        if version != VERSION {
            return Err(ReplayFileError::Version {
                path: path.to_string(),
                found: version,
            });
        }
        match value.get(PointModel::NAME_FIELD) {
            Some(serde_json::Value::String(name)) if PointModel::named(name).is_none() => {
                return Err(ReplayFileError::UnknownModel {
                    path: path.to_string(),
                    found: name.clone(),
                });
            }
            _ => {}
        }
        let file: ReplayFile =
            serde_json::from_value(value).map_err(|e| malformed(e.to_string()))?;
        if let Some(model) = file.point_model
            && model != PointModel::of(&file.instrument)
        {
            return Err(malformed(format!(
                "`\"{}\": \"{}\"` contradicts its `instrument` (`library_steps` is {})",
                PointModel::NAME_FIELD,
                model.name(),
                file.instrument.library_steps
            )));
        }
        if file.module.blake3.len() != 64
            || !file.module.blake3.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return Err(malformed("`module.blake3` is not 64 hex digits".into()));
        }
        Ok(file)
    }

    /// Reads and parses the replay file at `path`.
    ///
    /// # Errors
    ///
    /// Any [`ReplayFileError`].
    pub fn load(path: &Path) -> Result<Self, ReplayFileError> {
        let shown = path.display().to_string();
        let text = crate::input::read_text(path, crate::input::TEXT_LIMIT).map_err(|source| {
            if let crate::input::InputError::NotText = source {
                ReplayFileError::Malformed {
                    path: shown.clone(),
                    message: what_binary_it_is(path).into(),
                }
            } else {
                ReplayFileError::Io {
                    path: shown.clone(),
                    source,
                }
            }
        })?;
        Self::parse(&text, &shown)
    }

    /// The file as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a replay file always serialises")
    }
}

/// The models this build knows, as an error names them.
fn known_models() -> String {
    let names: Vec<String> = PointModel::ALL
        .iter()
        .map(|model| format!("`{}`", model.name()))
        .collect();
    names.join(" and ")
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
    result: &crate::runtime::ExecutionResult,
    failure: &Failure,
    found_by: FoundBy,
) -> anyhow::Result<()> {
    let file = ReplayFile {
        format: FORMAT.into(),
        version: VERSION,
        module: ModuleRef {
            path: module_path_from(path, run.module).display().to_string(),
            blake3: blake3::hash(run.wasm).to_hex().to_string(),
        },
        point_model: Some(PointModel::of(&run.instrument)),
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

/// The path of `module` as seen from the folder of the replay file at
/// `replay`: relative when one leads there, else absolute, else as given.
pub fn module_path_from(replay: &Path, module: &Path) -> std::path::PathBuf {
    let folder = match replay.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    let (Ok(folder), Ok(module_abs)) =
        (std::fs::canonicalize(folder), std::fs::canonicalize(module))
    else {
        return module.to_path_buf();
    };
    pathdiff::diff_paths(&module_abs, &folder).unwrap_or(module_abs)
}

/// Why the binary file at `path` is no replay file, from its first bytes:
/// a module, a tar archive (an unpacked-by-half bundle), or other data.
fn what_binary_it_is(path: &Path) -> &'static str {
    let mut head = [0u8; 262];
    let read = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .unwrap_or(0);
    if head[..read].starts_with(b"\0asm") {
        "it is a wasm module, not a replay file (replay files are JSON; `weft replay --module` takes the module)"
    } else if read >= 262 && &head[257..262] == b"ustar" {
        "it is a tar archive, not a replay file: a bundle is a gzip-compressed tar archive (`tar xf` it, or `gzip` it again)"
    } else {
        "it is not text, and replay files are JSON text"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::FailureKind;

    fn sample() -> ReplayFile {
        ReplayFile {
            format: FORMAT.into(),
            version: VERSION,
            module: ModuleRef {
                path: "m.wasm".into(),
                blake3: "ab".repeat(32),
            },
            point_model: Some(PointModel::SyncInternals),
            instrument: InstrumentOptions::default(),
            run: Setup::default(),
            found_by: FoundBy {
                strategy: Strategy::Pct,
                seed: 9,
                pct_depth: Some(3),
                execution: 4,
            },
            decisions: vec![0, 1, 1, 2, 0],
            values: vec![42, 7],
            trace_hash: TraceHash([7; 16]),
            failure: Some(Failure {
                kind: FailureKind::Deadlock,
                message: "deadlock".into(),
                thread: 0,
            }),
        }
    }

    #[test]
    fn round_trips() {
        let file = sample();
        assert_eq!(ReplayFile::parse(&file.to_json(), "f").unwrap(), file);
    }

    #[test]
    fn rejects_other_versions_and_garbage() {
        let text = sample()
            .to_json()
            .replace(&format!("\"version\": {VERSION}"), "\"version\": 99");
        assert!(matches!(
            ReplayFile::parse(&text, "f"),
            Err(ReplayFileError::Version { found: 99, .. })
        ));
        assert!(matches!(
            ReplayFile::parse("{", "f"),
            Err(ReplayFileError::Malformed { .. })
        ));
        assert!(matches!(
            ReplayFile::parse("{\"format\": \"other\"}", "f"),
            Err(ReplayFileError::Malformed { .. })
        ));
        // A version that is a string, or none, is named as what it is.
        let current = format!("\"version\": {VERSION},");
        for (replacement, said) in [("\"version\": \"4\",", "\"4\""), ("", "missing")] {
            let text = sample().to_json().replace(&current, replacement);
            match ReplayFile::parse(&text, "f") {
                Err(ReplayFileError::Malformed { message, .. }) => {
                    assert!(message.contains(said), "{message}")
                }
                other => panic!("{replacement:?}: {other:?}"),
            }
        }
        let text = sample().to_json().replace("\"decisions\"", "\"decisionz\"");
        assert!(matches!(
            ReplayFile::parse(&text, "f"),
            Err(ReplayFileError::Malformed { .. })
        ));
    }

    #[test]
    fn names_its_point_model_and_refuses_one_it_does_not_know() {
        let text = sample().to_json();
        assert!(
            text.contains("\"point_model\": \"sync-internals\""),
            "{text}"
        );
        // A file written before models were named has the model of its
        // instrumentation.
        let before = text.replace("\"point_model\": \"sync-internals\",", "");
        assert_eq!(ReplayFile::parse(&before, "f").unwrap().point_model, None);
        let unknown = text.replace("\"sync-internals\"", "\"every-instruction\"");
        match ReplayFile::parse(&unknown, "f") {
            Err(error @ ReplayFileError::UnknownModel { .. }) => {
                let said = error.to_string();
                assert!(said.contains("`every-instruction`"), "{said}");
                assert!(
                    said.contains("`library-calls` and `sync-internals`"),
                    "{said}"
                );
            }
            other => panic!("{other:?}"),
        }
        // A model its instrumentation contradicts is no file weft wrote.
        let contradicted = text.replace("\"sync-internals\"", "\"library-calls\"");
        match ReplayFile::parse(&contradicted, "f") {
            Err(ReplayFileError::Malformed { message, .. }) => {
                assert!(message.contains("contradicts"), "{message}")
            }
            other => panic!("{other:?}"),
        }
    }
}
