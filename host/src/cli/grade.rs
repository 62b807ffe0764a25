//! `weft grade EXERCISE SUBMISSION`: builds a student's program, explores
//! it against the exercise, and says pass (and how strong that is) or fail
//! (with the minimized interleaving told in plain words, a replay file and
//! an HTML timeline).

use super::explore::{ExploreArgs, ExploredModule, explore_module};
use super::output::write_report_page;
use crate::classroom::Exercise;
use crate::classroom::at_once::{self, WorkSites};
use crate::explain::Story;
use crate::explore_program::Explored;
use crate::explore_program::NothingFinished;
use anyhow::{Context, Result};
use clap::{Args, Parser};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Grade a submission to a classroom exercise: pass or fail, with the
/// failing interleaving told in plain words.
#[derive(Args, Debug)]
pub struct GradeArgs {
    /// The exercise: a folder holding `exercise.toml` (e.g.
    /// `exercises/lost-update`).
    exercise: PathBuf,
    /// The submission: a module (`.wasm`), a source file (`.c`, `.rs`,
    /// `.cpp`, `.zig`, `.wat`) or a folder `weft build` builds.
    submission: PathBuf,
    /// Where the built module, the replay file and the HTML timeline of a
    /// failure go.
    #[arg(long, default_value = "grade-out")]
    out: PathBuf,
    /// Most time for the whole grading (default: the exercise's).
    #[arg(long, value_parser = super::args::parse_positive_duration)]
    time_limit: Option<Duration>,
    /// Exploration seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Print one JSON object for autograders: `score`, `max_score`,
    /// `output` (the feedback text) and `tests`, with the explanation.
    #[arg(long)]
    json: bool,
}

/// Parses `weft explore` arguments (so grading gets explore's defaults).
#[derive(Parser, Debug)]
struct ExploreCommand {
    #[command(flatten)]
    explore: ExploreArgs,
}

