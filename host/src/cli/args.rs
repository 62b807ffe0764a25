//! The options the commands share: the module and how to run it
//! ([`ModuleArgs`]), how results are printed and saved ([`OutputArgs`]),
//! `--junit` ([`JunitArgs`]), and their parsers.

use super::files::{read_module, same_file};
use crate::execution::Setup;
use crate::instrument::{PointModel, Points};
use crate::output_paths::{Kind, Outputs};
use crate::report::interleaving::{Focus, Layout};
use crate::report::junit;
use crate::report::text::Shape;
use crate::runtime::{Limits, Program, RunConfig};
use anyhow::{Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The module and how to run it.
#[derive(Args, Debug)]
pub struct ModuleArgs {
    /// The module to run (`.wasm`, or `.wat` text).
    pub module: PathBuf,
    /// Which instructions are scheduling points: `sync` (atomics, waits,
    /// spawns, blocking WASI calls) or `memory` (also every plain load/store).
    #[arg(long, value_enum, default_value = "sync")]
    pub points: Points,
    /// How a call of the C library's, libc++'s or Rust std's locks,
    /// condition variables, once, channels, threads, allocation or stdio
    /// is scheduled: `library-calls`, one step per call (the runtime's
    /// allocation and thread set-up no scheduling point), blocking where
    /// the real call blocks, or
    /// `sync-internals`, every atomic and wait inside the library is a
    /// scheduling point (the model of replay files written before models
    /// were named).
    #[arg(long, value_enum, default_value = "library-calls")]
    pub point_model: PointModel,
    /// Seed of the guest's WASI `random_get`.
    #[arg(long, default_value_t = 0)]
    pub random_seed: u64,
    /// Most scheduling points per execution under the strategy; an
    /// execution that reaches it (or comes back to a state it was in that
    /// many points before) goes on under a fair schedule for up to ten
    /// times as many, and ends there as a `livelock` failure if it comes
    /// back to a state it was in under that schedule, else as inconclusive
    /// (exit 3).
    #[arg(long, default_value_t = Limits::default().max_steps)]
    pub max_steps: u64,
    /// Most memory per execution, in MiB (beyond: `memory.grow` fails; at
    /// most 4096, all a wasm32 memory can hold).
    #[arg(
        long,
        default_value_t = Limits::default().max_memory_bytes >> 20,
        value_parser = clap::value_parser!(u64).range(1..=4096)
    )]
    pub max_memory_mib: u64,
    /// Most threads alive at once, the main thread included (at most 192).
    /// A thread counts until its entry function returns: one that a join
    /// has seen exit may still be finishing.
    #[arg(
        long,
        default_value_t = Limits::default().max_threads,
        value_parser = clap::value_parser!(u32).range(1..=i64::from(crate::runtime::MOST_THREADS))
    )]
    pub max_threads: u32,
    /// Most fuel (about one unit per wasm instruction) per thread and
    /// execution; reached, the execution goes on under a fair schedule as
    /// at `--max-steps`.
    #[arg(long, default_value_t = Limits::default().max_fuel)]
    pub max_fuel: u64,
    /// Most wall time per execution (e.g. `10s`); reached, the execution
    /// is inconclusive.
    #[arg(long, value_parser = parse_positive_duration, default_value = "30s")]
    pub execution_time_limit: Duration,
    /// An IMUnit schedule to enforce, e.g. `"finishedAdd1 -> startingTake1,
    /// [startingTake2] -> startingAdd2"`: a thread reaching a `weft.event`
    /// whose orderings do not hold yet is held until they do.
    #[arg(long, value_parser = parse_schedule)]
    pub schedule: Option<String>,
    /// `active`: make every execution follow `--schedule`; `passive`: run
    /// the strategy's schedules and report an execution that violates it.
    #[arg(long, value_enum, default_value = "active", requires = "schedule")]
    pub mode: crate::imunit::guard::ScheduleMode,
    /// Data races: `fail` (a race is a failure: the default of `run` and
    /// `explore`), `schedule` (races are not failures, but the plain
    /// accesses that raced become scheduling points of later executions),
    /// `off` (the default of the other commands).
    #[arg(long, value_enum)]
    pub races: Option<crate::race::RaceMode>,
    /// Check a verification property with SV-COMP's semantics and print
    /// the verdict: `unreach-call` (only a call of `reach_error()` is a
    /// failure; `abort()`, a failed `assert` and a deadlock only cut the
    /// path) or `no-data-race` (only a data race is a failure), or the
    /// path of a `.prp` file that states one of them.
    #[arg(long, value_parser = parse_property)]
    pub property: Option<crate::svcomp::Property>,
    /// What `--races` is when not given (set by the command).
    #[arg(skip)]
    pub default_races: crate::race::RaceMode,
    /// Sleeps and timed waits: `any` (a sleeper may wake at any point, so
    /// a sleep orders nothing: the default of every command but `test`)
    /// or `timed` (time passes as on a machine never overloaded: a
    /// microsecond per scheduling step, and at once to the next wake-up
    /// when every other thread is blocked or asleep; the default
    /// of `test`, where tests written for real machines sleep to let other
    /// threads get somewhere).
    #[arg(long, value_enum)]
    pub sleeps: Option<crate::runtime::Sleeps>,
    /// What `--sleeps` is when not given (set by the command).
    #[arg(skip)]
    pub default_sleeps: crate::runtime::Sleeps,
    /// Plain-access sites that are scheduling points (found by `--races
    /// schedule`, for the replay file).
    #[arg(skip)]
    pub point_sites: Vec<crate::instrument::SiteId>,
    /// A variable of the guest's environment, as `KEY=VALUE` (repeatable;
    /// the guest sees no other).
    #[arg(long = "env", value_name = "KEY=VALUE", value_parser = parse_env_entry)]
    pub env: Vec<String>,
    /// Arguments passed to the guest after `--`.
    #[arg(last = true)]
    pub args: Vec<String>,
    /// Record atomic-set accesses and check serializability (set by
    /// `weft serializability`, not an option).
    #[arg(skip)]
    pub check_atomic_sets: bool,
    /// Atomic sets given on the command line (`weft serializability`).
    #[arg(skip)]
    pub atomic_sets: Vec<crate::serializability::atomic_sets::AtomicSet>,
    /// Call sites that are units of work (`weft serializability`).
    #[arg(skip)]
    pub unit_calls: Vec<(crate::instrument::SiteId, String)>,
    /// Report calls to the host (for `--unit-of-work`).
    #[arg(skip)]
    pub log_calls: bool,
    /// Actor receives to deliver first (`weft actors`).
    #[arg(skip)]
    pub actor_schedule: Vec<u64>,
    /// How free actor deliveries are chosen (`weft actors`).
    #[arg(skip)]
    pub actor_delivery: crate::actors::mailboxes::Delivery,
    /// The exports `weft.gen_call` may call (`weft gen`).
    #[arg(skip)]
    pub gen_methods: Vec<String>,
}

