//! `weft test`: the unit tests of a module, each under its schedules,
//! reported the way `cargo test` reports (and as JUnit XML).

use super::args::{JunitArgs, ModuleArgs, OutputArgs};
use super::files::Run;
use super::output::write_page;
use super::test_selection::{Selected, Selection};
use super::{EXIT_FAILURE, EXIT_INCONCLUSIVE, EXIT_PASS};
use crate::imunit::driver::{TestOptions, TestRun, TestVerdict, run_test, schedules_of};
use crate::imunit::schedule::Schedule;
use crate::imunit::tests_in_module::{
    ListError, NOCAPTURE, TestCase, harness_skipped, list, whole_program,
};
use crate::replay::finish::{Finish, Finished};
use crate::replay::minimize::Minimization;
use crate::report::junit;
use crate::report::test_summary::{
    Counts, FailureEntry, Listed, RanTest, TestEntry, TestsJson, summary,
};
use crate::report::text::Report;
use crate::runtime::{Failure, Program};
use crate::sched::Strategy;
use anyhow::Result;
use clap::Args;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Run the unit tests of a test module (one built with the SDK's
/// `run_tests`, or a Rust `cargo test` binary), each once per schedule it
/// declares (or `--schedule`), under many executions. Any other program
/// runs as one test, with the arguments after it: doc tests, examples and
/// `cargo run` go through the runner too. As a cargo runner
/// (`runner = "weft test"`), it takes what cargo passes on to the test
/// binary: filters (a test runs if its name contains one), `--exact`,
/// `--skip FILTER`, `--ignored`, `--include-ignored`, `--list`; libtest's
/// display options (`--nocapture`, `--test-threads N`, `-q`, ...) change
/// nothing. (A test runs with the arguments that select it alone, so the
/// guest arguments of other commands are these here.)
#[derive(Args, Debug)]
#[command(mut_arg("args", |arg| arg
    .last(false)
    .trailing_var_arg(true)
    .allow_hyphen_values(true)
    .value_name("FILTER_OR_HARNESS_OPTION")
    .help("Filters and the options cargo passes on to a test binary (see above)")))]
pub struct TestArgs {
    #[command(flatten)]
    module: ModuleArgs,
    /// Run only the tests whose name contains this text.
    #[arg(long)]
    filter: Option<String>,
    /// Scheduling strategy (the default, `portfolio`, takes turns among
    /// the sampling strategies).
    #[arg(long, value_enum, default_value = "portfolio")]
    strategy: Strategy,
    /// Executions per test and schedule (a small test runs them all in
    /// about a second; a long one stops at `--time-limit`).
    #[arg(long, default_value_t = 1000)]
    iterations: u64,
    /// Wall time per test and schedule: its exploration stops there (e.g.
    /// `30s`). A test none of whose executions finished in it has no
    /// verdict.
    #[arg(long, value_parser = super::args::parse_positive_duration, default_value = "10s")]
    time_limit: std::time::Duration,
    /// Exploration seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// PCT depth.
    #[arg(long, default_value_t = 3)]
    pct_depth: u32,
    /// Run every execution even after a failure, and report how many failed.
    #[arg(long)]
    keep_going: bool,
    /// Replay files and pages: `--save-failure` and `--html` name the first
    /// failing test's; later ones get the test's name inserted (by default
    /// each failure is saved as `<module>.<test>.weft.json`).
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    junit: JunitArgs,
}

