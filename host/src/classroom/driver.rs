//! Grading a submission to an exercise: build it, check that it does the
//! exercise, explore it in two phases (sampled schedules with the racing
//! accesses as scheduling points, then the exhaustive search for the time
//! left), and say pass (and how strong that is) or fail (with the
//! minimized interleaving told in plain words, a replay file and an HTML
//! timeline). `weft grade` prints what this returns.

use super::Exercise;
use super::at_once::{self, WorkSites};
use crate::execution::Setup;
use crate::explain::Story;
use crate::explore::{Exhausted, Exploration, ExploreOptions};
use crate::explore_program::{Explored, NothingFinished, Request, explore_program};
use crate::instrument::{InstrumentOptions, PointModel, Points};
use crate::race::RaceMode;
use crate::report::text::{Report, Shape};
use crate::runtime::{Limits, RunConfig};
use crate::sched::Strategy;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How to grade.
#[derive(Clone, Debug)]
pub struct GradeOptions {
    /// Where the built module, the replay file and the HTML timeline of a
    /// failure go.
    pub out: PathBuf,
    /// Most time for the whole grading (default: the exercise's).
    pub time_limit: Option<Duration>,
    /// Exploration seed.
    pub seed: u64,
}

/// One check of a grading and how it went.
#[derive(Clone, Debug)]
pub struct CheckDone {
    /// What was checked ("builds", "no failure under any schedule").
    pub name: String,
    /// Whether it passed.
    pub passed: bool,
    /// What it found, in a line or a message.
    pub detail: String,
}

/// How grading ended.
#[derive(Debug)]
pub struct Graded {
    /// Whether the submission passes.
    pub passed: bool,
    /// One line: pass and how strong, or the failure.
    pub verdict: String,
    /// The failure told in plain words.
    pub story: Option<Story>,
    /// What the student reads after the verdict, under its heading: the
    /// compiler's message, why there is no verdict, or the report of the
    /// failing exploration (interleaving and all).
    pub report: Option<(&'static str, String)>,
    /// The failure's replay file.
    pub replay_file: Option<PathBuf>,
    /// The failure's HTML timeline.
    pub html: Option<PathBuf>,
    /// The checks, in order.
    pub checks: Vec<CheckDone>,
}

impl Graded {
    /// The feedback a student reads on `exercise`.
    pub fn feedback(&self, exercise: &Exercise) -> String {
        let mut out = format!("{}: {}\n", exercise.title, self.verdict);
        if let Some(story) = &self.story {
            out.push_str("\nWhat happened, in plain words:\n");
            out.push_str(&story.text());
        }
        if let Some((heading, report)) = &self.report {
            out.push_str(&format!("\n{heading}\n"));
            out.push_str(report);
            if !report.ends_with('\n') {
                out.push('\n');
            }
        }
        if let Some(html) = &self.html {
            out.push_str(&format!("\ntimeline: {}\n", html.display()));
        }
        out
    }

    /// A failed grading of a submission that does not do the exercise.
    fn not_the_exercise(why: String, mut checks: Vec<CheckDone>) -> Graded {
        checks.push(CheckDone {
            name: "does the exercise".into(),
            passed: false,
            detail: why.clone(),
        });
        Graded::failed("FAIL: the submission does not do the exercise", why, checks)
    }

