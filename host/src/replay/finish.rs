//! Finishing a failure a command found: the same failure under the
//! smallest schedule minimization finds, then its replay file. Every
//! command that reports a failure ends with this step, so that each one
//! minimizes and saves alike.

use super::file::{FoundBy, Run, write_replay};
use super::minimize::{MOST_TIME, Minimization, budget, minimize_failure};
use crate::runtime::{ExecutionResult, Failure, Program};
use std::path::PathBuf;

/// How a failure is finished.
#[derive(Clone, Debug, Default)]
pub struct Finish {
    /// Minimize its schedule first.
    pub minimize: bool,
    /// Where its replay file goes; none is written without one.
    pub replay_path: Option<PathBuf>,
}

/// What finishing a failure did.
#[derive(Clone, Debug, Default)]
pub struct Finished {
    /// How its schedule was minimized, if it was.
    pub minimization: Option<Minimization>,
    /// Where its replay file went, if one was written.
    pub replay_file: Option<PathBuf>,
}

impl Finish {
    /// Replaces the failing `result` and its `failure` by the same failure
    /// under the smallest schedule minimization finds (when asked), run as
    /// `run` says, then writes its replay file (when asked), which names
    /// `found_by`.
    ///
    /// # Errors
    ///
    /// When the replay file would overwrite the module, or cannot be
    /// written.
    pub fn failure(
        &self,
        program: &mut Program,
        run: Run<'_>,
        result: &mut ExecutionResult,
        failure: &mut Failure,
        found_by: FoundBy,
    ) -> anyhow::Result<Finished> {
        let minimization = if self.minimize {
            minimize_failure(program, &run.setup, result, failure, budget(MOST_TIME))
        } else {
            None
        };
        let replay_file = self.save(run, result, failure, found_by)?;
        Ok(Finished {
            minimization,
            replay_file,
        })
    }

    /// Writes the replay file of `result`'s `failure` (run as `run` says,
    /// found as `found_by` says) when asked, for a failure minimized
    /// already; where it went.
    ///
    /// # Errors
    ///
    /// When the replay file would overwrite the module, or cannot be
    /// written.
    pub fn save(
        &self,
        run: Run<'_>,
        result: &ExecutionResult,
        failure: &Failure,
        found_by: FoundBy,
    ) -> anyhow::Result<Option<PathBuf>> {
        let Some(path) = &self.replay_path else {
            return Ok(None);
        };
        if crate::input::same_file(path, run.module) {
            anyhow::bail!(
                "`{}` is the module itself: the replay file would overwrite it (choose another --save-failure)",
                path.display()
            );
        }
        write_replay(path, run, result, failure, found_by)?;
        Ok(Some(path.clone()))
    }
}
