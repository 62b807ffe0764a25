//! The scheduler of exhaustive exploration (see `explore::dpor_search`): after
//! the prefix the search plans (see [`super::Prefixed`]), a default that
//! never preempts; it logs every choice and every *step* (what a thread does from resuming at a scheduling
//! point to reaching its next one) with what the search needs to tell which
//! steps commute.
//!
//! It also keeps the search's *sleep set*: threads whose next step was
//! already explored from an earlier state of this execution on another
//! branch, and that nothing since depends on. Running one of them now would
//! only repeat an interleaving explored before, so the default passes them
//! over. A thread leaves the sleep set as soon as a step that does not
//! commute with its next step runs.

use super::library_model::{LibraryModel, LibraryRole};
use super::state_cache::StateCache;
use super::{NextOp, Notice, ScheduleError, Scheduler, Step, StepEnd, ThreadView};
use crate::instrument::count_test::CountTest;
use crate::instrument::{AccessKind, SiteId};
use crate::trace::ThreadId;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// One step of an execution, as the search sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct StepRecord {
    /// The thread that ran.
    pub thread: ThreadId,
    /// The operation it performed first, if it resumed at a memory access,
    /// wait or notify.
    pub op: Option<NextOp>,
    /// Whether the operation changed memory (see [`StepEnd::changed`]).
    pub wrote: bool,
    /// The operations of the scheduling points it passed inside an atomic
    /// section (where no other thread may run, so that the section is one
    /// step), each with whether it changed memory.
    pub more: Vec<(NextOp, bool)>,
    /// The thread whose notify woke it from a wait, if one did.
    pub woken_by: Option<ThreadId>,
    /// It created a thread (thread ids follow the order of creation, so two
    /// such steps do not commute).
    pub spawned: bool,
    /// It touched state of the whole execution that no memory access shows
    /// (virtual time, the random generator, the size of memory), or ended
    /// the execution: it commutes with nothing.
    pub global: bool,
    /// Its access, at a code site and address its thread accessed before
    /// in the same loop, found the value found there then and changed it
    /// or not alike: another turn of a loop that waits for a value to
    /// change (see [`Episode`]).
    pub repeat: bool,
    /// For a thread's first step: the step that created the thread.
    pub parent: Option<usize>,
    /// The choice (an index in [`DporScheduler::choices`]) it was chosen
    /// at, if more than one thread could run.
    pub decision: Option<usize>,
    /// The role of the library call it is (part of), if it is a library
    /// step (see [`LibraryModel`]).
    pub library: Option<LibraryRole>,
    /// It is a reader's step on a read-write lock: a read lock taken
    /// without waiting, or its release that woke nobody; or a waiter's
    /// departure from a Rust barrier (see
    /// `DporScheduler::barrier_departure`). Two such steps commute (the
    /// count of readers goes up and down by one either way, a departure
    /// leaves the barrier as it found it, and neither waits), whatever
    /// their operations on the lock. (A reader's step and a departure
    /// touch different objects.)
    pub shared: bool,
    /// It is a counting operation and nothing else (see
    /// [`crate::instrument::count_test`]): its test and the value it found.
    pub count: Option<Count>,
}

/// A counting operation's step: its test and the old value it found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Count {
    /// The value the operation found (and returned).
    pub found: u64,
    /// What it adds, and the test its value decides.
    pub test: CountTest,
}

impl Count {
    /// Whether this operation, run before `later` (another thread's, on
    /// the same word), commutes with it: run the other way round, each
    /// would find a value its test takes the same way (this one `later`'s
    /// addition more, `later` this one's less). Then both orders leave the
    /// same memory and each thread going the same way; nothing else read
    /// what either returned.
    pub fn commutes_before(&self, later: &Count) -> bool {
        let (a, b) = (self.test, later.test);
        a.width == b.width
            && a.holds(self.found) == a.holds(a.moved(self.found, b.delta, 1))
            && b.holds(later.found) == b.holds(b.moved(later.found, a.delta, -1))
    }
}

impl StepRecord {
    /// Whether this step and `other`, of another thread, may not commute:
    /// running them in the other order may change what either does.
    pub fn dependent(&self, other: &StepRecord) -> bool {
        self.dependent_but_counts(other, false)
    }

    /// [`StepRecord::dependent`] for this step and `later`, a step of
    /// another thread that comes after it (here or in a future of a state
    /// this execution reached): two counting operations on one word that
    /// commute for the values they found (see [`Count::commutes_before`])
    /// do not make them dependent.
    pub fn dependent_before(&self, later: &StepRecord) -> bool {
        self.dependent_but_counts(later, self.counts_commuting_before(later))
    }

    /// [`StepRecord::dependent`], but for the pair of the two steps' first
    /// operations when `counts_commute` (they are counting operations that
    /// commute).
    fn dependent_but_counts(&self, other: &StepRecord, counts_commute: bool) -> bool {
        if self.global || other.global || (self.spawned && other.spawned) {
            return true;
        }
        if self.shared && other.shared {
            return false;
        }
        self.operations().enumerate().any(|(i, (a, aw))| {
            other
                .operations()
                .enumerate()
                .any(|(j, (b, bw))| !(counts_commute && i == 0 && j == 0) && a.dependent(aw, b, bw))
        })
    }

    /// Whether this step's and `later`'s operations are counting ones on
    /// the same word that commute for the values they found.
    pub fn counts_commuting_before(&self, later: &StepRecord) -> bool {
        match (self.count, later.count, self.op, later.op) {
            (Some(a), Some(b), Some(x), Some(y)) => {
                x.addr == y.addr && x.len == y.len && a.commutes_before(&b)
            }
            _ => false,
        }
    }

    /// What tells this step apart from others for
    /// [`StepRecord::dependent`], and as a thread's next step in a sleep
    /// set: the step without where it stands in its execution (its
    /// decision, the step that created its thread, whether it repeated a
    /// loop's turn, the thread that woke it).
    pub fn footprint(&self) -> StepRecord {
        StepRecord {
            woken_by: None,
            repeat: false,
            parent: None,
            decision: None,
            ..self.clone()
        }
    }

    /// Makes this record of a step stand also for `other`, a step of the
    /// same thread from the same state that drew other guest values: what
    /// either did, this one does.
    pub fn absorb(&mut self, other: &StepRecord) {
        self.wrote |= other.wrote;
        self.spawned |= other.spawned;
        if self.count != other.count {
            self.count = None;
        }
        self.global |= other.global;
        for op in &other.more {
            if !self.more.contains(op) {
                self.more.push(*op);
            }
        }
    }

    /// The address it ended waiting on, if it blocked in a wait.
    pub fn waits_on(&self) -> Option<u32> {
        self.operations()
            .last()
            .filter(|(op, _)| op.kind == AccessKind::Wait)
            .map(|(op, _)| op.addr)
    }

    /// Whether it notified waiters on `addr`.
    pub fn notifies(&self, addr: u32) -> bool {
        self.operations()
            .any(|(op, _)| op.kind == AccessKind::Notify && op.addr == addr)
    }

    /// Whether it is a condition wait woken from its wait, which takes
    /// its mutex again as a lock does.
    pub fn retakes_mutex(&self) -> bool {
        self.library == Some(LibraryRole::CondWait) && self.woken_by.is_some()
    }

    /// Whether it began a library call of `role` (rather than going on
    /// with one woken from a wait): at the call, or at its fast path
    /// inlined into the program.
    pub fn calls(&self, role: LibraryRole) -> bool {
        self.library == Some(role) && self.woken_by.is_none()
    }

