//! A failing execution told in plain words, from its [`Facts`]: what each
//! thread read and wrote of the data threads share (with the values), which
//! locks it took and waited for, and a conclusion that names the pattern
//! behind the failure where one is recognised (an update lost between a
//! read and a write, a cycle of threads each waiting for a lock the next
//! one holds, a wait that no thread is left to end).

use super::library::LibraryOp;
use super::recorder::{Fact, Facts};
use super::steps::Steps;
use crate::debuginfo::symbols::LazySymbols;
use crate::debuginfo::variables::without_offset;
use crate::failure::{Failure, FailureKind};
use crate::instrument::{AccessKind, SiteId, SiteTable};
use crate::trace::ThreadId;
use std::collections::{HashMap, HashSet};

/// A failure told in plain words.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Story {
    /// What the threads did, one sentence each, in order (long stretches
    /// of one thread alone are shortened).
    pub steps: Vec<String>,
    /// Why that fails: the failure and the pattern behind it.
    pub conclusion: Vec<String>,
}

impl Story {
    /// The story as text: numbered steps, then the conclusion.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for (i, step) in self.steps.iter().enumerate() {
            if step.starts_with('…') {
                out.push_str(&format!("     {step}\n"));
            } else {
                out.push_str(&format!("{:>3}. {step}\n", i + 1));
            }
        }
        if !self.conclusion.is_empty() {
            out.push('\n');
            for line in &self.conclusion {
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }
}

/// What a thread waits for at the end of the execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    Lock(u32),
    Condition(u32),
    Join,
    Word(u32),
    /// It keeps trying a lock without waiting for it (a `trylock` loop).
    Spin(u32),
}

/// A variable's name, and whether its value reads as a number.
type Described = (String, bool);

/// Names things for a story.
struct Namer<'a> {
    sites: &'a SiteTable,
    symbols: &'a LazySymbols,
    thread_names: &'a [Option<String>],
    /// Variable names by address, and whether each is a number, looked up
    /// once each.
    variables: std::cell::RefCell<HashMap<(u32, u8), Option<Described>>>,
}

impl Namer<'_> {
    fn thread(&self, id: ThreadId) -> String {
        match self.thread_names.get(id as usize).cloned().flatten() {
            Some(name) => format!("thread {id} ({name})"),
            None if id == 0 => "main".to_string(),
            None => format!("thread {id}"),
        }
    }

    /// What the `width` bytes at `addr` are, and whether they are a number.
    fn describe(&self, addr: u32, width: u8) -> Option<Described> {
        self.variables
            .borrow_mut()
            .entry((addr, width))
            .or_insert_with(|| {
                self.symbols
                    .with(|s| s.describe_variable(addr, u32::from(width.max(1))))
            })
            .clone()
    }

    fn variable_at(&self, addr: u32) -> Option<String> {
        self.describe(addr, 1).map(|(name, _)| name)
    }

    /// Whether the value of an access of `width` bytes at `addr` reads as
    /// a number: memory of no known variable, or exactly a variable's
    /// number; not a struct, two fields at once or a Rust enum.
    fn shows_values(&self, addr: u32, width: u8) -> bool {
        self.describe(addr, width).is_none_or(|(_, scalar)| scalar)
    }

    /// `` `name` `` of the variable at `addr`, or its address.
    fn data(&self, addr: u32) -> String {
        self.data_of(addr, 1)
    }

    /// `` `name` `` of what an access of `width` bytes at `addr` accesses
    /// (the struct, when it spans two fields), or its address.
    fn data_of(&self, addr: u32, width: u8) -> String {
        match self.describe(addr, width) {
            Some((name, _)) => format!("`{name}`"),
            None => format!("the memory at {addr:#x}"),
        }
    }

    /// `` `name` `` of the lock or condition variable whose word is at
    /// `addr` (the word's offset inside it left out).
    fn object(&self, addr: Option<u32>) -> String {
        match addr.and_then(|a| self.variable_at(a)) {
            Some(name) => {
                format!("`{}`", without_offset(&name))
            }
            None => match addr {
                Some(a) => format!("the one at {a:#x}"),
                None => "a lock".to_string(),
            },
        }
    }

    /// ` at file:line`, where known.
    fn at(&self, site: SiteId) -> String {
        let Some(info) = self.sites.get(site) else {
            return String::new();
        };
        let name = self.symbols.with(|s| s.site(info));
        match (name.file, name.line) {
            (Some(file), Some(line)) => {
                let file = file.rsplit('/').next().unwrap_or(&file).to_string();
                format!(" at {file}:{line}")
            }
            _ => String::new(),
        }
    }
}

