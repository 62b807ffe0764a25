//! What an execution runs with besides the module and the schedule: the
//! guest's arguments and environment, its WASI seed, how sleeps pass, and
//! the limits that bound it.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How many times the step limit an execution may run on under a fair
/// schedule once it reached the limit under the strategy.
pub const FAIR_STEPS: u64 = 10;

/// Bounds on one execution. Past the step limit or a thread's fuel, the
/// execution goes on under a fair schedule, then ends as a livelock or as
/// inconclusive (see [`Outcome::Livelock`](super::Outcome::Livelock), [`Outcome::Inconclusive`](super::Outcome::Inconclusive));
/// past the memory or thread limit, it fails with the matching
/// [`FailureKind`](crate::failure::FailureKind); past its wall time, it is inconclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Scheduling points per execution under the strategy; then up to
    /// [`FAIR_STEPS`] times as many under a fair schedule, so that a long
    /// stress test finishes (crossbeam-queue's `drops` takes about five
    /// million steps) while a strategy that starves a thread does not run
    /// on for long.
    pub max_steps: u64,
    /// Fuel (roughly, wasm instructions) per thread.
    pub max_fuel: u64,
    /// Memory size in bytes.
    pub max_memory_bytes: u64,
    /// Threads alive at once, the main thread included (a thread that
    /// exited no longer counts).
    pub max_threads: u32,
    /// Bytes of stdout and of stderr kept per execution.
    pub max_output_bytes: usize,
    /// Wall time per execution.
    #[serde(with = "humantime_serde_opt")]
    pub time_limit: Option<Duration>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_steps: 1_000_000,
            max_fuel: 1_000_000_000,
            max_memory_bytes: 512 << 20,
            max_threads: 128,
            max_output_bytes: 1 << 20,
            time_limit: Some(Duration::from_secs(30)),
        }
    }
}

mod humantime_serde_opt {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&humantime::format_duration(*d).to_string()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let text: Option<String> = Option::deserialize(d)?;
        text.map(|t| humantime::parse_duration(&t).map_err(serde::de::Error::custom))
            .transpose()
    }
}

/// How sleeps and timed waits stand to the other threads' work.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Sleeps {
    /// A sleeper may wake at any point, however much the others still had
    /// to do: a sleep orders nothing, and a test that counts on sleeps to
    /// order its threads shows as flaky.
    #[default]
    Any,
    /// Time passes as on a machine that is never overloaded: a microsecond
    /// per scheduling step ([`STEP_NS`]), spinning or not, and at once to
    /// the next wake-up when every other thread is blocked or asleep. A
    /// sleeper (or a timed wait) ends only when its time has come. Tests
    /// that sleep to let other threads get somewhere pass, as they do
    /// natively.
    Timed,
}

impl Sleeps {
    /// Whether this is [`Sleeps::Any`] (the default, left out of replay
    /// files).
    pub fn is_any(&self) -> bool {
        *self == Sleeps::Any
    }
}

/// Virtual time a scheduling step takes under [`Sleeps::Timed`].
pub const STEP_NS: u64 = 1_000;

/// Inputs of an execution besides the schedule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunConfig {
    /// `argv`, program name first.
    pub args: Vec<String>,
    /// The environment, as `KEY=VALUE` strings (empty unless given).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// Seed of the generator behind WASI `random_get`.
    pub random_seed: u64,
    /// Bounds on the execution.
    pub limits: Limits,
    /// The plain-access sites that are scheduling points in this execution,
    /// of a module that logs its plain accesses (see
    /// [`InstrumentOptions::log_accesses`](crate::instrument::InstrumentOptions::log_accesses)); the others are only logged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub point_sites: Vec<crate::instrument::SiteId>,
    /// Whether the main thread of a module that logs its plain accesses
    /// logs them from the start rather than from its first spawn (see
    /// [`crate::abi::ACCESS_LOG`]): no analysis needs those, but tests of
    /// the logging code run single-threaded modules.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub log_from_start: bool,
    /// How sleeps and timed waits stand to the other threads' work.
    #[serde(default, skip_serializing_if = "Sleeps::is_any")]
    pub sleeps: Sleeps,
    /// When the run this execution belongs to must end (an exploration's
    /// time limit): an execution still going then is
    /// [`Outcome::Stopped`](super::Outcome::Stopped), neither a pass nor a failure. Never recorded.
    #[serde(skip)]
    pub stop_at: Option<std::time::Instant>,
    /// Whether the execution runs on the program's state reader from its
    /// start and names the complete state of each decision its strategy
    /// asks about (see [`crate::sched::Scheduler::wants_state`]): a
    /// stateful search's executions. Never recorded.
    #[serde(skip)]
    pub keyed_states: bool,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            args: vec!["main.wasm".into()],
            env: Vec::new(),
            random_seed: 0,
            limits: Limits::default(),
            point_sites: Vec::new(),
            log_from_start: false,
            sleeps: Sleeps::Any,
            stop_at: None,
            keyed_states: false,
        }
    }
}
