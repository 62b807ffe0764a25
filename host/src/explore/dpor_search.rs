//! Exhaustive exploration with dynamic partial-order reduction: source
//! sets and sleep sets, after Abdulla, Aronis, Jonsson and Sagonas,
//! "Optimal Dynamic Partial Order Reduction", POPL 2014 (their source-DPOR
//! algorithm, without wakeup trees).
//!
//! Two schedules that differ only in the order of steps that commute (see
//! [`StepRecord::dependent`]) do the same thing, so it is enough to run one
//! schedule of each class. The search is a stateless depth-first search
//! over decisions. After each execution it computes the happens-before
//! order of its steps (program order, spawns, notifies to the waits they
//! end, and every pair of dependent steps) with vector clocks, and finds
//! its *races*: dependent steps of different threads with nothing ordering
//! them in between. For each race it makes sure that, at the decision
//! before the first step, some thread that can start the reversed order
//! (an *initial* of the steps after it that do not depend on it, followed
//! by the second step) is explored; when none of them could run there, it
//! explores every thread that could. Sleep sets keep the search from
//! running again a step explored on an earlier branch.
//!
//! When the search ends, every class of schedules has run: for the
//! scheduling points in use, every behaviour of the program has been seen.
//! What it sees of a step is its first operation, whether it created a
//! thread, and whether it touched state no memory access shows; a step
//! that reads the clock, draws random bytes or resizes memory commutes with
//! nothing, and neither does the step that ends the execution.

use super::systematic::Search;
use super::{Exhausted, Withheld};
use crate::instrument::AccessKind;
use crate::race::RaceReport;
use crate::runtime::{ExecutionResult, Program};
use crate::sched::{
    Choice, DporChoice, DporScheduler, LibraryModel, LibraryRole, Plan, Prefixed, StateCache,
    StepRecord, StepsByAddress, Strategy, Summary, thread_joined_at,
};
use crate::trace::ThreadId;
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::sync::{Arc, Mutex};

/// One choice of the execution being extended.
#[derive(Clone, Debug)]
struct Node {
    /// What this path chooses here.
    chosen: Choice,
    /// The next steps of the threads asleep when the path reached it.
    sleeping: Vec<StepRecord>,
    /// What else could be chosen here.
    branching: Branching,
    /// The state the path stood in here, when the search is stateful and
    /// the runtime named it.
    state: Option<blake3::Hash>,
    /// Each thread's steps from here on in every execution explored from
    /// here whose path below here is explored (or that made no decision
    /// after this one), followed by the futures of the explored states
    /// they ended at. The steps from here of executions still being
    /// explored below are in the nodes below (see
    /// [`DporSearch::future_of_path_node`]).
    future: Summary,
    /// The steps from the decision before this one to this one, as the
    /// summaries index them, each with its thread and the thread it
    /// joined (see [`thread_joined_at`]).
    segment: Vec<SegmentStep>,
    /// An execution from here came back to the state of an earlier
    /// decision, still being explored: what follows here is not all known
    /// when this decision's alternatives are, so its state is not kept.
    open: bool,
}

/// A step between two decisions of the path, as [`Summary::prepend`]
/// takes it: its index among the summaries' steps, its thread, and the
/// thread it saw end, if it completed a join.
#[derive(Clone, Copy, Debug)]
struct SegmentStep {
    index: u32,
    thread: ThreadId,
    joined: Option<ThreadId>,
}

/// Puts `segment`'s steps in front of `future`.
fn prepended(mut future: Summary, segment: &[SegmentStep]) -> Summary {
    for step in segment.iter().rev() {
        future.prepend(step.index, step.thread, step.joined);
    }
    future
}

/// The alternatives of a choice.
#[derive(Clone, Debug)]
enum Branching {
    /// A decision between threads.
    Threads {
        /// The threads that could run.
        enabled: Vec<ThreadId>,
        /// The steps explored from here so far.
        done: Vec<StepRecord>,
        /// The threads to explore from here (explored ones included).
        backtrack: Vec<ThreadId>,
    },
    /// A guest's draw: every value below `alternatives` is explored, in
    /// order.
    Values {
        alternatives: u64,
        /// The decision of the step that drew it, if any: what sleeps
        /// after that step sleeps after it with any value.
        decision: Option<usize>,
    },
}

impl Node {
    fn of(choice: &DporChoice) -> Self {
        match choice {
            DporChoice::Thread(decision) => Node {
                chosen: Choice::Thread(decision.chosen),
                sleeping: decision.sleeping.clone(),
                branching: Branching::Threads {
                    enabled: decision.enabled.clone(),
                    done: Vec::new(),
                    backtrack: vec![decision.chosen],
                },
                state: decision.state,
                future: Summary::default(),
                segment: Vec::new(),
                open: false,
            },
            DporChoice::Value {
                alternatives,
                chosen,
                sleeping,
                decision,
            } => Node {
                chosen: Choice::Value(*chosen),
                sleeping: sleeping.clone(),
                branching: Branching::Values {
                    alternatives: *alternatives,
                    decision: *decision,
                },
                state: None,
                future: Summary::default(),
                segment: Vec::new(),
                open: false,
            },
        }
    }

    /// The next alternative to explore here, with the sleep set it starts
    /// with, if any is left; makes it this node's choice.
    fn advance(&mut self) -> Option<Vec<StepRecord>> {
        match (&mut self.branching, &mut self.chosen) {
            (
                Branching::Threads {
                    done, backtrack, ..
                },
                Choice::Thread(chosen),
            ) => {
                let sleeping = &self.sleeping;
                // Exploring a thread whose step sleeps here or was explored
                // here would repeat explored schedules.
                let covered =
                    |t: ThreadId| sleeping.iter().chain(done.iter()).any(|s| s.thread == t);
                let next = backtrack.iter().copied().filter(|&t| !covered(t)).min()?;
                *chosen = next;
                Some(sleeping.iter().chain(done.iter()).cloned().collect())
            }
            (Branching::Values { alternatives, .. }, Choice::Value(chosen))
                if *chosen + 1 < *alternatives =>
            {
                *chosen += 1;
                Some(self.sleeping.clone())
            }
            _ => None,
        }
    }
}

/// The state of an exhaustive search.
#[derive(Debug, Default)]
pub struct DporSearch {
    path: Vec<Node>,
    started: bool,
    /// The prefix and entry sleep set of the next execution, once
    /// backtracking chose them.
    next: Option<(Vec<Choice>, Vec<StepRecord>)>,
    /// The module's library calls that are steps.
    library: Arc<LibraryModel>,
    /// The library's private lock words learned so far (see
    /// [`LibraryModel`]).
    private_words: Vec<u32>,
    /// Every memory access is a scheduling point (`--points memory`), so a
    /// loop's turn shows everything it reads.
    sees_every_access: bool,
    /// The states explored so far, when the search is stateful.
    states: Option<Arc<Mutex<StateCache>>>,
    /// The most decisions an execution made.
    deepest: usize,
    /// Executions that went round a cycle of states.
    cycles: u64,
    /// Times the search began again because an execution read memory that
    /// no execution before it had read (see [`DporSearch::read_more`]).
    restarts: u64,
}