    /// Whether it is a lock's fast path that failed: a compare-exchange
    /// inlined into the program that found the lock taken, after which its
    /// thread calls the lock's slow path.
    pub fn failed_fast_path(&self) -> bool {
        matches!(
            self.library,
            Some(LibraryRole::Lock | LibraryRole::ReadLock | LibraryRole::WriteLock)
        ) && self
            .op
            .is_some_and(|op| op.kind == AccessKind::AtomicCmpxchg && !self.wrote)
    }

    /// Every operation it performed, each with whether it changed memory.
    pub fn operations(&self) -> impl Iterator<Item = (&NextOp, bool)> {
        let first = self.op.as_ref().map(|op| (op, self.wrote));
        first
            .into_iter()
            .chain(self.more.iter().map(|(op, wrote)| (op, *wrote)))
    }
}

/// Bytes of a thread's descriptor that a join reads: wasi-libc's
/// `pthread_join` reads the joined thread's exit state from its
/// descriptor, which a plain load does, and which the thread's exit
/// writes (its first words).
const JOINED_THREAD_BYTES: u32 = 64;

/// A join's read of the joined thread's descriptor, when `op` calls a
/// join (of `role`) with the thread as its argument. A join that does not
/// wait reads it without an atomic operation the search would see; with
/// this read, the thread's exit happens before the join, as it does.
/// (Were the descriptor elsewhere, the join would only conflict with less:
/// its reversals with that exit are skipped anyway.)
fn joined_thread(role: Option<LibraryRole>, op: Option<NextOp>) -> Option<(NextOp, bool)> {
    let op = op.filter(|op| role == Some(LibraryRole::Join) && op.kind == AccessKind::Call)?;
    (op.src != 0).then_some((
        NextOp {
            kind: AccessKind::AtomicLoad,
            addr: op.src,
            len: JOINED_THREAD_BYTES,
            src: 0,
            site: u32::MAX,
        },
        false,
    ))
}

/// The thread whose end step `k` saw, when it is the step that completed a
/// join: a join woken from its wait by the joined thread's exit (its
/// waker), or a join that did not wait, of the thread whose library steps
/// (its start stores its id there, its exit its state) last touched the
/// descriptor it joined.
pub fn thread_joined_at(steps: &[StepRecord], k: usize) -> Option<ThreadId> {
    let step = &steps[k];
    if step.library != Some(LibraryRole::Join) || step.waits_on().is_some() {
        return None;
    }
    if step.woken_by.is_some() {
        return step.woken_by;
    }
    let descriptor = step
        .op
        .filter(|op| op.kind == AccessKind::Call && op.src != 0)?
        .src;
    let within =
        |addr: u32| (descriptor..descriptor.saturating_add(JOINED_THREAD_BYTES)).contains(&addr);
    steps[..k]
        .iter()
        .rev()
        .find(|earlier| {
            earlier.thread != step.thread
                && earlier.library == Some(LibraryRole::ThreadEnd)
                && earlier
                    .operations()
                    .any(|(op, _)| op.kind != AccessKind::Call && within(op.addr))
        })
        .map(|end| end.thread)
}

/// One memory access of a thread, as a turn of a loop is compared: the
/// code site, the address and length, the value there before, and whether
/// the access changed it.
type Access = (SiteId, u32, u32, u64, bool);

/// What a thread's memory accesses found since its loop began, to
/// recognise a loop that waits for a value to change.
///
/// A turn is the accesses from one access to the next that is alike (the
/// same site, address and value found, changed or not alike); a loop
/// waits when a whole turn comes again access by access, each alike to the
/// one a turn before it. Only then are its steps repeats (see
/// [`StepRecord::repeat`]): a function called from two places makes alike
/// accesses too, but not a whole turn of them. Writes are part of a turn:
/// an unoptimised loop keeps its counters and what it loaded in stack
/// slots, and writes them in every turn; what a write left shows in what
/// the same site finds the next turn.
#[derive(Clone, Debug, Default)]
struct Episode {
    /// The latest accesses since the loop began, oldest first.
    accesses: VecDeque<Access>,
    /// The turn being compared, if an access was alike to an earlier one:
    /// its length, and how many accesses in a row were alike to the one
    /// that length before.
    turn: Option<(usize, usize)>,
    /// A whole turn came again.
    repeated: bool,
    /// Another thread changed memory since.
    released: bool,
    /// For each of `accesses`: its step may read more than this, its
    /// first operation (a library call, an atomic section).
    reads_unseen: VecDeque<bool>,
}

impl Episode {
    /// Takes in the thread's next access; returns whether it goes on a
    /// turn that came again whole (a repeat), and whether the thread left
    /// such a loop without another thread changing memory (a counted
    /// loop).
    fn access(&mut self, access: Access) -> (bool, bool) {
        if let Some((length, alike)) = self.turn.take()
            && self.accesses[self.accesses.len() - length] == access
        {
            self.turn = Some((length, alike + 1));
            self.repeated |= alike + 1 >= length;
            self.keep(access);
            return (self.repeated, false);
        }
        // Not a turn that goes on (only a turn repeats): a loop left, or
        // one that may begin, afresh once another thread changed memory.
        let counted = self.repeated && !self.released;
        if self.released || self.repeated {
            *self = Episode::default();
        }
        if let Some(before) = self.accesses.iter().rposition(|&a| a == access) {
            let length = self.accesses.len() - before;
            self.turn = Some((length, 1));
            self.repeated = length == 1;
        }
        self.keep(access);
        (self.repeated, counted)
    }

    /// Keeps `access` as the latest, forgetting the oldest beyond
    /// [`EPISODE_ACCESSES`] (a longer turn is not recognised).
    fn keep(&mut self, access: Access) {
        if self.accesses.len() == EPISODE_ACCESSES {
            self.accesses.pop_front();
            self.reads_unseen.pop_front();
        }
        self.accesses.push_back(access);
        self.reads_unseen.push_back(false);
    }

    /// Whether an access the episode keeps overlaps the `len` bytes at
    /// `addr`, or any may: a step of the turn going on reads more than it
    /// shows.
    fn touched(&self, addr: u32, len: u32) -> bool {
        let end = u64::from(addr) + u64::from(len);
        let turn = self.turn.map_or(0, |(length, _)| length);
        self.reads_unseen
            .iter()
            .rev()
            .take(turn)
            .any(|&unseen| unseen)
            || self.accesses.iter().any(|&(_, at, size, _, _)| {
                u64::from(at) < end && u64::from(addr) < u64::from(at) + u64::from(size)
            })
    }

    /// The latest access's step reads more than it shows.
    fn reads_unseen(&mut self) {
        if let Some(last) = self.reads_unseen.back_mut() {
            *last = true;
        }
    }

    /// Whether the episode holds nothing: no access, no turn. Whether
    /// another thread changed memory then changes nothing it does.
    fn is_empty(&self) -> bool {
        self.accesses.is_empty() && self.turn.is_none() && !self.repeated
    }

    /// The thread did something other than a memory access its loop could
    /// repeat; returns whether it left a loop whose turns came again
    /// without another thread changing memory (a counted loop).
    fn leave(&mut self) -> bool {
        let counted = self.repeated && !self.released;
        *self = Episode::default();
        counted
    }
}

/// Most accesses an episode keeps. An unoptimised turn of a loop over
/// three threads' flags makes about thirty.
const EPISODE_ACCESSES: usize = 64;