/// The longest time limit weft keeps: a hundred years, longer than any
/// run. A longer one (`18446744073709551615s`) means no limit, as `timeout`
/// takes it; kept as it is, it would overflow the clock it is added to.
const LONGEST_TIME_LIMIT: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// A duration longer than zero (`30s`, `2m`), at most
/// [`LONGEST_TIME_LIMIT`].
pub fn parse_positive_duration(text: &str) -> Result<Duration, String> {
    match humantime::parse_duration(text) {
        Ok(duration) if duration.is_zero() => Err("must be longer than zero".into()),
        Ok(duration) => Ok(duration.min(LONGEST_TIME_LIMIT)),
        Err(e) => Err(e.to_string()),
    }
}

/// A property by name, or the `.prp` file that states it.
fn parse_property(text: &str) -> Result<crate::svcomp::Property, String> {
    use crate::svcomp::Property;
    if let Some(property) = [Property::UnreachCall, Property::NoDataRace]
        .into_iter()
        .find(|p| p.name() == text)
    {
        return Ok(property);
    }
    let prp = crate::input::read_text(Path::new(text), crate::input::TEXT_LIMIT).map_err(|e| {
        format!("neither `unreach-call`, `no-data-race` nor a readable `.prp` file ({e})")
    })?;
    Property::from_prp(&prp).ok_or_else(|| {
        format!("`{text}` states a property weft does not check (it checks unreach-call and no-data-race)")
    })
}

/// The PCT depths weft accepts: 1 to 1000 (each is a priority change
/// point the scheduler keeps).
pub fn pct_depth_range() -> clap::builder::RangedI64ValueParser<u32> {
    clap::value_parser!(u32).range(1..=1000)
}

/// Checks a schedule's syntax when the command line is parsed.
fn parse_schedule(text: &str) -> Result<String, String> {
    text.parse::<crate::imunit::schedule::Schedule>()
        .map(|_| text.to_string())
        .map_err(|e| e.to_string())
}

impl ModuleArgs {
    /// Reads the module's bytes (assembling `.wat`).
    pub fn read(&self) -> Result<Vec<u8>> {
        read_module(&self.module)
    }

    /// Loads and compiles the module.
    pub fn load(&self) -> Result<(Vec<u8>, Program)> {
        self.load_with(self.instrument_options())
    }