    /// A failed grading with `verdict`, for the reason `why`.
    fn failed(verdict: &str, why: String, checks: Vec<CheckDone>) -> Graded {
        Graded {
            passed: false,
            verdict: verdict.into(),
            story: None,
            report: Some(("Why:", why)),
            replay_file: None,
            html: None,
            checks,
        }
    }
}

/// Grades `submission` (a module, a source file or a folder `weft build`
/// builds) against `exercise`.
///
/// # Errors
///
/// When the output folder cannot be made, the module cannot be read or
/// run, or a file cannot be written. A submission that does not build,
/// does not do the exercise, fails, or gets no verdict is a failed
/// grading, not an error.
pub fn grade(exercise: &Exercise, submission: &Path, options: &GradeOptions) -> Result<Graded> {
    std::fs::create_dir_all(&options.out)
        .with_context(|| format!("cannot create `{}`", options.out.display()))?;
    let stem = submission
        .file_stem()
        .map_or("submission".into(), |s| s.to_string_lossy().into_owned());
    match obtain_module(submission, &options.out, &stem)? {
        Err(message) => Ok(Graded {
            passed: false,
            verdict: "FAIL: the submission does not build".into(),
            story: None,
            report: Some(("What the compiler said:", message.clone())),
            replay_file: None,
            html: None,
            checks: vec![CheckDone {
                name: "builds".into(),
                passed: false,
                detail: message,
            }],
        }),
        Ok(module) => Grading {
            exercise,
            options,
            replay_path: options.out.join(format!("{stem}.weft.json")),
            html: options.out.join(format!("{stem}.html")),
            module,
            checks: vec![CheckDone {
                name: "builds".into(),
                passed: true,
                detail: String::new(),
            }],
        }
        .run(),
    }
}

/// The module to grade: the submission itself, or what it builds into
/// (`Err` with the compiler's message when it does not build).
fn obtain_module(
    submission: &Path,
    out: &Path,
    stem: &str,
) -> Result<std::result::Result<PathBuf, String>> {
    if submission.extension().is_some_and(|e| e == "wasm") {
        return Ok(Ok(submission.to_path_buf()));
    }
    let module = out.join(format!("{stem}.wasm"));
    match crate::build::build(submission, Some(&module), &[]) {
        Ok(path) => Ok(Ok(path)),
        Err(crate::build::BuildError::Compile { output, .. }) => Ok(Err(output)),
        Err(no_main @ crate::build::BuildError::NoMain(_)) => Ok(Err(no_main.to_string())),
        Err(other) => Err(other.into()),
    }
}

/// One phase of grading: an exploration with this strategy, race mode,
/// executions and time.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Phase {
    pub(crate) strategy: Strategy,
    pub(crate) races: RaceMode,
    pub(crate) iterations: Option<u64>,
    pub(crate) time_limit: Duration,
}

/// The exploration of `module` that `phase` of grading `exercise` runs
/// with `seed`: `weft explore`'s defaults otherwise, and calls logged for
/// the plain-words stories.
pub(crate) fn phase_request(
    exercise: &Exercise,
    module: &Path,
    phase: Phase,
    seed: u64,
) -> Request {
    let name = module
        .file_name()
        .map_or("main.wasm".into(), |n| n.to_string_lossy().into_owned());
    let setup = Setup {
        run: RunConfig {
            args: vec![name],
            limits: Limits {
                max_steps: exercise.max_steps.unwrap_or(Limits::default().max_steps),
                ..Limits::default()
            },
            ..RunConfig::default()
        },
        schedule: exercise.schedule.clone(),
        races: phase.races,
        ..Setup::default()
    };
    let time_limit = Some(phase.time_limit);
    Request {
        options: ExploreOptions {
            strategy: phase.strategy,
            seed,
            iterations: phase
                .iterations
                .or_else(|| Request::default_iterations(phase.strategy, time_limit)),
            time_limit,
            setup,
            jobs: Request::default_jobs(phase.strategy),
            ..ExploreOptions::default()
        },
        instrument: InstrumentOptions {
            log_calls: true,
            ..Request::instrument_for(
                phase.strategy,
                PointModel::default(),
                Points::Sync,
                phase.races,
            )
        },
        minimize: true,
    }
}

/// A grading under way: the built module, and the checks so far.
struct Grading<'a> {
    exercise: &'a Exercise,
    options: &'a GradeOptions,
    module: PathBuf,
    replay_path: PathBuf,
    html: PathBuf,
    checks: Vec<CheckDone>,
}