/// Most values of one guest draw the search enumerates: a draw from a
/// larger range (or from every 64-bit value) takes its first value only,
/// and the search then claims nothing.
pub const MAX_ENUMERATED_VALUES: u64 = 1 << 16;

/// One choice of an execution, as the search sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DporChoice {
    /// The thread that runs at a decision.
    Thread(DporDecision),
    /// A value the running thread drew.
    Value {
        /// How many values the search enumerates here (1 when it does not
        /// enumerate this draw's range).
        alternatives: u64,
        /// The value drawn.
        chosen: u64,
        /// The next steps of the threads asleep when it was drawn.
        sleeping: Vec<StepRecord>,
        /// The decision (an index in the choices) of the step that drew
        /// it, if more than one thread could run there.
        decision: Option<usize>,
    },
}

/// One decision of an execution, as the search sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DporDecision {
    /// The threads that could run, in id order, but for those that wait
    /// for a value to change (unless all do).
    pub enabled: Vec<ThreadId>,
    /// The thread chosen.
    pub chosen: ThreadId,
    /// The next steps of the threads asleep here.
    pub sleeping: Vec<StepRecord>,
    /// Index of the step chosen here.
    pub step: usize,
    /// The state the execution stood in here, when the search is stateful
    /// and could name it (see [`DporScheduler::with_states`]).
    pub state: Option<blake3::Hash>,
}

/// Never preempts, passes over sleeping threads and draws 0; logs every
/// step, decision and value, the planned ones too.
#[derive(Debug, Default)]
pub struct DporScheduler {
    /// How many choices the search planned for this execution.
    planned: usize,
    /// The sleep set that starts after `entry_step`.
    entry_sleep: Vec<StepRecord>,
    /// The step in which the prefix's last choice was made: the entry
    /// sleep set starts when it ends.
    entry_step: Option<usize>,
    /// The sleep set now.
    sleeping: Vec<StepRecord>,
    steps: Vec<StepRecord>,
    choices: Vec<DporChoice>,
    /// Per thread: the step that created it, until its first step.
    parents: Vec<Option<usize>>,
    /// Per thread: its latest step.
    latest: Vec<Option<usize>>,
    /// The library calls of the module, when they are steps.
    library: Arc<LibraryModel>,
    /// Lock words private to the library (see [`LibraryModel`]), learned
    /// from the operations that take them.
    private_words: Vec<u32>,
    /// The step the private words were learned in, in this execution.
    learning_step: Option<usize>,
    /// Per thread: what it read since it last wrote.
    episodes: Vec<Episode>,
    /// Per thread: it read a value again unchanged, and no other thread
    /// changed memory since: it waits for another thread.
    awaiting: Vec<bool>,
    /// Every memory access is a step's operation (see
    /// [`DporScheduler::seeing_every_access`]).
    sees_every_access: bool,
    /// The step running now, and the value its operation found.
    running: Option<(usize, Option<u64>)>,
    /// The running step goes on inside an atomic section: whether this
    /// part of it began at an operation (the last of its `more`).
    continuing: Option<bool>,
    /// The decision whose step starts next.
    deciding: Option<usize>,
    /// The step that ended the execution while it ran (the main thread
    /// returned, a thread exited the process or aborted, an assumption was
    /// false), if one did.
    ending: Option<usize>,
    /// The range of the first value drawn that the search does not
    /// enumerate (0: every 64-bit value), if one was drawn.
    pub unenumerated: Option<u64>,
    /// Whether the execution had to run a sleeping thread because every
    /// thread awake only waited (it repeats an explored interleaving).
    pub sleep_blocked: bool,
    /// Whether a thread left a loop whose turns were alike without any
    /// other thread changing memory: the loop counts its turns, so its
    /// turns are not all alike, and the search cannot claim to be complete.
    pub counted_loop: bool,
    /// The states explored before, when the search is stateful.
    states: Option<Arc<Mutex<StateCache>>>,
    /// The state of the coming decision, once named.
    state: Option<blake3::Hash>,
    /// The state the execution ended in, explored before, if it did.
    pub pruned: Option<blake3::Hash>,
    /// The states of the decisions of the path being extended (the
    /// planned ones, by index in the choices), and of this execution's own
    /// decisions as it makes them.
    path_states: FxHashMap<blake3::Hash, usize>,
    /// The decision whose state the execution came back to, if it did: it
    /// went round a cycle of states.
    pub cycle: Option<usize>,
    /// The count of choices and of steps when the execution went round a
    /// cycle: the search takes in only what came before. What comes after
    /// runs on, no longer stateful, so that a loop the program cannot
    /// leave shows as a livelock as it does without states (and any other
    /// failure there as that failure).
    explored: Option<(usize, usize)>,
}

impl DporScheduler {
    /// A scheduler for an execution whose first `planned` choices the
    /// search makes (see [`super::Prefixed`]): it puts the threads of
    /// `sleep` to sleep after the step of the last of them.
    pub fn new(planned: usize, sleep: Vec<StepRecord>) -> Self {
        DporScheduler {
            planned,
            entry_sleep: sleep,
            ..Default::default()
        }
    }

    /// This scheduler, told whether every memory access of the program is
    /// a step's operation (`--points memory`): then a waiting loop's turns
    /// show all it reads, and only a change to memory a turn touched ends
    /// its wait; otherwise a change anywhere does (the loop may read plain
    /// memory no step shows).
    pub fn seeing_every_access(mut self, sees_every_access: bool) -> Self {
        self.sees_every_access = sees_every_access;
        self
    }

    /// This scheduler, for a stateful search that explored the states of
    /// `states` before: it asks for the state of each decision past the
    /// planned ones, keeps it with the decision, and ends the execution at
    /// a state explored before with a sleep set its own covers.
    ///
    /// `path` holds the states of the planned decisions, by index: an
    /// execution that comes back to one of them, or to a state of its
    /// own earlier decisions, ends there too (see [`DporScheduler::cycle`]).
    pub fn with_states(
        mut self,
        states: Arc<Mutex<StateCache>>,
        path: FxHashMap<blake3::Hash, usize>,
    ) -> Self {
        self.states = Some(states);
        self.path_states = path;
        self
    }

    /// The state the runtime names `key`, with what this search takes of
    /// each thread to be part of it: whether it waits for another thread
    /// to change memory (its turns are not explored one by one), and
    /// whether a change ended its loop's wait (which tells nothing while
    /// it is in no loop: the states of a thread between library calls
    /// are the same whether another thread wrote memory since its last
    /// step or not).
    fn with_waits(&self, key: blake3::Hash) -> blake3::Hash {
        let mut hasher = blake3::Hasher::new();
        hasher.update(key.as_bytes());
        for (awaiting, episode) in self.awaiting.iter().zip(&self.episodes) {
            let released = episode.released && !episode.is_empty();
            hasher.update(&[u8::from(*awaiting), u8::from(released)]);
        }
        hasher.finalize()
    }

    /// This scheduler, knowing the module's library calls that are steps,
    /// and the library's private lock words learned so far.
    pub fn with_library(mut self, library: Arc<LibraryModel>, private_words: Vec<u32>) -> Self {
        self.library = library;
        self.private_words = private_words;
        self
    }

    /// The library's private lock words learned so far.
    pub fn private_words(&self) -> &[u32] {
        &self.private_words
    }