/// A value as a person reads it: signed where the top bit is set.
fn value(v: u64, width: u8) -> String {
    match width {
        4 => (v as u32 as i32).to_string(),
        8 => (v as i64).to_string(),
        2 => (v as u16 as i16).to_string(),
        1 => (v as u8 as i8).to_string(),
        _ => v.to_string(),
    }
}

fn with_value(v: Option<u64>, width: u8) -> String {
    v.map_or(String::new(), |v| format!(" = {}", value(v, width)))
}

/// Tells `facts` (an execution that ended in `failure`) as a story.
pub fn tell(
    facts: &Facts,
    failure: &Failure,
    sites: &SiteTable,
    symbols: &LazySymbols,
    thread_names: &[Option<String>],
) -> Story {
    let namer = Namer {
        sites,
        symbols,
        thread_names,
        variables: Default::default(),
    };
    let facts = &facts.0;
    let mut shared = shared_words(facts);
    // What the failing thread read or wrote of named variables is told,
    // even where no other thread got to them yet.
    for fact in facts {
        if let Fact::Access { thread, addr, .. } = *fact
            && thread == failure.thread
            && !shared.contains(&addr)
            && namer.variable_at(addr).is_some()
        {
            shared.insert(addr);
        }
    }
    let mut steps = Steps::default();
    let mut holders: HashMap<u32, Vec<ThreadId>> = HashMap::new();
    // Locks a thread gave up while it waits on a condition variable.
    let mut released: HashMap<ThreadId, Vec<u32>> = HashMap::new();
    let mut open: HashMap<ThreadId, (LibraryOp, Option<u32>, bool)> = HashMap::new();
    let mut waits: HashMap<ThreadId, Wait> = HashMap::new();
    let mut ended: HashSet<ThreadId> = HashSet::new();
    // The lock each thread last tried and failed to take, until it takes
    // one.
    let mut spinning: HashMap<ThreadId, u32> = HashMap::new();
    // A lock operation is told where it took effect: a thread stopped
    // between its call of `lock` and the exchange that takes the lock has
    // not locked yet. One that waits is told where it first touched the
    // lock, before its wait. (A join or a condition wait may wait before
    // its first atomic access: they are told at the call.)
    let mut order: Vec<(usize, usize)> = facts
        .iter()
        .enumerate()
        .map(|(index, fact)| match *fact {
            Fact::Op {
                took_effect: Some(first),
                settled,
                op,
                thread,
                ..
            } if !matches!(op, LibraryOp::Join | LibraryOp::CondWait) => {
                match (op_fate(facts, index, thread), settled) {
                    (Fate::Ends, Some(at)) => (at, index),
                    _ => (first, index),
                }
            }
            _ => (index, index),
        })
        .collect();
    order.sort_unstable();
    for index in order.into_iter().map(|(_, index)| index) {
        let fact = &facts[index];
        match *fact {
            Fact::Access {
                thread,
                site,
                kind,
                addr,
                width,
                read,
                wrote,
            } => {
                if !shared.contains(&addr) {
                    continue;
                }
                let (read, wrote) = if namer.shows_values(addr, width) {
                    (read, wrote)
                } else {
                    (None, None)
                };
                let who = namer.thread(thread);
                let what = namer.data_of(addr, width);
                let at = namer.at(site);
                let text = match kind {
                    AccessKind::Load | AccessKind::AtomicLoad => {
                        format!("{who} read {what}{}{at}", with_value(read, width))
                    }
                    AccessKind::Store | AccessKind::AtomicStore => {
                        format!("{who} wrote {what}{}{at}", with_value(wrote, width))
                    }
                    AccessKind::Copy | AccessKind::Fill => format!("{who} wrote {what}{at}"),
                    _ => match (read, wrote) {
                        (Some(r), Some(w)) if r != w => format!(
                            "{who} changed {what} from {} to {} in one atomic step{at}",
                            value(r, width),
                            value(w, width)
                        ),
                        (Some(r), Some(_)) => format!(
                            "{who} read {what} = {} in an atomic step that left it as it was{at}",
                            value(r, width)
                        ),
                        _ => format!("{who} changed {what} in one atomic step{at}"),
                    },
                };
                steps.push(thread, text);
            }
            Fact::Op {
                thread,
                op,
                site,
                object,
                first_read,
                ..
            } => {
                let who = namer.thread(thread);
                let name = namer.object(object);
                let at = namer.at(site);
                let fate = op_fate(facts, index, thread);
                let blocks = fate == Fate::Blocks;
                open.insert(thread, (op, object, blocks));
                let text = match op {
                    _ if fate == Fate::NotBegun => {
                        format!(
                            "{who} was about to {}{at} when the execution ended",
                            op.verb()
                        )
                    }
                    _ if op.acquires() && blocks => {
                        let held = object.and_then(|o| holders.get(&o));
                        let other = held.and_then(|h| h.iter().find(|&&t| t != thread));
                        match (other, held.is_some_and(|h| h.contains(&thread))) {
                            (Some(&h), _) => format!(
                                "{who} wants {name}{at}, but {} holds it, so {who} waits",
                                namer.thread(h)
                            ),
                            (None, true) => {
                                format!(
                                    "{who} wants {name}{at}, which it holds itself, so {who} waits"
                                )
                            }
                            (None, false) => format!(
                                "{who} wants {name}{at}, but another thread holds it, so {who} waits"
                            ),
                        }
                    }
                    LibraryOp::TryLock if first_read.is_some_and(|r| r != 0) => {
                        if let Some(o) = object {
                            spinning.insert(thread, o);
                        }
                        format!("{who} tried to lock {name}{at}, but it was taken")
                    }
                    LibraryOp::Lock | LibraryOp::TryLock => {
                        hold(&mut holders, object, thread);
                        spinning.remove(&thread);
                        format!("{who} locked {name}{at}")
                    }
                    LibraryOp::ReadLock => {
                        hold(&mut holders, object, thread);
                        spinning.remove(&thread);
                        format!("{who} locked {name} for reading{at}")
                    }
                    LibraryOp::WriteLock => {
                        hold(&mut holders, object, thread);
                        spinning.remove(&thread);
                        format!("{who} locked {name} for writing{at}")
                    }
                    LibraryOp::Unlock => {
                        // One hold of it (a read lock may be held twice).
                        if let Some(o) = object
                            && let Some(h) = holders.get_mut(&o)
                            && let Some(at) = h.iter().position(|&t| t == thread)
                        {
                            h.remove(at);
                        }
                        format!("{who} unlocked {name}{at}")
                    }
                    LibraryOp::CondWait => {
                        let mine: Vec<u32> = holders
                            .iter()
                            .filter(|(_, h)| h.contains(&thread))
                            .map(|(&o, _)| o)
                            .collect();
                        for o in &mine {
                            if let Some(h) = holders.get_mut(o) {
                                h.retain(|&t| t != thread);
                            }
                        }
                        released.insert(thread, mine);
                        format!("{who} waits on condition {name}{at}, letting go of its lock")
                    }
                    LibraryOp::Signal => format!("{who} signalled condition {name}{at}"),
                    LibraryOp::Join if blocks => {
                        format!("{who} waits for a thread to finish{at}")
                    }
                    LibraryOp::Join => continue,
                };
                steps.push(thread, text);
            }
            Fact::OpEnd { thread } => {
                let Some((op, object, blocked)) = open.remove(&thread) else {
                    continue;
                };
                let who = namer.thread(thread);
                match op {
                    _ if op.acquires() && blocked => {
                        hold(&mut holders, object, thread);
                        spinning.remove(&thread);
                        steps.push(thread, format!("{who} got {}", namer.object(object)));
                    }
                    LibraryOp::CondWait => {
                        for o in released.remove(&thread).unwrap_or_default() {
                            hold(&mut holders, Some(o), thread);
                        }
                        if blocked {
                            steps.push(
                                thread,
                                format!("{who} woke up from its wait, holding its lock again"),
                            );
                        }
                    }
                    _ => {}
                }
            }
            Fact::Blocked { thread, addr } => {
                let wait = match open.get(&thread) {
                    Some(&(op, object, _)) if op.acquires() => Wait::Lock(object.unwrap_or(addr)),
                    Some(&(LibraryOp::CondWait, object, _)) => {
                        Wait::Condition(object.unwrap_or(addr))
                    }
                    Some(&(LibraryOp::Join, _, _)) => Wait::Join,
                    _ => {
                        steps.push(
                            thread,
                            format!("{} waits on {}", namer.thread(thread), namer.data(addr)),
                        );
                        Wait::Word(addr)
                    }
                };
                waits.insert(thread, wait);
            }
            Fact::Resumed { thread } => {
                waits.remove(&thread);
            }
            Fact::Spawned { thread, child } => steps.push(
                thread,
                format!("{} started {}", namer.thread(thread), namer.thread(child)),
            ),
            Fact::Ended { thread } => {
                ended.insert(thread);
                spinning.remove(&thread);
                let held: Vec<String> = holders
                    .iter()
                    .filter(|(_, h)| h.contains(&thread))
                    .map(|(&o, _)| namer.object(Some(o)))
                    .collect();
                let text = if held.is_empty() {
                    format!("{} finished", namer.thread(thread))
                } else {
                    format!(
                        "{} finished while still holding {}",
                        namer.thread(thread),
                        held.join(" and ")
                    )
                };
                steps.push(thread, text);
            }
        }
    }
    let end = AtTheEnd {
        holders,
        waits,
        ended,
        spinning,
    };
    let conclusion = conclude(&namer, facts, failure, &shared, &end);
    Story {
        steps: steps.finish(),
        conclusion,
    }
}

