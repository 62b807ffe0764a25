//! Options and output shared by the commands.

use super::{EXIT_FAILURE, EXIT_INCONCLUSIVE, EXIT_PASS};
use crate::debuginfo::symbols::Symbols;
use crate::execution::Setup;
use crate::failure::FailureKind;
use crate::instrument::{Points, SiteTable};
use crate::replay::file::{FORMAT, FoundBy, ModuleRef, ReplayFile, VERSION};
use crate::replay::minimize::{Budget, Minimization, Size, minimize_failure};
use crate::report::html::Page;
use crate::report::interleaving::{self, Focus, Layout};
use crate::report::junit;
use crate::runtime::{ExecutionResult, Failure, Limits, Program, RunConfig};
use anyhow::{Context, Result};
use clap::Args;
use serde_json::json;
use std::fmt::Write as _;
use std::io::Write as _;
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
    /// Make each call of the C library's synchronisation, thread and
    /// allocation functions one step (set by the exhaustive search).
    #[arg(skip)]
    pub library_steps: bool,
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

/// A duration longer than zero (`30s`, `2m`).
pub fn parse_positive_duration(text: &str) -> Result<Duration, String> {
    match humantime::parse_duration(text) {
        Ok(duration) if duration.is_zero() => Err("must be longer than zero".into()),
        Ok(duration) => Ok(duration),
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
            log_accesses: self.race_mode() != crate::race::RaceMode::Off,
            library_steps: self.library_steps,
        }
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

    /// Arguments, WASI seed and limits of every execution.
    pub fn run_config(&self) -> Setup {
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

/// Whether `a` and `b` name the same existing file.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The module a replay file at `replay_path` runs: `given` if the user
/// named one, else the recorded path; when that is relative and not found
/// from here (it is relative to where the file was written), the recorded
/// path beside the replay file, then a file of the recorded name beside
/// it.
pub fn recorded_module(file: &ReplayFile, replay_path: &Path, given: Option<PathBuf>) -> PathBuf {
    given.unwrap_or_else(|| {
        let recorded = PathBuf::from(&file.module.path);
        if recorded.exists() || recorded.is_absolute() {
            return recorded;
        }
        let dir = replay_path.parent().unwrap_or(Path::new(""));
        [
            Some(dir.join(&recorded)),
            recorded.file_name().map(|name| dir.join(name)),
        ]
        .into_iter()
        .flatten()
        .find(|candidate| candidate.exists())
        .unwrap_or(recorded)
    })
}

/// Reads the module of a replay file, saying how to name it when it is
/// not where the file says (`named`: the user named it).
pub fn read_recorded_module(path: &Path, named: bool) -> Result<Vec<u8>> {
    if named {
        return read_module(path);
    }
    read_module(path).with_context(|| {
        format!(
            "the replay file's module is not at `{}`: name it with --module",
            path.display()
        )
    })
}

/// Reads a module file, assembling `.wat` text.
pub fn read_module(path: &Path) -> Result<Vec<u8>> {
    let bytes = crate::input::read_file(path, crate::input::MODULE_LIMIT)
        .with_context(|| format!("cannot read module `{}`", path.display()))?;
    if path.extension().is_some_and(|e| e == "wat") || bytes.starts_with(b"(") {
        return wat::parse_bytes(&bytes)
            .map(|b| b.into_owned())
            .with_context(|| format!("cannot assemble `{}`", path.display()));
    }
    Ok(bytes)
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
}

impl OutputArgs {
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

/// Writes `page` to `path`, which must not be the module `module`.
pub fn write_page(page: &Page, path: &Path, module: &Path) -> Result<()> {
    if same_file(path, module) {
        anyhow::bail!(
            "`{}` is the module itself: the page would overwrite it (choose another --html)",
            path.display()
        );
    }
    page.write(path)
        .with_context(|| format!("cannot write the page `{}`", path.display()))
}

/// Replaces a failing `result` and its `failure` by the same failure under
/// the smallest schedule minimization finds, unless `--no-minimize` (see
/// [`crate::replay::minimize::minimize_failure`]).
pub fn minimize_verdict(
    output: &OutputArgs,
    program: &mut Program,
    setup: &Setup,
    result: &mut ExecutionResult,
    failure: &mut Failure,
) -> Option<Minimization> {
    if output.no_minimize {
        return None;
    }
    minimize_failure(program, setup, result, failure, Budget::default())
}

/// `n` and `noun`, plural unless `n` is 1.
fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The line a report gives a minimization.
/// A `--env` entry: `KEY=VALUE` with a key that has neither `=` nor NUL.
fn parse_env_entry(entry: &str) -> Result<String, String> {
    match entry.split_once('=') {
        Some((key, _)) if !key.is_empty() && !entry.contains('\0') => Ok(entry.to_string()),
        _ => Err(format!("`{entry}` is not KEY=VALUE")),
    }
}

/// What a failing execution in which only one thread could ever run
/// says: no other interleaving of it exists, so its failure does not
/// depend on the schedule. A panic adds why such failures are common on
/// wasm: a panic aborts the whole program there, so a test that catches
/// its own panic cannot pass under any runner.
fn no_interleaving_text(failure: &Failure) -> String {
    let mut text = "no scheduling decision: only one thread could ever run, so the failure does not depend on the schedule".to_string();
    if failure.kind == FailureKind::Assertion && failure.message.contains(" panicked at ") {
        text.push_str(
            " (a panic aborts on wasm, which has no unwinding: a test that catches its own panic, with `catch_unwind` or a poisoned lock, fails this way under any runner)",
        );
    }
    text
}

pub fn describe_minimization(m: &Minimization) -> String {
    let size = |s: Size| {
        format!(
            "{} and {} steps",
            count(s.preemptions, "preemption"),
            s.steps
        )
    };
    let how = if m.complete {
        format!("{} executions", m.executions)
    } else {
        format!(
            "stopped at its budget after {} executions: a smaller one may exist",
            m.executions
        )
    };
    if m.to < m.from {
        format!(
            "schedule minimized from {} to {} ({how})",
            size(m.from),
            size(m.to)
        )
    } else {
        format!("schedule already minimal: {} ({how})", size(m.to))
    }
}

/// What a command found, ready to print.
pub struct Report<'a> {
    pub module: &'a Path,
    pub wasm: &'a [u8],
    pub sites: &'a SiteTable,
    pub executions: u64,
    pub distinct_traces: usize,
    pub elapsed: Duration,
    pub headline: String,
    pub result: Option<&'a ExecutionResult>,
    pub failure: Option<&'a Failure>,
    pub replay_file: Option<PathBuf>,
    pub minimization: Option<Minimization>,
    /// Why there is no verdict, when no failure was found but a limit cut
    /// an execution short.
    pub inconclusive: Option<String>,
    pub extra: serde_json::Value,
}

impl Report<'_> {
    /// Prints the report (and writes its page, with `--html`) and returns
    /// the exit code.
    pub fn print(&self, output: &OutputArgs) -> u8 {
        let mut text = String::new();
        let code = self.render(output, &mut text);
        emit(&text);
        if let Err(error) = self.write_html(output, |_| {}) {
            eprintln!(
                "weft: error: {}",
                super::terminal::escape_str(&format!("{error:#}"))
            );
            return super::EXIT_ERROR;
        }
        code
    }

    /// Writes `--html`'s page (nothing without `--html`), changed by
    /// `extend` first: an actor chart, highlighted accesses.
    pub fn write_html(&self, output: &OutputArgs, extend: impl FnOnce(&mut Page)) -> Result<()> {
        let Some(path) = &output.html else {
            return Ok(());
        };
        let mut page = self.page(output);
        extend(&mut page);
        write_page(&page, path, self.module)
    }

    /// The report as an HTML page.
    pub fn page(&self, output: &OutputArgs) -> Page {
        let symbols = Symbols::new(self.wasm);
        let mut page = match self.result {
            Some(result) => Page::new(
                self.headline.clone(),
                interleaving::rows(result, self.sites, &symbols, output.full_trace),
                &result.thread_names,
                self.failure,
            ),
            None => Page::new(self.headline.clone(), Vec::new(), &[], None),
        };
        if let Some(m) = &self.minimization {
            page.notes.push(describe_minimization(m));
        }
        if let Some(path) = &self.replay_file {
            page.notes
                .push(format!("replay with: weft replay {}", path.display()));
        }
        page
    }

    fn render(&self, output: &OutputArgs, out: &mut String) -> u8 {
        let (code, status) = if self.failure.is_some() {
            (EXIT_FAILURE, "failure")
        } else if self.inconclusive.is_some() {
            (EXIT_INCONCLUSIVE, "inconclusive")
        } else {
            (EXIT_PASS, "pass")
        };
        let symbols = Symbols::new(self.wasm);
        let rows = self
            .result
            .map(|r| interleaving::rows(r, self.sites, &symbols, output.full_trace))
            .unwrap_or_default();
        if output.json {
            let mut value = json!({
                "status": status,
                "module": self.module.display().to_string(),
                "executions": self.executions,
                "distinct_traces": self.distinct_traces,
                "elapsed_ms": self.elapsed.as_secs_f64() * 1000.0,
            });
            let obj = value.as_object_mut().expect("an object");
            if let Some(result) = self.result {
                obj.insert("trace_hash".into(), json!(result.trace_hash));
                obj.insert("steps".into(), json!(result.steps));
                obj.insert("decisions".into(), json!(result.decisions.len()));
                obj.insert("preemptions".into(), json!(result.preemptions.len()));
                obj.insert(
                    "stdout".into(),
                    json!(String::from_utf8_lossy(&result.stdout)),
                );
                obj.insert(
                    "stderr".into(),
                    json!(String::from_utf8_lossy(&result.stderr)),
                );
            }
            if let Some(failure) = self.failure {
                let name = self.result.and_then(|r| {
                    r.thread_names
                        .get(failure.thread as usize)
                        .cloned()
                        .flatten()
                });
                obj.insert(
                    "failure".into(),
                    json!({
                        "kind": failure.kind.name(),
                        "message": failure.message,
                        "thread": failure.thread,
                        "thread_name": name,
                    }),
                );
                obj.insert("interleaving".into(), json!(rows));
            }
            if let Some(path) = &self.replay_file {
                obj.insert("replay_file".into(), json!(path.display().to_string()));
            }
            if let Some(why) = &self.inconclusive {
                obj.insert("inconclusive_because".into(), json!(why));
            }
            if let Some(m) = &self.minimization {
                obj.insert("minimized".into(), json!(m));
            }
            if let serde_json::Value::Object(extra) = &self.extra {
                for (k, v) in extra {
                    obj.insert(k.clone(), v.clone());
                }
            }
            let _ = writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&value).expect("json")
            );
            return code;
        }
        self.human(&rows, output, out);
        code
    }

    /// The report as text, the headline first.
    pub fn text(&self, output: &OutputArgs) -> String {
        let symbols = Symbols::new(self.wasm);
        let rows = self
            .result
            .map(|r| interleaving::rows(r, self.sites, &symbols, output.full_trace))
            .unwrap_or_default();
        let mut out = String::new();
        self.human(&rows, output, &mut out);
        out
    }

    fn human(&self, rows: &[interleaving::Row], output: &OutputArgs, out: &mut String) {
        let _ = writeln!(out, "weft: {}", self.headline);
        if let (None, Some(why)) = (self.failure, &self.inconclusive) {
            let _ = writeln!(out, "INCONCLUSIVE: {why}");
        }
        let Some(result) = self.result else {
            return;
        };
        if let Some(failure) = self.failure {
            let who = match result
                .thread_names
                .get(failure.thread as usize)
                .cloned()
                .flatten()
            {
                Some(name) => format!("thread {} ({name})", failure.thread),
                None if failure.thread == 0 => "thread 0 (main)".to_string(),
                None => format!("thread {}", failure.thread),
            };
            let _ = writeln!(out, "\nFAILURE: {} in {who}", failure.kind.name());
            for line in failure.message.lines() {
                let _ = writeln!(out, "  {line}");
            }
            let _ = writeln!(
                out,
                "\ninterleaving ({} steps, {} scheduling decisions, {}, trace {}):",
                result.steps,
                result.decisions.len(),
                count(result.preemptions.len() as u64, "preemption"),
                result.trace_hash
            );
            let of_one_execution = matches!(
                failure.kind,
                FailureKind::Assertion
                    | FailureKind::Exit
                    | FailureKind::Deadlock
                    | FailureKind::Livelock
            );
            if of_one_execution && result.decisions.is_empty() {
                let _ = writeln!(out, "{}", no_interleaving_text(failure));
            }
            if let Some(m) = &self.minimization {
                let _ = writeln!(out, "{}", describe_minimization(m));
            }
            out.push_str(&interleaving::render(rows, output.layout(), output.focus()));
            print_stream(out, "guest stdout", &result.stdout);
            let stderr = String::from_utf8_lossy(&result.stderr);
            // The failure message already quotes the guest's last words
            // (a panic or an assert message) unless they were only Rust's
            // backtrace hint.
            let shown = stderr
                .trim_end()
                .lines()
                .rfind(|l| !l.starts_with(crate::runtime::outcome::BACKTRACE_HINT))
                .is_some_and(|last| failure.message.contains(last.trim()));
            if !shown {
                print_stream(out, "guest stderr", &result.stderr);
            }
            if let Some(path) = &self.replay_file {
                let _ = writeln!(out, "\nreplay file: {}", path.display());
                let _ = writeln!(out, "replay with: weft replay {}", path.display());
            }
        } else {
            let _ = writeln!(out, "trace {}", result.trace_hash);
        }
    }
}