    /// Whether `op`, run inside a library step, is the library's private
    /// bookkeeping (learning the lock word it takes if it takes one).
    ///
    /// Words are learned from the first step that takes any, and from no
    /// other: the list of threads' lock is one static word, whereas a
    /// word another creation takes could be a heap address the allocator
    /// later gives the program.
    fn private(&mut self, op: &NextOp, step: usize) -> bool {
        let learning = self.private_words.is_empty() || self.learning_step == Some(step);
        if learning
            && self.library.takes_private_word(op.site)
            && !self.private_words.contains(&op.addr)
        {
            self.private_words.push(op.addr);
            self.learning_step = Some(step);
        }
        self.library.private_site(op.site) || self.private_words.contains(&op.addr)
    }

    /// `op`, run in step `step` of a library call of `role` (if any), as
    /// the step's record keeps it: `None` when it is the library's
    /// private bookkeeping.
    ///
    /// A reader's operation on a read-write lock inside a thread's end is
    /// kept as the read it amounts to (see [`LibraryModel::reads_lock`]).
    fn kept(
        &mut self,
        op: Option<NextOp>,
        role: Option<LibraryRole>,
        step: usize,
    ) -> Option<NextOp> {
        let mut op = op.filter(|op| role.is_none() || !self.private(op, step))?;
        if role.is_some_and(|role| self.library.reads_lock(op.site, role)) {
            op.kind = AccessKind::AtomicLoad;
        }
        Some(op)
    }

    /// The role of the library call a step of `thread` starting at `op`
    /// is (part of): the call it begins, or the call its thread blocked in
    /// and was woken from.
    fn library_role(
        &self,
        thread: ThreadId,
        op: Option<&NextOp>,
        woken: bool,
    ) -> Option<LibraryRole> {
        if let Some(op) = op.filter(|op| op.kind == AccessKind::Call) {
            return self.library.role(op.addr);
        }
        if let Some(role) = op.and_then(|op| self.library.fast_path(op.site)) {
            return Some(role);
        }
        let previous = &self.steps[self.latest[thread as usize]?];
        previous
            .library
            .filter(|_| woken && previous.waits_on().is_some())
    }

    /// What a step that starts at `op` (kept as the record keeps it), as
    /// part of a library call of `role` if any, with `value` at its
    /// bytes, is as a counting operation, if it is one: one outside any
    /// library call whose operation is one the rewrite found counting.
    fn count_of(
        &self,
        op: Option<NextOp>,
        role: Option<LibraryRole>,
        value: Option<u64>,
    ) -> Option<Count> {
        let op = op.filter(|op| role.is_none() && op.kind == AccessKind::AtomicRmw)?;
        let test = self.library.count_test(op.site)?;
        (u32::from(test.width) == op.len).then_some(Count {
            found: value?,
            test,
        })
    }

    /// Whether step `index` is a reader's step on a read-write lock (see
    /// [`StepRecord::shared`]): a read lock that did not wait, or an
    /// unlock that woke nobody of a lock its thread last took so.
    fn reader_step(&self, index: usize) -> bool {
        let step = &self.steps[index];
        if step.calls(LibraryRole::ReadLock) {
            return step.waits_on().is_none();
        }
        if !step.calls(LibraryRole::RwUnlock)
            || step
                .operations()
                .any(|(op, _)| op.kind == AccessKind::Notify)
        {
            return false;
        }
        let Some(word) = step
            .operations()
            .find(|(op, _)| op.kind != AccessKind::Call)
        else {
            return false;
        };
        let word = word.0.addr;
        self.steps[..index]
            .iter()
            .rev()
            .filter(|s| s.thread == step.thread)
            .find(|s| {
                s.operations()
                    .any(|(op, _)| op.addr == word && op.kind != AccessKind::Call)
            })
            .is_some_and(|taken| taken.shared && taken.calls(LibraryRole::ReadLock))
    }

    /// Whether step `index` is a waiter's departure from a Rust barrier
    /// (see [`StepRecord::shared`]): the step of `Barrier::wait` that the
    /// last arrival woke, which did not wait again. It takes the barrier's
    /// mutex, finds the round over and gives the mutex back: the barrier
    /// is as it found it, so two departures commute.
    fn barrier_departure(&self, index: usize) -> bool {
        let step = &self.steps[index];
        step.library == Some(LibraryRole::BarrierWait)
            && step.woken_by.is_some()
            && step.waits_on().is_none()
    }

    /// The choices of the last execution, in order.
    /// (Up to where it went round a cycle, if it did.)
    pub fn choices(&self) -> &[DporChoice] {
        let end = self
            .explored
            .map_or(self.choices.len(), |(choices, _)| choices);
        &self.choices[..end]
    }

    /// The step that ended the last execution while it ran, if one did
    /// (before it went round a cycle).
    pub fn ending(&self) -> Option<usize> {
        self.ending.filter(|&step| step < self.steps().len())
    }

    /// Notes that the choice just logged was made for or during step
    /// `step`: if it is the prefix's last, the entry sleep set starts when
    /// that step ends.
    fn made(&mut self, step: usize) {
        if self.choices.len() == self.planned {
            self.entry_step = Some(step);
        }
    }

    /// The steps of the last execution (up to where it went round a
    /// cycle, if it did).
    pub fn steps(&self) -> &[StepRecord] {
        let end = self.explored.map_or(self.steps.len(), |(_, steps)| steps);
        &self.steps[..end]
    }

    fn asleep(&self, thread: ThreadId) -> bool {
        self.sleeping.iter().any(|s| s.thread == thread)
    }

    /// Whether running `thread` does real work: it neither spins, lets
    /// time pass, nor waits for a value another thread must change.
    fn works(&self, view: &ThreadView) -> bool {
        !view.yielding && !self.awaiting[view.id as usize]
    }

    /// The default choice: the current thread if it works (see
    /// [`DporScheduler::works`]) and is awake, else the first awake thread
    /// that works. When every thread that works sleeps, the awake ones could
    /// only wait until a sleeping one runs: the execution repeats explored
    /// schedules whatever runs, so a sleeping one runs.
    fn default_choice(&mut self, enabled: &[ThreadView], current: Option<ThreadId>) -> ThreadId {
        if let Some(sleeper) = self.sleeps_through(enabled, current) {
            return sleeper;
        }
        let working = |t: &&ThreadView| self.works(t);
        let awake = |t: &&ThreadView| !self.asleep(t.id);
        let keeps = enabled
            .iter()
            .filter(awake)
            .filter(working)
            .find(|t| Some(t.id) == current);
        if let Some(choice) = keeps.or_else(|| enabled.iter().filter(awake).find(working)) {
            return choice.id;
        }
        if let Some(sleeper) = enabled.iter().find(working) {
            self.sleep_blocked = true;
            return sleeper.id;
        }
        // Every thread waits: let each go on in turn, the next after the
        // current one (round robin), so a thread wrongly taken as waiting
        // loses one turn, and a livelock shows at the step limit. Sleeping
        // ones too: the awake ones only wait, so what a sleeping one does
        // next may be all that changes anything (running it repeats an
        // explored schedule).
        let after = current.map_or(0, |c| c + 1);
        let next = enabled
            .iter()
            .filter(|t| t.id >= after)
            .min_by_key(|t| t.id)
            .or_else(|| enabled.iter().min_by_key(|t| t.id))
            .unwrap_or(&enabled[0])
            .id;
        if self.asleep(next) {
            self.sleep_blocked = true;
        }
        next
    }