impl Grading<'_> {
    fn run(mut self) -> Result<Graded> {
        let start = Instant::now();
        let exercise = self.exercise;
        let budget = self.options.time_limit.unwrap_or(exercise.time_limit);
        let wasm = crate::input::read_file(&self.module, crate::input::MODULE_LIMIT)
            .with_context(|| format!("cannot read `{}`", self.module.display()))?;
        if let Some(why) = missing_functions(exercise, &wasm) {
            return Ok(Graded::not_the_exercise(why, self.checks));
        }
        // First, sampled schedules, with the plain accesses that race made
        // scheduling points: the failures a race leads to (an update lost,
        // a broken invariant) are found as themselves and told as such.
        let sampling = Phase {
            strategy: Strategy::Portfolio,
            races: RaceMode::Schedule,
            iterations: Some(exercise.executions),
            time_limit: whole_millis(budget.mul_f64(0.4)).max(Duration::from_millis(1)),
        };
        let mut sampled = match self.phase(sampling, "no failure under sampled schedules")? {
            Ok(explored) => explored,
            Err(graded) => return Ok(graded),
        };
        let sampled_executions = sampled.exploration().executions;
        if let Some(why) = too_few_threads(exercise, sampled.exploration()) {
            return Ok(Graded::not_the_exercise(why, self.checks));
        }
        let deadline = start + budget.mul_f64(0.5);
        if let Some(why) = not_at_once(exercise, &mut sampled, (deadline, self.options.seed))? {
            return Ok(Graded::not_the_exercise(why, self.checks));
        }
        // Then the exhaustive search for the time left, where a data race
        // is a failure (so that, when it completes, sequentially consistent
        // executions are all there are, and it has seen them all).
        let left = budget
            .saturating_sub(start.elapsed())
            .max(Duration::from_secs(1));
        let search = Phase {
            strategy: Strategy::Dpor,
            races: if exercise.data_races {
                RaceMode::Fail
            } else {
                RaceMode::Off
            },
            iterations: None,
            time_limit: whole_millis(left),
        };
        let searched = match self.phase(search, "no failure under any schedule")? {
            Ok(explored) => explored,
            Err(graded) => return Ok(graded),
        };
        let exploration = searched.exploration();
        let complete = exploration.exhausted == Some(Exhausted::All);
        let verdict = match (complete, exercise.data_races) {
            (true, true) => format!(
                "PASS: all {} schedules explored (exhaustive search, up to the order of steps that commute), with no failure and no data race",
                exploration.executions
            ),
            (true, false) => format!(
                "PASS: no failure in {sampled_executions} sampled executions and in all {} schedules of an exhaustive search at synchronisation points (data races are not checked, so plain accesses may interleave in ways it did not try)",
                exploration.executions
            ),
            (false, _) => format!(
                "PASS: no failure in {sampled_executions} sampled executions and {} executions of an exhaustive search that did not finish: strong evidence, not a proof",
                exploration.executions
            ),
        };
        Ok(Graded {
            passed: true,
            verdict,
            story: None,
            report: None,
            replay_file: None,
            html: None,
            checks: self.checks,
        })
    }

    /// Runs one phase and records it as check `name`: the exploration
    /// when it found nothing, else the failed grading (with every check so
    /// far).
    fn phase(&mut self, phase: Phase, name: &str) -> Result<std::result::Result<Explored, Graded>> {
        let request = phase_request(self.exercise, &self.module, phase, self.options.seed);
        crate::output_paths::Outputs::new()
            .input("the module", &self.module)
            .output(
                "the replay file",
                crate::output_paths::Kind::Replay,
                Some(&self.replay_path),
            )
            .output(
                "the timeline",
                crate::output_paths::Kind::Report,
                Some(&self.html),
            )
            .check()?;
        let wasm = crate::input::read_module(&self.module)?;
        let program = crate::execution::load(&wasm, request.instrument)
            .with_context(|| format!("cannot load `{}`", self.module.display()))?;
        let mut explored = match explore_program(wasm, program, request, |_| {}) {
            Ok(explored) => explored,
            Err(error) => {
                let Some(NothingFinished(limit)) = error.downcast_ref() else {
                    return Err(error);
                };
                let why = format!(
                    "not one execution finished within {}: the program runs for too long, or forever (a loop that never ends, or threads that keep waiting for each other while they spin)",
                    humantime::format_duration(*limit)
                );
                self.record(name, false, why.clone());
                let checks = std::mem::take(&mut self.checks);
                return Ok(Err(Graded::failed("FAIL: too slow", why, checks)));
            }
        };
        let failed_here = explored.failure().is_some();
        let exploration = explored.exploration();
        if let (false, Some(why)) = (
            failed_here,
            exploration.inconclusive.describe(exploration.executions),
        ) {
            // A submission weft cannot give a verdict on does not pass.
            self.record(name, false, why.clone());
            let checks = std::mem::take(&mut self.checks);
            return Ok(Err(Graded::failed("FAIL: no verdict", why, checks)));
        }
        self.record(name, !failed_here, explored.headline().to_string());
        if !failed_here {
            return Ok(Ok(explored));
        }
        self.failed(&mut explored).map(Err)
    }

    fn record(&mut self, name: &str, passed: bool, detail: String) {
        self.checks.push(CheckDone {
            name: name.into(),
            passed,
            detail,
        });
    }

    /// A failed grading from the exploration that found the failure: its
    /// replay file and timeline written, its story told.
    fn failed(&mut self, explored: &mut Explored) -> Result<Graded> {
        // The exploration minimized the failure already.
        let replay_file = explored.save_failure(&self.module, Some(self.replay_path.clone()))?;
        let failure = explored.failure().cloned().expect("a failure was found");
        let setup = explored.setup();
        let story = explored.story(&setup);
        let report = Report::of_exploration(explored, &self.module, replay_file.clone());
        let text = report.text(Shape::default());
        // A timeline that cannot be written does not hide the verdict.
        if let Err(error) = report.page(Shape::default()).write(&self.html) {
            eprintln!(
                "weft: error: cannot write the page `{}`: {error}",
                self.html.display()
            );
        }
        Ok(Graded {
            passed: false,
            verdict: format!("FAIL: {}", failure.kind.name()),
            story,
            report: Some(("The interleaving weft found:", text)),
            replay_file,
            html: Some(self.html.clone()),
            checks: std::mem::take(&mut self.checks),
        })
    }
}

