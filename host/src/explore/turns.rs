//! Which strategy and scheduler each execution of an exploration gets, and
//! what the strategies learn from the executions before it.
//!
//! Execution `i` of an exploration always gets the same strategy and seed:
//! under `portfolio` the strategies take turns by execution index
//! ([`PORTFOLIO`]), and the seed derives from the exploration's seed and
//! `i`. What strategies learn (PCT's estimate of an execution's length,
//! SURW's plan) comes from the exploration's first [`LEARNING`] executions
//! only, so that parallel workers give every execution the same scheduler
//! whatever their number.

use crate::instrument::PointModel;
use crate::runtime::{ExecutionResult, Outcome};
use crate::sched::{
    DfsScheduler, DporScheduler, PctScheduler, PosScheduler, RandomScheduler, Scheduler, Strategy,
    SurwPlan, SurwScheduler,
};
use crate::trace::Event;
use std::sync::Arc;

/// PCT's guess of the number of steps of an execution before any has run;
/// an exploration then uses the longest of its first executions.
pub(crate) const PCT_INITIAL_STEPS: u64 = 100;

/// How many executions the strategies learn from: the first ones of the
/// exploration that a guest assumption did not discard (until then SURW
/// selects nothing and walks uniformly, and PCT guesses
/// `PCT_INITIAL_STEPS`).
pub const LEARNING: usize = 3;

/// The most executions the strategies wait for [`LEARNING`] useful ones.
pub const LEARNING_MOST: u64 = 100;

/// The turns of `portfolio`: strategy and PCT depth by execution index
/// modulo the length. POS comes most often because it finds the widest range
/// of bugs on weft's samples; PCT with depths 2 and 3 finds the bugs that
/// need a few well-placed preemptions in long executions, uniform random
/// the shallow ones quickly, SURW those between many threads.
pub const PORTFOLIO: [(Strategy, Option<u32>); 6] = [
    (Strategy::Pos, None),
    (Strategy::Pct, Some(3)),
    (Strategy::Random, None),
    (Strategy::Surw, None),
    (Strategy::Pos, None),
    (Strategy::Pct, Some(2)),
];

/// The strategy (and PCT depth) that runs one execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Turn {
    /// The strategy.
    pub strategy: Strategy,
    /// PCT's depth, when the strategy is PCT.
    pub pct_depth: Option<u32>,
}

/// The strategies' turns and what they learnt.
#[derive(Clone)]
pub struct Turns {
    strategy: Strategy,
    pct_depth: u32,
    /// PCT's estimate of an execution's length: the longest of the first
    /// executions that did not reach the step limit, once one ran.
    pct_steps: u64,
    /// Whether an execution set `pct_steps` yet.
    learnt_steps: bool,
    /// Events of the first executions, until SURW's plan is learnt.
    profiles: Vec<Vec<Event>>,
    /// Executions learnt from so far, discarded ones included.
    seen: u64,
    surw: Arc<SurwPlan>,
    /// Whether PCT lets a thread that blocks give way (under library calls).
    blocking_gives_way: bool,
}

impl Turns {
    /// The turns of `strategy` (PCT with `pct_depth` where the user chose
    /// PCT).
    pub fn new(strategy: Strategy, pct_depth: u32) -> Self {
        Turns {
            strategy,
            pct_depth,
            pct_steps: PCT_INITIAL_STEPS,
            learnt_steps: false,
            profiles: Vec::new(),
            seen: 0,
            blocking_gives_way: false,
            surw: Arc::default(),
        }
    }

    /// These turns, for a program under point model `model`: with one step
    /// per library call, PCT lets a thread that blocks give way (see
    /// [`PctScheduler::blocking_gives_way`]).
    pub fn under(self, model: PointModel) -> Self {
        Turns {
            blocking_gives_way: model == PointModel::LibraryCalls,
            ..self
        }
    }

    /// The turns of a single execution's `strategy`, with PCT estimating
    /// `pct_steps` steps.
    pub fn with_steps(strategy: Strategy, pct_depth: u32, pct_steps: u64) -> Self {
        Turns {
            pct_steps,
            ..Turns::new(strategy, pct_depth)
        }
    }

    /// Who runs the execution with this index.
    pub fn turn(&self, index: u64) -> Turn {
        match self.strategy {
            Strategy::Portfolio => {
                let (strategy, pct_depth) = PORTFOLIO[(index % PORTFOLIO.len() as u64) as usize];
                Turn {
                    strategy,
                    pct_depth,
                }
            }
            Strategy::Pct => Turn {
                strategy: Strategy::Pct,
                pct_depth: Some(self.pct_depth),
            },
            other => Turn {
                strategy: other,
                pct_depth: None,
            },
        }
    }

    /// A scheduler for `turn`, seeded with `seed`.
    pub fn scheduler(&self, turn: Turn, seed: u64) -> Box<dyn Scheduler> {
        match turn.strategy {
            Strategy::Random => Box::new(RandomScheduler::new(seed)),
            Strategy::Pct => Box::new(
                PctScheduler::new(
                    seed,
                    turn.pct_depth.unwrap_or(self.pct_depth),
                    self.pct_steps,
                )
                .blocking_gives_way(self.blocking_gives_way),
            ),
            Strategy::Pos => Box::new(PosScheduler::new(seed)),
            Strategy::Surw => Box::new(SurwScheduler::new(seed, self.surw.clone())),
            Strategy::Portfolio => {
                let index = seed % PORTFOLIO.len() as u64;
                self.scheduler(self.turn(index), seed)
            }
            // A single execution of the systematic search: its first one.
            Strategy::Dfs => Box::new(DfsScheduler::default()),
            Strategy::Dpor => Box::new(DporScheduler::default()),
        }
    }

    /// Whether the strategies still learn: fewer than [`LEARNING`]
    /// executions ran to their end, of at most [`LEARNING_MOST`].
    pub fn learning(&self) -> bool {
        self.profiles.len() < LEARNING && self.seen < LEARNING_MOST
    }

    /// Learns from the next of the exploration's first executions (nothing
    /// once [`LEARNING`] did).
    pub fn learn(&mut self, result: &ExecutionResult) {
        if !self.learning() {
            return;
        }
        self.seen += 1;
        if matches!(result.outcome, Outcome::Discarded { .. }) {
            return;
        }
        if result.fair_from.is_none() {
            self.pct_steps = if self.learnt_steps {
                self.pct_steps.max(result.steps)
            } else {
                result.steps
            };
            self.learnt_steps = true;
        }
        self.profiles.push(result.events.clone());
        if self.profiles.len() == LEARNING {
            self.surw = Arc::new(SurwPlan::learn(self.profiles.iter().map(Vec::as_slice)));
        }
    }
}
