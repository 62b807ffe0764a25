//! The interleaving of an execution as rows a person can read: which thread
//! did what, step by step, and where in the source.

use crate::debuginfo::symbols::{SiteName, Symbols};
use crate::instrument::SiteTable;
use crate::runtime::ExecutionResult;
use crate::trace::{EventKind, ThreadId};
use serde::Serialize;

/// One shown step (or several identical consecutive steps).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Row {
    /// Index of the first step of the row in the trace (from 0).
    pub step: u64,
    /// How many identical consecutive steps the row stands for.
    pub repeat: usize,
    /// The thread.
    pub thread: ThreadId,
    /// Its SDK name, if it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_name: Option<String>,
    /// What it did.
    pub event: String,
    /// Memory address, where one applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub addr: Option<u32>,
    /// Function, where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// Source file, where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Source line, where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The row's thread took over here from a thread that could have gone
    /// on (a preemption; when the first step after it is not shown, the
    /// thread's next shown row carries it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub preempts: bool,
}

/// The rows of `result`'s trace. Unless `full`, steps inside the guest's
/// standard library or runtime are left out when the module has source
/// lines to tell them apart.
pub fn rows(
    result: &ExecutionResult,
    sites: &SiteTable,
    symbols: &Symbols,
    full: bool,
) -> Vec<Row> {
    let names = symbols.all(sites);
    let mut rows: Vec<Row> = Vec::new();
    let mut preemptions = result.preemptions.iter().map(|p| p.step).peekable();
    // A preempting thread whose first step after the switch is not shown.
    let mut pending: Option<ThreadId> = None;
    for (index, event) in result.events.iter().enumerate() {
        let step = result.events_dropped + index as u64;
        while preemptions.next_if(|&p| p < step).is_some() {}
        if preemptions.next_if_eq(&step).is_some() {
            pending = Some(event.thread);
        }
        let site: Option<&SiteName> = event.site.and_then(|s| names.get(s as usize));
        if !full && site.is_some_and(|s| !s.user_code) {
            continue;
        }
        let preempts = pending == Some(event.thread);
        if preempts {
            pending = None;
        }
        let (text, addr) = match event.kind {
            EventKind::Access(kind) => (kind.name().to_string(), Some(event.addr)),
            EventKind::Block => ("blocks".to_string(), Some(event.addr)),
            EventKind::Spawn { child } => (format!("spawns thread {child}"), None),
            EventKind::Exit => ("exits".to_string(), None),
            EventKind::SectionBegin => ("enters an atomic section".to_string(), None),
            EventKind::LibraryCall { function } => (
                format!(
                    "calls {}",
                    symbols
                        .function_name(function)
                        .unwrap_or("a library function")
                ),
                None,
            ),
            EventKind::Outlive => (
                "pthread_exit: waits for the other threads".to_string(),
                None,
            ),
            EventKind::Yield => ("yields".to_string(), None),
            EventKind::Sleep { until_ns } => (format!("sleeps until t={}", fmt_ns(until_ns)), None),
            EventKind::Slice => ("computes (time slice)".to_string(), None),
            EventKind::SignalSend { sig } => {
                (format!("sends {}", crate::runtime::signal_name(sig)), None)
            }
            EventKind::SignalDelivery { sig } => {
                (format!("takes {}", crate::runtime::signal_name(sig)), None)
            }
            EventKind::Label { label } => (
                format!(
                    "event \"{}\"",
                    result
                        .labels
                        .get(label as usize)
                        .map_or("?", String::as_str)
                ),
                None,
            ),
        };
        let row = Row {
            step,
            repeat: 1,
            thread: event.thread,
            thread_name: result
                .thread_names
                .get(event.thread as usize)
                .cloned()
                .flatten(),
            event: text,
            addr,
            function: site.and_then(|s| s.function.clone()),
            file: site.and_then(|s| s.file.clone()),
            line: site.and_then(|s| s.line),
            preempts,
        };
        match rows.last_mut() {
            Some(last)
                if !row.preempts
                    && last.thread == row.thread
                    && last.event == row.event
                    && last.addr == row.addr
                    && last.file == row.file
                    && last.line == row.line
                    && last.function == row.function =>
            {
                last.repeat += 1;
            }
            _ => rows.push(row),
        }
    }
    rows
}

fn fmt_ns(ns: u64) -> String {
    if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else if ns.is_multiple_of(1_000) {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    }
}

/// How rows are laid out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Layout {
    /// One line per step: step, thread, what, where.
    #[default]
    List,
    /// One column per thread (each step in its thread's column).
    Table,
}