    /// Loads and compiles the module with these instrumentation options.
    pub fn load_with(
        &self,
        options: crate::instrument::InstrumentOptions,
    ) -> Result<(Vec<u8>, Program)> {
        self.check_property()?;
        let wasm = self.read()?;
        if options.log_accesses && !crate::debuginfo::bookkeeping::owners_known(&wasm) {
            eprintln!(
                "weft: warning: `{}` has neither DWARF nor a name section, so the race check cannot tell the C library's allocator and thread library from the program and may report races inside them; keep the names when building (no `--strip-all`, no `strip = true`)",
                self.module.display()
            );
        }
        let program = crate::execution::load(&wasm, options)
            .with_context(|| format!("cannot load `{}`", self.module.display()))?;
        Ok((wasm, program))
    }

    /// Refuses a `--races` that contradicts `--property`.
    fn check_property(&self) -> Result<()> {
        use crate::race::RaceMode;
        use crate::svcomp::Property;
        match (self.property, self.races) {
            (Some(Property::NoDataRace), Some(RaceMode::Off | RaceMode::Schedule)) => {
                anyhow::bail!(
                    "--property no-data-race makes data races the failures: it needs --races fail (its default)"
                )
            }
            _ => Ok(()),
        }
    }

    /// The instrumentation the options ask for.
    pub fn instrument_options(&self) -> crate::instrument::InstrumentOptions {
        crate::instrument::InstrumentOptions {
            points: self.points,
            log_calls: self.log_calls,
            ..self.point_model.instrument(false)
        }
        .with_race_check(self.race_mode() != crate::race::RaceMode::Off)
    }

    /// What is done about data races: `fail` under `no-data-race`, `off`
    /// by default under `unreach-call` (a race is not its violation; with
    /// `--races fail` an exhaustive search that finds none covers it).
    pub fn race_mode(&self) -> crate::race::RaceMode {
        use crate::race::RaceMode;
        use crate::svcomp::Property;
        match (self.property, self.races) {
            (Some(Property::NoDataRace), _) => RaceMode::Fail,
            (Some(Property::UnreachCall), None) => RaceMode::Off,
            (_, Some(races)) => races,
            (None, None) => self.default_races,
        }
    }

    /// The module and how it runs, as a replay file of `wasm` (its bytes)
    /// records them.
    pub fn replay_run<'a>(&'a self, wasm: &'a [u8]) -> crate::replay::file::Run<'a> {
        crate::replay::file::Run {
            module: &self.module,
            wasm,
            instrument: self.instrument_options(),
            setup: self.setup(),
        }
    }

    /// The setup of every execution: its arguments, WASI seed and limits,
    /// and what the analyses are told.
    pub fn setup(&self) -> Setup {
        let name = self
            .module
            .file_name()
            .map_or("main.wasm".into(), |n| n.to_string_lossy().into_owned());
        let mut args = vec![name];
        args.extend(self.args.iter().cloned());
        Setup {
            run: RunConfig {
                args,
                env: self.env.clone(),
                random_seed: self.random_seed,
                limits: Limits {
                    max_steps: self.max_steps,
                    max_memory_bytes: self.max_memory_mib << 20,
                    max_threads: self.max_threads,
                    max_fuel: self.max_fuel,
                    time_limit: Some(self.execution_time_limit),
                    ..Limits::default()
                },
                point_sites: self.point_sites.clone(),
                log_from_start: false,
                sleeps: self.sleeps.unwrap_or(self.default_sleeps),
                stop_at: None,
                keyed_states: false,
            },
            schedule: self.schedule.clone(),
            schedule_mode: self.mode,
            check_atomic_sets: self.check_atomic_sets,
            atomic_sets: self.atomic_sets.clone(),
            unit_calls: self.unit_calls.clone(),
            actor_schedule: self.actor_schedule.clone(),
            actor_delivery: self.actor_delivery,
            gen_methods: self.gen_methods.clone(),
            races: self.race_mode(),
            property: self.property,
        }
    }
}

/// How results are printed and saved.
#[derive(Args, Debug)]
pub struct OutputArgs {
    /// Print one JSON object on stdout instead of the human report.
    #[arg(long)]
    pub json: bool,
    /// Where to write the replay file of a failure (default:
    /// `<module name>.weft.json` in the current directory).
    #[arg(long, value_name = "FILE")]
    pub save_failure: Option<PathBuf>,
    /// Do not write a replay file.
    #[arg(long, conflicts_with = "save_failure")]
    pub no_save: bool,
    /// Show every step of the interleaving, the guest's runtime included
    /// (by default a long one shows the steps around each preemption and
    /// the last ones).
    #[arg(long)]
    pub full_trace: bool,
    /// Show the interleaving as a table with one column per thread.
    #[arg(long)]
    pub table: bool,
    /// Also write the report as a self-contained HTML page: one lane per
    /// thread, preemptions and the failing step marked.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Keep a failure's schedule as found: do not search for one with
    /// fewer preemptions and steps before reporting and saving it.
    #[arg(long)]
    pub no_minimize: bool,
    /// Inserted into the replay file's name before `.weft.json` (set by
    /// the command: a shard's `shard-K-of-N`).
    #[arg(skip)]
    pub replay_tag: Option<String>,
}