/// Records that `thread` holds `object`.
fn hold(holders: &mut HashMap<u32, Vec<ThreadId>>, object: Option<u32>, thread: ThreadId) {
    if let Some(o) = object {
        holders.entry(o).or_default().push(thread);
    }
}

/// What became of an operation a thread began.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    /// It ended without waiting.
    Ends,
    /// The thread waited in it.
    Blocks,
    /// The execution ended before the operation touched its object: the
    /// thread was stopped at the call.
    NotBegun,
}

/// What became of the operation begun at `facts[index]` by `thread`.
fn op_fate(facts: &[Fact], index: usize, thread: ThreadId) -> Fate {
    for fact in &facts[index + 1..] {
        match *fact {
            Fact::Blocked { thread: t, .. } if t == thread => return Fate::Blocks,
            Fact::OpEnd { thread: t } | Fact::Ended { thread: t } if t == thread => {
                return Fate::Ends;
            }
            Fact::Op { thread: t, .. } if t == thread => return Fate::Ends,
            _ => {}
        }
    }
    match facts[index] {
        Fact::Op { object: None, .. } => Fate::NotBegun,
        _ => Fate::Ends,
    }
}

/// Addresses that the guest's own code of more than one thread accessed.
fn shared_words(facts: &[Fact]) -> HashSet<u32> {
    let mut by: HashMap<u32, HashSet<ThreadId>> = HashMap::new();
    for fact in facts {
        if let Fact::Access { thread, addr, .. } = *fact {
            by.entry(addr).or_default().insert(thread);
        }
    }
    by.into_iter()
        .filter(|(_, threads)| threads.len() > 1)
        .map(|(addr, _)| addr)
        .collect()
}