/// What a stateful search saw of the program's states.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct StateSpace {
    /// Distinct states explored (those at decisions: where more than one
    /// thread could run).
    pub states: usize,
    /// Executions that ended at a state explored before.
    pub matched: u64,
    /// Executions that came back to a state of their own path and ran on
    /// from there without states (see [`DporScheduler::cycle`]).
    pub cycles: u64,
    /// The most decisions an execution made.
    pub depth: usize,
    /// Times the search began again, forgetting its states, because an
    /// execution read memory no execution before it had read (the counts
    /// above are of the last, complete search).
    pub restarts: u64,
}

impl DporSearch {
    /// A search that has run nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A search of `program`: when its calls of the C library are steps,
    /// with what the search knows of them; with its counting operations
    /// in any case.
    pub fn of(program: &Program) -> Self {
        let mut search = Self::new();
        search.sees_every_access = program.options().points == crate::instrument::Points::Memory;
        if program.options().library_steps {
            let model = program.symbols().with(|symbols| {
                LibraryModel::new(
                    program.sites(),
                    symbols.function_names(),
                    crate::library::steps::is_library_step_function,
                )
            });
            search.library = Arc::new(model);
        } else {
            search.library = Arc::new(LibraryModel::of_counts(program.sites()));
        }
        search
    }

    /// The scheduler of the next execution; `None` when every class of
    /// schedules has run.
    fn next_prefixed(&mut self) -> Option<Prefixed<DporScheduler>> {
        let (prefix, sleep) = if self.started {
            self.next.take()?
        } else {
            self.started = true;
            (Vec::new(), Vec::new())
        };
        let mut dpor = DporScheduler::new(prefix.len(), sleep)
            .with_library(self.library.clone(), self.private_words.clone())
            .seeing_every_access(self.sees_every_access);
        if let Some(states) = &self.states {
            let mut path = FxHashMap::with_capacity_and_hasher(self.path.len(), Default::default());
            path.extend(
                self.path
                    .iter()
                    .enumerate()
                    .filter_map(|(index, node)| Some((node.state?, index))),
            );
            dpor = dpor.with_states(states.clone(), path);
        }
        Some(Prefixed::new(Plan::Choices(prefix), dpor))
    }

    /// This search, stateful: an execution that reaches a state explored
    /// before, with a sleep set that covers the one it was explored with,
    /// ends there (see [`StateCache`]).
    pub fn stateful(mut self) -> Self {
        self.states = Some(Arc::default());
        self
    }

    /// What the search saw of the program's states, when it is stateful.
    pub fn state_space(&self) -> Option<StateSpace> {
        let states = self
            .states
            .as_ref()?
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        Some(StateSpace {
            states: states.states(),
            matched: states.matched,
            cycles: self.cycles,
            depth: self.deepest,
            restarts: self.restarts,
        })
    }

    /// The execution that just ran read memory that none before it had
    /// read, so the states named so far left that memory out (see
    /// [`crate::runtime::ExecutionResult::read_more`]); those named from now
    /// on do not, and never match the older ones. Where the search ended
    /// an execution at an older state (or at a cycle of them), that state
    /// may have stood for one that differs in the memory now read, whose
    /// future then went unexplored; where it did not, the older states are
    /// still lost to later executions. Either way the search begins again,
    /// with no states. Each time the memory read grows, so this ends; most
    /// of what a program reads, its first executions do.
    fn read_more(&mut self) {
        if self.states.is_none() {
            return;
        }
        *self = DporSearch {
            library: self.library.clone(),
            private_words: std::mem::take(&mut self.private_words),
            sees_every_access: self.sees_every_access,
            states: Some(Arc::default()),
            deepest: self.deepest,
            restarts: self.restarts + 1,
            ..DporSearch::default()
        };
    }

    /// Takes in the steps of the execution that just ran: each new node of
    /// its path (from `first_new` on) keeps the steps that lead to it, and
    /// the path's last node the steps after it, followed by the future of
    /// the explored state the execution ended at, if it did. (A node's
    /// future takes in its children's when they are explored: see
    /// [`DporSearch::backtrack`].)
    fn note_futures(&mut self, run: &DporScheduler, first_new: usize) {
        let Some(states) = self.states.clone() else {
            return;
        };
        let mut states = states.lock().unwrap_or_else(|e| e.into_inner());
        let steps = run.steps();
        let at_end = self
            .future_at_end(run, &states)
            .map(Cow::into_owned)
            .unwrap_or_default();
        // Where each decision's steps start: a value's, at the step that
        // drew it (taken as the decision before it, or the start).
        let mut starts = Vec::with_capacity(run.choices().len());
        for choice in run.choices() {
            let start = match choice {
                DporChoice::Thread(decision) => decision.step,
                DporChoice::Value { .. } => starts.last().copied().unwrap_or(0),
            };
            starts.push(start.min(steps.len()));
        }
        // The steps of this execution from the last decision an older node
        // stands for, as the summaries index them.
        let from = starts
            .get(first_new.saturating_sub(1))
            .copied()
            .unwrap_or(steps.len());
        let indexed: Vec<SegmentStep> = (from..steps.len())
            .map(|k| {
                // The step that ended the execution commutes with nothing
                // there: its reversals are at its own decision.
                let mut step = steps[k].clone();
                step.global &= run.ending() != Some(k);
                SegmentStep {
                    index: states.step_index(&step),
                    thread: step.thread,
                    joined: thread_joined_at(steps, k),
                }
            })
            .collect();
        for d in first_new.max(1)..self.path.len() {
            self.path[d].segment = indexed[starts[d - 1] - from..starts[d] - from].to_vec();
        }
        if let (Some(leaf), Some(&start)) = (self.path.last_mut(), starts.last()) {
            let suffix = &indexed[start.max(from) - from..];
            leaf.future.join_owned(prepended(at_end, suffix));
        }
        if run.cycle.is_some() {
            self.cycles += 1;
        } else if run.pruned.is_some() {
            states.matched += 1;
        }
        self.deepest = self.deepest.max(run.choices().len());
    }

    /// The future of the path's node `decision` as every execution through
    /// it so far made it: its own, and what the nodes after it hold of the
    /// executions still being explored below them, with the steps that
    /// lead to each.
    fn future_of_path_node(&self, decision: usize) -> Option<Summary> {
        let node = self.path.get(decision)?;
        let mut below = Summary::default();
        for later in self.path[decision + 1..].iter().rev() {
            let mut future = later.future.clone();
            future.join(&below);
            below = prepended(future, &later.segment);
        }
        let mut future = node.future.clone();
        future.join(&below);
        Some(future)
    }

