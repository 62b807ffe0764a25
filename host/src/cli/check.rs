//! `weft explore` from Rust: a builder for tests that check a module and
//! fail with weft's report.
//!
//! ```
//! use weft::Check;
//! use weft::failure::FailureKind;
//! use weft::sched::Strategy;
//!
//! # fn main() -> anyhow::Result<()> {
//! let module = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/samples/lost-update.wasm");
//! let checked = Check::module(module)
//!     .strategy(Strategy::Pct)
//!     .executions(200)
//!     .seed(7)
//!     .run()?;
//! // The sample's two threads increment a counter without a lock.
//! let failure = checked.assert_fails_with(FailureKind::Assertion);
//! assert!(failure.message.contains("lost an update"));
//! // `checked.assert_passed()` would panic with weft's report: the
//! // failure, its minimized interleaving and where each step is.
//! assert!(checked.to_string().contains("main.rs"));
//! # Ok(())
//! # }
//! ```

use super::explore::{ExploreArgs, Explored, explore_module};
use crate::failure::{Failure, FailureKind};
use crate::instrument::Points;
use crate::race::RaceMode;
use crate::sched::Strategy;
use anyhow::Result;
use clap::{Parser, ValueEnum};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What to check and how: `weft explore`'s options, with the same
/// defaults (the portfolio strategy, 1000 executions, seed 0, data races
/// as failures, a minimized schedule), except that no replay file is saved
/// unless [`Check::save_failure`] says where.
#[derive(Clone, Debug)]
#[must_use = "a check does nothing until it is run"]
pub struct Check {
    module: PathBuf,
    strategy: Option<Strategy>,
    executions: Option<u64>,
    time_limit: Option<Duration>,
    seed: Option<u64>,
    pct_depth: Option<u32>,
    races: Option<RaceMode>,
    points: Option<Points>,
    save_failure: Option<PathBuf>,
    minimize: bool,
    args: Vec<String>,
}

/// `weft explore`'s arguments, parsed as the command line parses them.
#[derive(Parser)]
#[command(name = "weft explore")]
struct ExploreCommand {
    #[command(flatten)]
    args: ExploreArgs,
}

impl Check {
    /// A check of the module at `path` (a `.wasm` or `.wat` file).
    pub fn module(path: impl Into<PathBuf>) -> Check {
        Check {
            module: path.into(),
            strategy: None,
            executions: None,
            time_limit: None,
            seed: None,
            pct_depth: None,
            races: None,
            points: None,
            save_failure: None,
            minimize: true,
            args: Vec::new(),
        }
    }

    /// The scheduling strategy.
    pub fn strategy(mut self, strategy: Strategy) -> Check {
        self.strategy = Some(strategy);
        self
    }

    /// The most executions.
    pub fn executions(mut self, executions: u64) -> Check {
        self.executions = Some(executions);
        self
    }

    /// The most wall time for the whole exploration.
    pub fn time_limit(mut self, limit: Duration) -> Check {
        self.time_limit = Some(limit);
        self
    }

    /// The exploration seed.
    pub fn seed(mut self, seed: u64) -> Check {
        self.seed = Some(seed);
        self
    }

    /// PCT's bug depth (with [`Strategy::Pct`]).
    pub fn pct_depth(mut self, depth: u32) -> Check {
        self.pct_depth = Some(depth);
        self
    }

    /// What a data race is: a failure (the default), a reason to switch
    /// threads at the racy sites, or nothing.
    pub fn races(mut self, races: RaceMode) -> Check {
        self.races = Some(races);
        self
    }

    /// Which operations are scheduling points.
    pub fn points(mut self, points: Points) -> Check {
        self.points = Some(points);
        self
    }

    /// Where to save the replay file of a failure.
    pub fn save_failure(mut self, path: impl Into<PathBuf>) -> Check {
        self.save_failure = Some(path.into());
        self
    }

    /// Keep a failure's schedule as found instead of minimizing it.
    pub fn no_minimize(mut self) -> Check {
        self.minimize = false;
        self
    }

    /// An argument for the guest (after its program name).
    pub fn arg(mut self, arg: impl Into<String>) -> Check {
        self.args.push(arg.into());
        self
    }

