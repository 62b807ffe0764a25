//! An exercise folder and its `exercise.toml`:
//!
//! ```toml
//! title = "Lost update: a shared bank balance"
//! # A data race fails a submission (default true); any other failure weft
//! # finds (an assertion, a trap, a deadlock, a livelock) always does.
//! data_races = true
//! # An IMUnit schedule every execution must follow (optional).
//! # schedule = "deposited -> audited"
//! # Executions sampled before the exhaustive search, and the time both
//! # may take together.
//! executions = 1000
//! time_limit = "30s"
//! # Scheduling points an execution may take before it counts as a
//! # livelock or an endless loop (optional; weft explore's default).
//! # max_steps = 20000
//!
//! # What a submission must do to be the exercise: the threads an execution
//! # creates besides `main`, at least (default 1), and the functions the
//! # statement says to keep (a Rust function matches by its last path
//! # segment).
//! [requires]
//! threads = 2
//! functions = ["deposit", "teller"]
//! # How many threads must be amid the work at once in some execution (each
//! # between its first and last step in the work's functions while the
//! # others are), and the functions that are the work (default:
//! # `functions`). Without `at_once`, not checked.
//! at_once = 2
//! work = ["deposit"]
//!
//! # Typical wrong solutions, which grading must catch with the failure
//! # kind and a phrase of the explanation given.
//! [[wrong]]
//! file = "wrong/no-lock.c"
//! kind = "assertion"
//! explains = "one update was lost"
//! ```
//!
//! Beside it: `README.md` (the statement), `starter/`, `solution/` (the
//! reference, one file per language) and `wrong/`.

use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The file that makes a folder an exercise.
pub const EXERCISE_FILE: &str = "exercise.toml";

/// Errors reading an exercise.
#[derive(Debug, thiserror::Error)]
pub enum ExerciseError {
    /// The folder has no `exercise.toml`.
    #[error("`{0}` is not an exercise: it has no `exercise.toml`")]
    NotAnExercise(String),
    /// The file could not be read.
    #[error("cannot read `{path}`: {reason}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// The file is not a valid exercise description.
    #[error("`{path}` is not a valid exercise: {reason}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
}

/// A typical wrong solution and how grading must catch it.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct WrongSolution {
    /// The source, relative to the exercise folder.
    pub file: PathBuf,
    /// The failure kind grading reports (`assertion`, `deadlock`,
    /// `data-race`, ...).
    pub kind: String,
    /// A phrase the plain-words explanation holds.
    pub explains: String,
}

/// What a submission must do to be the exercise at all.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Requirements {
    /// Threads an execution creates besides `main`, at least.
    pub threads: u32,
    /// Functions the submission keeps (by name).
    pub functions: Vec<String>,
    /// Threads that some execution has amid the work at once, if the
    /// exercise says (see [`super::at_once`]).
    pub at_once: Option<u32>,
    /// The functions that are the work (empty: `functions`).
    pub work: Vec<String>,
}

impl Requirements {
    /// The functions that are the work.
    pub fn work(&self) -> &[String] {
        if self.work.is_empty() {
            &self.functions
        } else {
            &self.work
        }
    }
}

impl Default for Requirements {
    fn default() -> Self {
        Requirements {
            threads: 1,
            functions: Vec::new(),
            at_once: None,
            work: Vec::new(),
        }
    }
}

/// The contents of `exercise.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Description {
    title: String,
    #[serde(default = "yes")]
    data_races: bool,
    #[serde(default)]
    schedule: Option<String>,
    #[serde(default = "default_executions")]
    executions: u64,
    #[serde(default = "default_time_limit")]
    time_limit: String,
    #[serde(default)]
    max_steps: Option<u64>,
    #[serde(default)]
    requires: Requirements,
    #[serde(default)]
    wrong: Vec<WrongSolution>,
}

fn yes() -> bool {
    true
}

fn default_executions() -> u64 {
    1000
}

fn default_time_limit() -> String {
    "30s".into()
}

/// An exercise, read from its folder.
#[derive(Clone, Debug)]
pub struct Exercise {
    /// Its name (the folder's).
    pub name: String,
    /// Its title.
    pub title: String,
    /// Whether a data race fails a submission.
    pub data_races: bool,
    /// An IMUnit schedule every execution must follow.
    pub schedule: Option<String>,
    /// Executions sampled before the exhaustive search.
    pub executions: u64,
    /// Time the sampling and the exhaustive search may take together.
    pub time_limit: Duration,
    /// Scheduling points an execution may take before it counts as a
    /// livelock or an endless loop, where the exercise sets them.
    pub max_steps: Option<u64>,
    /// What a submission must do to be the exercise.
    pub requires: Requirements,
}

