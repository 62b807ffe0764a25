//! Replaying a saved execution and checking that it is the same one.
//!
//! - [`file`](mod@file): the versioned JSON file a failure is saved to.
//! - [`bundle`]: a replay file and its module in one file.
//! - [`minimize`]: the same failure under a smaller schedule.
//! - [`verdict`]: what an execution shows under every check its setup
//!   asks for.

pub mod bundle;
pub mod file;
pub mod finish;
pub(crate) mod minimize;
pub(crate) mod verdict;

use crate::runtime::{ExecutionResult, Failure, LoadError, Outcome, Program};
use crate::sched::{ReplayScheduler, ScheduleError};
use crate::trace::TraceHash;
use file::ReplayFile;

/// Why a replay did not reproduce its execution.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The module is not the one the file was recorded with.
    #[error(
        "module hash mismatch: the replay file was recorded with a module whose blake3 is {expected}, but this module's is {found}"
    )]
    ModuleMismatch {
        /// Hash in the file.
        expected: String,
        /// Hash of the given module.
        found: String,
    },
    /// The module failed to load.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The recorded schedule does not fit the execution.
    #[error(transparent)]
    Diverged(#[from] ScheduleError),
    /// The schedule was used up but the trace differs.
    #[error(
        "trace hash mismatch: the replay file expects trace {expected}, but the execution produced {found}"
    )]
    TraceMismatch {
        /// Hash in the file.
        expected: TraceHash,
        /// Hash of this execution.
        found: TraceHash,
    },
    /// The execution ended before using every recorded decision.
    #[error(
        "the schedule diverged: the execution ended after {used} of {recorded} recorded choices"
    )]
    Unused {
        /// Decisions used.
        used: usize,
        /// Decisions recorded.
        recorded: usize,
    },
    /// The execution is the recorded one, but judged again it does not
    /// show the failure the file records.
    #[error(
        "the replay file records {}, but its execution, judged again, shows {}: the file was edited, or written by a weft that judged differently",
        describe(.recorded.as_ref()),
        describe(.found.as_ref())
    )]
    VerdictMismatch {
        /// The failure in the file.
        recorded: Option<Failure>,
        /// The failure the execution shows.
        found: Option<Failure>,
    },
    /// The host could not run the module.
    #[error("{0}")]
    Host(String),
}

/// A failure in a sentence, or "no failure".
fn describe(failure: Option<&Failure>) -> String {
    match failure {
        Some(f) => format!(
            "{} (\"{}\")",
            f.kind.a_failure(),
            f.message.lines().next().unwrap_or_default()
        ),
        None => "no failure".into(),
    }
}

/// `message` with every path cut to its file name. A failure's message
/// names source files as DWARF has them, shortened against the working
/// directory (`svt1/task/prog.c:21` there, `prog.c:21` inside `svt1/task`,
/// an absolute path elsewhere): the same failure, told from another
/// directory or machine, must compare equal.
fn without_directories(message: &str) -> String {
    let delimiter = |c: char| c.is_whitespace() || "()[]{},;`'\"".contains(c);
    let mut out = String::with_capacity(message.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        out.push_str(word.rsplit('/').next().unwrap_or_default());
        word.clear();
    };
    for c in message.chars() {
        if delimiter(c) {
            flush(&mut word, &mut out);
            out.push(c);
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// A replayed execution and the failure it showed when judged again.
pub struct Replayed {
    /// The execution.
    pub result: ExecutionResult,
    /// Its verdict: the failure the file records.
    pub failure: Option<Failure>,
    /// The module, loaded as the file says.
    pub program: Program,
}

/// Re-runs the execution `file` describes on `wasm` and checks that it is
/// the same: same module, same schedule, same trace hash, and judged again
/// by every check it ran under (see [`verdict`]), the same failure.
///
/// # Errors
///
/// A [`ReplayError`] saying which check failed.
pub fn replay(file: &ReplayFile, wasm: &[u8]) -> Result<Replayed, ReplayError> {
    let found = blake3::hash(wasm).to_hex().to_string();
    if !found.eq_ignore_ascii_case(&file.module.blake3) {
        return Err(ReplayError::ModuleMismatch {
            expected: file.module.blake3.clone(),
            found,
        });
    }
    let mut program = crate::execution::load(wasm, file.instrument)?;
    let scheduler = Box::new(ReplayScheduler::new(
        file.decisions.clone(),
        file.values.clone(),
    ));
    let result = crate::execution::execute(&mut program, scheduler, &file.run);
    match &result.outcome {
        Outcome::Diverged(e) => return Err(ReplayError::Diverged(e.clone())),
        Outcome::HostError(e) => return Err(ReplayError::Host(e.clone())),
        _ => {}
    }
    if result.decisions.len() != file.decisions.len() || result.values.len() != file.values.len() {
        return Err(ReplayError::Unused {
            used: result.decisions.len() + result.values.len(),
            recorded: file.decisions.len() + file.values.len(),
        });
    }
    if result.trace_hash != file.trace_hash {
        return Err(ReplayError::TraceMismatch {
            expected: file.trace_hash,
            found: result.trace_hash,
        });
    }
    let failure = verdict::Judge::default()
        .verdict(&mut program, &file.run, &result)
        .map_err(|e| ReplayError::Host(e.0))?;
    // The same failure: the same kind, in the same thread, and the same
    // description once its paths are cut to their file names. All else a
    // description says comes from the module and the execution (the
    // functions and variables its debug information names, the values, the
    // threads' names), which the hashes above have shown to be the same.
    let same = |a: &Failure, b: &Failure| {
        a.kind == b.kind
            && a.thread == b.thread
            && without_directories(&a.message) == without_directories(&b.message)
    };
    match (&file.failure, &failure) {
        (Some(a), Some(b)) if same(a, b) => {}
        (None, None) => {}
        _ => {
            return Err(ReplayError::VerdictMismatch {
                recorded: file.failure.clone(),
                found: failure,
            });
        }
    }
    Ok(Replayed {
        result,
        failure,
        program,
    })
}

#[cfg(test)]
mod tests {
    use super::without_directories;

    #[test]
    fn messages_compare_without_the_directories_of_their_paths() {
        let here = "data race on 0x20 (`x`): thread 1 wrote at thr1 (svt1/task/prog.c:21), and thread 2 read at main (/tmp/weft-c-sdk-7/weft_pthread.c:35)";
        let there = "data race on 0x20 (`x`): thread 1 wrote at thr1 (prog.c:21), and thread 2 read at main (weft-c-sdk-7/weft_pthread.c:35)";
        assert_eq!(without_directories(here), without_directories(there));
        assert_ne!(
            without_directories(here),
            without_directories(&here.replace("prog.c:21", "prog.c:22"))
        );
        assert_eq!(without_directories("a / b"), "a  b");
    }
}