pub fn run(mut args: TestArgs) -> Result<u8> {
    let started = Instant::now();
    args.module.default_sleeps = crate::runtime::Sleeps::Timed;
    // The first failing test's files are checked; later ones get the
    // test's name inserted (see `per_test_path`).
    args.output
        .outputs(&args.module.module, Some(&args.junit))
        .check()?;
    let (wasm, mut program) = args.module.load()?;
    let mut options = TestOptions {
        base: args.module.setup(),
        strategy: args.strategy,
        seed: args.seed,
        pct_depth: args.pct_depth,
        iterations: args.iterations,
        time_limit: Some(args.time_limit),
        keep_going: args.keep_going,
    };
    if let Some(text) = &options.base.schedule {
        text.parse::<Schedule>()?;
    }
    let (tests, selection) = tests_of(&args, &mut program, &mut options)?;
    if selection.list {
        list_selected(&tests, &selection);
        return Ok(EXIT_PASS);
    }
    let (selected, ignored): (Vec<_>, Vec<_>) = tests
        .iter()
        .filter_map(|t| selection.select(t).map(|how| (t, how)))
        .partition(|(_, how)| *how == Selected::Run);
    let filtered_out = tests.len() - selected.len() - ignored.len();
    let runs: Vec<_> = selected
        .iter()
        .flat_map(|(test, _)| {
            let schedules = schedules_of(test, options.base.schedule.as_deref());
            let several = schedules.len() > 1;
            schedules
                .into_iter()
                .enumerate()
                .map(move |(k, schedule)| (*test, schedule, several.then_some(k + 1)))
        })
        .collect();
    let mut runner = Runner {
        args: &args,
        wasm: &wasm,
        program,
        options,
        out: super::terminal::stdout(),
        entries: Vec::new(),
        cases: Vec::new(),
        failed: Vec::new(),
        inconclusive: Vec::new(),
        skipped: 0,
        files: FailureFiles::default(),
        slugs: Slugs::default(),
    };
    runner.header(runs.len() + ignored.len());
    // `#[ignore]`d tests, and those the harness itself skips (a
    // `#[should_panic]` test under `panic = "abort"`).
    for (test, _) in &ignored {
        runner.ignored(test.name.clone());
    }
    for (test, schedule, number) in runs {
        runner.run(test, schedule.as_deref(), number)?;
    }
    runner.finish(filtered_out, started)
}

/// The tests of the module and which of them the arguments select: the
/// module's own, or the whole program as one test when it lists none.
fn tests_of(
    args: &TestArgs,
    program: &mut Program,
    options: &mut TestOptions,
) -> Result<(Vec<TestCase>, Selection)> {
    match list(program, &options.base) {
        Ok(tests) => {
            let selection = Selection::parse(args.filter.as_deref(), &args.module.args)?;
            Ok((tests, selection))
        }
        Err(ListError::Empty | ListError::Failed(_)) => {
            let test = whole_program(&args.module.module, &args.module.args);
            // A harness inside the program (rustdoc's merged doc tests run
            // libtest with arguments of their own) must not capture a
            // panic's message: the abort that follows would lose it.
            let env = &mut options.base.run.env;
            if !env.iter().any(|e| e.starts_with(NOCAPTURE)) {
                env.push(format!("{NOCAPTURE}=1"));
            }
            eprintln!(
                "weft: `{}` is not a test module: it runs as one test, `{}`, the whole program with its arguments (a doc test, an example or a binary cargo runs through its runner)",
                args.module.module.display(),
                test.name
            );
            let selection = Selection::parse(args.filter.as_deref(), &[])?;
            Ok((vec![test], selection))
        }
        Err(e) => Err(e.into()),
    }
}

/// `--list`: the selected tests, as libtest lists them.
fn list_selected(tests: &[TestCase], selection: &Selection) {
    let mut out = super::terminal::stdout();
    let listed: Vec<_> = tests
        .iter()
        .filter(|t| selection.select(t).is_some())
        .collect();
    for test in &listed {
        let _ = writeln!(out, "{}: test", test.name);
    }
    if !selection.terse {
        let _ = writeln!(out, "\n{} tests, 0 benchmarks", listed.len());
    }
}

/// The tests being run, and what they did so far.
struct Runner<'a> {
    args: &'a TestArgs,
    wasm: &'a [u8],
    program: Program,
    options: TestOptions,
    out: super::terminal::Terminal<std::io::StdoutLock<'static>>,
    /// `--json`'s list.
    entries: Vec<TestEntry>,
    /// JUnit's.
    cases: Vec<junit::Case>,
    failed: Vec<Listed>,
    inconclusive: Vec<Listed>,
    /// Tests ignored or skipped by their harness.
    skipped: usize,
    files: FailureFiles,
    slugs: Slugs,
}