impl Exercise {
    /// Reads the exercise in folder `dir`.
    ///
    /// # Errors
    ///
    /// An [`ExerciseError`] when `dir` holds no `exercise.toml`, or one
    /// that cannot be read or is not valid (unknown keys, a time limit
    /// that is not a positive duration, no executions, a wrong solution
    /// that is not in the folder).
    pub fn load(dir: &Path) -> Result<Exercise, ExerciseError> {
        let path = dir.join(EXERCISE_FILE);
        if !path.is_file() {
            return Err(ExerciseError::NotAnExercise(dir.display().to_string()));
        }
        let text = crate::input::read_text(&path, crate::input::TEXT_LIMIT).map_err(|e| {
            ExerciseError::Read {
                path: path.display().to_string(),
                reason: e.to_string(),
            }
        })?;
        let invalid = |reason: String| ExerciseError::Invalid {
            path: path.display().to_string(),
            reason,
        };
        let description: Description =
            toml::from_str(&text).map_err(|e| invalid(e.message().to_string()))?;
        let time_limit = humantime::parse_duration(&description.time_limit)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| {
                invalid(format!(
                    "`time_limit = \"{}\"` is not a positive duration (say \"30s\")",
                    description.time_limit
                ))
            })?;
        if description.max_steps == Some(0) {
            return Err(invalid("`max_steps` must be at least 1".into()));
        }
        if description.executions == 0 {
            return Err(invalid("`executions` must be at least 1".into()));
        }
        let requires = &description.requires;
        if let Some(at_once) = requires.at_once {
            if at_once < 2 || at_once > requires.threads + 1 {
                return Err(invalid(format!(
                    "`at_once = {at_once}` must be at least 2 and at most the threads `main` and the {} it creates",
                    requires.threads
                )));
            }
            if requires.work().is_empty() {
                return Err(invalid(
                    "`at_once` needs the functions that are the work: `work` or `functions`".into(),
                ));
            }
        } else if !requires.work.is_empty() {
            return Err(invalid("`work` means nothing without `at_once`".into()));
        }
        for wrong in &description.wrong {
            if !dir.join(&wrong.file).is_file() {
                return Err(invalid(format!(
                    "the wrong solution `{}` is not in the exercise's folder",
                    wrong.file.display()
                )));
            }
        }
        let name = dir
            .canonicalize()
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "exercise".into());
        Ok(Exercise {
            name,
            title: description.title,
            data_races: description.data_races,
            schedule: description.schedule,
            executions: description.executions,
            time_limit,
            max_steps: description.max_steps,
            requires: description.requires,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exercise(text: &str) -> Result<Exercise, ExerciseError> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(EXERCISE_FILE), text).unwrap();
        Exercise::load(dir.path())
    }

    #[test]
    fn defaults_and_errors() {
        let e = exercise("title = \"t\"").unwrap();
        assert!(e.data_races);
        assert_eq!(e.executions, 1000);
        assert_eq!(e.time_limit, Duration::from_secs(30));
        assert_eq!(e.max_steps, None);
        assert_eq!(e.requires, Requirements::default());
        let set = exercise("title = \"t\"\n[requires]\nthreads = 3\nfunctions = [\"f\"]").unwrap();
        assert_eq!(set.requires.threads, 3);
        assert_eq!(set.requires.functions, ["f"]);
        let set = exercise("title = \"t\"\nmax_steps = 20000").unwrap();
        assert_eq!(set.max_steps, Some(20000));
        let bad = exercise("title = \"t\"\nmax_steps = 0").unwrap_err();
        assert!(
            bad.to_string().contains("`max_steps` must be at least 1"),
            "{bad}"
        );
        let bad = exercise("title = \"t\"\ntime_limit = \"soon\"").unwrap_err();
        assert!(bad.to_string().contains("not a positive duration"), "{bad}");
        let bad = exercise("title = \"t\"\nexecutions = 0").unwrap_err();
        assert!(bad.to_string().contains("at least 1"), "{bad}");
        let bad = exercise("title = \"t\"\ncolour = 1").unwrap_err();
        assert!(bad.to_string().contains("colour"), "{bad}");
        let bad = exercise(
            "title = \"t\"\n[[wrong]]\nfile = \"x.c\"\nkind = \"deadlock\"\nexplains = \"x\"",
        )
        .unwrap_err();
        assert!(bad.to_string().contains("not in the exercise"), "{bad}");
        let set =
            exercise("title = \"t\"\n[requires]\nthreads = 2\nfunctions = [\"f\"]\nat_once = 2")
                .unwrap();
        assert_eq!(
            (set.requires.at_once, set.requires.work()),
            (Some(2), &["f".to_string()][..])
        );
        for (bad, says) in [
            ("threads = 2\nat_once = 4", "at most"),
            ("at_once = 1", "at least 2"),
            ("at_once = 2", "needs the functions"),
            ("work = [\"f\"]", "without `at_once`"),
        ] {
            let error = exercise(&format!("title = \"t\"\n[requires]\n{bad}")).unwrap_err();
            assert!(error.to_string().contains(says), "{bad}: {error}");
        }
        let none = Exercise::load(Path::new("/")).unwrap_err();
        assert!(none.to_string().contains("no `exercise.toml`"), "{none}");
    }
}