    /// The current thread, when it just began a sleep (it stands at no
    /// operation and will wake at a virtual time) after a step that did
    /// something: it runs on through the sleep. A sleep orders nothing
    /// (under [`crate::runtime::Sleeps::Any`], the only sleeps that leave
    /// a sleeper enabled before its time), and the step from it to the
    /// thread's next scheduling point shows no operation, so it commutes
    /// with every step another thread can take: running it first
    /// leaves out no behaviour, and the states where the thread still
    /// stands at its sleep are no branches of the search. A step that
    /// turns out to touch global state is a race like any other and is
    /// reversed as one. A thread whose latest step was such a sleep is
    /// not kept running again: a loop of plain reads and sleeps (`while
    /// (!flag) usleep(1)`) leaves the others their turn there.
    fn sleeps_through(
        &self,
        enabled: &[ThreadView],
        current: Option<ThreadId>,
    ) -> Option<ThreadId> {
        let current = current?;
        let view = enabled.iter().find(|t| t.id == current)?;
        let sleeping = view.wakes_at.is_some() && view.next.is_none();
        let latest = self.latest[current as usize].map(|index| &self.steps[index])?;
        let did_something = latest.operations().next().is_some() || latest.spawned;
        (sleeping && did_something && !self.asleep(current)).then_some(current)
    }

    /// Logs the decision that runs `chosen` among `enabled`.
    fn decided(&mut self, enabled: &[ThreadView], chosen: ThreadId) {
        let index = self.choices.len();
        // A thread that waits for a value to change is not worth exploring
        // here: its next turn would change nothing.
        let mut explorable: Vec<ThreadId> = enabled
            .iter()
            .map(|t| t.id)
            .filter(|&t| !self.awaiting[t as usize])
            .collect();
        if explorable.is_empty() {
            explorable = enabled.iter().map(|t| t.id).collect();
        }
        let step = self.steps.len();
        self.choices.push(DporChoice::Thread(DporDecision {
            enabled: explorable,
            chosen,
            sleeping: self.sleeping.clone(),
            step,
            state: self.state.take(),
        }));
        self.made(step);
        self.deciding = Some(index);
    }

    /// Keeps the episode of the thread whose step just ended, and tells the
    /// threads waiting for what it changed.
    fn follow_episodes(&mut self, index: usize, value: Option<u64>) {
        let step = &self.steps[index];
        let thread = step.thread as usize;
        // A turn is made of what read memory without changing it, and of
        // plain stores (an unoptimised loop's stack slots); an atomic store,
        // or an atomic write that changed memory, ends the loop.
        let access = step
            .op
            .filter(|op| op.kind == AccessKind::Store || (op.kind.reads() && !step.wrote));
        let episode = &mut self.episodes[thread];
        let (repeat, counted) = match (access, value) {
            (Some(op), Some(value)) => {
                let turn = episode.access((op.site, op.addr, op.len, value, step.wrote));
                if step.library.is_some() {
                    episode.reads_unseen();
                }
                turn
            }
            _ if step.op.is_some() || step.spawned || step.global => (false, episode.leave()),
            // A yield, a time slice, an SDK event: the loop goes on.
            _ => (false, false),
        };
        // Past a cycle the execution is not the search's (see
        // `explored`): a loop counted there withholds nothing.
        self.counted_loop |= counted && self.explored.is_none();
        self.awaiting[thread] = repeat;
        self.steps[index].repeat = repeat;
        if self.steps[index].wrote {
            self.release_others(index);
        }
    }

    /// Step `index` changed memory. A change anywhere may end another
    /// thread's wait: besides the atomics it re-reads, a loop may read
    /// plain memory, which is no scheduling point (C's spin loops often
    /// do).
    fn release_others(&mut self, index: usize) {
        let step = &self.steps[index];
        let thread = step.thread as usize;
        // What the step wrote, when its operations show all of it (a
        // library call's are its first only).
        let written: Option<Vec<&NextOp>> = (self.sees_every_access && step.library.is_none())
            .then(|| {
                step.op
                    .iter()
                    .chain(step.more.iter().filter(|m| m.1).map(|m| &m.0))
                    .collect()
            });
        for (other, episode) in self.episodes.iter_mut().enumerate() {
            let ends_wait = written
                .as_ref()
                .is_none_or(|ops| ops.iter().any(|op| episode.touched(op.addr, op.len)));
            if other != thread && ends_wait {
                episode.released = true;
                self.awaiting[other] = false;
            }
        }
    }
}

impl DporScheduler {
    /// A new execution starts.
    fn begin(&mut self) {
        self.sleeping.clear();
        self.steps.clear();
        self.choices.clear();
        self.entry_step = None;
        self.ending = None;
        self.parents.clear();
        self.latest.clear();
        self.learning_step = None;
        self.episodes.clear();
        self.awaiting.clear();
        self.running = None;
        self.continuing = None;
        self.deciding = None;
        self.unenumerated = None;
        self.sleep_blocked = false;
        self.counted_loop = false;
        self.state = None;
        self.pruned = None;
        self.cycle = None;
        self.explored = None;
        self.path_states
            .retain(|_, decision| *decision < self.planned);
    }

    /// Thread `id` was created: by the running step, or (the main thread)
    /// with the execution, which starts its first step.
    fn thread_created(&mut self, id: ThreadId) {
        let id = id as usize;
        if self.parents.len() <= id {
            self.parents.resize(id + 1, None);
            self.latest.resize(id + 1, None);
            self.episodes.resize(id + 1, Episode::default());
            self.awaiting.resize(id + 1, false);
        }
        if let Some((step, _)) = self.running {
            self.steps[step].spawned = true;
            self.parents[id] = Some(step);
        } else if self.steps.is_empty() {
            // The main thread: its first step starts with the execution.
            self.start_step(Step {
                thread: id as ThreadId,
                op: None,
                woken_by: None,
                value: None,
                continues: false,
            });
        }
    }

    /// Logs the guest's draw of `chosen` in `0..bound`.
    fn drew(&mut self, bound: u64, chosen: u64) {
        let enumerated = (1..=MAX_ENUMERATED_VALUES).contains(&bound);
        if !enumerated && self.unenumerated.is_none() && self.explored.is_none() {
            self.unenumerated = Some(bound);
        }
        self.choices.push(DporChoice::Value {
            alternatives: if enumerated { bound } else { 1 },
            chosen,
            sleeping: self.sleeping.clone(),
            decision: self
                .running
                .and_then(|(running, _)| self.steps[running].decision),
        });
        if let Some((running, _)) = self.running {
            self.made(running);
        }
    }

    /// A step starts (or an atomic section's step goes on).
    fn start_step(&mut self, step: Step) {
        if step.continues
            && let Some(last) = self.steps.len().checked_sub(1)
            && self.steps[last].thread == step.thread
        {
            let kept = self.kept(step.op, self.steps[last].library, last);
            if let Some(op) = kept {
                self.steps[last].more.push((op, false));
                // A step of several operations is no counting one.
                self.steps[last].count = None;
            }
            // The thread's loop, if it waits, shows only the section's
            // first operation.
            if let Some(episode) = self.episodes.get_mut(step.thread as usize) {
                episode.reads_unseen();
            }
            self.running = Some((last, step.value));
            self.continuing = Some(kept.is_some());
            return;
        }
        let thread = step.thread as usize;
        // A thread's first step starts after the step that created it.
        let parent = self.latest[thread].map_or(self.parents[thread], |_| None);
        self.sleeping.retain(|s| s.thread != step.thread);
        let library = self.library_role(step.thread, step.op.as_ref(), step.woken_by.is_some());
        let index = self.steps.len();
        let op = self.kept(step.op, library, index);
        self.latest[thread] = Some(index);
        self.running = Some((index, step.value.filter(|_| op.is_some())));
        self.steps.push(StepRecord {
            thread: step.thread,
            op,
            wrote: false,
            more: joined_thread(library, op).into_iter().collect(),
            woken_by: step.woken_by,
            spawned: false,
            global: false,
            repeat: false,
            parent,
            decision: self.deciding.take(),
            library,
            shared: false,
            count: self.count_of(op, library, step.value),
        });
    }