/// Which rows are shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    /// Every row.
    All,
    /// When there are more than `rows`: the rows around each of the first
    /// `preemptions` preemptions (`context` either side) and the last
    /// `tail` rows, where the failure is; the rest is summarised as
    /// skipped.
    Preemptions {
        /// Rows shown in all below which nothing is skipped.
        rows: usize,
        /// Rows either side of a preemption.
        context: usize,
        /// Preemptions shown with their context (a livelock's fair
        /// schedule preempts at every step).
        preemptions: usize,
        /// Rows at the end.
        tail: usize,
    },
}

impl Focus {
    /// What reports show unless asked for the full trace: with the
    /// failure, the guest's output and the replay command, one screen.
    pub const DEFAULT: Focus = Focus::Preemptions {
        rows: 24,
        context: 3,
        preemptions: 3,
        tail: 8,
    };

    /// The indices of the rows to show, in order.
    fn shown(self, rows: &[Row]) -> Vec<usize> {
        let Focus::Preemptions {
            rows: most,
            context,
            preemptions,
            tail,
        } = self
        else {
            return (0..rows.len()).collect();
        };
        if rows.len() <= most {
            return (0..rows.len()).collect();
        }
        let mut keep = vec![false; rows.len()];
        for (i, _) in rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.preempts)
            .take(preemptions)
        {
            let from = i.saturating_sub(context);
            let to = (i + context + 1).min(rows.len());
            keep[from..to].iter_mut().for_each(|k| *k = true);
        }
        let from = rows.len().saturating_sub(tail);
        keep[from..].iter_mut().for_each(|k| *k = true);
        (0..rows.len()).filter(|&i| keep[i]).collect()
    }
}

/// Renders rows as aligned text, laid out as `layout`, the rows `focus`
/// picks (skipped stretches are summarised in one line each).
pub fn render(rows: &[Row], layout: Layout, focus: Focus) -> String {
    let shown = focus.shown(rows);
    let threads = thread_columns(rows, &shown);
    let mut out = String::new();
    if layout == Layout::Table {
        out.push_str(&table_header(&threads));
    }
    let mut next = 0;
    for &i in &shown {
        if i > next {
            out.push_str(&skipped_line(&rows[next..i]));
        }
        next = i + 1;
        match layout {
            Layout::List => out.push_str(&list_line(&rows[i])),
            Layout::Table => out.push_str(&table_line(&rows[i], &threads)),
        }
    }
    if rows.iter().any(|r| r.preempts) {
        out.push_str("  (>> marks a preemption: the thread before it could have gone on)\n");
    }
    out
}

/// The line that stands for `skipped` rows.
fn skipped_line(skipped: &[Row]) -> String {
    let plural = |n: usize, noun: &str| format!("{n} {noun}{}", if n == 1 { "" } else { "s" });
    let preemptions = skipped.iter().filter(|r| r.preempts).count();
    let which = if preemptions == 0 {
        " without a preemption".to_string()
    } else {
        format!(", {} among them", plural(preemptions, "preemption"))
    };
    format!(
        "  ... {}{which} (--full-trace shows them)\n",
        plural(skipped.len(), "row")
    )
}

/// What a row did, with its address and repeat count.
fn what(row: &Row) -> String {
    let mut what = row.event.clone();
    if let Some(addr) = row.addr {
        what.push_str(&format!(" {addr:#x}"));
    }
    if row.repeat > 1 {
        what.push_str(&format!(" x{}", row.repeat));
    }
    what
}

/// Where a row's step is in the source, if known.
fn place(row: &Row) -> Option<String> {
    (row.function.is_some() || row.file.is_some()).then(|| {
        SiteName {
            function: row.function.clone(),
            file: row.file.clone(),
            line: row.line,
            user_code: true,
        }
        .describe()
    })
}

/// `file:line` with the file's name only (the function when there is no
/// line), for a table's narrow cells.
fn short_place(row: &Row) -> Option<String> {
    match (&row.file, row.line) {
        (Some(file), Some(line)) => {
            let name = file.rsplit(['/', '\\']).next().unwrap_or(file);
            Some(format!("{name}:{line}"))
        }
        _ => row.function.clone(),
    }
}

fn marker(row: &Row) -> &'static str {
    if row.preempts { ">>" } else { "  " }
}

fn list_line(row: &Row) -> String {
    let who = match &row.thread_name {
        Some(name) => format!("{} ({name})", row.thread),
        None => row.thread.to_string(),
    };
    let place = place(row).map_or(String::new(), |p| format!("  {p}"));
    format!(
        "{}{:>6}  thread {:<14} {:<28}{}\n",
        marker(row),
        row.step,
        who,
        what(row),
        place
    )
}