impl OutputArgs {
    /// How a failure of `module` is finished: minimized unless
    /// `--no-minimize`, saved where [`OutputArgs::replay_path`] says.
    pub fn finish(&self, module: &Path) -> crate::replay::finish::Finish {
        crate::replay::finish::Finish {
            minimize: !self.no_minimize,
            replay_path: self.replay_path(module),
        }
    }

    /// Where a failure's replay file goes: `--save-failure`, else
    /// `<module name>.weft.json` here; `None` with `--no-save`.
    pub fn replay_path(&self, module: &Path) -> Option<PathBuf> {
        if self.no_save {
            return None;
        }
        let path = self.save_failure.clone().unwrap_or_else(|| {
            let stem = module
                .file_stem()
                .map_or("module".into(), |s| s.to_string_lossy().into_owned());
            PathBuf::from(format!("{stem}.weft.json"))
        });
        Some(match &self.replay_tag {
            Some(tag) => tagged(&path, tag),
            None => path,
        })
    }

    /// The files a command that explores `module` writes (its replay file,
    /// page and `junit` report), to be checked before it starts.
    pub fn outputs(&self, module: &Path, junit: Option<&JunitArgs>) -> Outputs {
        let replay = self.replay_path(module);
        let outputs = Outputs::new().input("the module", module);
        let outputs = if self.save_failure.is_some() {
            outputs.output("--save-failure", Kind::Replay, replay.as_deref())
        } else {
            outputs.default_output("--save-failure", Kind::Replay, replay.as_deref())
        };
        outputs
            .output("--html", Kind::Report, self.html.as_deref())
            .output(
                "--junit",
                Kind::Report,
                junit.and_then(|j| j.junit.as_deref()),
            )
    }

    /// How the interleaving is laid out.
    pub fn layout(&self) -> Layout {
        if self.table {
            Layout::Table
        } else {
            Layout::List
        }
    }

    /// Which steps of the interleaving are shown.
    pub fn focus(&self) -> Focus {
        if self.full_trace {
            Focus::All
        } else {
            Focus::DEFAULT
        }
    }

    /// How reports show the interleaving.
    pub fn shape(&self) -> Shape {
        Shape {
            full_trace: self.full_trace,
            layout: self.layout(),
            focus: self.focus(),
        }
    }
}

/// `path` with `tag` inserted before its extensions (`.weft.json`):
/// `out/bug.weft.json` becomes `out/bug.TAG.weft.json`.
pub fn tagged(path: &Path, tag: &str) -> PathBuf {
    let name = path
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
    let renamed = match name.split_once('.') {
        Some((stem, extensions)) => format!("{stem}.{tag}.{extensions}"),
        None => format!("{name}.{tag}"),
    };
    path.with_file_name(renamed)
}

/// `--junit FILE`, for the commands whose verdicts are test results.
#[derive(Args, Clone, Debug, Default)]
pub struct JunitArgs {
    /// Also write the verdicts as a JUnit XML report, the format CI
    /// systems show test results from.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

impl JunitArgs {
    /// Writes `cases` (one suite named after `module`, which ran for
    /// `time`) to `--junit`'s file, if given; never over the module.
    pub fn write(&self, module: &Path, cases: &[junit::Case], time: Duration) -> Result<()> {
        let Some(path) = &self.junit else {
            return Ok(());
        };
        if same_file(path, module) {
            anyhow::bail!(
                "`{}` is the module itself: the JUnit report would overwrite it (choose another --junit)",
                path.display()
            );
        }
        let suite = module
            .file_name()
            .map_or("module".into(), |n| n.to_string_lossy().into_owned());
        std::fs::write(path, junit::render(&suite, cases, time))
            .with_context(|| format!("cannot write the JUnit report `{}`", path.display()))
    }
}

/// A `--env` entry: `KEY=VALUE` with a key that has neither `=` nor NUL.
fn parse_env_entry(entry: &str) -> Result<String, String> {
    match entry.split_once('=') {
        Some((key, _)) if !key.is_empty() && !entry.contains('\0') => Ok(entry.to_string()),
        _ => Err(format!("`{entry}` is not KEY=VALUE")),
    }
}
