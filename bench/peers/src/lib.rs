//! weft's side of `./x bench-peers` (the benchmark itself is
//! `benches/peers.rs`, beside Shuttle): executions per second of the
//! `increments` sample under one strategy, on one core, start-up left out.

use std::path::Path;
use std::time::{Duration, Instant};
use weft::execution::Setup;
use weft::explore::{ExploreOptions, explore};
use weft::instrument::{InstrumentOptions, PointModel, Points};
use weft::race::RaceMode;
use weft::runtime::{Limits, Program, RunConfig};
use weft::sched::Strategy;

/// The loaded `increments` module, under one instrumentation.
pub struct Increments {
    program: Program,
    races: RaceMode,
}

impl Increments {
    /// Loads `module` (the built `increments` sample), with plain accesses
    /// logged when `races` is on, and without its debug information when
    /// `strip` is (as cargo builds release binaries by default).
    ///
    /// # Errors
    ///
    /// When the module cannot be read or loaded.
    pub fn load(module: &Path, races: bool, strip: bool) -> anyhow::Result<Increments> {
        let mut wasm = std::fs::read(module)?;
        if strip {
            wasm = without_debug_information(&wasm)?;
        }
        let races = if races { RaceMode::Fail } else { RaceMode::Off };
        // The instrumentation of the commands: each call of the library
        // model one step.
        let instrument = InstrumentOptions {
            points: Points::Sync,
            log_calls: false,
            ..PointModel::LibraryCalls.instrument(false)
        }
        // The race check as the commands run it.
        .with_race_check(races != RaceMode::Off);
        let program = weft::execution::load(&wasm, instrument)?;
        Ok(Increments { program, races })
    }

    /// Executions per second of `threads` threads making `increments`
    /// increments each, under `strategy` (PCT of depth 3), on one worker:
    /// a few executions to warm up and to size the run, then as many as
    /// fill about `budget`.
    ///
    /// # Errors
    ///
    /// When an execution fails: the logic has no failure to find.
    pub fn rate(
        &mut self,
        threads: usize,
        increments: usize,
        strategy: Strategy,
        budget: Duration,
    ) -> anyhow::Result<f64> {
        sized_rate(budget, |executions| {
            self.run(threads, increments, strategy, executions)
        })
    }

    /// Runs `executions` executions; returns how many ran and how long
    /// they took.
    fn run(
        &mut self,
        threads: usize,
        increments: usize,
        strategy: Strategy,
        executions: u64,
    ) -> anyhow::Result<(u64, Duration)> {
        let options = ExploreOptions {
            strategy,
            pct_depth: 3,
            iterations: Some(executions),
            jobs: 1,
            setup: Setup {
                run: RunConfig {
                    args: vec![
                        "increments.wasm".into(),
                        threads.to_string(),
                        increments.to_string(),
                    ],
                    limits: Limits {
                        // The largest programs of the sweep take millions
                        // of steps; they end, and need no fair part.
                        max_steps: 100_000_000,
                        ..Limits::default()
                    },
                    ..RunConfig::default()
                },
                races: self.races,
                ..Setup::default()
            },
            ..ExploreOptions::default()
        };
        let start = Instant::now();
        let exploration = explore(&mut self.program, &options, |_| {})?;
        let took = start.elapsed();
        if let Some(found) = exploration.failure {
            anyhow::bail!("the increments failed: {}", found.failure.message);
        }
        Ok((exploration.executions, took))
    }
}

/// Executions per second of `run` (which runs the executions it is given
/// and says how many ran and how long they took), the same way for each
/// tool: 3 executions warm up and size the run, then as many run as fill
/// about `budget`.
///
/// # Errors
///
/// What `run` fails with.
pub fn sized_rate(
    budget: Duration,
    mut run: impl FnMut(u64) -> anyhow::Result<(u64, Duration)>,
) -> anyhow::Result<f64> {
    let (warm_up, took) = run(3)?;
    let each = took.as_secs_f64() / warm_up.max(1) as f64;
    let executions = ((budget.as_secs_f64() / each) as u64).clamp(3, 1_000_000);
    let (ran, took) = run(executions)?;
    Ok(ran as f64 / took.as_secs_f64())
}

/// `wasm` without its DWARF sections (custom sections named `.debug_*`).
fn without_debug_information(wasm: &[u8]) -> anyhow::Result<Vec<u8>> {
    /// Reads the LEB128 number at `at`; returns it and where it ends.
    fn leb(bytes: &[u8], mut at: usize) -> anyhow::Result<(usize, usize)> {
        let (mut value, mut shift) = (0usize, 0);
        loop {
            let byte = *bytes
                .get(at)
                .ok_or_else(|| anyhow::anyhow!("a section is cut short"))?;
            at += 1;
            value |= usize::from(byte & 0x7f) << shift;
            shift += 7;
            if byte < 0x80 {
                return Ok((value, at));
            }
        }
    }
    let mut out = wasm[..8].to_vec();
    let mut at = 8;
    while at < wasm.len() {
        let id = wasm[at];
        let (size, body) = leb(wasm, at + 1)?;
        let end = body + size;
        let debug = id == 0 && {
            let (name_len, name) = leb(wasm, body)?;
            wasm[name..name + name_len].starts_with(b".debug_")
        };
        if !debug {
            out.extend_from_slice(&wasm[at..end]);
        }
        at = end;
    }
    Ok(out)
}