/// Who holds, waits for and keeps trying what when the execution ends.
struct AtTheEnd {
    /// The threads holding each lock.
    holders: HashMap<u32, Vec<ThreadId>>,
    /// What each blocked thread waits for.
    waits: HashMap<ThreadId, Wait>,
    /// The threads that finished.
    ended: HashSet<ThreadId>,
    /// The lock each thread keeps trying (a failed `trylock` since it last
    /// took one).
    spinning: HashMap<ThreadId, u32>,
}

/// Why the execution fails.
fn conclude(
    namer: &Namer<'_>,
    facts: &[Fact],
    failure: &Failure,
    shared: &HashSet<u32>,
    end: &AtTheEnd,
) -> Vec<String> {
    let AtTheEnd {
        holders,
        waits,
        ended,
        spinning,
    } = end;
    let mut out = Vec::new();
    match failure.kind {
        FailureKind::Deadlock => {
            out.push("No thread can go on:".to_string());
            out.extend(who_waits(namer, waits, holders, ended));
            let mut waiting: Vec<(&ThreadId, &Wait)> = waits.iter().collect();
            waiting.sort_by_key(|(t, _)| **t);
            if let Some(&[thread]) = lock_cycle(waits, holders).as_deref()
                && let Some(Wait::Lock(lock)) = waits.get(&thread)
            {
                out.push(format!(
                    "so {} waits for {}, a lock it holds itself, and will never let go of it. A thread that takes a lock it already holds waits forever (a read lock too, once a writer waits in between): take it once, and use that guard for everything.",
                    namer.thread(thread),
                    namer.object(Some(*lock))
                ));
            } else if let Some(cycle) = lock_cycle(waits, holders) {
                out.push(cycle_sentence(namer, &cycle, "none will let go"));
            } else if let Some((waiter, lock, holder)) =
                waiting.iter().find_map(|&(&t, w)| match *w {
                    Wait::Lock(o) => holders
                        .get(&o)
                        .and_then(|h| h.first())
                        .filter(|h| ended.contains(h))
                        .map(|&h| (t, o, h)),
                    _ => None,
                })
            {
                out.push(format!(
                    "so {} waits forever: {} finished without letting go of {}. Every lock taken must be unlocked, on every path out of the code that took it.",
                    namer.thread(waiter),
                    namer.thread(holder),
                    namer.object(Some(lock))
                ));
            } else {
                let sleepers: Vec<(ThreadId, u32)> = waiting
                    .iter()
                    .filter_map(|&(&t, w)| match *w {
                        Wait::Condition(c) => Some((t, c)),
                        _ => None,
                    })
                    .collect();
                match sleepers.as_slice() {
                    [] => {}
                    [(thread, c)] => out.push(format!(
                        "so {} sleeps on {} with no thread left that would signal it: the signal came before the wait, or never (a lost wakeup). Waiting in a loop that checks the condition under the lock, and signalling after changing it under the same lock, avoids this.",
                        namer.thread(*thread),
                        namer.object(Some(*c))
                    )),
                    many => {
                        let names: Vec<String> =
                            many.iter().map(|&(t, _)| namer.thread(t)).collect();
                        out.push(format!(
                            "so {} {} sleep on condition variables with no thread left running to signal them. A signal wakes one waiter: one was sent before its wait, or woke a thread that could not go on and went back to sleep while one that could kept sleeping (a lost wakeup). One condition variable per condition (or waking every waiter), and waiting in a loop that checks the condition under the lock, avoids this.",
                            and_list(&names),
                            if names.len() == 2 { "both" } else { "all" }
                        ));
                    }
                }
            }
        }
        FailureKind::DataRace => {
            out.push(format!("{}.", failure.message.trim_end()));
            out.push("Nothing orders these two accesses (no lock held around both, no atomic access or join between them), so they can happen in either order, or at the same time on a real machine.".to_string());
        }
        FailureKind::Livelock => {
            out.push(format!("{}.", failure.message.trim_end()));
            let mut stuck = waits.clone();
            stuck.extend(spinning.iter().map(|(&t, &o)| (t, Wait::Spin(o))));
            match lock_cycle(&stuck, holders) {
                Some(cycle) if !spinning.is_empty() => {
                    out.push("The threads keep trying locks that others hold:".to_string());
                    out.extend(who_waits(namer, &stuck, holders, ended));
                    out.push(cycle_sentence(
                        namer,
                        &cycle,
                        "trying again and again does not help while none lets go of what it holds",
                    ));
                }
                _ => out.push("A thread keeps spinning, waiting for something that does not happen here: a livelock, or a loop that never ends.".to_string()),
            }
        }
        _ => {
            if let Some(woke) = woke_unchecked(namer, facts, failure.thread, shared) {
                out.push(woke);
            } else if let Some(lost) = lost_update(namer, facts, shared) {
                out.push(lost);
            } else if let Some(torn) = read_across(namer, facts, failure.thread, shared) {
                out.push(torn);
            } else if let Some(half) = half_done(namer, facts, failure.thread, shared) {
                out.push(half);
            }
            out.push(format!(
                "Then {} failed: {}",
                namer.thread(failure.thread),
                failure.message.trim_end()
            ));
        }
    }
    out
}