    /// What the state the execution ended at did from there on, when it
    /// ended at a state explored before (its summary) or at a state of its
    /// own path (what was explored from there so far).
    fn future_at_end<'s>(
        &self,
        run: &DporScheduler,
        states: &'s StateCache,
    ) -> Option<Cow<'s, Summary>> {
        match run.cycle {
            Some(decision) => self.future_of_path_node(decision).map(Cow::Owned),
            None => states.summary(&run.pruned?).map(Cow::Borrowed),
        }
    }

    /// The execution came back to the state of its decision `decision`: it
    /// went round a cycle of states, and the search takes in what it did
    /// up to there only (it ran on without states: a loop it cannot leave
    /// is a livelock failure, found as without states; nothing it did
    /// after the cycle is explored further). What comes after the cycle is
    /// what came after that decision, still being explored, so
    /// the races of the cycle's steps with it are not all known yet: every
    /// thread that could run at each decision of the cycle is explored
    /// there (as stateful searches expand a state that closes a cycle in
    /// full). The states of the decisions after that one are not kept: what
    /// follows them includes the rest of that decision's future.
    fn expand_cycle(&mut self, run: &DporScheduler) {
        let Some(decision) = run.cycle else {
            return;
        };
        for (index, node) in self.path.iter_mut().enumerate().skip(decision) {
            node.open |= index > decision;
            if let Branching::Threads {
                enabled, backtrack, ..
            } = &mut node.branching
            {
                backtrack_all(enabled, backtrack, None);
            }
        }
    }

    /// The execution ended at a state explored before: each step of that
    /// state's future may race with a step this execution ran, as if it
    /// ran next. Each such race is reversed as Flanagan and Godefroid's
    /// search does: at the decision of the step that ran, the future
    /// step's thread is explored if it could run there, else every thread
    /// that could. What is known to order the two: what orders the step
    /// before the future's thread's latest step here (or, for a thread
    /// with none, before every thread's latest step); a later step here
    /// that the future step depends on too (it comes before the future
    /// step in any execution from here); and what a step of the future's
    /// thread that always came shortly before it there depends on here;
    /// and what a thread its thread always joined before it there did here
    /// (the join waited for that thread's end: `main`, done with its
    /// workers, races with none of their steps). A lock's release racing
    /// with a later lock is reversed at the holder's acquisition, as within
    /// an execution ([`reversal`]).
    fn reverse_with_future(&mut self, run: &DporScheduler, order: &HappensBefore) {
        let Some(states) = self.states.clone() else {
            return;
        };
        let states = states.lock().unwrap_or_else(|e| e.into_inner());
        let Some(future) = self.future_at_end(run, &states) else {
            return;
        };
        let steps = run.steps();
        let mut latest: FxHashMap<ThreadId, usize> = FxHashMap::default();
        for (k, step) in steps.iter().enumerate() {
            latest.insert(step.thread, k);
        }
        let known_to_all: Vec<bool> = (0..steps.len())
            .map(|i| latest.values().all(|&l| order.before(steps, i, l)))
            .collect();
        let mut reversals: Vec<(usize, ThreadId)> = Vec::new();
        // Of the steps here each future step, and each step kept as coming
        // before one, depends on, the latest of each thread, by its index
        // (the latter only for future steps that depend on some). The
        // earlier ones happen before those: a race of theirs is covered by
        // it, and what orders them is in its clock.
        let by_address = StepsByAddress::new(steps);
        let mut dependents = Dependents::default();
        let mut known = order.no_clock();
        let mut dependent: Vec<usize> = Vec::new();
        for future_step in future.steps() {
            let index = future_step.step;
            let later = states.step(index);
            let t = later.thread;
            let of_later = dependents.look_up(&by_address, &states, index);
            if of_later.is_empty() {
                continue;
            }
            let last_here = latest.get(&t).copied();
            // What the steps of its thread that always come before it know
            // of the steps here: those they depend on, and what comes
            // before them, are ordered before it. So is everything a
            // thread it always joined before it did here: the join waited
            // for that thread's end.
            known.fill(0);
            for &before in &future_step.before {
                let of_before = dependents.look_up(&by_address, &states, before);
                for &i in &dependents.found[of_before] {
                    join_row(&mut known, order.clock(i));
                }
            }
            for joined in future_step.joined.iter() {
                if let Some(&last) = latest.get(&joined) {
                    join_row(&mut known, order.clock(last));
                }
            }
            dependent.clear();
            dependent.extend(
                dependents.found[of_later]
                    .iter()
                    .copied()
                    .filter(|&i| !order.knows(&known, steps, i)),
            );
            for (d, &i) in dependent.iter().enumerate() {
                let earlier = &steps[i];
                if earlier.thread == t || (earlier.repeat && !earlier.wrote) {
                    continue;
                }
                let ordered = last_here.map_or(known_to_all[i], |l| order.before(steps, i, l));
                // A step after it that `later` depends on too comes before
                // `later` in any execution from here: the race is that
                // step's, not this one's.
                let covered = dependent[d + 1..]
                    .iter()
                    .any(|&j| order.before(steps, i, j));
                if ordered || covered {
                    continue;
                }
                if let Some(step) = reversed_step(steps, i, later)
                    && !reversals.contains(&(step, t))
                {
                    reversals.push((step, t));
                }
            }
        }
        drop(states);
        for (i, t) in reversals {
            if let Some((enabled, backtrack)) = self.decision_of(&steps[i]) {
                if enabled.contains(&t) {
                    if !backtrack.contains(&t) {
                        backtrack.push(t);
                    }
                } else {
                    backtrack_all(enabled, backtrack, None);
                }
            }
        }
    }

    /// Takes in the execution that just ran (its scheduler), and chooses
    /// the next one. Returns whether a store of a waiting loop's turn that
    /// came again raced with another thread's step: alike turns are not
    /// explored turn by turn, as they change nothing another thread sees,
    /// unless such a store (an unoptimised loop's stack slot, say) is one
    /// another thread touches.
    fn record(&mut self, run: &DporScheduler) -> bool {
        let choices = run.choices();
        let steps = run.steps();
        self.private_words = run.private_words().to_vec();
        while self.path.len() > choices.len() {
            self.pop(false);
        }
        let first_new = self.path.len();
        for choice in &choices[first_new..] {
            self.path.push(Node::of(choice));
        }
        // A thread's step explored at a decision, as its sleep-set record
        // from there on: when the step drew guest values, the record
        // stands for all of them (every value is explored below the
        // decision before another thread is), as what any of them did.
        for (node, choice) in self.path.iter_mut().zip(choices) {
            if let (Branching::Threads { done, .. }, DporChoice::Thread(decision)) =
                (&mut node.branching, choice)
                && let Some(step) = steps.get(decision.step)
            {
                match done.iter_mut().find(|s| s.thread == decision.chosen) {
                    Some(record) => record.absorb(step),
                    None => done.push(step.clone()),
                }
            }
        }
        self.note_futures(run, first_new);
        self.expand_cycle(run);
        let order = HappensBefore::of(steps);
        self.reverse_with_future(run, &order);
        let mut turn_wrote_shared = false;
        for &(first, second) in &order.races {
            turn_wrote_shared |= [first, second]
                .iter()
                .any(|&step| steps[step].repeat && steps[step].wrote);
            if steps[first].repeat && !steps[first].wrote {
                // Another turn of a loop waiting for a change: reversing
                // the race with its first turn covers it. (A turn's store
                // another thread sees is reversed like any step, though the
                // claim is withheld: the loop's later turns were not all
                // explored.)
                continue;
            }
            let Some((enabled, backtrack)) = self.decision_of(&steps[first]) else {
                // Only one thread could run there: nothing to reverse.
                continue;
            };
            let initials: Vec<ThreadId> = order
                .initials(steps, first, second)
                .into_iter()
                .filter(|t| enabled.contains(t))
                .collect();
            if initials.iter().any(|t| backtrack.contains(t)) {
                continue;
            }
            let preferred = steps[second].thread;
            match initials.first() {
                Some(&some) => backtrack.push(if initials.contains(&preferred) {
                    preferred
                } else {
                    some
                }),
                None => backtrack_all(enabled, backtrack, None),
            }
        }
        self.reverse_ending(run);
        self.backtrack();
        turn_wrote_shared
    }

    /// The step that ended the execution (`main` returned, a thread exited
    /// the process or aborted, an assumption was false) commutes with
    /// nothing, not even with the next steps of the threads it cut short,
    /// which never ran: each thread that could have run instead at its
    /// decision is a race to reverse there. (A thread that could not run
    /// there waited for another thread, which could, or for the ending
    /// thread, whose next step ended everything.)
    fn reverse_ending(&mut self, run: &DporScheduler) {
        let Some(ending) = run.ending() else {
            return;
        };
        let step = &run.steps()[ending];
        if let Some((enabled, backtrack)) = self.decision_of(step) {
            backtrack_all(enabled, backtrack, Some(step.thread));
        }
    }

    /// The threads that could run at the decision `step` was chosen at,
    /// and those to explore there, if more than one could run.
    fn decision_of(&mut self, step: &StepRecord) -> Option<(&[ThreadId], &mut Vec<ThreadId>)> {
        match step.decision.and_then(|d| self.path.get_mut(d)) {
            Some(Node {
                branching:
                    Branching::Threads {
                        enabled, backtrack, ..
                    },
                ..
            }) => Some((enabled, backtrack)),
            _ => None,
        }
    }

    /// Finds the deepest choice with an alternative still to explore.
    fn backtrack(&mut self) {
        while let Some(node) = self.path.last_mut() {
            if let Some(mut sleep) = node.advance() {
                // Another value for a step: the threads that sleep after
                // that step with one value sleep after it with any (the
                // step's end wakes those it does not commute with).
                if let Branching::Values {
                    decision: Some(d), ..
                } = node.branching
                    && let Node {
                        sleeping,
                        branching: Branching::Threads { done, .. },
                        ..
                    } = &self.path[d]
                {
                    for record in sleeping.iter().chain(done) {
                        if !sleep.iter().any(|s| s.thread == record.thread) {
                            sleep.push(record.clone());
                        }
                    }
                }
                let prefix = self.path.iter().map(|n| n.chosen).collect();
                self.next = Some((prefix, sleep));
                return;
            }
            self.pop(true);
        }
    }

    /// Takes the path's last node off: when `explored` (every alternative
    /// below it was), its state is kept as explored; either way its parent's
    /// future takes in its own, with the steps that lead to it.
    fn pop(&mut self, explored: bool) {
        let Some(node) = self.path.pop() else {
            return;
        };
        let Some(states) = &self.states else {
            return;
        };
        let mut states = states.lock().unwrap_or_else(|e| e.into_inner());
        if let (true, Some(key), false) = (explored, node.state, node.open) {
            states.explored(key, &node.sleeping, &node.future);
        }
        if let Some(parent) = self.path.last_mut() {
            parent
                .future
                .join_owned(prepended(node.future, &node.segment));
        }
    }
}

