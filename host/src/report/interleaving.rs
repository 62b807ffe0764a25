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
    for (step, event) in result.events.iter().enumerate() {
        let site: Option<&SiteName> = event.site.and_then(|s| names.get(s as usize));
        if !full && site.is_some_and(|s| !s.user_code) {
            continue;
        }
        let (text, addr) = match event.kind {
            EventKind::Access(kind) => (kind.name().to_string(), Some(event.addr)),
            EventKind::Block => ("blocks".to_string(), Some(event.addr)),
            EventKind::Spawn { child } => (format!("spawns thread {child}"), None),
            EventKind::Exit => ("exits".to_string(), None),
            EventKind::SectionBegin => ("enters an atomic section".to_string(), None),
            EventKind::Outlive => (
                "pthread_exit: waits for the other threads".to_string(),
                None,
            ),
            EventKind::Yield => ("yields".to_string(), None),
            EventKind::Sleep { until_ns } => (format!("sleeps until t={}", fmt_ns(until_ns)), None),
            EventKind::Slice => ("computes (time slice)".to_string(), None),
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
            step: result.events_dropped + step as u64,
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
        };
        match rows.last_mut() {
            Some(last)
                if last.thread == row.thread
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

/// Renders rows as an aligned text table, at most `limit` rows (the last
/// ones, where the failure is).
pub fn render(rows: &[Row], limit: usize) -> String {
    let mut out = String::new();
    let skipped = rows.len().saturating_sub(limit);
    if skipped > 0 {
        out.push_str(&format!(
            "  ... {skipped} earlier rows (--full-trace shows them all)\n"
        ));
    }
    for row in &rows[skipped..] {
        let who = match &row.thread_name {
            Some(name) => format!("{} ({name})", row.thread),
            None => row.thread.to_string(),
        };
        let mut what = row.event.clone();
        if let Some(addr) = row.addr {
            what.push_str(&format!(" {addr:#x}"));
        }
        if row.repeat > 1 {
            what.push_str(&format!(" x{}", row.repeat));
        }
        let site = SiteName {
            function: row.function.clone(),
            file: row.file.clone(),
            line: row.line,
            user_code: true,
        };
        let place = if row.function.is_some() || row.file.is_some() {
            format!("  {}", site.describe())
        } else {
            String::new()
        };
        out.push_str(&format!(
            "  {:>6}  thread {:<14} {:<28}{}\n",
            row.step, who, what, place
        ));
    }
    out
}