/// How grading ended.
struct Graded {
    passed: bool,
    /// One line: pass and how strong, or the failure.
    verdict: String,
    /// The failure told in plain words.
    story: Option<Story>,
    /// What the student reads after the verdict, under its heading: the
    /// compiler's message, why there is no verdict, or the report of the
    /// failing exploration (interleaving and all).
    report: Option<(&'static str, String)>,
    replay_file: Option<PathBuf>,
    html: Option<PathBuf>,
    /// What the checks were, in order, with their outcome.
    checks: Vec<(String, bool, String)>,
}

pub fn run(args: GradeArgs) -> Result<u8> {
    let exercise = Exercise::load(&args.exercise)?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create `{}`", args.out.display()))?;
    let stem = args
        .submission
        .file_stem()
        .map_or("submission".into(), |s| s.to_string_lossy().into_owned());
    let graded = match obtain_module(&args.submission, &args.out, &stem)? {
        Err(message) => Graded {
            passed: false,
            verdict: "FAIL: the submission does not build".into(),
            story: None,
            report: Some(("What the compiler said:", message.clone())),
            replay_file: None,
            html: None,
            checks: vec![("builds".into(), false, message)],
        },
        Ok(module) => grade(&exercise, &module, &args, &stem)?,
    };
    print(&exercise, &args, &graded);
    Ok(if graded.passed {
        super::EXIT_PASS
    } else {
        super::EXIT_FAILURE
    })
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

/// `weft explore` arguments for one phase of grading.
fn explore_args(
    exercise: &Exercise,
    module: &Path,
    out: &Path,
    stem: &str,
    phase: &[&str],
    seed: u64,
) -> Result<ExploreArgs> {
    let replay = out.join(format!("{stem}.weft.json"));
    let html = out.join(format!("{stem}.html"));
    // A module named like an option (`-x.wasm`) stays the module.
    let module = crate::build::operand(module);
    let mut argv: Vec<String> = vec!["weft".into(), module.display().to_string()];
    argv.extend(phase.iter().map(|s| s.to_string()));
    argv.extend([
        "--seed".into(),
        seed.to_string(),
        "--save-failure".into(),
        replay.display().to_string(),
        "--html".into(),
        html.display().to_string(),
    ]);
    if let Some(schedule) = &exercise.schedule {
        argv.extend(["--schedule".into(), schedule.clone()]);
    }
    if let Some(steps) = exercise.max_steps {
        argv.extend(["--max-steps".into(), steps.to_string()]);
    }
    let mut parsed = ExploreCommand::try_parse_from(argv)
        .context("the exercise's settings are not valid for weft explore")?
        .explore;
    // The recorder of plain-words stories follows library calls.
    parsed.module.log_calls = true;
    Ok(parsed)
}

fn grade(exercise: &Exercise, module: &Path, args: &GradeArgs, stem: &str) -> Result<Graded> {
    let start = Instant::now();
    let budget = args.time_limit.unwrap_or(exercise.time_limit);
    let mut checks = vec![("builds".to_string(), true, String::new())];
    let wasm = crate::input::read_file(module, crate::input::MODULE_LIMIT)
        .with_context(|| format!("cannot read `{}`", module.display()))?;
    if let Some(why) = missing_functions(exercise, &wasm) {
        return Ok(not_the_exercise(why, checks));
    }
    // First, sampled schedules, with the plain accesses that race made
    // scheduling points: the failures a race leads to (an update lost, a
    // broken invariant) are found as themselves and told as such.
    let sampling_time = budget.mul_f64(0.4);
    let mut sampling = explore_args(
        exercise,
        module,
        &args.out,
        stem,
        &[
            "--races",
            "schedule",
            "--iterations",
            &exercise.executions.to_string(),
            "--time-limit",
            &format!("{}ms", sampling_time.as_millis().max(1)),
        ],
        args.seed,
    )?;
    let mut sampled = match phase(
        &mut sampling,
        "no failure under sampled schedules",
        &mut checks,
    )? {
        Ok(explored) => explored,
        Err(graded) => return Ok(graded),
    };
    let sampled_executions = sampled.exploration().executions;
    if let Some(why) = too_few_threads(exercise, sampled.exploration()) {
        return Ok(not_the_exercise(why, checks));
    }
    let deadline = start + budget.mul_f64(0.5);
    if let Some(why) = not_at_once(exercise, &mut sampled, (deadline, args.seed))? {
        return Ok(not_the_exercise(why, checks));
    }
    // Then the exhaustive search for the time left, where a data race is a
    // failure (so that, when it completes, sequentially consistent
    // executions are all there are, and it has seen them all).
    let left = budget
        .saturating_sub(start.elapsed())
        .max(Duration::from_secs(1));
    let races = if exercise.data_races { "fail" } else { "off" };
    let mut search_args = explore_args(
        exercise,
        module,
        &args.out,
        stem,
        &[
            "--strategy",
            "dpor",
            "--races",
            races,
            "--time-limit",
            &format!("{}ms", left.as_millis()),
        ],
        args.seed,
    )?;
    let searched = match phase(
        &mut search_args,
        "no failure under any schedule",
        &mut checks,
    )? {
        Ok(explored) => explored,
        Err(graded) => return Ok(graded),
    };
    let exploration = searched.exploration();
    let complete = exploration.exhausted == Some(crate::explore::Exhausted::All);
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
        checks,
    })
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
fn too_few_threads(exercise: &Exercise, sampled: &crate::explore::Exploration) -> Option<String> {
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
    setup.races = crate::race::RaceMode::Off;
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

/// A failed grading of a submission that does not do the exercise.
fn not_the_exercise(why: String, mut checks: Vec<(String, bool, String)>) -> Graded {
    checks.push(("does the exercise".into(), false, why.clone()));
    Graded {
        passed: false,
        verdict: "FAIL: the submission does not do the exercise".into(),
        story: None,
        report: Some(("Why:", why)),
        replay_file: None,
        html: None,
        checks,
    }
}

/// Runs one phase of grading as `args` say and records it as check `name`:
/// the exploration when it found nothing, else the failed grading (with
/// every check so far).
fn phase(
    args: &mut ExploreArgs,
    name: &str,
    checks: &mut Vec<(String, bool, String)>,
) -> Result<std::result::Result<Explored, Graded>> {
    let mut found = match explore_module(args, false) {
        Ok(found) => found,
        Err(error) => {
            let Some(NothingFinished(limit)) = error.downcast_ref() else {
                return Err(error);
            };
            let why = format!(
                "not one execution finished within {}: the program runs for too long, or forever (a loop that never ends, or threads that keep waiting for each other while they spin)",
                humantime::format_duration(*limit)
            );
            checks.push((name.into(), false, why.clone()));
            return Ok(Err(Graded {
                passed: false,
                verdict: "FAIL: too slow".into(),
                story: None,
                report: Some(("Why:", why)),
                replay_file: None,
                html: None,
                checks: std::mem::take(checks),
            }));
        }
    };
    let explored = &found.explored;
    let failed_here = explored.failure().is_some();
    let exploration = explored.exploration();
    if let (false, Some(why)) = (
        failed_here,
        exploration.inconclusive.describe(exploration.executions),
    ) {
        // A submission weft cannot give a verdict on does not pass.
        checks.push((name.into(), false, why.clone()));
        return Ok(Err(Graded {
            passed: false,
            verdict: "FAIL: no verdict".into(),
            story: None,
            report: Some(("Why:", why)),
            replay_file: None,
            html: None,
            checks: std::mem::take(checks),
        }));
    }
    checks.push((name.into(), !failed_here, explored.headline().to_string()));
    if !failed_here {
        return Ok(Ok(found.explored));
    }
    Ok(Err(failed(&mut found, args, std::mem::take(checks))))
}

/// A failed grading from the exploration that found the failure.
fn failed(
    found: &mut ExploredModule,
    args: &ExploreArgs,
    checks: Vec<(String, bool, String)>,
) -> Graded {
    let failure = found
        .explored
        .failure()
        .cloned()
        .expect("a failure was found");
    let setup = found.explored.setup();
    let story = found.explored.story(&setup);
    let report = found.report(&args.module.module);
    let text = report.text(args.output.shape());
    let html = args.output.html.clone();
    if let Err(error) = write_report_page(&report, &args.output, |_| {}) {
        eprintln!(
            "weft: error: {}",
            super::terminal::escape_str(&format!("{error:#}"))
        );
    }
    Graded {
        passed: false,
        verdict: format!("FAIL: {}", failure.kind.name()),
        story,
        report: Some(("The interleaving weft found:", text)),
        replay_file: found.replay_file.clone(),
        html,
        checks,
    }
}

/// The feedback a student reads.
fn feedback(exercise: &Exercise, graded: &Graded) -> String {
    let mut out = format!("{}: {}\n", exercise.title, graded.verdict);
    if let Some(story) = &graded.story {
        out.push_str("\nWhat happened, in plain words:\n");
        out.push_str(&story.text());
    }
    if let Some((heading, report)) = &graded.report {
        out.push_str(&format!("\n{heading}\n"));
        out.push_str(report);
        if !report.ends_with('\n') {
            out.push('\n');
        }
    }
    if let Some(html) = &graded.html {
        out.push_str(&format!("\ntimeline: {}\n", html.display()));
    }
    out
}

fn print(exercise: &Exercise, args: &GradeArgs, graded: &Graded) {
    let text = feedback(exercise, graded);
    if args.json {
        let value = json!({
            "score": if graded.passed { 1 } else { 0 },
            "max_score": 1,
            "status": if graded.passed { "passed" } else { "failed" },
            "exercise": exercise.name,
            "submission": args.submission.display().to_string(),
            "output": text,
            "tests": graded.checks.iter().map(|(name, ok, detail)| json!({
                "name": name,
                "score": if *ok { 1 } else { 0 },
                "max_score": 1,
                "status": if *ok { "passed" } else { "failed" },
                "output": detail,
            })).collect::<Vec<_>>(),
            "explanation": graded.story,
            "replay_file": graded.replay_file.as_ref().map(|p| p.display().to_string()),
            "html": graded.html.as_ref().map(|p| p.display().to_string()),
        });
        println!("{}", serde_json::to_string_pretty(&value).expect("json"));
    } else {
        let mut stdout = super::terminal::stdout();
        let _ = std::io::Write::write_all(&mut stdout, text.as_bytes());
    }
}