/// The latest step of each thread that steps of a state's future depend
/// on, among an execution's steps (see
/// [`StepsByAddress::latest_dependent_by_thread`]), looked up once per step.
#[derive(Default)]
struct Dependents {
    /// By step index: where its steps are in `found`.
    ranges: FxHashMap<u32, std::ops::Range<usize>>,
    found: Vec<usize>,
    scratch: Vec<Option<usize>>,
}

impl Dependents {
    /// Where the steps that step `index` of `states` depends on are in
    /// `found`.
    fn look_up(
        &mut self,
        by_address: &StepsByAddress<'_>,
        states: &StateCache,
        index: u32,
    ) -> std::ops::Range<usize> {
        if let Some(range) = self.ranges.get(&index) {
            return range.clone();
        }
        let start = self.found.len();
        by_address.latest_dependent_by_thread(
            states.step(index),
            states.slots(index),
            &mut self.scratch,
            &mut self.found,
        );
        let range = start..self.found.len();
        self.ranges.insert(index, range.clone());
        range
    }
}

/// Joins the clock `other` into `clock` (entry by entry, the later).
fn join_row(clock: &mut [u32], other: &[u32]) {
    for (mine, theirs) in clock.iter_mut().zip(other) {
        *mine = (*mine).max(*theirs);
    }
}

/// Adds every thread of `enabled` but `except` to `backtrack`.
fn backtrack_all(enabled: &[ThreadId], backtrack: &mut Vec<ThreadId>, except: Option<ThreadId>) {
    for &t in enabled {
        if Some(t) != except && !backtrack.contains(&t) {
            backtrack.push(t);
        }
    }
}

/// The happens-before order of an execution's steps, as vector clocks, and
/// its races.
struct HappensBefore {
    /// Per step, a row of `width` entries (one per thread): how many steps
    /// of each thread happen before it or are it. One table, not a clock
    /// apiece: an execution has hundreds of steps and few threads.
    clocks: Vec<u32>,
    /// Threads (entries per row).
    width: usize,
    /// Per step: its position in its thread (from 1).
    position: Vec<u32>,
    /// Pairs of dependent steps of different threads that nothing else
    /// orders, first step first.
    races: Vec<(usize, usize)>,
}

impl HappensBefore {
    fn of(steps: &[StepRecord]) -> Self {
        let threads = steps
            .iter()
            .map(|s| s.thread as usize + 1)
            .max()
            .unwrap_or(0);
        let mut clocks: Vec<u32> = Vec::with_capacity(steps.len() * threads);
        let row = |step: usize| step * threads..(step + 1) * threads;
        let mut clock = vec![0u32; threads];
        let mut position = Vec::with_capacity(steps.len());
        let mut latest = Latest::new(threads);
        let mut races = Vec::new();
        let mut touched = Vec::new();
        let mut latest_of_thread = vec![None; threads];
        let mut dependent: Vec<usize> = Vec::with_capacity(threads);
        for (k, step) in steps.iter().enumerate() {
            let t = step.thread as usize;
            match latest.any[t].or(step.parent) {
                Some(b) => clock.copy_from_slice(&clocks[row(b)]),
                None => clock.fill(0),
            }
            if let Some(notify) = step
                .woken_by
                .and_then(|w| latest.waking(w as usize, latest.any[t].map(|p| &steps[p])))
            {
                join_row(&mut clock, &clocks[row(notify)]);
            }
            // Each other thread's latest step that does not commute with
            // this one: its earlier ones happen before it. Latest first, so
            // that a race is only reported when nothing in between orders
            // the two steps.
            let bytes = Latest::touched(step, &mut touched).then_some(touched.as_slice());
            latest.dependent(steps, step, bytes, &mut latest_of_thread);
            dependent.clear();
            dependent.extend(latest_of_thread.iter().flatten());
            dependent.sort_unstable_by(|a, b| b.cmp(a));
            for &i in &dependent {
                if clock[steps[i].thread as usize] < position[i]
                    && let Some(race) = reversal(steps, i, k)
                    // A lock's race moved to the holder's acquisition,
                    // which happens before this step anyway (the holder
                    // woke it in its critical section): no order to
                    // reverse.
                    && clock[steps[race.0].thread as usize] < position[race.0]
                {
                    races.push(race);
                }
                join_row(&mut clock, &clocks[row(i)]);
            }
            // Other steps know this thread's steps up to the one before.
            clock[t] += 1;
            position.push(clock[t]);
            clocks.extend_from_slice(&clock);
            latest.record(step, k, bytes);
        }
        races.sort_unstable();
        HappensBefore {
            clocks,
            width: threads,
            position,
            races,
        }
    }