/// `time` in whole milliseconds.
fn whole_millis(time: Duration) -> Duration {
    Duration::from_millis(u64::try_from(time.as_millis()).unwrap_or(u64::MAX))
}

/// Why the submission `wasm` does not keep the functions the exercise
/// says to keep, if it does not. A module without function names cannot be
/// told, and is not held to it.
fn missing_functions(exercise: &Exercise, wasm: &[u8]) -> Option<String> {
    let names = crate::debuginfo::symbols::Symbols::new(wasm).source_function_names();
    if names.is_empty() {
        return None;
    }
    let missing: Vec<&str> = exercise
        .requires
        .functions
        .iter()
        .map(String::as_str)
        .filter(|f| !names.contains(*f))
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "the submission has no function {}: the exercise says to keep {}",
            crate::build::quoted(&missing),
            crate::build::quoted(&exercise.requires.functions)
        )
    })
}

/// Why the submission does not do the exercise's concurrency, if it
/// creates fewer threads than it asks for.
fn too_few_threads(exercise: &Exercise, sampled: &Exploration) -> Option<String> {
    let result = sampled.last.as_ref()?;
    let created = result.thread_names.len().saturating_sub(1);
    let wanted = exercise.requires.threads as usize;
    (created < wanted).then(|| {
        format!(
            "the submission creates {created} thread{} besides `main`; the exercise runs at least {wanted}, so a pass would say nothing",
            if created == 1 { "" } else { "s" }
        )
    })
}

/// Why the submission does not do the exercise's work concurrently, if
/// no execution of random schedules (of the program the sampling phase
/// `sampled` ran, as it ran them but without the race check, until
/// `deadline`) has the threads the exercise asks for amid it at once.
fn not_at_once(
    exercise: &Exercise,
    sampled: &mut Explored,
    (deadline, seed): (Instant, u64),
) -> Result<Option<String>> {
    let Some(wanted) = exercise.requires.at_once else {
        return Ok(None);
    };
    let work = exercise.requires.work();
    // A module without names cannot be told, and is not held to it.
    let Some(sites) = WorkSites::of(sampled.program(), work) else {
        return Ok(None);
    };
    let mut setup = sampled.setup();
    setup.races = RaceMode::Off;
    let seen = at_once::seek(
        sampled.program_mut(),
        &setup,
        &sites,
        wanted as usize,
        (exercise.executions, deadline),
        seed,
    )
    .map_err(anyhow::Error::msg)?;
    if seen.most >= wanted as usize {
        return Ok(None);
    }
    let work = crate::build::quoted(work);
    let seen_at_once = match seen.most {
        0 => format!("no thread ran {work}"),
        1 => format!("never more than one thread was amid {work} at a time"),
        n => format!("never more than {n} threads were amid {work} at a time"),
    };
    Ok(Some(format!(
        "in {} executions, {seen_at_once}; the exercise has {wanted} threads run it at the same time, so a pass would say nothing (is each thread joined before the next is created, or is the work done by `main`?)",
        seen.executions,
    )))
}
