//! A failure as one self-contained HTML page: one lane per thread, each
//! step with its source line, preemptions and the failing step marked,
//! details on hover or click; an actor failure's messages as a sequence
//! chart; a serializability violation's accesses highlighted.
//!
//! The page needs no network: its data is embedded as JSON and drawn by a
//! small script that sets only text (never markup), so nothing from the
//! guest can inject into it.

use super::interleaving::Row;
use crate::actors::mailboxes::{ActorLog, DRIVER};
use crate::failure::Failure;
use crate::trace::ThreadId;
use serde::Serialize;
use std::path::Path;

/// The page template; `__WEFT_DATA__` stands for the data.
const TEMPLATE: &str = include_str!("page.html");

/// Everything a page shows.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Page {
    /// The browser tab's title.
    pub title: String,
    /// The report's first line.
    pub headline: String,
    /// The failure, if there is one.
    pub failure: Option<FailureView>,
    /// Lines under the headline (minimization, replay file).
    pub notes: Vec<String>,
    /// The lanes, in id order.
    pub threads: Vec<Lane>,
    /// The steps.
    pub rows: Vec<Row>,
    /// The step the failure happened at.
    pub failing_step: Option<u64>,
    /// Steps to highlight, with a label each.
    pub highlights: Vec<Highlight>,
    /// What the highlighted steps are (`pattern 9 on atomic set x`).
    pub highlight_title: String,
    /// Actors, for a message sequence chart.
    pub actors: Vec<String>,
    /// Messages in delivery order (no chart when empty).
    pub messages: Vec<Message>,
}

/// A failure as the page shows it.
#[derive(Clone, Debug, Serialize)]
pub struct FailureView {
    /// Its kind.
    pub kind: String,
    /// Its message.
    pub message: String,
    /// The thread it happened in, as a label.
    pub thread_label: String,
}

/// One thread's lane.
#[derive(Clone, Debug, Serialize)]
pub struct Lane {
    /// The thread.
    pub id: ThreadId,
    /// Its heading.
    pub label: String,
}

/// A highlighted step.
#[derive(Clone, Debug, Serialize)]
pub struct Highlight {
    /// The step.
    pub step: u64,
    /// What it is (`u: read`).
    pub label: String,
}

/// A delivered actor message.
#[derive(Clone, Debug, Serialize)]
pub struct Message {
    /// Sender, an index in [`Page::actors`].
    pub from: usize,
    /// Receiver, an index in [`Page::actors`].
    pub to: usize,
    /// The sender's name.
    pub from_label: String,
    /// The receiver's name.
    pub to_label: String,
    /// The message's kind.
    pub kind: String,
    /// The behaviour the receiver took on, if it changed.
    pub became: Option<String>,
    /// The delivery the failure happened in.
    pub failing: bool,
}

impl Page {
    /// A page for `rows` of an execution whose thread names are
    /// `thread_names`, failing with `failure` (if it failed).
    pub fn new(
        headline: String,
        rows: Vec<Row>,
        thread_names: &[Option<String>],
        failure: Option<&Failure>,
    ) -> Page {
        let label = |id: ThreadId| match thread_names.get(id as usize).cloned().flatten() {
            Some(name) => format!("thread {id} ({name})"),
            None if id == 0 => "thread 0 (main)".to_string(),
            None => format!("thread {id}"),
        };
        let mut ids: Vec<ThreadId> = rows.iter().map(|r| r.thread).collect();
        ids.sort_unstable();
        ids.dedup();
        let failing_step = failure.and_then(|f| {
            rows.iter()
                .rev()
                .find(|r| r.thread == f.thread)
                .or(rows.last())
                .map(|r| r.step)
        });
        Page {
            title: format!("weft: {headline}"),
            headline,
            failure: failure.map(|f| FailureView {
                kind: f.kind.name().to_string(),
                message: f.message.clone(),
                thread_label: label(f.thread),
            }),
            threads: ids
                .into_iter()
                .map(|id| Lane {
                    id,
                    label: label(id),
                })
                .collect(),
            rows,
            failing_step,
            ..Page::default()
        }
    }

    /// Adds the message sequence chart of an actor execution: the driver
    /// and every actor get a lifeline, each delivery an arrow; the last
    /// delivery of a failing execution is the one the failure happened in.
    pub fn add_messages(&mut self, log: &ActorLog) {
        // Lifeline 0 is the driver, lifeline `id + 1` is actor `id`.
        let lifeline = |id: u32| if id == DRIVER { 0 } else { id as usize + 1 };
        self.actors = std::iter::once("driver".to_string())
            .chain((0..log.actors.len()).map(|id| log.name(id as u32)))
            .collect();
        let failed = self.failure.is_some();
        let last = log.receives.len().checked_sub(1);
        self.messages = log
            .receives
            .iter()
            .enumerate()
            .map(|(k, r)| Message {
                from: lifeline(r.sender),
                to: lifeline(r.receiver),
                from_label: log.name(r.sender),
                to_label: log.name(r.receiver),
                kind: r.kind.clone(),
                became: r.became.clone(),
                failing: failed && Some(k) == last,
            })
            .collect();
    }

    /// Highlights the steps of `accesses` (step, label) as `title`.
    pub fn highlight(&mut self, title: String, accesses: impl IntoIterator<Item = (u64, String)>) {
        self.highlight_title = title;
        self.highlights = accesses
            .into_iter()
            .map(|(step, label)| Highlight { step, label })
            .collect();
    }

    /// The page as HTML.
    pub fn render(&self) -> String {
        let json = serde_json::to_string(self).expect("a page always serialises");
        // Inside <script>, only `</` could end the element early; `<` as a
        // JSON escape keeps the data one JSON text.
        TEMPLATE.replacen("__WEFT_DATA__", &json.replace('<', "\\u003c"), 1)
    }

    /// Writes the page to `path`.
    ///
    /// # Errors
    ///
    /// When the file cannot be written.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        std::fs::write(path, self.render())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure::FailureKind;

    fn row(step: u64, thread: ThreadId) -> Row {
        Row {
            step,
            repeat: 1,
            thread,
            thread_name: None,
            event: "atomic store".into(),
            addr: Some(8),
            function: None,
            file: None,
            line: None,
            preempts: false,
        }
    }

    #[test]
    fn the_failing_step_is_the_failing_threads_last() {
        let failure = Failure {
            kind: FailureKind::Assertion,
            message: "boom".into(),
            thread: 1,
        };
        let page = Page::new(
            "a failure".into(),
            vec![row(0, 0), row(1, 1), row(2, 0)],
            &[None, Some("worker".into())],
            Some(&failure),
        );
        assert_eq!(page.failing_step, Some(1));
        assert_eq!(page.threads[1].label, "thread 1 (worker)");
    }

    #[test]
    fn guest_text_cannot_close_the_data_script() {
        let failure = Failure {
            kind: FailureKind::Assertion,
            message: "</script><script>alert(1)</script>".into(),
            thread: 0,
        };
        let html = Page::new("x".into(), vec![row(0, 0)], &[], Some(&failure)).render();
        assert!(!html.contains("</script><script>alert"));
        assert!(html.contains("\\u003c/script>"));
        assert_eq!(html.matches("</script>").count(), 2);
    }
}