    /// The clock of step `step`: how many steps of each thread happen
    /// before it or are it.
    fn clock(&self, step: usize) -> &[u32] {
        &self.clocks[step * self.width..(step + 1) * self.width]
    }

    /// A clock that knows no step yet, as [`HappensBefore::knows`] reads
    /// it (join steps' clocks into it with [`join_row`]; all zeros).
    fn no_clock(&self) -> Vec<u32> {
        vec![0; self.width]
    }

    /// Whether step `a` happens before step `b` (or is it).
    fn before(&self, steps: &[StepRecord], a: usize, b: usize) -> bool {
        self.knows(self.clock(b), steps, a)
    }

    /// Whether `clock` has reached step `a`.
    fn knows(&self, clock: &[u32], steps: &[StepRecord], a: usize) -> bool {
        clock[steps[a].thread as usize] >= self.position[a]
    }

    /// The threads that can start the reversal of the race `(first,
    /// second)`: of the steps after `first` that do not happen after it,
    /// followed by `second`, the threads whose first step there happens
    /// after none of the others.
    fn initials(&self, steps: &[StepRecord], first: usize, second: usize) -> Vec<ThreadId> {
        let mut firsts: Vec<usize> = Vec::new();
        let mut seen: Vec<ThreadId> = Vec::new();
        let candidates = (first + 1..second)
            .filter(|&m| !self.before(steps, first, m))
            .chain([second]);
        for m in candidates {
            if !seen.contains(&steps[m].thread) {
                seen.push(steps[m].thread);
                firsts.push(m);
            }
        }
        firsts
            .iter()
            .filter(|&&f| firsts.iter().all(|&g| g >= f || !self.before(steps, g, f)))
            .map(|&f| steps[f].thread)
            .collect()
    }
}

/// The race to reverse for dependent steps `first` and `second` of
/// different threads that nothing else orders, or `None` when reversing
/// them would only make a library call block until the first step and
/// then do what it did (see [`LibraryRole::retries`]):
/// - a call that blocked, and the step that woke it (a mutex's unlock, a
///   thread's exit): had the call come after, it would not have blocked;
/// - a thread's exit and a join of it;
/// - a mutex's unlock and a lock of it (a call, or a blocked one going on
///   after a wake): the lock, moved before the unlock, would wait for it.
///   What can change is which thread takes the mutex first: the race is
///   the unlocking thread's own acquisition of the mutex (else its latest
///   step before that the lock depends on, a `trylock`) and the lock. The
///   same holds for a read-write lock's unlock and a read or write lock of
///   it (a read lock that would not wait, behind another reader, commutes
///   with that reader's own read lock), and for `pthread_cond_wait`, which
///   releases its mutex where it begins and takes it again in the step it
///   is woken in. When that acquisition happens before the lock anyway
///   (the holder signalled the lock's thread in its critical section),
///   [`HappensBefore::of`] drops the race: the lock cannot come first.
fn reversal(steps: &[StepRecord], first: usize, second: usize) -> Option<(usize, usize)> {
    let a = &steps[first];
    if (a.library.is_some_and(LibraryRole::retries) || a.retakes_mutex())
        && let Some(addr) = a.waits_on()
        && woke(steps, first, second, addr)
    {
        return None;
    }
    reversed_step(steps, first, &steps[second]).map(|step| (step, second))
}

/// The step of this execution to reverse with `b`, a later step of
/// another thread (here or in a future of a state it reached) that step
/// `first` does not commute with, as [`reversal`] says, when the step
/// `first` did not block until `b` woke it.
fn reversed_step(steps: &[StepRecord], first: usize, b: &StepRecord) -> Option<usize> {
    let a = &steps[first];
    if a.failed_fast_path() {
        return None;
    }
    if a.library == Some(LibraryRole::ThreadEnd) && b.calls(LibraryRole::Join) {
        return None;
    }
    // A condition wait releases its mutex where it begins.
    let releases_mutex = a.library == Some(LibraryRole::Unlock) || a.calls(LibraryRole::CondWait);
    let releases_rw = a.library == Some(LibraryRole::RwUnlock);
    let takes = |step: &StepRecord, mutex: bool| match step.library {
        Some(LibraryRole::Lock) => mutex,
        Some(LibraryRole::ReadLock | LibraryRole::WriteLock) => !mutex,
        _ => mutex && step.retakes_mutex(),
    };
    if (releases_mutex && takes(b, true)) || (releases_rw && takes(b, false)) {
        // The holder's acquisition: its latest lock, or latest step that
        // changed the lock's word as the release does (a `trylock` that
        // took it); not a signal to `b` in its critical section. Else its
        // latest step `b` depends on.
        let words: Vec<u32> = a
            .operations()
            .filter(|&(op, wrote)| wrote && op.kind != AccessKind::Call)
            .map(|(op, _)| op.addr)
            .collect();
        let acquires = |step: &StepRecord| {
            takes(step, releases_mutex)
                || step
                    .operations()
                    .any(|(op, wrote)| wrote && op.kind.writes() && words.contains(&op.addr))
        };
        let holders = || {
            (0..first)
                .rev()
                .filter(|&j| steps[j].thread == a.thread && steps[j].dependent(b))
        };
        let taken = holders()
            .find(|&j| acquires(&steps[j]))
            .or_else(|| holders().next());
        return Some(taken.unwrap_or(first));
    }
    Some(first)
}

/// Whether step `waker` is the step whose notify on `addr` ended the wait
/// step `waiting` blocked in, or the release of a lock (its fast path
/// inlined into the program) right before that step of its thread.
fn woke(steps: &[StepRecord], waiting: usize, waker: usize, addr: u32) -> bool {
    let (waiter, notifier) = (steps[waiting].thread, steps[waker].thread);
    let Some(resumed) = (waiting + 1..steps.len()).find(|&n| steps[n].thread == waiter) else {
        return false;
    };
    let releases = matches!(
        steps[waker].library,
        Some(LibraryRole::Unlock | LibraryRole::RwUnlock)
    );
    let notifying = if releases && !steps[waker].notifies(addr) {
        match (waker + 1..steps.len()).find(|&n| steps[n].thread == notifier) {
            Some(next) => next,
            None => return false,
        }
    } else {
        waker
    };
    resumed > notifying
        && steps[resumed].woken_by == Some(notifier)
        && steps[notifying].notifies(addr)
        && !steps[notifying + 1..resumed]
            .iter()
            .any(|s| s.thread == notifier && s.notifies(addr))
}

