//! The patterns behind failures that a story names: an update lost between
//! a read and a write, a wait woken with its condition false again, reads
//! that straddle an update, an update seen half done, and a cycle of
//! threads each waiting for a lock the next one holds. Each detector looks
//! at the facts of one execution and returns the sentence that explains
//! it, if the pattern is there.

use super::namer::{Namer, and_list, value, with_value};
use super::recorder::Fact;
use crate::instrument::{AccessKind, SiteId};
use crate::library::operations::LibraryOp;
use crate::trace::ThreadId;
use std::collections::{HashMap, HashSet};

/// What a thread waits for at the end of the execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Wait {
    /// A lock, by its word.
    Lock(u32),
    /// A condition variable to be signalled, by its word.
    Condition(u32),
    /// A thread to finish.
    Join,
    /// A change of the word at this address (a plain futex wait).
    Word(u32),
    /// It keeps trying a lock without waiting for it (a `trylock` loop).
    Spin(u32),
}

/// What became of an operation a thread began.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fate {
    /// It ended without waiting.
    Ends,
    /// The thread waited in it.
    Blocks,
    /// The execution ended before the operation touched its object: the
    /// thread was stopped at the call.
    NotBegun,
}

/// What became of the operation begun at `facts[index]` by `thread`.
pub(super) fn op_fate(facts: &[Fact], index: usize, thread: ThreadId) -> Fate {
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

/// The first update lost between a thread's read of a word and its write
/// back: another thread wrote the word in between, and the write, computed
/// from the older value, overwrote it.
pub(super) fn lost_update(
    namer: &Namer<'_>,
    facts: &[Fact],
    shared: &HashSet<u32>,
) -> Option<String> {
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
pub(super) fn woke_unchecked(
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
pub(super) fn read_across(
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
pub(super) fn half_done(
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
pub(super) fn cycle_sentence(namer: &Namer<'_>, threads: &[ThreadId], why: &str) -> String {
    let names: Vec<String> = threads.iter().map(|&t| namer.thread(t)).collect();
    format!(
        "so {} wait for each other in a cycle ({} → {}): each holds a lock the next one needs, and {why}. Taking locks in one agreed order everywhere makes such a cycle impossible.",
        and_list(&names),
        names.join(" → "),
        names[0]
    )
}

/// A line for each thread in `waits`: what it waits for, and who holds
/// that.
pub(super) fn who_waits(
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
pub(super) fn lock_cycle(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::debuginfo::symbols::LazySymbols;
    use crate::explain::namer::tests::bare;
    use crate::instrument::SiteTable;

    fn access(thread: ThreadId, kind: AccessKind, addr: u32, value: u64) -> Fact {
        let writes = kind.writes();
        Fact::Access {
            thread,
            site: 0,
            kind,
            addr,
            width: 4,
            read: (!writes).then_some(value),
            wrote: writes.then_some(value),
        }
    }

    fn read(thread: ThreadId, addr: u32, value: u64) -> Fact {
        access(thread, AccessKind::Load, addr, value)
    }

    fn write(thread: ThreadId, addr: u32, value: u64) -> Fact {
        access(thread, AccessKind::Store, addr, value)
    }

    fn op(thread: ThreadId, op: LibraryOp, object: u32) -> Fact {
        Fact::Op {
            thread,
            op,
            site: 0,
            object: Some(object),
            first_read: None,
            took_effect: None,
            settled: None,
        }
    }

    /// Runs `detect` on `facts` with a namer that knows no names, every
    /// word shared.
    fn told(
        facts: &[Fact],
        detect: impl Fn(&Namer<'_>, &[Fact], &HashSet<u32>) -> Option<String>,
    ) -> Option<String> {
        let (sites, symbols) = (SiteTable::default(), LazySymbols::new(&[]));
        let shared: HashSet<u32> = (0..64).collect();
        detect(&bare(&sites, &symbols), facts, &shared)
    }

    #[test]
    fn a_write_computed_from_a_stale_read_loses_an_update() {
        let facts = [read(1, 8, 0), read(2, 8, 0), write(2, 8, 1), write(1, 8, 1)];
        let sentence = told(&facts, lost_update).expect("a lost update");
        assert!(
            sentence.starts_with("So one update was lost: thread 1 wrote the memory at 0x8 = 1 from the value 0 it had read before thread 2 wrote the memory at 0x8 = 1"),
            "{sentence}"
        );
        // Serialised, nothing is lost.
        let facts = [read(1, 8, 0), write(1, 8, 1), read(2, 8, 1), write(2, 8, 2)];
        assert_eq!(told(&facts, lost_update), None);
    }

    #[test]
    fn a_woken_waiter_that_does_not_check_again_is_named() {
        let facts = [
            op(1, LibraryOp::CondWait, 40),
            Fact::Blocked {
                thread: 1,
                addr: 40,
            },
            op(2, LibraryOp::Signal, 40),
            Fact::OpEnd { thread: 2 },
            write(3, 8, 0),
            Fact::Resumed { thread: 1 },
            Fact::OpEnd { thread: 1 },
            read(1, 8, 0),
        ];
        let sentence = told(&facts, |n, f, s| woke_unchecked(n, f, 1, s)).expect("a wait");
        assert!(
            sentence.starts_with("thread 1 was woken from its wait on the one at 0x28, but before it had the lock back, thread 3 changed the memory at 0x8"),
            "{sentence}"
        );
        // Nobody changed the data between the signal and the return.
        let quiet: Vec<Fact> = facts
            .iter()
            .filter(|f| **f != write(3, 8, 0))
            .cloned()
            .collect();
        assert_eq!(told(&quiet, |n, f, s| woke_unchecked(n, f, 1, s)), None);
    }

    #[test]
    fn reads_that_straddle_an_update_and_an_update_seen_half_done() {
        // Thread 1 reads 8, thread 2 updates 8 and 12, thread 1 reads 12.
        let facts = [
            read(1, 8, 0),
            write(2, 8, 1),
            write(2, 12, 1),
            read(1, 12, 1),
        ];
        let sentence = told(&facts, |n, f, s| read_across(n, f, 1, s)).expect("a torn read");
        assert!(
            sentence.contains("it saw the memory at 0x8 from before that update and the memory at 0xc from after it"),
            "{sentence}"
        );
        // Thread 1 reads what thread 2, still at work, wrote.
        let facts = [write(2, 8, 1), read(1, 8, 1)];
        let sentence = told(&facts, |n, f, s| half_done(n, f, 1, s)).expect("half done");
        assert!(
            sentence.contains("while thread 2 had not finished"),
            "{sentence}"
        );
        // Once thread 2 has finished, its update is whole.
        let facts = [write(2, 8, 1), Fact::Ended { thread: 2 }, read(1, 8, 1)];
        assert_eq!(told(&facts, |n, f, s| half_done(n, f, 1, s)), None);
    }

    #[test]
    fn threads_waiting_for_each_other_s_locks_form_a_cycle() {
        let waits = HashMap::from([(1, Wait::Lock(100)), (2, Wait::Spin(200)), (3, Wait::Join)]);
        let holders = HashMap::from([(100, vec![2]), (200, vec![1])]);
        assert_eq!(lock_cycle(&waits, &holders), Some(vec![1, 2]));
        let holders = HashMap::from([(100, vec![2]), (200, vec![3])]);
        assert_eq!(lock_cycle(&waits, &holders), None);
        let (sites, symbols) = (SiteTable::default(), LazySymbols::new(&[]));
        let namer = bare(&sites, &symbols);
        let lines = who_waits(&namer, &waits, &holders, &HashSet::from([3]));
        assert_eq!(
            lines,
            [
                "- thread 1 waits for the one at 0x64, which thread 2 holds;",
                "- thread 2 keeps trying to lock the one at 0xc8, which thread 3 still holds though it finished;",
                "- thread 3 waits for a thread to finish;",
            ]
        );
        assert!(cycle_sentence(&namer, &[1, 2], "none lets go").starts_with(
            "so thread 1 and thread 2 wait for each other in a cycle (thread 1 → thread 2 → thread 1)"
        ));
    }

    #[test]
    fn an_operation_s_fate_is_what_its_thread_does_next() {
        let begun = op(1, LibraryOp::Lock, 40);
        let blocked = Fact::Blocked {
            thread: 1,
            addr: 40,
        };
        assert_eq!(op_fate(&[begun.clone(), blocked], 0, 1), Fate::Blocks);
        assert_eq!(
            op_fate(&[begun.clone(), Fact::OpEnd { thread: 1 }], 0, 1),
            Fate::Ends
        );
        let not_begun = Fact::Op {
            thread: 1,
            op: LibraryOp::Lock,
            site: 0,
            object: None,
            first_read: None,
            took_effect: None,
            settled: None,
        };
        assert_eq!(op_fate(&[not_begun], 0, 1), Fate::NotBegun);
    }
}
