//! Which tests `weft test` runs: its `--filter`, and the arguments `cargo
//! test` passes on to a test binary when weft is its runner (`weft test
//! BIN [FILTER...] [--exact] [--skip FILTER] [--ignored]
//! [--include-ignored] [--list]`), read as libtest reads them.

use crate::imunit::tests_in_module::TestCase;
use anyhow::{Result, bail};

/// libtest's options that take a value and change nothing under weft
/// (weft runs one test at a time, and prints its own report);
/// `--test-threads` too, once its value is checked.
const IGNORED_WITH_VALUE: [&str; 4] = ["--color", "--logfile", "--shuffle-seed", "-Z"];

/// libtest's flags that change nothing under weft.
const IGNORED_FLAGS: [&str; 10] = [
    "--nocapture",
    "--no-capture",
    "--show-output",
    "-q",
    "--quiet",
    "--report-time",
    "--ensure-time",
    "--shuffle",
    "--test",
    "--force-run-in-process",
];

/// The tests asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// A test runs if its name contains one of them (or equals one, with
    /// `exact`); none: every test.
    filters: Vec<String>,
    /// Filters match whole names.
    exact: bool,
    /// Tests whose name contains one of them do not run.
    skip: Vec<String>,
    /// Only the ignored tests run (`--ignored`).
    only_ignored: bool,
    /// Ignored tests run too (`--include-ignored`).
    include_ignored: bool,
    /// Print the tests instead of running them (`--list`).
    pub list: bool,
    /// libtest's terse output (`--format terse`): a list without its
    /// count.
    pub terse: bool,
}

/// Whether a selected test runs, or is reported as ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selected {
    /// It runs.
    Run,
    /// It is ignored (`#[ignore]`, and neither `--ignored` nor
    /// `--include-ignored`).
    Ignored,
}

impl Selection {
    /// The selection of `--filter` (if given) and the harness arguments.
    ///
    /// # Errors
    ///
    /// An option libtest does not have, or one without its value.
    pub fn parse(filter: Option<&str>, harness: &[String]) -> Result<Selection> {
        let mut selection = Selection {
            filters: filter.map(String::from).into_iter().collect(),
            ..Selection::default()
        };
        let mut args = harness.iter();
        while let Some(arg) = args.next() {
            let (name, inline) = match arg.split_once('=') {
                Some((name, value)) if name.starts_with('-') => (name, Some(value.to_string())),
                _ => (arg.as_str(), None),
            };
            let mut value = || -> Result<String> {
                match inline.clone().or_else(|| args.next().cloned()) {
                    Some(value) => Ok(value),
                    None => bail!("`{name}` needs a value"),
                }
            };
            match name {
                "--exact" => selection.exact = true,
                "--ignored" => selection.only_ignored = true,
                "--include-ignored" => selection.include_ignored = true,
                "--list" => selection.list = true,
                "--skip" => selection.skip.push(value()?),
                "--format" => match value()?.as_str() {
                    "pretty" => selection.terse = false,
                    "terse" => selection.terse = true,
                    other => bail!(
                        "weft test prints libtest's pretty or terse output, not `--format {other}`: use weft's own --json for a machine-readable report"
                    ),
                },
                "--test-threads" => {
                    // Checked as libtest checks it, though weft runs one
                    // test at a time.
                    let threads = value()?;
                    if !threads.parse::<usize>().is_ok_and(|n| n > 0) {
                        bail!("argument for --test-threads must be a number > 0 (got `{threads}`)");
                    }
                }
                _ if IGNORED_WITH_VALUE.contains(&name) => {
                    value()?;
                }
                _ if IGNORED_FLAGS.contains(&name) => {}
                _ if name.starts_with('-') && name.len() > 1 => bail!(
                    "`{name}` is not an option of weft test nor of a test harness (filters, --exact, --skip, --ignored, --include-ignored, --list)"
                ),
                _ => selection.filters.push(arg.clone()),
            }
        }
        Ok(selection)
    }

    /// Whether `test` is selected, and how; `None` when it is filtered out.
    pub fn select(&self, test: &TestCase) -> Option<Selected> {
        let matches = |filter: &String| {
            if self.exact {
                test.name == *filter
            } else {
                test.name.contains(filter.as_str())
            }
        };
        if !(self.filters.is_empty() || self.filters.iter().any(matches))
            || self
                .skip
                .iter()
                .any(|skip| test.name.contains(skip.as_str()))
            || (self.only_ignored && !test.ignored)
        {
            return None;
        }
        Some(
            if test.ignored && !self.only_ignored && !self.include_ignored {
                Selected::Ignored
            } else {
                Selected::Run
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{Selected, Selection};
    use crate::imunit::tests_in_module::TestCase;

    fn test(name: &str, ignored: bool) -> TestCase {
        TestCase {
            name: name.into(),
            schedules: Vec::new(),
            args: Vec::new(),
            ignored,
        }
    }

    fn parse(args: &[&str]) -> Selection {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        Selection::parse(None, &args).unwrap()
    }

    #[test]
    fn the_output_format_is_pretty_or_terse_and_no_other() {
        assert!(parse(&["--format", "terse", "--list"]).terse);
        assert!(!parse(&["--format=pretty"]).terse);
        for other in ["json", "junit"] {
            let error = Selection::parse(None, &["--format".into(), other.into()])
                .unwrap_err()
                .to_string();
            assert!(error.contains("--json"), "{error}");
        }
    }

    #[test]
    fn test_threads_must_be_a_number_above_zero() {
        for bad in [["--test-threads", "abc"], ["--test-threads", "0"]] {
            let args: Vec<String> = bad.iter().map(|a| a.to_string()).collect();
            let error = Selection::parse(None, &args).unwrap_err().to_string();
            assert!(error.contains("must be a number > 0"), "{error}");
        }
        parse(&["--test-threads=2"]);
    }

    #[test]
    fn filters_select_as_libtest_does() {
        let all = parse(&["--test-threads", "4", "--nocapture", "--color=never"]);
        assert_eq!(all.select(&test("a::b", false)), Some(Selected::Run));
        assert_eq!(all.select(&test("a::slow", true)), Some(Selected::Ignored));
        let some = parse(&["b", "--skip", "bc"]);
        assert_eq!(some.select(&test("a::b", false)), Some(Selected::Run));
        assert_eq!(some.select(&test("a::bc", false)), None);
        assert_eq!(some.select(&test("a::c", false)), None);
        let exact = parse(&["--exact", "b"]);
        assert_eq!(exact.select(&test("a::b", false)), None);
        assert_eq!(exact.select(&test("b", false)), Some(Selected::Run));
        let ignored = parse(&["--ignored"]);
        assert_eq!(ignored.select(&test("a", false)), None);
        assert_eq!(ignored.select(&test("b", true)), Some(Selected::Run));
        let included = parse(&["--include-ignored"]);
        assert_eq!(included.select(&test("b", true)), Some(Selected::Run));
        assert!(parse(&["--list"]).list);
        let filtered = Selection::parse(Some("x"), &[]).unwrap();
        assert_eq!(filtered.select(&test("a", false)), None);
    }

    #[test]
    fn unknown_options_and_missing_values_are_errors() {
        let args = |list: &[&str]| list.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        let error = Selection::parse(None, &args(&["--frobnicate"])).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("`--frobnicate` is not an option")
        );
        let error = Selection::parse(None, &args(&["--skip"])).unwrap_err();
        assert!(error.to_string().contains("`--skip` needs a value"));
    }
}
