//! A command's findings for people: the verdict, the failure and its
//! interleaving, the guest's output and how to replay it, as text, JSON or
//! an HTML page. The commands print what this renders.

use super::html::Page;
use super::interleaving::{self, Focus, Layout};
use crate::debuginfo::symbols::Symbols;
use crate::explore_program::Explored;
use crate::failure::FailureKind;
use crate::instrument::SiteTable;
use crate::replay::minimize::{Minimization, Size};
use crate::runtime::{ExecutionResult, Failure};
use serde_json::json;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How a report shows the interleaving.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Every step, the guest's runtime included.
    pub full_trace: bool,
    /// A list, or a table with one column per thread.
    pub layout: Layout,
    /// Which steps are shown.
    pub focus: Focus,
}

impl<'a> Report<'a> {
    /// The report of an exploration of `module`, whose failure was saved to
    /// `replay_file`.
    pub fn of_exploration(
        explored: &'a Explored,
        module: &'a Path,
        replay_file: Option<PathBuf>,
    ) -> Self {
        let exploration = explored.exploration();
        Report {
            module,
            wasm: explored.wasm(),
            sites: explored.program().sites(),
            executions: exploration.executions,
            distinct_traces: exploration.distinct_traces,
            elapsed: exploration.elapsed,
            headline: explored.headline().to_string(),
            result: exploration
                .failure
                .as_ref()
                .map(|f| &f.result)
                .or(exploration.last.as_ref()),
            failure: explored.failure(),
            replay_file,
            minimization: explored.minimization(),
            inconclusive: exploration.inconclusive.describe(exploration.executions),
            advice: exploration
                .failure
                .as_ref()
                .and_then(|f| super::advice::for_failure(&f.result, explored.setup().run.sleeps)),
            extra: explored.summary(),
        }
    }
}

impl Default for Shape {
    /// A list of the steps around each preemption and the last ones.
    fn default() -> Self {
        Shape {
            full_trace: false,
            layout: Layout::List,
            focus: Focus::DEFAULT,
        }
    }
}

/// What a report says of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// A failure was found.
    Failure,
    /// None was found, but a limit cut an execution short.
    Inconclusive,
    /// None was found.
    Pass,
}

impl Status {
    /// The name JSON output gives it.
    pub fn name(self) -> &'static str {
        match self {
            Status::Failure => "failure",
            Status::Inconclusive => "inconclusive",
            Status::Pass => "pass",
        }
    }
}

/// What a command found, ready to print: as text, JSON or an HTML page.
pub struct Report<'a> {
    /// The module's path.
    pub module: &'a Path,
    /// The module's bytes (for its names and lines).
    pub wasm: &'a [u8],
    /// Its instrumented sites.
    pub sites: &'a SiteTable,
    /// Executions run.
    pub executions: u64,
    /// Distinct traces among them.
    pub distinct_traces: usize,
    /// Wall time taken.
    pub elapsed: Duration,
    /// The first line: what was run and what came of it.
    pub headline: String,
    /// The execution shown (the failing one, if one failed).
    pub result: Option<&'a ExecutionResult>,
    /// Its failure.
    pub failure: Option<&'a Failure>,
    /// Where the failure's replay file was written.
    pub replay_file: Option<PathBuf>,
    /// How its schedule was minimized.
    pub minimization: Option<Minimization>,
    /// Why there is no verdict, when no failure was found but a limit cut
    /// an execution short.
    pub inconclusive: Option<String>,
    /// What the user may do about the failure, when it may hang on a
    /// choice of semantics (see [`super::advice`]).
    pub advice: Option<String>,
    /// More fields for the JSON object, from the command.
    pub extra: serde_json::Value,
}