/// The first update lost between a thread's read of a word and its write
/// back: another thread wrote the word in between, and the write, computed
/// from the older value, overwrote it.
fn lost_update(namer: &Namer<'_>, facts: &[Fact], shared: &HashSet<u32>) -> Option<String> {
    // Per (thread, word): its last read since its last write there.
    let mut last_read: HashMap<(ThreadId, u32), usize> = HashMap::new();
    let mut last_write: HashMap<u32, usize> = HashMap::new();
    for (index, fact) in facts.iter().enumerate() {
        let Fact::Access {
            thread,
            kind,
            addr,
            width,
            wrote,
            ..
        } = *fact
        else {
            continue;
        };
        if !shared.contains(&addr) {
            continue;
        }
        match kind {
            AccessKind::Load | AccessKind::AtomicLoad => {
                last_read.insert((thread, addr), index);
            }
            AccessKind::Store | AccessKind::AtomicStore => {
                if let Some(&read) = last_read.get(&(thread, addr))
                    && let Some(&other) = last_write.get(&addr)
                    && other > read
                    && let Fact::Access {
                        thread: writer,
                        wrote: other_wrote,
                        ..
                    } = facts[other]
                    && writer != thread
                {
                    let Fact::Access {
                        read: seen, site, ..
                    } = facts[read]
                    else {
                        unreachable!("indexes of reads");
                    };
                    let what = namer.data(addr);
                    let shown = namer.shows_values(addr, width);
                    let (wrote, seen, other_wrote) = if shown {
                        (wrote, seen, other_wrote)
                    } else {
                        (None, None, None)
                    };
                    return Some(format!(
                        "So one update was lost: {} wrote {what}{} from the value{} it had read{} before {} wrote {what}{}, and so undid that write. Reading and writing back must happen as one step: under one lock, or as one atomic operation.",
                        namer.thread(thread),
                        with_value(wrote, width),
                        seen.map_or(String::new(), |v| format!(" {}", value(v, width))),
                        namer.at(site),
                        namer.thread(writer),
                        with_value(other_wrote, width),
                    ));
                }
                last_read.remove(&(thread, addr));
                last_write.insert(addr, index);
            }
            _ => {
                if kind.writes() {
                    last_write.insert(addr, index);
                }
            }
        }
    }
    None
}