    /// The running step ended as `end` says.
    fn end_step(&mut self, end: StepEnd) {
        let Some((index, value)) = self.running.take() else {
            return;
        };
        self.steps[index].global |= end.global;
        self.steps[index].shared = self.reader_step(index) || self.barrier_departure(index);
        match self.continuing.take() {
            Some(began_at_op) => {
                if began_at_op && let Some(last) = self.steps[index].more.last_mut() {
                    last.1 = end.changed && last.0.kind.writes();
                }
                if end.changed {
                    self.release_others(index);
                }
            }
            None => {
                let step = &mut self.steps[index];
                step.wrote = end.changed && step.op.is_some_and(|op| op.kind.writes());
                self.follow_episodes(index, value);
            }
        }
        let ended = &self.steps[index];
        self.sleeping.retain(|s| !s.dependent(ended));
        if self.entry_step == Some(index) {
            let mut sleep = std::mem::take(&mut self.entry_sleep);
            sleep.retain(|s| s.thread != ended.thread && !s.dependent(ended));
            self.sleeping.extend(sleep);
        }
    }

    /// The execution ended.
    fn end(&mut self) {
        // A step still running ended the execution (the main thread
        // returned, or a thread exited the process): nothing ran after it.
        if let Some((index, _)) = self.running.take() {
            self.steps[index].global = true;
            self.ending = Some(index);
        }
    }
}

impl Scheduler for DporScheduler {
    fn choose(
        &mut self,
        enabled: &[ThreadView],
        current: Option<ThreadId>,
        _step: u64,
    ) -> Result<ThreadId, ScheduleError> {
        let chosen = self.default_choice(enabled, current);
        self.decided(enabled, chosen);
        Ok(chosen)
    }

    fn choose_value(&mut self, bound: u64, _step: u64) -> Result<u64, ScheduleError> {
        self.drew(bound, 0);
        Ok(0)
    }

    fn observe(&mut self, event: Notice<'_>) {
        match event {
            Notice::ExecutionStarted => self.begin(),
            Notice::ThreadCreated(id) => self.thread_created(id),
            Notice::ThreadImposed {
                enabled, chosen, ..
            } => self.decided(enabled, chosen),
            Notice::ValueImposed { bound, value, .. } => self.drew(bound, value),
            Notice::StepStarted(step) => self.start_step(step),
            Notice::StepEnded(end) => self.end_step(end),
            Notice::ExecutionEnded { .. } => self.end(),
            Notice::KeepsPassed(_) => {}
        }
    }

    fn follows_steps(&self) -> bool {
        true
    }

    fn wants_state(&self) -> bool {
        self.states.is_some() && !self.states_done()
    }

    fn states_done(&self) -> bool {
        self.explored.is_some()
    }