impl Runner<'_> {
    /// `running N tests (...)`, without `--json`.
    fn header(&mut self, tests: usize) {
        let args = self.args;
        if args.output.json {
            return;
        }
        // A systematic search may end before its budget.
        let budget = match args.strategy {
            Strategy::Dfs | Strategy::Dpor => format!(
                "at most {} executions each, {}",
                args.iterations,
                args.strategy.name()
            ),
            _ => format!(
                "{} executions each, {}, seed {}",
                args.iterations,
                args.strategy.name(),
                args.seed
            ),
        };
        let plural = if tests == 1 { "" } else { "s" };
        let _ = writeln!(self.out, "\nrunning {tests} test{plural} ({budget})");
    }

    /// Test `label` did not run.
    fn ignored(&mut self, label: String) {
        if !self.args.output.json {
            let _ = writeln!(self.out, "test {label} ... ignored");
        }
        self.entries.push(TestEntry::Ignored {
            test: label,
            status: "ignored",
        });
        self.skipped += 1;
    }

    /// Runs `test` under `schedule` (the `number`-th of its schedules, when
    /// it has several) and reports it.
    fn run(
        &mut self,
        test: &TestCase,
        schedule: Option<&str>,
        number: Option<usize>,
    ) -> Result<()> {
        let test_started = Instant::now();
        let mut outcome = run_test(&mut self.program, &self.options, test, schedule)?;
        let label = outcome.label();
        if outcome.failure.is_none()
            && outcome
                .exploration
                .last
                .as_ref()
                .is_some_and(|last| harness_skipped(&last.stdout, &test.name))
        {
            self.ignored(label);
            return Ok(());
        }
        let no_verdict = match outcome.verdict(self.args.time_limit) {
            TestVerdict::Inconclusive(why) => Some(why),
            TestVerdict::Failed | TestVerdict::Passed => None,
        };
        if !self.args.output.json {
            let verdict = match (&outcome.failure, &no_verdict) {
                (Some(_), _) => "FAILED",
                (None, Some(_)) => "INCONCLUSIVE",
                (None, None) => "ok",
            };
            let _ = writeln!(self.out, "test {label} ... {verdict}");
        }
        let slug = self.slugs.unique(slug(&test.name, number));
        let reported = report_failure(
            self.args,
            self.wasm,
            &mut self.program,
            &mut outcome,
            &label,
            &slug,
            &mut self.files,
        )?;
        let text = match (&reported, &no_verdict) {
            (Some(r), _) => r.text.clone(),
            (None, Some(why)) => format!("inconclusive: {why}"),
            (None, None) => format!(
                "ok: no failure in {} executions",
                outcome.exploration.executions
            ),
        };
        let case_failure = match (&outcome.failure, &no_verdict) {
            (Some(f), _) => Some(junit::CaseFailure::of(f)),
            // A test with no verdict must not pass a CI job.
            (None, Some(why)) => Some(junit::CaseFailure {
                kind: "inconclusive".to_string(),
                message: why.clone(),
            }),
            (None, None) => None,
        };
        self.cases.push(junit::Case {
            name: label.clone(),
            time: test_started.elapsed(),
            failure: case_failure,
            output: text.clone(),
        });
        let status = match (&outcome.failure, &no_verdict) {
            (Some(_), _) => "failure",
            (None, Some(_)) => "inconclusive",
            (None, None) => "pass",
        };
        self.entries.push(TestEntry::Ran(Box::new(RanTest {
            test: outcome.test.clone(),
            schedule: outcome.schedule.clone(),
            status,
            inconclusive_because: no_verdict.clone(),
            executions: outcome.exploration.executions,
            seconds: test_started.elapsed().as_secs_f64(),
            failing_executions: outcome.exploration.failing_executions,
            failure: outcome.failure.as_ref().map(|f| FailureEntry {
                kind: f.kind.name(),
                message: f.message.clone(),
                thread: f.thread,
            }),
            replay_file: reported
                .as_ref()
                .and_then(|r| r.replay_file.as_ref())
                .map(|p| p.display().to_string()),
            minimized: reported.as_ref().and_then(|r| r.minimization),
        })));
        if outcome.failure.is_some() {
            self.failed.push(Listed { label, text });
        } else if no_verdict.is_some() {
            self.inconclusive.push(Listed { label, text });
        }
        Ok(())
    }

    /// Writes the JUnit file and prints the summary (or `--json`'s
    /// object); the exit code.
    fn finish(mut self, filtered_out: usize, started: Instant) -> Result<u8> {
        let args = self.args;
        let (failed, inconclusive) = (self.failed.len(), self.inconclusive.len());
        let passed = self.entries.len() - failed - inconclusive - self.skipped;
        args.junit
            .write(&args.module.module, &self.cases, started.elapsed())?;
        if args.output.json {
            let value = TestsJson {
                status: if failed > 0 {
                    "failure"
                } else if inconclusive > 0 {
                    "inconclusive"
                } else {
                    "pass"
                },
                passed,
                failed,
                inconclusive,
                ignored: self.skipped,
                filtered_out,
                tests: self.entries,
            };
            // (Through a `Value`, whose keys are sorted, at every depth.)
            let value = serde_json::to_value(&value)?;
            let _ = writeln!(self.out, "{}", serde_json::to_string_pretty(&value)?);
        } else {
            let counts = Counts {
                passed,
                ignored: self.skipped,
                filtered_out,
            };
            let text = summary(&self.failed, &self.inconclusive, counts, started.elapsed());
            let _ = write!(self.out, "{text}");
        }
        Ok(if failed > 0 {
            EXIT_FAILURE
        } else if inconclusive > 0 {
            EXIT_INCONCLUSIVE
        } else {
            EXIT_PASS
        })
    }
}

