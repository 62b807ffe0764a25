//! A failing execution told in plain words, from its [`Facts`]: what each
//! thread read and wrote of the data threads share (with the values), which
//! locks it took and waited for, and a conclusion that names the pattern
//! behind the failure where one is recognised (an update lost between a
//! read and a write, a cycle of threads each waiting for a lock the next
//! one holds, a wait that no thread is left to end).

use super::namer::{Namer, and_list, value, with_value};
use super::patterns::{
    Fate, Wait, cycle_sentence, half_done, lock_cycle, lost_update, op_fate, read_across,
    who_waits, woke_unchecked,
};
use super::recorder::{Fact, Facts};
use super::steps::Steps;
use crate::debuginfo::symbols::LazySymbols;
use crate::failure::{Failure, FailureKind};
use crate::instrument::{AccessKind, SiteId, SiteTable};
use crate::library::operations::LibraryOp;
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
    let shared = told_words(facts, failure, &namer);
    let mut teller = Teller {
        namer: &namer,
        facts,
        shared: &shared,
        steps: Steps::default(),
        end: AtTheEnd::default(),
        released: HashMap::new(),
        open: HashMap::new(),
    };
    for index in telling_order(facts) {
        teller.tell(index);
    }
    let Teller { steps, end, .. } = teller;
    let conclusion = conclude(&namer, facts, failure, &shared, &end);
    Story {
        steps: steps.finish(),
        conclusion,
    }
}

/// The words a story tells of: those more than one thread touched, and
/// the named variables the failing thread read or wrote, even where no
/// other thread got to them yet.
fn told_words(facts: &[Fact], failure: &Failure, namer: &Namer<'_>) -> HashSet<u32> {
    let mut shared = shared_words(facts);
    for fact in facts {
        if let Fact::Access { thread, addr, .. } = *fact
            && thread == failure.thread
            && !shared.contains(&addr)
            && namer.variable_at(addr).is_some()
        {
            shared.insert(addr);
        }
    }
    shared
}

/// The indices of `facts` in the order a story tells them. A lock
/// operation is told where it took effect: a thread stopped between its
/// call of `lock` and the exchange that takes the lock has not locked yet.
/// One that waits is told where it first touched the lock, before its
/// wait. (A join or a condition wait may wait before its first atomic
/// access: they are told at the call.)
fn telling_order(facts: &[Fact]) -> Vec<usize> {
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
    order.into_iter().map(|(_, index)| index).collect()
}

/// A story being told, fact by fact: the sentences so far, and who holds,
/// waits for and keeps trying what at this point of the execution.
struct Teller<'a> {
    namer: &'a Namer<'a>,
    facts: &'a [Fact],
    /// The words the story tells of (see [`told_words`]).
    shared: &'a HashSet<u32>,
    steps: Steps,
    /// Who holds, waits for and keeps trying what, so far.
    end: AtTheEnd,
    /// The locks a thread gave up while it waits on a condition variable.
    released: HashMap<ThreadId, Vec<u32>>,
    /// Each thread's library operation that has not ended: what it is, on
    /// what, and whether it blocks.
    open: HashMap<ThreadId, (LibraryOp, Option<u32>, bool)>,
}