/// The failing thread woke from a condition wait, but between the signal
/// that woke it and its return (with the lock again) another thread
/// changed data it then read: it went on without checking its condition
/// again.
fn woke_unchecked(
    namer: &Namer<'_>,
    facts: &[Fact],
    failing: ThreadId,
    shared: &HashSet<u32>,
) -> Option<String> {
    // Its last condition wait that blocked, and where it woke and returned.
    let (wait, condition) = facts.iter().enumerate().rev().find_map(|(i, f)| match *f {
        Fact::Op {
            thread,
            op: LibraryOp::CondWait,
            object,
            ..
        } if thread == failing && op_fate(facts, i, thread) == Fate::Blocks => Some((i, object)),
        _ => None,
    })?;
    let woke = wait
        + facts[wait..]
            .iter()
            .position(|f| *f == Fact::Resumed { thread: failing })?;
    let returned = woke
        + facts[woke..]
            .iter()
            .position(|f| *f == Fact::OpEnd { thread: failing })?;
    // The last signal of that condition variable before it woke.
    let waited_on = namer.object(condition);
    let signal = facts[..woke].iter().rposition(|f| match *f {
        Fact::Op {
            op: LibraryOp::Signal,
            object,
            ..
        } => object.is_some() && namer.object(object) == waited_on,
        _ => false,
    })?;
    let changed: HashMap<u32, ThreadId> = facts[signal..returned]
        .iter()
        .filter_map(|f| match *f {
            Fact::Access {
                thread, kind, addr, ..
            } if thread != failing && kind.writes() && shared.contains(&addr) => {
                Some((addr, thread))
            }
            _ => None,
        })
        .collect();
    let (addr, changer) = facts[returned..].iter().find_map(|f| match *f {
        Fact::Access { thread, addr, .. } if thread == failing => {
            changed.get(&addr).map(|&t| (addr, t))
        }
        _ => None,
    })?;
    let who = namer.thread(failing);
    Some(format!(
        "{who} was woken from its wait on {}, but before it had the lock back, {} changed {}; {who} went on without checking again whether it could. A wait can end with the condition false again: wait in a loop (`while`, not `if`) that checks the condition each time it wakes.",
        namer.object(condition),
        namer.thread(changer),
        namer.data(addr),
    ))
}

