//! From an execution's activity log to what each thread's test code did,
//! statement by statement: the input of schedule inference.
//!
//! A thread's *test level* is the code of its test function (for a spawned
//! thread: the closure it runs). Weft finds it from the logged calls: the
//! calls made from the guest's own code when the caller was entered from
//! library code (the thread's entry, the SDK's test runner), descending
//! through a call that encloses all the others (`main` calling
//! `run_tests`). The calls and scheduling points at that level, grouped by
//! source line and the method they are in, are the thread's statements;
//! sleeps, blocking waits and events happen inside them.

use crate::activity::{Activity, Entry};
use crate::debuginfo::symbols::Symbols;
use crate::instrument::{AccessKind, SiteId, SiteTable};
use crate::runtime::ExecutionResult;
use crate::trace::ThreadId;
use std::collections::{HashMap, HashSet};

/// A statement of a test function: where it is and the method it calls.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Statement {
    /// Source file of the test function.
    pub file: String,
    /// Line of the statement.
    pub line: u32,
    /// The test function.
    pub function: String,
    /// The method (or function) the statement calls; the operation's name
    /// for a bare atomic access.
    pub method: String,
}

/// One execution of a statement by one thread.
#[derive(Clone, Debug)]
pub struct Executed {
    /// The statement.
    pub at: Statement,
    /// Index in the activity log of its first entry.
    pub first: usize,
    /// Index of its last entry.
    pub last: usize,
    /// The sleep it made (log indices of its begin and end), if any.
    pub sleep: Option<(usize, usize)>,
    /// Log indices where it began to wait on a futex.
    pub blocks: Vec<usize>,
    /// SDK events it fired.
    pub events: Vec<String>,
}

/// What one thread did in one execution.
#[derive(Clone, Debug)]
pub struct Timeline {
    /// The thread's name (as schedules name it).
    pub label: String,
    /// Log index of its creation.
    pub start: usize,
    /// Log index of its end (the log's length if it did not end).
    pub end: usize,
    /// Its statements, in order.
    pub statements: Vec<Executed>,
    /// Its futex waits: (begin, end) log indices; `end` is the log's length
    /// for a wait that never ended.
    pub waits: Vec<(usize, usize)>,
    /// Every blocking-relevant moment: waits and sleeps beginning, and its end.
    pub relevant: Vec<usize>,
}

impl Timeline {
    /// Whether the thread waits on a futex at log index `at`.
    pub fn blocked_at(&self, at: usize) -> bool {
        self.waits.iter().any(|&(b, e)| b < at && at < e)
    }
}

/// Where the code of a site is at the test level, cached per site.
pub struct CodeIndex<'a> {
    symbols: &'a Symbols,
    sites: &'a SiteTable,
    cache: HashMap<SiteId, Option<Statement>>,
}

impl<'a> CodeIndex<'a> {
    /// An index over the sites of a module loaded with `log_calls`.
    pub fn new(symbols: &'a Symbols, sites: &'a SiteTable) -> Self {
        CodeIndex {
            symbols,
            sites,
            cache: HashMap::new(),
        }
    }

    /// The statement of the guest's own code that site `id` belongs to: the
    /// outermost user frame's line, and the function called from there.
    fn statement(&mut self, id: SiteId) -> Option<Statement> {
        if let Some(known) = self.cache.get(&id) {
            return known.clone();
        }
        let statement = self.sites.get(id).and_then(|site| {
            let frames = self.symbols.frames(site.code_offset);
            let outer = frames.iter().rposition(|f| f.user_code)?;
            let frame = &frames[outer];
            let method = match outer.checked_sub(1) {
                Some(inner) => frames[inner].function.clone(),
                None if site.kind == AccessKind::Call => site
                    .callee
                    .and_then(|c| self.symbols.function_name(c))
                    .map(String::from),
                None => Some(site.kind.name().replace(' ', "_")),
            }
            .unwrap_or_else(|| "call".to_string());
            Some(Statement {
                file: frame.file.clone()?,
                line: frame.line?,
                function: frame.function.clone().unwrap_or_default(),
                method: short_name(&method),
            })
        });
        self.cache.insert(id, statement.clone());
        statement
    }

    fn is_user(&mut self, id: SiteId) -> bool {
        self.statement(id).is_some()
    }
}

/// The last meaningful segment of a function path: `a::B::take` -> `take`,
/// `f::{closure#0}` -> `f`, generics dropped.
pub fn short_name(path: &str) -> String {
    let mut depth = 0;
    let mut plain = String::new();
    for c in path.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            _ if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    plain
        .split("::")
        .filter(|s| !s.is_empty() && !s.starts_with('{'))
        .last()
        .unwrap_or("call")
        .trim()
        .to_string()
}

/// A logged call of one thread.
struct Call {
    at: usize,
    depth: usize,
    /// The nearest enclosing call from user code, by index.
    enclosing: Option<usize>,
}

/// The thread timelines of one execution (loaded with `log_calls`).
pub fn timelines(result: &ExecutionResult, code: &mut CodeIndex<'_>) -> Vec<Timeline> {
    let log = crate::activity::entries(result);
    let threads = result.thread_names.len();
    (0..threads as ThreadId)
        .map(|tid| {
            let label = match &result.thread_names[tid as usize] {
                Some(name) => name.clone(),
                None if tid == 0 => "main".to_string(),
                None => format!("T{tid}"),
            };
            thread_timeline(log, tid, label, code)
        })
        .collect()
}