fn print_stream(out: &mut String, title: &str, bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n{title}:");
    for line in String::from_utf8_lossy(bytes).lines() {
        let _ = writeln!(out, "  {line}");
    }
}

/// Writes `text` to stdout; a closed pipe (`weft ... | head`) is not an error.
fn emit(text: &str) {
    let mut stdout = super::terminal::stdout();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}

/// Writes the replay file of `result` unless told not to; returns its path.
pub fn save_replay(
    output: &OutputArgs,
    module: &ModuleArgs,
    wasm: &[u8],
    result: &ExecutionResult,
    failure: &Failure,
    found_by: FoundBy,
) -> Result<Option<PathBuf>> {
    if output.no_save {
        return Ok(None);
    }
    let path = output.save_failure.clone().unwrap_or_else(|| {
        let stem = module
            .module
            .file_stem()
            .map_or("module".into(), |s| s.to_string_lossy().into_owned());
        PathBuf::from(format!("{stem}.weft.json"))
    });
    if same_file(&path, &module.module) {
        anyhow::bail!(
            "`{}` is the module itself: the replay file would overwrite it (choose another --save-failure)",
            path.display()
        );
    }
    let run = Run {
        module: &module.module,
        wasm,
        instrument: module.instrument_options(),
        setup: module.run_config(),
    };
    write_replay(&path, run, result, failure, found_by)?;
    Ok(Some(path))
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
    result: &ExecutionResult,
    failure: &Failure,
    found_by: FoundBy,
) -> Result<()> {
    let file = ReplayFile {
        format: FORMAT.into(),
        version: VERSION,
        module: ModuleRef {
            path: run.module.display().to_string(),
            blake3: blake3::hash(run.wasm).to_hex().to_string(),
        },
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