/// Operations touching more bytes than this are taken to conflict with
/// every step (a `memory.copy` or `memory.fill` under `--points memory`).
const LARGEST_TRACKED: u32 = 64;

/// Per thread, its latest steps of each kind that matter for dependence.
struct Latest {
    /// Its latest step.
    any: Vec<Option<usize>>,
    /// Its latest step that commutes with nothing.
    global: Vec<Option<usize>>,
    /// Its latest step that created a thread.
    spawn: Vec<Option<usize>>,
    /// Its latest notify.
    notify: Vec<Option<usize>>,
    /// Its latest notify of each address.
    notify_at: FxHashMap<(usize, u32), usize>,
    /// Per byte: where its row of `accesses` starts.
    bytes: FxHashMap<u64, usize>,
    /// Rows of an entry per thread: its latest read, write, and wait or
    /// notify of one byte.
    accesses: Vec<ByteAccess>,
    /// Per thread: its steps that are counting operations (see
    /// [`StepRecord::count`]), in order.
    counting: Vec<Vec<usize>>,
}

/// A thread's latest accesses to one byte: by any step, and by a step
/// that is not [`StepRecord::shared`].
#[derive(Clone, Copy, Debug, Default)]
struct ByteAccess {
    read: Option<usize>,
    write: Option<usize>,
    futex: Option<usize>,
    exclusive_read: Option<usize>,
    exclusive_write: Option<usize>,
    /// Its latest read and write by a step that is no counting operation.
    uncounted_read: Option<usize>,
    uncounted_write: Option<usize>,
}

/// Most counting steps of a thread looked at for one step: past them, the
/// latest one left is taken as not commuting (more races, never fewer).
const MOST_COUNTS_LOOKED_AT: usize = 256;

impl Latest {
    fn new(threads: usize) -> Self {
        Latest {
            any: vec![None; threads],
            global: vec![None; threads],
            spawn: vec![None; threads],
            notify: vec![None; threads],
            notify_at: FxHashMap::default(),
            bytes: FxHashMap::default(),
            accesses: Vec::new(),
            counting: vec![Vec::new(); threads],
        }
    }

    /// Puts in `bytes` the bytes `step` reads and writes (each with
    /// whether it writes it and whether it waits or notifies there); false
    /// when it is taken to conflict with everything.
    fn touched(step: &StepRecord, bytes: &mut Vec<(u64, bool, bool)>) -> bool {
        bytes.clear();
        if step.global {
            return false;
        }
        for (op, wrote) in step.operations() {
            if op.kind == AccessKind::Call {
                continue;
            }
            if op.len > LARGEST_TRACKED {
                return false;
            }
            let futex = matches!(op.kind, AccessKind::Wait | AccessKind::Notify);
            let len = op.len.max(1) as u64;
            if op.kind == AccessKind::Copy {
                bytes.extend((0..len).map(|i| (op.src as u64 + i, false, false)));
            }
            bytes.extend((0..len).map(|i| (op.addr as u64 + i, wrote, futex)));
        }
        true
    }

    /// Each other thread's latest step that may not commute with `step`
    /// (of thread `t`), into `latest` (by thread), when `step` touches
    /// `bytes` (as [`Latest::touched`] gives them; `None`: everything).
    fn dependent(
        &self,
        steps: &[StepRecord],
        step: &StepRecord,
        bytes: Option<&[(u64, bool, bool)]>,
        latest: &mut [Option<usize>],
    ) {
        let t = step.thread as usize;
        let Some(bytes) = bytes else {
            latest.copy_from_slice(&self.any);
            latest[t] = None;
            return;
        };
        latest.copy_from_slice(&self.global);
        if step.spawned {
            for (mine, spawn) in latest.iter_mut().zip(&self.spawn) {
                *mine = (*mine).max(*spawn);
            }
        }
        let counting = step.count.is_some();
        for &(byte, writes, futex) in bytes {
            let Some(&row) = self.bytes.get(&byte) else {
                continue;
            };
            let accesses = &self.accesses[row..row + latest.len()];
            for (mine, access) in latest.iter_mut().zip(accesses) {
                // A reader's step commutes with the other readers' steps;
                // a counting one may with counting ones (looked at below).
                let (read, write) = if step.shared {
                    (access.exclusive_read, access.exclusive_write)
                } else if counting {
                    (access.uncounted_read, access.uncounted_write)
                } else {
                    (access.read, access.write)
                };
                *mine = (*mine).max(write);
                if writes {
                    *mine = (*mine).max(read);
                }
                if futex {
                    *mine = (*mine).max(access.futex);
                }
            }
        }
        latest[t] = None;
        if counting {
            for u in (0..latest.len()).filter(|&u| u != t) {
                latest[u] = latest[u].max(self.latest_counting_conflict(steps, step, u, latest[u]));
            }
        }
    }

    /// Thread `u`'s latest counting step after `after` that `step`, a
    /// counting one, depends on (see [`StepRecord::dependent_before`]).
    fn latest_counting_conflict(
        &self,
        steps: &[StepRecord],
        step: &StepRecord,
        u: usize,
        after: Option<usize>,
    ) -> Option<usize> {
        for (looked, &c) in self.counting[u].iter().rev().enumerate() {
            if after.is_some_and(|a| c <= a) {
                return None;
            }
            if looked == MOST_COUNTS_LOOKED_AT || steps[c].dependent_before(step) {
                return Some(c);
            }
        }
        None
    }

    /// The step of thread `waker` whose notify ended the wait that
    /// `waited`, the woken thread's step before, blocked in: its latest
    /// notify of the address waited on (not its latest notify, which may
    /// come steps later, on another address: a barrier's release, then a
    /// thread's exit). Its latest notify when the wait's address is not
    /// known.
    fn waking(&self, waker: usize, waited: Option<&StepRecord>) -> Option<usize> {
        match waited.and_then(StepRecord::waits_on) {
            Some(addr) => self.notify_at.get(&(waker, addr)).copied(),
            None => self.notify[waker],
        }
    }

    /// Notes step `k`, which touches `bytes` (as [`Latest::touched`] gives
    /// them; `None`: everything).
    fn record(&mut self, step: &StepRecord, k: usize, bytes: Option<&[(u64, bool, bool)]>) {
        let t = step.thread as usize;
        self.any[t] = Some(k);
        if step.spawned {
            self.spawn[t] = Some(k);
        }
        // A library step or atomic section may notify after other
        // operations.
        for (op, _) in step.operations() {
            if op.kind == AccessKind::Notify {
                self.notify[t] = Some(k);
                self.notify_at.insert((t, op.addr), k);
            }
        }
        let Some(bytes) = bytes else {
            self.global[t] = Some(k);
            return;
        };
        let threads = self.any.len();
        if step.count.is_some() {
            self.counting[t].push(k);
        }
        for &(byte, writes, futex) in bytes {
            let accesses = &mut self.accesses;
            let row = *self.bytes.entry(byte).or_insert_with(|| {
                accesses.resize(accesses.len() + threads, ByteAccess::default());
                accesses.len() - threads
            });
            let access = &mut self.accesses[row + t];
            if writes {
                access.write = Some(k);
            } else {
                access.read = Some(k);
            }
            if !step.shared {
                if writes {
                    access.exclusive_write = Some(k);
                } else {
                    access.exclusive_read = Some(k);
                }
            }
            if step.count.is_none() {
                if writes {
                    access.uncounted_write = Some(k);
                } else {
                    access.uncounted_read = Some(k);
                }
            }
            if futex {
                access.futex = Some(k);
            }
        }
    }
}