impl Teller<'_> {
    /// Tells fact `index`.
    fn tell(&mut self, index: usize) {
        match self.facts[index] {
            Fact::Access {
                thread,
                site,
                kind,
                addr,
                width,
                read,
                wrote,
            } => {
                if self.shared.contains(&addr) {
                    let text = self.access(thread, site, kind, addr, width, (read, wrote));
                    self.steps.push(thread, text);
                }
            }
            Fact::Op {
                thread,
                op,
                site,
                object,
                first_read,
                ..
            } => {
                if let Some(text) = self.op(index, thread, op, site, object, first_read) {
                    self.steps.push(thread, text);
                }
            }
            Fact::OpEnd { thread } => self.op_end(thread),
            Fact::Blocked { thread, addr } => self.blocked(thread, addr),
            Fact::Resumed { thread } => {
                self.end.waits.remove(&thread);
            }
            Fact::Spawned { thread, child } => {
                let text = format!(
                    "{} started {}",
                    self.namer.thread(thread),
                    self.namer.thread(child)
                );
                self.steps.push(thread, text);
            }
            Fact::Ended { thread } => self.ended(thread),
        }
    }

    /// An access of `thread` at `site` to the `width` bytes at `addr`,
    /// which read and wrote `values`, in words.
    fn access(
        &self,
        thread: ThreadId,
        site: SiteId,
        kind: AccessKind,
        addr: u32,
        width: u8,
        values: (Option<u64>, Option<u64>),
    ) -> String {
        let namer = self.namer;
        let (read, wrote) = if namer.shows_values(addr, width) {
            values
        } else {
            (None, None)
        };
        let who = namer.thread(thread);
        let what = namer.data_of(addr, width);
        let at = namer.at(site);
        match kind {
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
        }
    }

    /// Library operation `op` of `thread` (fact `index`) on `object`, in
    /// words, and what it does to who holds what; `None` for a join that
    /// does not wait, which the story leaves out.
    fn op(
        &mut self,
        index: usize,
        thread: ThreadId,
        op: LibraryOp,
        site: SiteId,
        object: Option<u32>,
        first_read: Option<u64>,
    ) -> Option<String> {
        let namer = self.namer;
        let who = namer.thread(thread);
        let name = namer.object(object);
        let at = namer.at(site);
        let fate = op_fate(self.facts, index, thread);
        let blocks = fate == Fate::Blocks;
        self.open.insert(thread, (op, object, blocks));
        let holders = &mut self.end.holders;
        let spinning = &mut self.end.spinning;
        Some(match op {
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
                        format!("{who} wants {name}{at}, which it holds itself, so {who} waits")
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
                hold(holders, object, thread);
                spinning.remove(&thread);
                format!("{who} locked {name}{at}")
            }
            LibraryOp::ReadLock => {
                hold(holders, object, thread);
                spinning.remove(&thread);
                format!("{who} locked {name} for reading{at}")
            }
            LibraryOp::WriteLock => {
                hold(holders, object, thread);
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
                self.released.insert(thread, mine);
                format!("{who} waits on condition {name}{at}, letting go of its lock")
            }
            LibraryOp::Signal => format!("{who} signalled condition {name}{at}"),
            LibraryOp::Join if blocks => {
                format!("{who} waits for a thread to finish{at}")
            }
            LibraryOp::Join => return None,
        })
    }

    /// `thread`'s open library operation ended.
    fn op_end(&mut self, thread: ThreadId) {
        let Some((op, object, blocked)) = self.open.remove(&thread) else {
            return;
        };
        let who = self.namer.thread(thread);
        match op {
            _ if op.acquires() && blocked => {
                hold(&mut self.end.holders, object, thread);
                self.end.spinning.remove(&thread);
                let text = format!("{who} got {}", self.namer.object(object));
                self.steps.push(thread, text);
            }
            LibraryOp::CondWait => {
                for o in self.released.remove(&thread).unwrap_or_default() {
                    hold(&mut self.end.holders, Some(o), thread);
                }
                if blocked {
                    self.steps.push(
                        thread,
                        format!("{who} woke up from its wait, holding its lock again"),
                    );
                }
            }
            _ => {}
        }
    }

    /// `thread` blocked on the futex at `addr`: what it waits for.
    fn blocked(&mut self, thread: ThreadId, addr: u32) {
        let wait = match self.open.get(&thread) {
            Some(&(op, object, _)) if op.acquires() => Wait::Lock(object.unwrap_or(addr)),
            Some(&(LibraryOp::CondWait, object, _)) => Wait::Condition(object.unwrap_or(addr)),
            Some(&(LibraryOp::Join, _, _)) => Wait::Join,
            _ => {
                let text = format!(
                    "{} waits on {}",
                    self.namer.thread(thread),
                    self.namer.data(addr)
                );
                self.steps.push(thread, text);
                Wait::Word(addr)
            }
        };
        self.end.waits.insert(thread, wait);
    }

    /// `thread` finished, holding what it still holds.
    fn ended(&mut self, thread: ThreadId) {
        self.end.ended.insert(thread);
        self.end.spinning.remove(&thread);
        let held: Vec<String> = self
            .end
            .holders
            .iter()
            .filter(|(_, h)| h.contains(&thread))
            .map(|(&o, _)| self.namer.object(Some(o)))
            .collect();
        let who = self.namer.thread(thread);
        let text = if held.is_empty() {
            format!("{who} finished")
        } else {
            format!("{who} finished while still holding {}", held.join(" and "))
        };
        self.steps.push(thread, text);
    }
}

/// Records that `thread` holds `object`.
fn hold(holders: &mut HashMap<u32, Vec<ThreadId>>, object: Option<u32>, thread: ThreadId) {
    if let Some(o) = object {
        holders.entry(o).or_default().push(thread);
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
#[derive(Default)]
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