/// A test's name as a piece of a file name; `number` tells apart the
/// schedules of a test that has several.
fn slug(name: &str, number: Option<usize>) -> String {
    let mut slug: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if let Some(n) = number {
        slug.push_str(&format!("-schedule{n}"));
    }
    slug
}

/// The slugs given to the tests of one run: two names can make one slug
/// (`x::_y` and `x_::y`), and the files of two tests must not be one.
#[derive(Default)]
struct Slugs {
    used: std::collections::HashSet<String>,
}

impl Slugs {
    /// `slug`, or when an earlier test has it, `slug-2`, `slug-3`, ...
    fn unique(&mut self, slug: String) -> String {
        let mut candidate = slug.clone();
        let mut n = 1;
        while !self.used.insert(candidate.clone()) {
            n += 1;
            candidate = format!("{slug}-{n}");
        }
        candidate
    }
}

/// What was reported about one failing test.
struct Reported {
    text: String,
    replay_file: Option<PathBuf>,
    minimization: Option<Minimization>,
}

/// Which replay files and pages were written, so the next failure's get
/// names of their own.
#[derive(Default)]
struct FailureFiles {
    replays: usize,
    pages: usize,
}

/// Where the `count`-th (from 0) failing test's file goes: `given` for the
/// first, else `given` with `slug` inserted before its extensions;
/// `default` when nothing was given.
fn per_test_path(given: Option<&Path>, count: usize, slug: &str, default: String) -> PathBuf {
    match given {
        None => PathBuf::from(default),
        Some(path) if count == 0 => path.to_path_buf(),
        Some(path) => super::args::tagged(path, slug),
    }
}

/// How often a test failed, for its headline: `after N executions`, or
/// `in K of N executions (P%)` when several failed (`--keep-going`).
fn how_often(executions: u64, failing: u64) -> String {
    if executions == 0 {
        "before any execution".to_string()
    } else if failing > 1 {
        format!(
            "in {failing} of {executions} executions ({:.1}%)",
            100.0 * failing as f64 / executions as f64
        )
    } else {
        format!("after {executions} executions")
    }
}