    /// Explores the module's schedules until one fails or a limit is
    /// reached.
    ///
    /// # Errors
    ///
    /// When `weft explore` would exit with an error: the module cannot be
    /// read or run, or the options contradict each other.
    pub fn run(&self) -> Result<Checked> {
        let mut command = ExploreCommand::try_parse_from(self.command_line())?;
        let explored = explore_module(&mut command.args, false)?;
        let text = explored
            .report(&self.module)
            .text(command.args.output.shape());
        Ok(Checked {
            module: self.module.clone(),
            explored,
            text,
        })
    }

    /// The `weft explore` command line this check stands for.
    fn command_line(&self) -> Vec<String> {
        fn value<T: ValueEnum>(value: T) -> String {
            value
                .to_possible_value()
                .expect("weft's options have no hidden values")
                .get_name()
                .to_string()
        }
        let mut line = vec![
            "weft explore".to_string(),
            self.module.display().to_string(),
        ];
        let mut option = |name: &str, text: Option<String>| {
            if let Some(text) = text {
                line.push(format!("--{name}"));
                line.push(text);
            }
        };
        option("strategy", self.strategy.map(value));
        option("iterations", self.executions.map(|n| n.to_string()));
        option(
            "time-limit",
            self.time_limit
                .map(|t| humantime::format_duration(t).to_string()),
        );
        option("seed", self.seed.map(|s| s.to_string()));
        option("pct-depth", self.pct_depth.map(|d| d.to_string()));
        option("races", self.races.map(value));
        option("points", self.points.map(value));
        match &self.save_failure {
            Some(path) => option("save-failure", Some(path.display().to_string())),
            None => line.push("--no-save".into()),
        }
        if !self.minimize {
            line.push("--no-minimize".into());
        }
        if !self.args.is_empty() {
            line.push("--".into());
            line.extend(self.args.iter().cloned());
        }
        line
    }
}

/// What a [`Check`] found. Its [`Display`](fmt::Display) is weft's report.
pub struct Checked {
    module: PathBuf,
    explored: Explored,
    text: String,
}

impl Checked {
    /// Whether no execution failed.
    pub fn passed(&self) -> bool {
        self.failure().is_none()
    }

    /// The failure, if an execution failed.
    pub fn failure(&self) -> Option<&Failure> {
        self.explored.failure()
    }

    /// How many executions ran.
    pub fn executions(&self) -> u64 {
        self.explored.exploration().executions
    }

    /// Whether every schedule was explored (with [`Strategy::Dpor`]), so a
    /// pass is a proof for this input.
    pub fn exhaustive(&self) -> bool {
        self.explored.exploration().exhausted == Some(crate::explore::Exhausted::All)
    }

    /// The replay file of the failure, if [`Check::save_failure`] asked for
    /// one.
    pub fn replay_file(&self) -> Option<&Path> {
        self.explored.replay_file()
    }

    /// Panics with the report unless no execution failed.
    #[track_caller]
    pub fn assert_passed(&self) {
        if !self.passed() {
            panic!("weft found a failure in {}:\n{self}", self.module.display());
        }
    }

    /// Panics with the report unless an execution failed with `kind`;
    /// returns the failure.
    #[track_caller]
    pub fn assert_fails_with(&self, kind: FailureKind) -> &Failure {
        match self.failure() {
            Some(failure) if failure.kind == kind => failure,
            Some(failure) => panic!(
                "weft expected a {} failure in {} and found a {} failure:\n{self}",
                kind.name(),
                self.module.display(),
                failure.kind.name()
            ),
            None => panic!(
                "weft expected a {} failure in {} and found none:\n{self}",
                kind.name(),
                self.module.display()
            ),
        }
    }
}

impl fmt::Display for Checked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for Checked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Checked")
            .field("module", &self.module)
            .field("executions", &self.executions())
            .field("failure", &self.failure())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_become_explores_command_line() {
        let line = Check::module("m.wasm")
            .strategy(Strategy::Pct)
            .executions(20)
            .time_limit(Duration::from_secs(90))
            .races(RaceMode::Schedule)
            .no_minimize()
            .arg("--fast")
            .command_line();
        assert_eq!(
            line.join(" "),
            "weft explore m.wasm --strategy pct --iterations 20 --time-limit 1m 30s --races schedule --no-save --no-minimize -- --fast"
        );
        assert!(ExploreCommand::try_parse_from(line).is_ok());
    }
}