/// Two reads of the failing thread that straddle another thread's update:
/// it read one word, the other thread then wrote that word, and the
/// failing thread's later read of a second word saw that thread's write.
/// It saw the first word from before the update and the second from after.
fn read_across(
    namer: &Namer<'_>,
    facts: &[Fact],
    failing: ThreadId,
    shared: &HashSet<u32>,
) -> Option<String> {
    // Per word: the failing thread's last read of it (fact index), and its
    // last writer (thread, fact index).
    let mut reads: HashMap<u32, usize> = HashMap::new();
    let mut writes: HashMap<u32, (ThreadId, usize)> = HashMap::new();
    let mut found = None;
    for (index, fact) in facts.iter().enumerate() {
        let Fact::Access {
            thread,
            kind,
            addr,
            width,
            ..
        } = *fact
        else {
            continue;
        };
        if !shared.contains(&addr) {
            continue;
        }
        if thread == failing && !kind.writes() {
            // A read of a word another thread last wrote after this
            // thread's read of some other word that the same thread then
            // overwrote.
            if let Some(&(writer, wrote)) = writes.get(&addr)
                && writer != failing
                && let Some((&before, &read)) = reads.iter().find(|&(&other, &read)| {
                    other != addr
                        && read < wrote
                        && writes
                            .get(&other)
                            .is_some_and(|&(w, at)| w == writer && at > read)
                })
            {
                found = Some((before, read, addr, index, writer));
            }
            reads.insert(addr, index);
        }
        if kind.writes() {
            // Each byte written: a store of two fields at once writes both.
            for byte in addr..addr.saturating_add(u32::from(width.max(1))) {
                writes.insert(byte, (thread, index));
            }
        }
    }
    let (first, first_read, second, second_read, writer) = found?;
    let described = |index: usize| match facts[index] {
        Fact::Access {
            addr,
            width,
            read,
            site,
            ..
        } => format!(
            "{}{}{}",
            namer.data_of(addr, width),
            with_value(read.filter(|_| namer.shows_values(addr, width)), width),
            namer.at(site)
        ),
        _ => String::new(),
    };
    let who = namer.thread(failing);
    Some(format!(
        "{who} read {}, then {} changed {} and {}, then {who} read {}: it saw {} from before that update and {} from after it. Reads that must agree need one lock held across all of them, which the writer takes too.",
        described(first_read),
        namer.thread(writer),
        namer.data(first),
        namer.data(second),
        described(second_read),
        namer.data(first),
        namer.data(second),
    ))
}