fn thread_timeline(log: &[Entry], tid: ThreadId, label: String, code: &mut CodeIndex) -> Timeline {
    let mine: Vec<(usize, &Activity)> = log
        .iter()
        .enumerate()
        .filter(|(_, e)| e.thread == tid)
        .map(|(i, e)| (i, &e.activity))
        .collect();
    let start = mine.first().map_or(0, |(i, _)| *i);
    let end = mine
        .iter()
        .find(|(_, a)| **a == Activity::End)
        .map_or(log.len(), |(i, _)| *i);
    let level = test_level_calls(&mine, code);
    let mut waits = Vec::new();
    let mut relevant = Vec::new();
    let mut open_wait = None;
    for &(i, a) in &mine {
        match a {
            Activity::BlockBegin => {
                open_wait = Some(i);
                relevant.push(i);
            }
            Activity::BlockEnd => {
                if let Some(b) = open_wait.take() {
                    waits.push((b, i));
                }
            }
            Activity::SleepBegin => relevant.push(i),
            Activity::End => relevant.push(i),
            _ => {}
        }
    }
    if let Some(b) = open_wait {
        waits.push((b, log.len()));
    }
    Timeline {
        label,
        start,
        end,
        statements: statements(&mine, &level, code),
        waits,
        relevant,
    }
}

/// The test-level calls of a thread.
struct Level {
    /// Log indices of the calls.
    calls: HashSet<usize>,
    /// Their call depth.
    depth: Option<usize>,
}

fn test_level_calls(mine: &[(usize, &Activity)], code: &mut CodeIndex) -> Level {
    let mut user_calls: Vec<Call> = Vec::new();
    // Open calls: (site, index in `user_calls` if a call from user code).
    let mut stack: Vec<(SiteId, Option<usize>)> = Vec::new();
    for &(i, a) in mine {
        match a {
            Activity::Call(site) => {
                let user = code.is_user(*site);
                let call = user.then(|| {
                    user_calls.push(Call {
                        at: i,
                        depth: stack.len(),
                        enclosing: stack.iter().rev().find_map(|(_, c)| *c),
                    });
                    user_calls.len() - 1
                });
                stack.push((*site, call));
            }
            Activity::Returned(site) => {
                // Pop to the matching call (a trap may have skipped returns).
                while let Some((open, _)) = stack.pop() {
                    if open == *site {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    // Start from the outermost calls of user code; descend while one call
    // encloses all the others.
    let children = |of: Option<usize>| -> Vec<usize> {
        (0..user_calls.len())
            .filter(|&c| user_calls[c].enclosing == of)
            .collect()
    };
    let mut level = children(None);
    while let [only] = level[..] {
        let inner = children(Some(only));
        if inner.is_empty() {
            break;
        }
        level = inner;
    }
    Level {
        depth: level.first().map(|&c| user_calls[c].depth),
        calls: level.iter().map(|&c| user_calls[c].at).collect(),
    }
}

/// Groups the thread's test-level activity into statements.
fn statements(mine: &[(usize, &Activity)], level: &Level, code: &mut CodeIndex) -> Vec<Executed> {
    let Some(depth) = level.depth else {
        return Vec::new();
    };
    let mut out: Vec<Executed> = Vec::new();
    let mut stack = 0usize;
    // Log index where the open test-level call began.
    let mut open_call: Option<usize> = None;
    let mut open_sleep = None;
    for &(i, a) in mine {
        let at_level = open_call.is_some() || stack == depth;
        match a {
            Activity::Call(site) => {
                if open_call.is_none() && level.calls.contains(&i) {
                    open_call = Some(i);
                    push_item(&mut out, code, *site, i);
                }
                stack += 1;
            }
            Activity::Returned(_) => {
                stack = stack.saturating_sub(1);
                if open_call.is_some() && stack == depth {
                    open_call = None;
                    if let Some(last) = out.last_mut() {
                        last.last = i;
                    }
                }
            }
            Activity::Point(site) if open_call.is_none() && stack == depth => {
                push_item(&mut out, code, *site, i);
            }
            _ if !at_level => {}
            Activity::SleepBegin => open_sleep = Some(i),
            Activity::SleepEnd => {
                if let (Some(b), Some(last)) = (open_sleep.take(), out.last_mut()) {
                    last.sleep = Some((b, i));
                    last.last = last.last.max(i);
                }
            }
            Activity::BlockBegin => {
                if let Some(last) = out.last_mut() {
                    last.blocks.push(i);
                }
            }
            Activity::Event(name) => {
                if let Some(last) = out.last_mut() {
                    last.events.push(name.clone());
                }
            }
            _ => {}
        }
        if let Some(last) = out.last_mut()
            && open_call.is_some()
        {
            last.last = last.last.max(i);
        }
    }
    out
}

/// Adds the item at log index `i` to the last statement if it is the same
/// statement, else starts a new one.
fn push_item(out: &mut Vec<Executed>, code: &mut CodeIndex, site: SiteId, i: usize) {
    let Some(at) = code.statement(site) else {
        return;
    };
    if let Some(last) = out.last_mut()
        && last.at == at
    {
        last.last = i;
        return;
    }
    out.push(Executed {
        at,
        first: i,
        last: i,
        sleep: None,
        blocks: Vec::new(),
        events: Vec::new(),
    });
}

#[cfg(test)]
mod tests {
    use super::short_name;

    #[test]
    fn short_names_keep_the_method() {
        assert_eq!(
            short_name("imunit_tck::sync::CountDownLatch::count_down"),
            "count_down"
        );
        assert_eq!(short_name("std::thread::sleep"), "sleep");
        assert_eq!(
            short_name("imunit_tck::latch_await::{closure#0}"),
            "latch_await"
        );
        assert_eq!(
            short_name("<alloc::sync::Arc<T> as core::clone::Clone>::clone"),
            "clone"
        );
        assert_eq!(short_name("take"), "take");
    }
}