impl Report<'_> {
    /// What the report says of the run.
    pub fn status(&self) -> Status {
        if self.failure.is_some() {
            Status::Failure
        } else if self.inconclusive.is_some() {
            Status::Inconclusive
        } else {
            Status::Pass
        }
    }

    /// The interleaving's rows, shaped by `shape`, as the text and the JSON
    /// show them: only for a failure (a passing report names no site, and
    /// reads no debug information).
    fn failure_rows(&self, shape: Shape) -> Vec<interleaving::Row> {
        if self.failure.is_some() {
            self.rows(shape)
        } else {
            Vec::new()
        }
    }

    /// The interleaving's rows, shaped by `shape`.
    fn rows(&self, shape: Shape) -> Vec<interleaving::Row> {
        let symbols = Symbols::new(self.wasm);
        self.result
            .map(|r| interleaving::rows(r, self.sites, &symbols, shape.full_trace))
            .unwrap_or_default()
    }

    /// The report as one JSON object (and a newline).
    pub fn json(&self, shape: Shape) -> String {
        let rows = self.failure_rows(shape);
        let mut value = json!({
            "status": self.status().name(),
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
        if let Some(advice) = &self.advice {
            obj.insert("advice".into(), json!(advice));
        }
        if let serde_json::Value::Object(extra) = &self.extra {
            for (k, v) in extra {
                obj.insert(k.clone(), v.clone());
            }
        }
        super::digest::seal(&mut value);
        let mut text = serde_json::to_string_pretty(&value).expect("json");
        text.push('\n');
        text
    }

    /// The report as text, the headline first.
    pub fn text(&self, shape: Shape) -> String {
        let mut out = String::new();
        self.tell(&self.failure_rows(shape), shape, &mut out);
        out
    }

    /// The report as an HTML page.
    pub fn page(&self, shape: Shape) -> Page {
        let mut page = match self.result {
            Some(result) => Page::new(
                self.headline.clone(),
                self.rows(shape),
                &result.thread_names,
                self.failure,
            ),
            None => Page::new(self.headline.clone(), Vec::new(), &[], None),
        };
        if let Some(m) = &self.minimization {
            page.notes.push(describe_minimization(m));
        }
        if let Some(advice) = &self.advice {
            page.notes.push(advice.clone());
        }
        if let Some(path) = &self.replay_file {
            page.notes
                .push(format!("replay with: weft replay {}", shell_word(path)));
        }
        page
    }

    fn tell(&self, rows: &[interleaving::Row], shape: Shape, out: &mut String) {
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
            if let Some(advice) = &self.advice {
                let _ = writeln!(out, "  note: {advice}");
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
            out.push_str(&interleaving::render(rows, shape.layout, shape.focus));
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
                let _ = writeln!(out, "replay with: weft replay {}", shell_word(path));
                if !crate::replay::bundle::is_bundle(path) {
                    let _ = writeln!(
                        out,
                        "for a bug report, one file with the module: weft bundle {}",
                        shell_word(path)
                    );
                }
            }
        } else {
            let _ = writeln!(out, "trace {}", result.trace_hash);
        }
    }
}

/// A stream of the guest's output, indented under `title`, if it wrote any.
fn print_stream(out: &mut String, title: &str, bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n{title}:");
    for line in String::from_utf8_lossy(bytes).lines() {
        let _ = writeln!(out, "  {line}");
    }
}

/// `n` and `noun`, plural unless `n` is 1.
fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
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

/// The line a report gives a minimization.
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

/// `path` as one word of a shell command a user may paste: quoted where
/// the shell would split or expand it (`it's $(id).wasm`), and after `./`
/// when it would read as an option (`-x.weft.json`).
pub fn shell_word(path: &Path) -> String {
    let text = path.display().to_string();
    let text = if text.starts_with('-') {
        format!("./{text}")
    } else {
        text
    };
    match shlex::try_quote(&text) {
        Ok(quoted) => quoted.into_owned(),
        // Only a NUL byte is refused, which no path holds.
        Err(_) => text,
    }
}

#[cfg(test)]
mod shell_word_tests {
    use super::shell_word;
    use std::path::Path;

    #[test]
    fn a_suggested_path_survives_a_shell() {
        assert_eq!(
            shell_word(Path::new("lost-update.weft.json")),
            "lost-update.weft.json"
        );
        assert_eq!(shell_word(Path::new("-x.weft.json")), "./-x.weft.json");
        let odd = shell_word(Path::new("it's $(id).weft.json"));
        assert!(odd.starts_with(['\'', '"']), "{odd}");
        let words = shlex::split(&format!("weft replay {odd}")).unwrap();
        assert_eq!(words[2], "it's $(id).weft.json");
    }
}