impl Search for DporSearch {
    type Scheduler = Prefixed<DporScheduler>;

    const STRATEGY: Strategy = Strategy::Dpor;

    fn next_scheduler(&mut self) -> Option<Prefixed<DporScheduler>> {
        self.next_prefixed()
    }

    fn learn(
        &mut self,
        scheduler: Prefixed<DporScheduler>,
        result: &ExecutionResult,
    ) -> Option<Withheld> {
        let dpor = scheduler.strategy();
        let turn_wrote_shared = self.record(dpor);
        let why = [
            dpor.unenumerated.map(|range| Withheld::Values { range }),
            result.fair_from.map(|_| Withheld::StepLimit),
            dpor.counted_loop.then_some(Withheld::CountedLoop),
            turn_wrote_shared.then_some(Withheld::SharedTurn),
            result.signals_sent.then_some(Withheld::Signals),
            result.unenumerated.map(Withheld::Input),
            result
                .reports
                .get::<RaceReport>()
                .is_some_and(|r| r.mixed_accesses)
                .then_some(Withheld::MixedAccesses),
            raced_unreported(result).then_some(Withheld::RaceBehindOtherEnd),
        ];
        if result.read_more {
            self.read_more();
        }
        why.into_iter().flatten().next()
    }

    fn claim(&self) -> Exhausted {
        Exhausted::All
    }

    fn keys_states(&self) -> bool {
        self.states.is_some()
    }

    fn state_space(&self) -> Option<StateSpace> {
        DporSearch::state_space(self)
    }
}