    fn state_reached(&mut self, key: Option<blake3::Hash>) -> bool {
        let Some(key) = key else {
            return false;
        };
        let key = self.with_waits(key);
        if let Some(&decision) = self.path_states.get(&key) {
            self.pruned = Some(key);
            self.cycle = Some(decision);
            self.explored = Some((self.choices.len(), self.steps.len()));
            return false;
        }
        let covered = self.states.as_ref().is_some_and(|states| {
            states
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .covers(&key, &self.sleeping)
        });
        if covered {
            self.pruned = Some(key);
        } else {
            self.path_states.insert(key, self.choices.len());
            self.state = Some(key);
        }
        covered
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::views;

    fn op(kind: AccessKind, addr: u32) -> Option<NextOp> {
        Some(NextOp {
            kind,
            addr,
            len: 4,
            src: 0,
            site: 0,
        })
    }

    fn step(thread: ThreadId, op: Option<NextOp>) -> StepRecord {
        StepRecord {
            thread,
            op,
            wrote: op.is_some_and(|op| op.kind.writes()),
            ..StepRecord::default()
        }
    }

    #[test]
    fn steps_depend_on_changes_spawns_and_global_state() {
        let load = step(1, op(AccessKind::AtomicLoad, 8));
        let store = step(2, op(AccessKind::AtomicStore, 8));
        let other = step(2, op(AccessKind::AtomicStore, 16));
        assert!(load.dependent(&store));
        assert!(!load.dependent(&other));
        assert!(!load.dependent(&step(2, op(AccessKind::AtomicLoad, 8))));
        // A compare-exchange that failed only read.
        let mut failed = step(2, op(AccessKind::AtomicCmpxchg, 8));
        failed.wrote = false;
        assert!(!load.dependent(&failed));
        assert!(store.dependent(&failed));
        // Two waits on one address: notify wakes them in arrival order.
        assert!(step(1, op(AccessKind::Wait, 8)).dependent(&step(2, op(AccessKind::Wait, 8))));
        assert!(!load.dependent(&step(2, None)));
        let mut global = step(2, None);
        global.global = true;
        assert!(load.dependent(&global));
        let mut a = step(1, None);
        let mut b = step(2, None);
        a.spawned = true;
        b.spawned = true;
        assert!(a.dependent(&b));
        // Two readers' steps on a read-write lock commute; a writer's
        // conflicts with either.
        let mut reader = step(1, op(AccessKind::AtomicCmpxchg, 8));
        let mut other_reader = step(2, op(AccessKind::AtomicCmpxchg, 8));
        reader.shared = true;
        other_reader.shared = true;
        assert!(!reader.dependent(&other_reader));
        assert!(reader.dependent(&step(2, op(AccessKind::AtomicCmpxchg, 8))));
    }

    #[test]
    fn a_join_that_saw_a_threads_end_names_that_thread() {
        let library = |thread, role, ops: &[(AccessKind, u32)]| {
            let mut ops = ops.iter().map(|&(kind, addr)| NextOp {
                kind,
                addr,
                len: 4,
                src: if kind == AccessKind::Call { 1000 } else { 0 },
                site: 0,
            });
            StepRecord {
                thread,
                library: Some(role),
                op: ops.next(),
                more: ops.map(|op| (op, true)).collect(),
                ..StepRecord::default()
            }
        };
        // Thread 2 starts (its id into its descriptor at 1000), thread 3
        // too (at 2000); thread 2 exits (its state in its descriptor).
        let start = library(
            2,
            LibraryRole::ThreadEnd,
            &[(AccessKind::Call, 7), (AccessKind::AtomicStore, 1020)],
        );
        let other = library(
            3,
            LibraryRole::ThreadEnd,
            &[(AccessKind::Call, 7), (AccessKind::AtomicStore, 2020)],
        );
        let exit = library(
            2,
            LibraryRole::ThreadEnd,
            &[(AccessKind::Call, 8), (AccessKind::AtomicCmpxchg, 1028)],
        );
        // `main` joins the thread whose descriptor is at 1000, at once.
        let join = library(0, LibraryRole::Join, &[(AccessKind::Call, 9)]);
        let steps = [start.clone(), other.clone(), exit, join.clone()];
        assert_eq!(thread_joined_at(&steps, 3), Some(2));
        // No step of another thread but the join's is a join's end.
        assert_eq!(thread_joined_at(&steps, 2), None);
        // A join that waits has not seen the end yet; its step woken by
        // the thread's exit has.
        let waits = library(
            0,
            LibraryRole::Join,
            &[(AccessKind::Call, 9), (AccessKind::Wait, 1028)],
        );
        let mut woken = library(0, LibraryRole::Join, &[]);
        woken.woken_by = Some(2);
        let steps = [start, other, waits, woken];
        assert_eq!(thread_joined_at(&steps, 2), None);
        assert_eq!(thread_joined_at(&steps, 3), Some(2));
        // A thread that had not started when the join began is not one
        // the join can name without waiting.
        assert_eq!(thread_joined_at(&[join], 0), None);
    }

    /// A decrement by one on word 8 that found `found`, tested against 1
    /// (a reference count's drop), by `thread`.
    fn drop_found(thread: ThreadId, found: u64) -> StepRecord {
        let mut drop = step(thread, op(AccessKind::AtomicRmw, 8));
        drop.count = Some(Count {
            found,
            test: CountTest {
                delta: u32::MAX as u64,
                width: 4,
                comparison: crate::instrument::count_test::Comparison::Eq,
                against: 1,
            },
        });
        drop
    }

    #[test]
    fn counting_steps_commute_unless_one_would_branch_otherwise() {
        // 3 then 2: either order, neither reaches one.
        assert!(!drop_found(1, 3).dependent_before(&drop_found(2, 2)));
        // 2 then 1: the second drop is the last; the other order makes
        // the first one the last.
        assert!(drop_found(1, 2).dependent_before(&drop_found(2, 1)));
        // Found apart (another drop came between): the later one, moved
        // first, would find one more.
        assert!(drop_found(1, 3).dependent_before(&drop_found(2, 0)));
        // The plain rule and other words are as before.
        assert!(drop_found(1, 3).dependent(&drop_found(2, 2)));
        let mut elsewhere = drop_found(2, 2);
        elsewhere.op = op(AccessKind::AtomicRmw, 12);
        assert!(!drop_found(1, 3).dependent_before(&elsewhere));
        assert!(drop_found(1, 3).dependent_before(&step(2, op(AccessKind::AtomicLoad, 8))));
        // A step of more than its counting operation: those others count.
        let mut more = drop_found(2, 2);
        more.more
            .push((op(AccessKind::AtomicStore, 8).unwrap(), true));
        assert!(drop_found(1, 3).dependent_before(&more));
    }

    fn run(
        dpor: &mut DporScheduler,
        thread: ThreadId,
        op: Option<NextOp>,
        value: u64,
        changed: bool,
    ) {
        dpor.observe(Notice::StepStarted(Step {
            thread,
            op,
            woken_by: None,
            value: Some(value),
            continues: false,
        }));
        dpor.observe(Notice::StepEnded(StepEnd {
            global: false,
            changed,
        }));
    }

    #[test]
    fn a_thread_that_begins_a_sleep_after_doing_something_sleeps_through_it() {
        let mut dpor = DporScheduler::new(0, Vec::new());
        dpor.observe(Notice::ExecutionStarted);
        dpor.observe(Notice::ThreadCreated(0));
        dpor.observe(Notice::ThreadCreated(1));
        let sleeper = |views: &mut Vec<ThreadView>| {
            views[1].yielding = true;
            views[1].wakes_at = Some(1_000);
            views[1].next = None;
        };
        let mut enabled = views(&[0, 1]);
        assert_eq!(dpor.choose(&enabled, Some(1), 1).unwrap(), 1);
        run(&mut dpor, 1, op(AccessKind::AtomicStore, 8), 0, true);
        // Thread 1 stored, then began a sleep: it runs on through it.
        sleeper(&mut enabled);
        assert_eq!(dpor.choose(&enabled, Some(1), 2).unwrap(), 1);
        run(&mut dpor, 1, None, 0, false);
        // Its step from the sleep did nothing, and it sleeps again (a loop
        // of plain reads and sleeps): thread 0 gets its turn.
        assert_eq!(dpor.choose(&enabled, Some(1), 3).unwrap(), 0);
        // A timed wait (the thread stands at its wait) is no sleep.
        let mut waiting = views(&[0, 1]);
        waiting[1].yielding = true;
        waiting[1].wakes_at = Some(1_000);
        waiting[1].next = op(AccessKind::Wait, 8);
        run(&mut dpor, 0, op(AccessKind::AtomicStore, 16), 0, true);
        run(&mut dpor, 1, op(AccessKind::AtomicStore, 24), 0, true);
        assert_eq!(dpor.choose(&waiting, Some(1), 4).unwrap(), 0);
    }

    #[test]
    fn sleeping_threads_are_passed_over_until_a_dependent_step() {
        let asleep = step(1, op(AccessKind::AtomicLoad, 8));
        let mut dpor = DporScheduler::new(1, vec![asleep]);
        dpor.observe(Notice::ExecutionStarted);
        dpor.observe(Notice::ThreadCreated(0));
        dpor.observe(Notice::ThreadCreated(1));
        let enabled = views(&[0, 1]);
        assert_eq!(dpor.choose(&enabled, Some(0), 1).unwrap(), 0);
        run(&mut dpor, 0, op(AccessKind::AtomicStore, 16), 0, true);
        // Thread 1 sleeps: thread 0 goes on.
        assert_eq!(dpor.choose(&enabled, Some(0), 2).unwrap(), 0);
        let sleeping = |dpor: &DporScheduler, index: usize| match &dpor.choices()[index] {
            DporChoice::Thread(decision) => decision.sleeping.len(),
            value => panic!("a value where a decision was expected: {value:?}"),
        };
        assert_eq!(sleeping(&dpor, 1), 1);
        run(&mut dpor, 0, op(AccessKind::AtomicStore, 8), 0, true);
        // The store to 8 wakes it: it runs when thread 0 spins.
        let mut yielding = views(&[0, 1]);
        yielding[0].yielding = true;
        assert_eq!(dpor.choose(&yielding, Some(0), 3).unwrap(), 1);
        assert!(!dpor.sleep_blocked);
        assert_eq!(dpor.steps().len(), 3);
        assert_eq!(sleeping(&dpor, 2), 0);
    }

    #[test]
    fn a_loop_waits_once_a_whole_turn_came_again_writes_included() {
        // An unoptimised spin: load the flag, keep it in a stack slot
        // (changed in the first turn only), load it back.
        let flag = |value| (1, 8, 4, value, false);
        let slot = |before, changed| (2, 64, 4, before, changed);
        let back = |value| (3, 64, 4, value, false);
        let mut episode = Episode::default();
        let turns = [
            [flag(0), slot(7, true), back(0)],
            [flag(0), slot(0, false), back(0)],
            [flag(0), slot(0, false), back(0)],
            [flag(0), slot(0, false), back(0)],
        ];
        let repeats: Vec<Vec<bool>> = turns
            .iter()
            .map(|turn| turn.iter().map(|&a| episode.access(a).0).collect())
            .collect();
        // The first turn differs from the second in its slot; from the
        // second's last access on, a whole turn comes again in the third.
        assert_eq!(repeats[0], [false, false, false]);
        assert_eq!(repeats[1], [false, false, false]);
        assert_eq!(repeats[2], [false, true, true]);
        assert_eq!(repeats[3], [true, true, true]);
        // Leaving it with nothing changed by another thread: a counted loop.
        assert_eq!(episode.access(flag(1)), (false, true));
        // Once another thread changed memory, leaving it is not.
        let mut episode = Episode::default();
        for _ in 0..3 {
            episode.access(flag(0));
        }
        episode.released = true;
        assert_eq!(episode.access(flag(1)), (false, false));
    }

    #[test]
    fn a_function_called_twice_is_no_loop() {
        // A helper's accesses, alike in two calls up to the argument that
        // differs: no whole turn came again, so nothing waits and leaving
        // is no counted loop.
        let helper = |arg| {
            [
                (1, 64, 4, 0, false),
                (2, 8, 4, 3, false),
                (3, 68, 4, arg, false),
            ]
        };
        let mut episode = Episode::default();
        let mut seen = Vec::new();
        for access in helper(1).into_iter().chain(helper(4)) {
            seen.push(episode.access(access));
        }
        seen.push(episode.access((4, 72, 4, 0, true)));
        assert!(
            seen.iter().all(|&(repeat, counted)| !repeat && !counted),
            "{seen:?}"
        );
    }

    #[test]
    fn seeing_every_access_only_a_change_to_what_the_loop_touched_ends_its_wait() {
        for sees_every_access in [false, true] {
            let mut dpor = DporScheduler::default().seeing_every_access(sees_every_access);
            dpor.observe(Notice::ExecutionStarted);
            for thread in 0..3 {
                dpor.observe(Notice::ThreadCreated(thread));
            }
            let poll = op(AccessKind::AtomicLoad, 8);
            run(&mut dpor, 0, poll, 0, false);
            run(&mut dpor, 0, poll, 0, false);
            assert!(dpor.awaiting[0]);
            // A store elsewhere: the loop reads nothing it changed.
            run(&mut dpor, 1, op(AccessKind::AtomicStore, 16), 0, true);
            assert_eq!(dpor.awaiting[0], sees_every_access);
            // A store to the flag ends the wait either way.
            run(&mut dpor, 0, poll, 0, false);
            run(&mut dpor, 2, op(AccessKind::AtomicStore, 8), 0, true);
            assert!(!dpor.awaiting[0]);
        }
    }

    #[test]
    fn a_loop_whose_turn_reads_more_than_it_shows_waits_for_a_change_anywhere() {
        let mut dpor = DporScheduler::default().seeing_every_access(true);
        dpor.observe(Notice::ExecutionStarted);
        dpor.observe(Notice::ThreadCreated(0));
        dpor.observe(Notice::ThreadCreated(1));
        // Each turn: an atomic section that loads 8, then 24.
        let turn = |dpor: &mut DporScheduler| {
            for (addr, continues) in [(8, false), (24, true)] {
                dpor.observe(Notice::StepStarted(Step {
                    thread: 0,
                    op: op(AccessKind::AtomicLoad, addr),
                    woken_by: None,
                    value: Some(0),
                    continues,
                }));
                dpor.observe(Notice::StepEnded(StepEnd::default()));
            }
        };
        turn(&mut dpor);
        turn(&mut dpor);
        assert!(dpor.awaiting[0]);
        run(&mut dpor, 1, op(AccessKind::AtomicStore, 24), 0, true);
        assert!(!dpor.awaiting[0]);
    }

    #[test]
    fn when_every_thread_waits_each_goes_on_in_turn() {
        let mut dpor = DporScheduler::default();
        dpor.observe(Notice::ExecutionStarted);
        for thread in 0..3 {
            dpor.observe(Notice::ThreadCreated(thread));
        }
        let enabled = views(&[0, 1, 2]);
        dpor.awaiting.fill(true);
        // Taken as waiting wrongly, a thread must still get its turn.
        let mut current = 0;
        let mut order = Vec::new();
        for at in 1..=6 {
            current = dpor.choose(&enabled, Some(current), at).unwrap();
            order.push(current);
            dpor.awaiting.fill(true);
        }
        assert_eq!(order, [1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn when_every_awake_thread_waits_a_sleeping_one_gets_its_turn_too() {
        let mut dpor = DporScheduler::new(0, Vec::new());
        dpor.observe(Notice::ExecutionStarted);
        for thread in 0..3 {
            dpor.observe(Notice::ThreadCreated(thread));
        }
        dpor.sleeping.push(StepRecord {
            thread: 1,
            op: op(AccessKind::Load, 8),
            ..StepRecord::default()
        });
        let enabled = views(&[0, 1, 2]);
        // Threads 0 and 2 wait for thread 1, asleep: alternating between
        // them would never end.
        let mut current = 0;
        let mut order = Vec::new();
        for at in 1..=3 {
            dpor.awaiting.fill(true);
            current = dpor.choose(&enabled, Some(current), at).unwrap();
            order.push(current);
        }
        assert_eq!(order, [1, 2, 0]);
        assert!(dpor.sleep_blocked);
    }

    #[test]
    fn a_thread_that_reads_a_value_again_unchanged_waits_for_a_change() {
        let mut dpor = DporScheduler::default();
        dpor.observe(Notice::ExecutionStarted);
        dpor.observe(Notice::ThreadCreated(0));
        dpor.observe(Notice::ThreadCreated(1));
        let enabled = views(&[0, 1]);
        let poll = op(AccessKind::AtomicLoad, 8);
        run(&mut dpor, 0, poll, 0, false);
        run(&mut dpor, 0, None, 0, false);
        run(&mut dpor, 0, poll, 0, false);
        assert!(dpor.steps()[3].repeat);
        // Thread 0 waits: thread 1 runs, and its store releases thread 0.
        assert_eq!(dpor.choose(&enabled, Some(0), 1).unwrap(), 1);
        run(&mut dpor, 1, op(AccessKind::AtomicStore, 8), 0, true);
        assert_eq!(dpor.choose(&enabled, Some(1), 2).unwrap(), 1);
        dpor.awaiting[1] = true;
        assert_eq!(dpor.choose(&enabled, Some(1), 3).unwrap(), 0);
        run(&mut dpor, 0, poll, 1, false);
        assert!(!dpor.steps()[5].repeat);
        assert!(!dpor.counted_loop);
        // A loop that gives up after some turns, nothing having changed.
        run(&mut dpor, 1, poll, 1, false);
        run(&mut dpor, 1, poll, 1, false);
        run(&mut dpor, 1, op(AccessKind::Wait, 8), 1, false);
        assert!(dpor.counted_loop);
    }

    #[test]
    fn a_change_by_another_thread_is_part_of_a_state_only_while_its_thread_is_in_a_loop() {
        let mut dpor = DporScheduler::new(0, Vec::new());
        dpor.episodes = vec![Episode::default(); 2];
        dpor.awaiting = vec![false; 2];
        let key = blake3::hash(b"state");
        let quiet = dpor.with_waits(key);
        // Between library calls (no access kept): the same state.
        dpor.episodes[1].released = true;
        assert_eq!(dpor.with_waits(key), quiet);
        // In a loop's accesses: whether memory changed since tells whether
        // the loop begins afresh.
        dpor.episodes[1] = Episode::default();
        dpor.episodes[1].access((1, 8, 4, 0, false));
        let in_loop = dpor.with_waits(key);
        dpor.episodes[1].released = true;
        assert_ne!(dpor.with_waits(key), in_loop);
    }
}