/// Widest text of a table cell, and the narrowest.
const CELL: (usize, usize) = (44, 16);

/// Characters a table aims to fit in.
const TABLE_WIDTH: usize = 160;

/// The width of each of `columns` cells.
fn cell_width(columns: usize) -> usize {
    (TABLE_WIDTH / columns.max(1)).clamp(CELL.1, CELL.0)
}

/// The threads that have a shown row, in id order, with their headings.
fn thread_columns(rows: &[Row], shown: &[usize]) -> Vec<(ThreadId, String)> {
    let mut threads: Vec<(ThreadId, String)> = Vec::new();
    for &i in shown {
        let row = &rows[i];
        if !threads.iter().any(|(t, _)| *t == row.thread) {
            let heading = match &row.thread_name {
                Some(name) => format!("thread {} ({name})", row.thread),
                None => format!("thread {}", row.thread),
            };
            threads.push((row.thread, heading));
        }
    }
    threads.sort_by_key(|(t, _)| *t);
    threads
}

fn table_header(threads: &[(ThreadId, String)]) -> String {
    let mut line = format!("  {:>6}", "step");
    let mut rule = format!("  {:>6}", "");
    let width = cell_width(threads.len());
    for (_, heading) in threads {
        line.push_str(&format!(" | {}", fit(heading, width)));
        rule.push_str(&format!("-+-{}", "-".repeat(width)));
    }
    format!("{}\n{}\n", line.trim_end(), rule)
}

fn table_line(row: &Row, threads: &[(ThreadId, String)]) -> String {
    let mut text = what(row);
    if let Some(p) = short_place(row) {
        text.push_str(&format!("  {p}"));
    }
    let mut line = format!("{}{:>6}", marker(row), row.step);
    let width = cell_width(threads.len());
    for (thread, _) in threads {
        let cell = if *thread == row.thread {
            text.as_str()
        } else {
            ""
        };
        line.push_str(&format!(" | {}", fit(cell, width)));
    }
    format!("{}\n", line.trim_end())
}

/// `text` padded or cut (ending in `~`) to `width` characters.
fn fit(text: &str, width: usize) -> String {
    let count = text.chars().count();
    if count <= width {
        format!("{text:<width$}")
    } else {
        let cut: String = text.chars().take(width - 1).collect();
        format!("{cut}~")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(step: u64, thread: ThreadId, preempts: bool) -> Row {
        Row {
            step,
            repeat: 1,
            thread,
            thread_name: None,
            event: "atomic load".into(),
            addr: Some(16),
            function: Some("work".into()),
            file: Some("src/main.rs".into()),
            line: Some(7),
            preempts,
        }
    }

    #[test]
    fn long_interleavings_show_the_preemptions_and_the_end() {
        let mut rows: Vec<Row> = (0..100).map(|s| row(s, 1, false)).collect();
        rows[40] = row(40, 2, true);
        rows[70] = row(70, 2, true);
        let focus = Focus::Preemptions {
            rows: 60,
            context: 2,
            preemptions: 1,
            tail: 5,
        };
        let shown = focus.shown(&rows);
        assert_eq!(shown, [38, 39, 40, 41, 42, 95, 96, 97, 98, 99]);
        let text = render(&rows, Layout::List, focus);
        assert!(text.contains("... 38 rows without a preemption"), "{text}");
        assert!(text.contains(">>    40  thread 2"), "{text}");
        assert!(
            text.contains("... 52 rows, 1 preemption among them"),
            "only the first preemptions are shown: {text}"
        );
        assert_eq!(Focus::All.shown(&rows).len(), 100);
        assert_eq!(focus.shown(&rows[..50]).len(), 50, "short ones in full");
    }

    #[test]
    fn the_table_puts_each_step_in_its_threads_column() {
        let rows = [row(0, 0, false), row(1, 2, true)];
        let text = render(&rows, Layout::Table, Focus::All);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].contains("thread 0") && lines[0].contains("thread 2"));
        let second_column = lines[0].find("| thread 2").unwrap();
        assert!(lines[2].find("atomic load").unwrap() < second_column);
        assert!(lines[3].find("atomic load").unwrap() > second_column);
        assert!(lines[3].starts_with(">>"));
    }

    #[test]
    fn cells_are_cut_to_their_width() {
        assert_eq!(fit("abc", 5), "abc  ");
        assert_eq!(fit("abcdef", 4), "abc~");
    }
}