/// Minimizes a failing test's schedule, saves its replay file, writes its
/// page and returns its report; `None` when the test passed.
fn report_failure(
    args: &TestArgs,
    wasm: &[u8],
    program: &mut Program,
    outcome: &mut TestRun,
    label: &str,
    slug: &str,
    files: &mut FailureFiles,
) -> Result<Option<Reported>> {
    let Some(failure) = outcome.failure.clone() else {
        return Ok(None);
    };
    let executions = outcome.exploration.executions;
    let headline = format!(
        "{} failure in test {label} {} ({}, seed {})",
        failure.kind.name(),
        how_often(executions, outcome.exploration.failing_executions),
        args.strategy.name(),
        args.seed
    );
    // A failure of the executions has one to replay; a schedule naming
    // events the test never fires has none.
    let Some(found) = outcome
        .exploration
        .failure
        .as_mut()
        .filter(|found| found.failure.kind == failure.kind)
    else {
        return Ok(Some(Reported {
            text: format!("weft: {headline}\n  {}\n", failure.message),
            replay_file: None,
            minimization: None,
        }));
    };
    let stem = args
        .module
        .module
        .file_stem()
        .map_or("module".into(), |s| s.to_string_lossy().into_owned());
    let finish = Finish {
        minimize: !args.output.no_minimize,
        replay_path: (!args.output.no_save).then(|| {
            per_test_path(
                args.output.save_failure.as_deref(),
                files.replays,
                slug,
                format!("{stem}.{slug}.weft.json"),
            )
        }),
    };
    let run = Run {
        module: &args.module.module,
        wasm,
        instrument: args.module.instrument_options(),
        setup: outcome.setup.clone(),
    };
    let Finished {
        minimization,
        replay_file,
    } = finish.failure(
        program,
        run,
        &mut found.result,
        &mut found.failure,
        found.found_by.clone(),
    )?;
    files.replays += replay_file.is_some() as usize;
    // The report shows the test's failure (a deadlock's message may say
    // which event never came), under the minimized schedule.
    let shown = Failure {
        thread: found.failure.thread,
        ..failure
    };
    let report = Report {
        module: &args.module.module,
        wasm,
        sites: program.sites(),
        executions,
        distinct_traces: outcome.exploration.distinct_traces,
        elapsed: outcome.exploration.elapsed,
        headline,
        result: Some(&found.result),
        failure: Some(&shown),
        replay_file: replay_file.clone(),
        minimization,
        inconclusive: None,
        advice: crate::report::advice::for_failure(&found.result, outcome.setup.run.sleeps),
        extra: serde_json::Value::Null,
    };
    if let Some(given) = &args.output.html {
        let path = per_test_path(Some(given), files.pages, slug, String::new());
        let page = report.page(args.output.shape());
        write_page(&page, &path, &args.module.module)?;
        files.pages += 1;
    }
    Ok(Some(Reported {
        text: report.text(args.output.shape()),
        replay_file,
        minimization,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_failures_get_the_tests_name_in_their_file_name() {
        let given = Path::new("out/q.weft.json");
        assert_eq!(per_test_path(Some(given), 0, "pop", String::new()), given);
        assert_eq!(
            per_test_path(Some(given), 1, "pop", String::new()),
            Path::new("out/q.pop.weft.json")
        );
        assert_eq!(
            per_test_path(None, 3, "pop", "m.pop.weft.json".into()),
            Path::new("m.pop.weft.json")
        );
        assert_eq!(slug("queue::pop two", Some(2)), "queue__pop_two-schedule2");
    }

    #[test]
    fn two_tests_whose_names_make_one_slug_get_two_files() {
        let mut slugs = Slugs::default();
        let first = slugs.unique(slug("x::_y", None));
        let second = slugs.unique(slug("x_::y", None));
        assert_eq!(first, "x___y");
        assert_eq!(second, "x___y-2");
        assert_eq!(slugs.unique(slug("x__:y", None)), "x___y-3");
    }
}