/// The last read by the failing thread of a word another thread wrote
/// while that thread was still at work: the failing thread may have seen
/// that thread's update half done.
fn half_done(
    namer: &Namer<'_>,
    facts: &[Fact],
    failing: ThreadId,
    shared: &HashSet<u32>,
) -> Option<String> {
    let mut last_write: HashMap<u32, (ThreadId, SiteId)> = HashMap::new();
    let mut ended: HashSet<ThreadId> = HashSet::new();
    let mut seen = None;
    for fact in facts {
        match *fact {
            Fact::Access {
                thread,
                site,
                kind,
                addr,
                width,
                read,
                ..
            } if shared.contains(&addr) => {
                if thread == failing
                    && !matches!(kind, AccessKind::Store | AccessKind::AtomicStore)
                    && let Some(&(writer, at)) = last_write.get(&addr)
                    && writer != failing
                    && !ended.contains(&writer)
                {
                    seen = Some((addr, width, read, writer, at));
                }
                if kind.writes() {
                    last_write.insert(addr, (thread, site));
                }
            }
            Fact::Ended { thread } => {
                ended.insert(thread);
            }
            _ => {}
        }
    }
    let (addr, width, read, writer, wrote_at) = seen?;
    if ended.contains(&writer) {
        return None;
    }
    let last_at = facts.iter().rev().find_map(|fact| match *fact {
        Fact::Access { thread, site, .. } | Fact::Op { thread, site, .. } if thread == writer => {
            Some(site)
        }
        _ => None,
    })?;
    let who = namer.thread(failing);
    let them = namer.thread(writer);
    Some(format!(
        "{who} read {}{}, which {them} had written{}, while {them} had not finished: it was last{}. If what {them} was doing there belongs together, {who} saw it half done: hold one lock across all of it, and take the same lock to read it.",
        namer.data_of(addr, width),
        with_value(read.filter(|_| namer.shows_values(addr, width)), width),
        namer.at(wrote_at),
        namer.at(last_at),
    ))
}

/// The sentence that concludes a lock cycle: `threads` each wait for a
/// lock the next one holds, and `why` none gets it.
fn cycle_sentence(namer: &Namer<'_>, threads: &[ThreadId], why: &str) -> String {
    let names: Vec<String> = threads.iter().map(|&t| namer.thread(t)).collect();
    format!(
        "so {} wait for each other in a cycle ({} → {}): each holds a lock the next one needs, and {why}. Taking locks in one agreed order everywhere makes such a cycle impossible.",
        and_list(&names),
        names.join(" → "),
        names[0]
    )
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// A line for each thread in `waits`: what it waits for, and who holds
/// that.
fn who_waits(
    namer: &Namer<'_>,
    waits: &HashMap<ThreadId, Wait>,
    holders: &HashMap<u32, Vec<ThreadId>>,
    ended: &HashSet<ThreadId>,
) -> Vec<String> {
    let mut waiting: Vec<(&ThreadId, &Wait)> = waits.iter().collect();
    waiting.sort_by_key(|(t, _)| **t);
    waiting
        .into_iter()
        .map(|(&thread, wait)| {
            let who = namer.thread(thread);
            let (verb, lock) = match *wait {
                Wait::Lock(o) => ("waits for", o),
                Wait::Spin(o) => ("keeps trying to lock", o),
                Wait::Condition(c) => {
                    return format!(
                        "- {who} waits for condition {} to be signalled;",
                        namer.object(Some(c))
                    );
                }
                Wait::Join => return format!("- {who} waits for a thread to finish;"),
                Wait::Word(a) => return format!("- {who} waits on {};", namer.data(a)),
            };
            let what = namer.object(Some(lock));
            match holders.get(&lock).and_then(|h| h.first()) {
                Some(&h) if ended.contains(&h) => format!(
                    "- {who} {verb} {what}, which {} still holds though it finished;",
                    namer.thread(h)
                ),
                Some(&h) => format!("- {who} {verb} {what}, which {} holds;", namer.thread(h)),
                None => format!("- {who} {verb} {what};"),
            }
        })
        .collect()
}

/// A cycle of threads, each waiting for a lock the next one holds.
fn lock_cycle(
    waits: &HashMap<ThreadId, Wait>,
    holders: &HashMap<u32, Vec<ThreadId>>,
) -> Option<Vec<ThreadId>> {
    let next = |t: ThreadId| match waits.get(&t) {
        Some(Wait::Lock(o) | Wait::Spin(o)) => holders.get(o).and_then(|h| h.first()).copied(),
        _ => None,
    };
    let mut starts: Vec<ThreadId> = waits.keys().copied().collect();
    starts.sort_unstable();
    for start in starts {
        let mut path = vec![start];
        let mut at = start;
        while let Some(n) = next(at) {
            if let Some(pos) = path.iter().position(|&t| t == n) {
                return Some(path[pos..].to_vec());
            }
            path.push(n);
            at = n;
        }
    }
    None
}
