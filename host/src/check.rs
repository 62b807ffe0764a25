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

use crate::execution::Setup;
use crate::explore::{Exhausted, ExploreOptions};
use crate::explore_program::{Explored, Request, explore_program};
use crate::failure::{Failure, FailureKind};
use crate::instrument::{PointModel, Points};
use crate::race::RaceMode;
use crate::report::text::{Report, Shape};
use crate::runtime::{Limits, RunConfig};
use crate::sched::Strategy;
use anyhow::{Context, Result};
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
    strategy: Strategy,
    executions: Option<u64>,
    time_limit: Option<Duration>,
    seed: u64,
    pct_depth: u32,
    races: RaceMode,
    points: Points,
    point_model: PointModel,
    save_failure: Option<PathBuf>,
    minimize: bool,
    args: Vec<String>,
}

impl Check {
    /// A check of the module at `path` (a `.wasm` or `.wat` file).
    pub fn module(path: impl Into<PathBuf>) -> Check {
        let defaults = ExploreOptions::default();
        Check {
            module: path.into(),
            strategy: defaults.strategy,
            executions: None,
            time_limit: None,
            seed: defaults.seed,
            pct_depth: defaults.pct_depth,
            races: RaceMode::Fail,
            points: Points::default(),
            point_model: PointModel::default(),
            save_failure: None,
            minimize: true,
            args: Vec::new(),
        }
    }

    /// The scheduling strategy.
    pub fn strategy(mut self, strategy: Strategy) -> Check {
        self.strategy = strategy;
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
        self.seed = seed;
        self
    }

    /// PCT's bug depth (with [`Strategy::Pct`]).
    pub fn pct_depth(mut self, depth: u32) -> Check {
        self.pct_depth = depth;
        self
    }

    /// What a data race is: a failure (the default), a reason to switch
    /// threads at the racy sites, or nothing.
    pub fn races(mut self, races: RaceMode) -> Check {
        self.races = races;
        self
    }

    /// Which operations are scheduling points.
    pub fn points(mut self, points: Points) -> Check {
        self.points = points;
        self
    }

    /// How calls of the library model are scheduled: one step each (the
    /// default), or at the library's own atomics and waits.
    pub fn point_model(mut self, model: PointModel) -> Check {
        self.point_model = model;
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
    /// read or run, the options contradict each other, or the replay file
    /// cannot be written.
    pub fn run(&self) -> Result<Checked> {
        if !(1..=1000).contains(&self.pct_depth) {
            anyhow::bail!(
                "pct_depth({}): the PCT depth is 1 to 1000, as `weft explore --pct-depth`'s",
                self.pct_depth
            );
        }
        if self.executions == Some(0) {
            anyhow::bail!(
                "executions(0): a check runs at least one execution, as `weft explore --iterations` does"
            );
        }
        // A replay file that could not be written would lose the failure
        // at the end of the exploration: its path is checked first.
        crate::output_paths::Outputs::new()
            .input("the module", &self.module)
            .output(
                "save_failure",
                crate::output_paths::Kind::Replay,
                self.save_failure.as_deref(),
            )
            .check()?;
        let request = self.request();
        let wasm = crate::input::read_module(&self.module)?;
        let program = crate::execution::load(&wasm, request.instrument)
            .with_context(|| format!("cannot load `{}`", self.module.display()))?;
        let explored = explore_program(wasm, program, request, |_| {})?;
        let replay_file = explored.save_failure(&self.module, self.save_failure.clone())?;
        let text = Report::of_exploration(&explored, &self.module, replay_file.clone())
            .text(Shape::default());
        Ok(Checked {
            module: self.module.clone(),
            explored,
            replay_file,
            text,
        })
    }

    /// The exploration this check stands for.
    pub(crate) fn request(&self) -> Request {
        let name = self
            .module
            .file_name()
            .map_or("main.wasm".into(), |n| n.to_string_lossy().into_owned());
        let setup = Setup {
            run: RunConfig {
                args: std::iter::once(name)
                    .chain(self.args.iter().cloned())
                    .collect(),
                limits: Limits::default(),
                ..RunConfig::default()
            },
            races: self.races,
            ..Setup::default()
        };
        Request {
            options: ExploreOptions {
                strategy: self.strategy,
                seed: self.seed,
                pct_depth: self.pct_depth,
                iterations: self
                    .executions
                    .or_else(|| Request::default_iterations(self.strategy, self.time_limit)),
                time_limit: self.time_limit,
                setup,
                jobs: Request::default_jobs(self.strategy),
                ..ExploreOptions::default()
            },
            instrument: Request::instrument_for(
                self.strategy,
                self.point_model,
                self.points,
                self.races,
            ),
            minimize: self.minimize,
        }
    }
}

/// What a [`Check`] found. Its [`Display`](fmt::Display) is weft's report.
pub struct Checked {
    module: PathBuf,
    explored: Explored,
    replay_file: Option<PathBuf>,
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
        self.explored.exploration().exhausted == Some(Exhausted::All)
    }

    /// The replay file of the failure, if [`Check::save_failure`] asked for
    /// one.
    pub fn replay_file(&self) -> Option<&Path> {
        self.replay_file.as_deref()
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
                "weft expected {} in {} and found {}:\n{self}",
                kind.a_failure(),
                self.module.display(),
                failure.kind.a_failure()
            ),
            None => panic!(
                "weft expected {} in {} and found none:\n{self}",
                kind.a_failure(),
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