/// Whether the execution raced but ended otherwise (an assumption, an
/// abort, another failure), so that the race is no failure of its own.
/// (A race between two scheduling points is explored, not unreported.)
fn raced_unreported(result: &ExecutionResult) -> bool {
    let raced = result
        .reports
        .get::<RaceReport>()
        .is_some_and(|r| r.unexplored > 0);
    let failed_by_race = result
        .outcome
        .failure()
        .is_some_and(|f| f.kind == crate::failure::FailureKind::DataRace);
    raced && !failed_by_race
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::{NextOp, Notice, Scheduler, Step, StepEnd, ThreadView};

    /// A step of `thread` in a library call of `role` that begins at a
    /// call (`calls`) or goes on after a wait, with operations `ops`
    /// (kind, address).
    fn library_step(
        thread: ThreadId,
        role: LibraryRole,
        calls: bool,
        ops: &[(AccessKind, u32)],
    ) -> StepRecord {
        let op = |(kind, addr): (AccessKind, u32)| NextOp {
            kind,
            addr,
            len: 4,
            src: 0,
            site: 0,
        };
        let mut ops: Vec<(NextOp, bool)> = ops
            .iter()
            .map(|&o| (op(o), o.0.writes() && o.0 != AccessKind::Notify))
            .collect();
        if calls {
            ops.insert(0, (op((AccessKind::Call, 0)), false));
        }
        let (first, wrote) = ops.remove(0);
        StepRecord {
            thread,
            op: Some(first),
            wrote,
            more: ops,
            library: Some(role),
            ..StepRecord::default()
        }
    }

    #[test]
    fn reversals_that_only_make_a_call_block_are_skipped_or_moved_to_the_lock() {
        use AccessKind::{AtomicCmpxchg as Cas, Notify, Wait};
        const M: u32 = 64;
        // Thread 0 locks and unlocks; thread 1's lock blocks, thread 0's
        // unlock wakes it, and it takes the mutex.
        let mut woken = library_step(1, LibraryRole::Lock, false, &[(Cas, M)]);
        woken.woken_by = Some(0);
        let blocked = vec![
            library_step(0, LibraryRole::Lock, true, &[(Cas, M)]),
            library_step(1, LibraryRole::Lock, true, &[(Cas, M), (Wait, M)]),
            library_step(0, LibraryRole::Unlock, true, &[(Cas, M), (Notify, M)]),
            woken,
        ];
        // Which thread takes the mutex first is a race to reverse.
        assert_eq!(reversal(&blocked, 0, 1), Some((0, 1)));
        // Its wait and the unlock that ended it are not.
        assert_eq!(reversal(&blocked, 1, 2), None);
        // Thread 1 locks after thread 0 unlocked: the race is with
        // thread 0's lock.
        let after = vec![
            library_step(0, LibraryRole::Lock, true, &[(Cas, M)]),
            library_step(0, LibraryRole::Unlock, true, &[(Cas, M)]),
            library_step(1, LibraryRole::Lock, true, &[(Cas, M)]),
        ];
        assert_eq!(reversal(&after, 1, 2), Some((0, 2)));
        // A trylock after the unlock would fail before it: reversed.
        let tried = vec![
            library_step(0, LibraryRole::Lock, true, &[(Cas, M)]),
            library_step(0, LibraryRole::Unlock, true, &[(Cas, M)]),
            library_step(1, LibraryRole::Other, true, &[(Cas, M)]),
        ];
        assert_eq!(reversal(&tried, 1, 2), Some((1, 2)));
        // A mutex taken by a `trylock` after the thread's earlier lock and
        // unlock: the race of its unlock with another thread's lock is with
        // the `trylock`, which then fails when the lock comes first.
        let taken_by_trying = vec![
            library_step(0, LibraryRole::Lock, true, &[(Cas, M)]),
            library_step(0, LibraryRole::Unlock, true, &[(Cas, M)]),
            library_step(0, LibraryRole::Other, true, &[(Cas, M)]),
            library_step(0, LibraryRole::Unlock, true, &[(Cas, M)]),
            library_step(1, LibraryRole::Lock, true, &[(Cas, M)]),
        ];
        assert_eq!(reversal(&taken_by_trying, 3, 4), Some((2, 4)));
        // A join after the thread's exit would only have waited for it.
        let joined = vec![
            library_step(0, LibraryRole::ThreadEnd, true, &[(Cas, M), (Notify, M)]),
            library_step(1, LibraryRole::Join, true, &[(Cas, M)]),
        ];
        assert_eq!(reversal(&joined, 0, 1), None);
        // A condition wait releases the mutex: the waiter woken later
        // takes it again, and would only wait for the release if moved
        // before it. The race is with the releasing thread's lock.
        let mut retaken = library_step(1, LibraryRole::CondWait, false, &[(Cas, M)]);
        retaken.woken_by = Some(2);
        let waited = vec![
            library_step(0, LibraryRole::Lock, true, &[(Cas, M)]),
            library_step(0, LibraryRole::CondWait, true, &[(Cas, M), (Wait, 8)]),
            retaken,
        ];
        assert_eq!(reversal(&waited, 1, 2), Some((0, 2)));
        // A holder that signals the waiter in its critical section: the
        // race of its unlock and the waiter's retake is with its
        // acquisition (not with the signal the retake depends on too),
        // and that acquisition happens before the retake through the
        // signal, so there is no race at all.
        const NODE: u32 = 128;
        let mut retaken = library_step(1, LibraryRole::CondWait, false, &[(Cas, NODE), (Cas, M)]);
        retaken.woken_by = Some(0);
        let signalled = vec![
            library_step(1, LibraryRole::Lock, true, &[(Cas, M)]),
            library_step(1, LibraryRole::CondWait, true, &[(Cas, M), (Wait, NODE)]),
            library_step(0, LibraryRole::Lock, true, &[(Cas, M)]),
            library_step(0, LibraryRole::Other, true, &[(Cas, NODE), (Notify, NODE)]),
            library_step(0, LibraryRole::Unlock, true, &[(Cas, M)]),
            retaken,
        ];
        assert_eq!(reversal(&signalled, 4, 5), Some((2, 5)));
        let order = HappensBefore::of(&signalled);
        assert!(!order.races.iter().any(|&(_, second)| second == 5));
        // A lock woken from its wait takes the mutex as a call does.
        let mut woken = library_step(1, LibraryRole::Lock, false, &[(Cas, M)]);
        woken.woken_by = Some(2);
        let retried = vec![
            library_step(0, LibraryRole::Lock, true, &[(Cas, M)]),
            library_step(0, LibraryRole::Unlock, true, &[(Cas, M)]),
            woken,
        ];
        assert_eq!(reversal(&retried, 1, 2), Some((0, 2)));
    }

    #[test]
    fn a_woken_step_comes_after_the_notify_that_woke_it_not_its_wakers_latest() {
        use AccessKind::{AtomicCmpxchg as Cas, AtomicLoad as Load, Notify, Wait};
        const BARRIER: u32 = 64;
        const M: u32 = 128;
        const EXIT: u32 = 256;
        // Thread 1 waits at a barrier; thread 0 arrives last and wakes
        // it, locks and unlocks a mutex and exits (its exit notifies a
        // joiner); then thread 1 goes on and locks the mutex.
        let mut woken = library_step(1, LibraryRole::Other, false, &[(Load, BARRIER)]);
        woken.woken_by = Some(0);
        let steps = vec![
            library_step(
                1,
                LibraryRole::Other,
                true,
                &[(Cas, BARRIER), (Wait, BARRIER)],
            ),
            library_step(
                0,
                LibraryRole::Other,
                true,
                &[(Cas, BARRIER), (Notify, BARRIER)],
            ),
            library_step(0, LibraryRole::Lock, true, &[(Cas, M)]),
            library_step(0, LibraryRole::Unlock, true, &[(Cas, M)]),
            library_step(
                0,
                LibraryRole::ThreadEnd,
                true,
                &[(Cas, EXIT), (Notify, EXIT)],
            ),
            woken,
            library_step(1, LibraryRole::Lock, true, &[(Cas, M)]),
        ];
        let order = HappensBefore::of(&steps);
        // The barrier's release happens before thread 1 goes on; what
        // thread 0 did after it does not, and which thread takes the
        // mutex first is a race.
        assert!(order.before(&steps, 1, 5));
        assert!(!order.before(&steps, 2, 5));
        assert!(order.races.contains(&(2, 6)), "{:?}", order.races);
    }

    /// A tiny program: each thread runs its list of operations (atomic
    /// store or load of an address) in order; returns the schedules the
    /// search runs, as the order of operations.
    fn explore(threads: &[&[(AccessKind, u32)]]) -> Vec<Vec<(ThreadId, usize)>> {
        let mut search = DporSearch::new();
        let mut runs = Vec::new();
        while let Some(mut sched) = search.next_scheduler() {
            sched.observe(Notice::ExecutionStarted);
            for t in 0..threads.len() {
                sched.observe(Notice::ThreadCreated(t as ThreadId));
            }
            // The main thread's first step does nothing.
            sched.observe(Notice::StepEnded(StepEnd::default()));
            let mut done = vec![0usize; threads.len()];
            let mut current = Some(0);
            let mut order = Vec::new();
            loop {
                let enabled: Vec<ThreadView> = (0..threads.len())
                    .filter(|&t| done[t] < threads[t].len())
                    .map(|t| {
                        let (kind, addr) = threads[t][done[t]];
                        ThreadView {
                            id: t as ThreadId,
                            yielding: false,
                            polling: false,
                            wakes_at: None,
                            next: Some(NextOp {
                                kind,
                                addr,
                                len: 4,
                                src: 0,
                                site: 0,
                            }),
                            locks_held: 0,
                            starting: false,
                        }
                    })
                    .collect();
                if enabled.is_empty() {
                    break;
                }
                let chosen = if enabled.len() > 1 {
                    sched.choose(&enabled, current, 0).unwrap()
                } else {
                    enabled[0].id
                };
                let view = enabled.iter().find(|v| v.id == chosen).unwrap();
                sched.observe(Notice::StepStarted(Step {
                    thread: chosen,
                    op: view.next,
                    woken_by: None,
                    value: Some(order.len() as u64),
                    continues: false,
                }));
                order.push((chosen, done[chosen as usize]));
                done[chosen as usize] += 1;
                sched.observe(Notice::StepEnded(StepEnd {
                    global: false,
                    changed: view.next.is_some_and(|op| op.kind.writes()),
                }));
                current = Some(chosen);
            }
            search.record(sched.strategy());
            runs.push(order);
        }
        runs
    }

    use AccessKind::{AtomicLoad as Load, AtomicStore as Store};

    #[test]
    fn independent_threads_run_once() {
        let runs = explore(&[&[], &[(Store, 8), (Store, 8)], &[(Store, 16), (Store, 16)]]);
        assert_eq!(runs.len(), 1, "{runs:?}");
    }

    #[test]
    fn every_order_of_conflicting_writes_runs_once() {
        // Two threads writing one address twice each: the classes are the
        // orders of the four writes, C(4, 2) = 6.
        let runs = explore(&[&[], &[(Store, 8), (Store, 8)], &[(Store, 8), (Store, 8)]]);
        let mut unique = runs.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), runs.len(), "no schedule twice: {runs:?}");
        assert_eq!(runs.len(), 6, "{runs:?}");
    }

    #[test]
    fn only_conflicts_are_reordered() {
        // A reader of x and y against a writer of y: only the order of the
        // two accesses to y matters, so two schedules.
        let runs = explore(&[&[], &[(Load, 8), (Load, 16)], &[(Store, 16), (Store, 24)]]);
        assert_eq!(runs.len(), 2, "{runs:?}");
        // Three writers of one address: 3! orders.
        let runs = explore(&[&[], &[(Store, 8)], &[(Store, 8)], &[(Store, 8)]]);
        assert_eq!(runs.len(), 6, "{runs:?}");
    }
}
