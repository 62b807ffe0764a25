//! The analysis a story is told from: what each thread did to memory in the
//! guest's own code (with the values read and written), the library
//! synchronisation calls it made (locks, condition variables, joins), when
//! it blocked and resumed, spawned and ended; in execution order.
//!
//! Values come from the access log (a module loaded with `log_accesses`):
//! a thread's log is read before any other hook of that thread, so the
//! threads' batches of accesses, in the order they are read, are the
//! execution's accesses in order. The recorder keeps what it knows of each
//! byte: the value a batch's last write left is in memory when the batch is
//! read, and at a scheduling point memory holds the value the access is
//! about to see. A plain read whose bytes the batch does not write again
//! saw what memory holds when the batch is read (only its thread ran in
//! between), which also covers bytes written without a log entry (by a
//! runtime's code, see [`crate::runtime::Program::load`], or by the main
//! thread before its first spawn, see [`crate::abi::ACCESS_LOG`]). Where none of these
//! tells (a value overwritten within the same batch), the value is left
//! unknown rather than guessed.
//!
//! Library calls are recognised in modules loaded with `log_calls`: a call
//! from the guest's own code to a function [`classify`] knows is one
//! operation, from the call to its return; an access in the guest's code
//! whose innermost inlined frame is such a function (Rust's lock fast path)
//! is one too.

use crate::debuginfo::symbols::LazySymbols;
use crate::debuginfo::variables::without_offset;
use crate::instrument::{AccessKind, SiteId, SiteTable};
use crate::library::operations::{LibraryOp, classify};
use crate::runtime::analysis::{Access, Analysis, Cx, Happening, Interest, Logged, Report};
use crate::trace::ThreadId;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// One thing a thread did, as a story tells it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fact {
    /// An access of the guest's own code to memory.
    Access {
        /// The thread.
        thread: ThreadId,
        /// The instruction.
        site: SiteId,
        /// What it does.
        kind: AccessKind,
        /// The first byte.
        addr: u32,
        /// Bytes accessed (0 for `memory.copy` and `memory.fill`).
        width: u8,
        /// The value read, where the access reads and the value is known.
        read: Option<u64>,
        /// The value written, where the access writes and the value is
        /// known.
        wrote: Option<u64>,
    },
    /// A library synchronisation operation began.
    Op {
        /// The thread.
        thread: ThreadId,
        /// What it does.
        op: LibraryOp,
        /// The call (or the inlined access) in the guest's code.
        site: SiteId,
        /// The word of its first atomic access: the lock, condition
        /// variable or thread it works on.
        object: Option<u32>,
        /// The value that first atomic access read (0: the lock was free).
        first_read: Option<u64>,
        /// Where among the facts that first access falls (the index of the
        /// fact recorded next), which may be well after the call.
        took_effect: Option<usize>,
        /// Where its last atomic write to its object falls: when a lock
        /// that did not wait was taken (after a load, a failed exchange,
        /// the one that succeeded).
        settled: Option<usize>,
    },
    /// The thread's open operation ended (the call returned).
    OpEnd {
        /// The thread.
        thread: ThreadId,
    },
    /// The thread began to wait on `addr`.
    Blocked {
        /// The thread.
        thread: ThreadId,
        /// The futex word.
        addr: u32,
    },
    /// The thread's wait ended.
    Resumed {
        /// The thread.
        thread: ThreadId,
    },
    /// The thread created `child`.
    Spawned {
        /// The creating thread.
        thread: ThreadId,
        /// The new thread.
        child: ThreadId,
    },
    /// The thread's entry function returned.
    Ended {
        /// The thread.
        thread: ThreadId,
    },
}

/// What the recorder hands back: the facts of one execution, in order.
#[derive(Clone, Debug, Default)]
pub struct Facts(pub Vec<Fact>);

/// How a code site takes part in a story.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// The guest's own code.
    User,
    /// The guest's own code, inlining a library operation (or, for a call
    /// site, calling one).
    UserOp(LibraryOp),
    /// Library code, or a call of the guest's code to a function told of
    /// by no name.
    Other,
}

/// A library operation in progress on one thread.
#[derive(Clone, Copy, Debug)]
struct OpenOp {
    /// Index of its [`Fact::Op`].
    fact: usize,
    /// The call site whose return ends it (`None` for an inlined one,
    /// which ends at the thread's next access in its own code).
    call: Option<SiteId>,
}

/// Records [`Fact`]s (see the module docs).
pub struct Recorder {
    symbols: Arc<LazySymbols>,
    sites: Arc<SiteTable>,
    roles: HashMap<SiteId, Role>,
    /// The guest's source line of each site seen (its innermost frame in
    /// the guest's own code).
    lines: HashMap<SiteId, Option<(String, u32)>>,
    /// [`Recorder::lock_of`] each address asked about.
    locks: HashMap<u32, Result<String, u32>>,
    /// What is known of memory bytes written since the execution began:
    /// `None` where a value was overwritten before anyone could see it.
    bytes: HashMap<u32, Option<u8>>,
    facts: Vec<Fact>,
    open: Vec<Option<OpenOp>>,
}

/// The most bytes of one `memory.copy` or `memory.fill` the recorder
/// follows byte by byte; a larger one leaves its bytes unknown.
const BULK_BYTES: u32 = 4096;

impl Recorder {
    /// A recorder for a module with `sites`, named by `symbols`.
    pub fn new(sites: Arc<SiteTable>, symbols: Arc<LazySymbols>) -> Self {
        Recorder {
            symbols,
            sites,
            roles: HashMap::new(),
            lines: HashMap::new(),
            locks: HashMap::new(),
            bytes: HashMap::new(),
            facts: Vec::new(),
            open: Vec::new(),
        }
    }

    fn role(&mut self, site: SiteId) -> Role {
        if let Some(&role) = self.roles.get(&site) {
            return role;
        }
        let role = match self.sites.get(site) {
            None => Role::Other,
            Some(info) => self.symbols.with(|symbols| {
                let name = symbols.site(info);
                if !name.user_code {
                    return Role::Other;
                }
                let inlined = role_of_frames(&symbols.frames(info.code_offset), info.kind);
                if info.kind != AccessKind::Call {
                    return inlined;
                }
                // A call: of a library operation, or from one inlined here.
                match info
                    .callee
                    .and_then(|f| symbols.function_name(f))
                    .and_then(classify)
                {
                    Some(op) => Role::UserOp(op),
                    None if matches!(inlined, Role::UserOp(_)) => inlined,
                    None => Role::Other,
                }
            }),
        };
        self.roles.insert(site, role);
        role
    }

    fn line(&mut self, site: SiteId) -> Option<(String, u32)> {
        if let Some(line) = self.lines.get(&site) {
            return line.clone();
        }
        let line = self.sites.get(site).and_then(|info| {
            let name = self.symbols.with(|symbols| symbols.site(info));
            Some((name.file?, name.line?))
        });
        self.lines.insert(site, line.clone());
        line
    }

    fn open_slot(&mut self, thread: ThreadId) -> &mut Option<OpenOp> {
        let index = thread as usize;
        if self.open.len() <= index {
            self.open.resize(index + 1, None);
        }
        &mut self.open[index]
    }

    fn close(&mut self, thread: ThreadId) {
        if self.open_slot(thread).take().is_some() {
            self.facts.push(Fact::OpEnd { thread });
        }
    }

    /// Begins operation `op` at `site`; an operation of the same kind on
    /// the same thread and source line that just ended (a fast path that
    /// failed, before the call of its slow path) goes on instead.
    fn begin_op(&mut self, thread: ThreadId, op: LibraryOp, site: SiteId, call: Option<SiteId>) {
        self.close(thread);
        let n = self.facts.len();
        let resumed = n >= 2
            && op != LibraryOp::TryLock
            && self.facts[n - 1] == (Fact::OpEnd { thread })
            && match self.facts[n - 2] {
                Fact::Op {
                    thread: t,
                    op: o,
                    site: begun,
                    ..
                } => t == thread && o == op && self.line(begun) == self.line(site),
                _ => false,
            };
        if resumed {
            self.facts.pop();
            *self.open_slot(thread) = Some(OpenOp { fact: n - 2, call });
            return;
        }
        self.push_op(thread, op, site, call);
    }

    /// Records that `thread` began operation `op` at `site` and opens it.
    fn push_op(&mut self, thread: ThreadId, op: LibraryOp, site: SiteId, call: Option<SiteId>) {
        let fact = self.facts.len();
        self.facts.push(Fact::Op {
            thread,
            op,
            site,
            object: None,
            first_read: None,
            took_effect: None,
            settled: None,
        });
        *self.open_slot(thread) = Some(OpenOp { fact, call });
    }

    /// Ends the inlined lock operation at `facts[fact]` and begins the next
    /// one when an atomic access to `addr` is not part of it: a `trylock`
    /// that already made its attempt, or a lock or unlock of another lock
    /// than its own (two guards dropped at the end of one scope).
    fn split_inlined(&mut self, thread: ThreadId, fact: usize, addr: u32, writes: bool) {
        let Fact::Op {
            op,
            object: Some(object),
            settled,
            ..
        } = self.facts[fact]
        else {
            return;
        };
        // An inlined fast path writes its lock once; a second write is the
        // next operation (two read guards of one lock dropped together).
        let again = writes && settled.is_some();
        let next = match op {
            LibraryOp::TryLock => true,
            LibraryOp::Lock | LibraryOp::Unlock => {
                again || self.lock_of(addr) != self.lock_of(object)
            }
            LibraryOp::ReadLock | LibraryOp::WriteLock => again,
            _ => false,
        };
        if next {
            let Fact::Op { site, .. } = self.facts[fact] else {
                return;
            };
            self.close(thread);
            self.push_op(thread, op, site, None);
        }
    }

    /// Which lock the word at `addr` belongs to: the variable (or array
    /// element, or field) it is in, else the word itself.
    fn lock_of(&mut self, addr: u32) -> Result<String, u32> {
        if let Some(lock) = self.locks.get(&addr) {
            return lock.clone();
        }
        let lock = match self.symbols.variable_at(addr) {
            Some(name) => Ok(without_offset(&name).to_string()),
            None => Err(addr),
        };
        self.locks.insert(addr, lock.clone());
        lock
    }

    /// Known bytes `addr..addr + width` as a little-endian value, or
    /// `fallback` for bytes never written since the execution began.
    fn known(&self, addr: u32, width: u8, fallback: Option<u64>) -> Option<u64> {
        let mut value = 0u64;
        for i in (0..u32::from(width.min(8))).rev() {
            let byte = match self.bytes.get(&(addr + i)) {
                Some(known) => (*known)?,
                None => (fallback? >> (8 * i)) as u8,
            };
            value = (value << 8) | u64::from(byte);
        }
        Some(value)
    }

    fn remember(&mut self, addr: u32, len: u32, value: Option<u64>) {
        for i in 0..len {
            let byte = value.map(|v| (v >> (8 * (i % 8))) as u8);
            self.bytes.insert(addr + i, byte);
        }
    }

    fn record_access(
        &mut self,
        thread: ThreadId,
        access: &Access,
        read: Option<u64>,
        wrote: Option<u64>,
    ) {
        let role = self.role(access.site);
        let open = *self.open_slot(thread);
        match (role, open) {
            (Role::User, Some(OpenOp { call: None, .. })) => self.close(thread),
            (Role::UserOp(op), None) => self.begin_op(thread, op, access.site, None),
            (Role::UserOp(op), Some(OpenOp { call: None, fact })) => {
                let same = match self.facts[fact] {
                    Fact::Op { op: o, site, .. } => {
                        o == op && self.line(site) == self.line(access.site)
                    }
                    _ => false,
                };
                if !same {
                    self.begin_op(thread, op, access.site, None);
                }
            }
            _ => {}
        }
        let atomic = access.kind.is_atomic();
        if atomic
            && matches!(role, Role::UserOp(_))
            && let Some(OpenOp { fact, call: None }) = *self.open_slot(thread)
        {
            self.split_inlined(thread, fact, access.addr, access.kind.writes());
        }
        if let Some(OpenOp { fact, .. }) = *self.open_slot(thread) {
            let next = self.facts.len();
            if atomic
                && let Fact::Op {
                    object,
                    first_read,
                    took_effect,
                    settled,
                    ..
                } = &mut self.facts[fact]
            {
                if object.is_none() {
                    *object = Some(access.addr);
                    *first_read = read;
                    *took_effect = Some(next);
                }
                if access.kind.writes() && *object == Some(access.addr) {
                    *settled = Some(next);
                }
            }
            return;
        }
        if role == Role::User {
            self.facts.push(Fact::Access {
                thread,
                site: access.site,
                kind: access.kind,
                addr: access.addr,
                width: access.width,
                read,
                wrote,
            });
        }
    }
}

/// The role of guest code whose source frames (innermost first) are
/// `frames`: the guest's own access when the innermost frame is its own
/// code or one of its atomic operations, inlined; a library operation when
/// a frame inside the guest's own is one [`classify`] knows; else library
/// code.
fn role_of_frames(frames: &[crate::debuginfo::symbols::SourceFrame], kind: AccessKind) -> Role {
    let library: Vec<&str> = frames
        .iter()
        .take_while(|f| !f.user_code)
        .map(|f| f.function.as_deref().unwrap_or_default())
        .collect();
    if library.iter().all(|f| is_atomic_wrapper(f)) {
        return Role::User;
    }
    if let Some(op) = library.iter().find_map(|f| classify(f)) {
        return Role::UserOp(op);
    }
    // The core library's helpers inlined into the guest's code (`is_none`,
    // `ptr::write`, `mem::replace`), and the plain accesses of the alloc
    // library's collections (a `VecDeque`'s `len`), access the guest's data
    // for it; an `Arc`'s atomic count is the library's own business.
    let plain = !kind.is_atomic();
    if library.iter().all(|f| {
        let f = f.trim_start_matches('<');
        f.starts_with("core::") || (plain && f.starts_with("alloc::"))
    }) {
        return Role::User;
    }
    Role::Other
}

/// Whether `function` is one of the standard library's atomic operations
/// (inlined into the guest's code when it uses an atomic itself).
fn is_atomic_wrapper(function: &str) -> bool {
    let function = function.trim_start_matches('<');
    function.starts_with("core::sync::atomic::")
}

/// The bytes an access writes, as a range (empty for one that only reads).
fn written(access: &Access) -> std::ops::Range<u32> {
    if !access.kind.writes() {
        return 0..0;
    }
    access.addr..access.addr.saturating_add(access.len)
}

impl Analysis for Recorder {
    fn needs_every_point(&self) -> bool {
        true
    }

    fn access(&mut self, cx: &mut Cx<'_>, _thread: ThreadId, access: &Access) -> Interest {
        // Memory holds what the access is about to see.
        if access.width > 0 {
            let value = cx.view().read(access.addr, access.width);
            self.remember(access.addr, u32::from(access.width), Some(value));
        }
        Interest::Keep
    }

    fn logged(&mut self, cx: &mut Cx<'_>, thread: ThreadId, accesses: &Logged<'_>) {
        let batch: Vec<Access> = accesses.iter(&self.sites).collect();
        // Which accesses are the batch's last write of their bytes, and which
        // read bytes the batch writes again later.
        let mut later: HashSet<u32> = HashSet::new();
        let mut last_write = vec![false; batch.len()];
        let mut overwritten_later = vec![false; batch.len()];
        for (i, access) in batch.iter().enumerate().rev() {
            let range = if access.width > 0 {
                access.addr..access.addr + u32::from(access.width)
            } else {
                access.addr..access.addr.saturating_add(access.len.min(BULK_BYTES))
            };
            overwritten_later[i] = range.clone().any(|b| later.contains(&b));
            let writes = written(access);
            if !writes.is_empty() {
                last_write[i] = !overwritten_later[i];
                later.extend(writes.start..writes.end.min(writes.start.saturating_add(BULK_BYTES)));
            }
        }
        let view = cx.view();
        let mut values = Vec::with_capacity(batch.len());
        for (i, access) in batch.iter().enumerate() {
            let width = access.width;
            let writes = written(access);
            let read = (width > 0 && access.kind.reads()).then(|| {
                let now = (!overwritten_later[i]).then(|| view.read(access.addr, width));
                if writes.is_empty() && now.is_some() {
                    // Only this thread ran since the read, and nothing it
                    // logged wrote the bytes again: memory holds what the
                    // read saw, even where a runtime's unlogged code wrote
                    // them after the last logged write.
                    now
                } else {
                    self.known(access.addr, width, now)
                }
            });
            let wrote = if writes.is_empty() {
                None
            } else if width > 0 {
                let value = last_write[i].then(|| view.read(access.addr, width));
                self.remember(access.addr, u32::from(width), value);
                value
            } else {
                let len = access.len.min(BULK_BYTES);
                for b in access.addr..access.addr.saturating_add(len) {
                    let byte = last_write[i].then(|| view.read(b, 1) as u8);
                    self.bytes.insert(b, byte);
                }
                None
            };
            values.push((read.flatten(), wrote));
        }
        for (access, (read, wrote)) in batch.iter().zip(values) {
            self.record_access(thread, access, read, wrote);
        }
    }

    fn happened(&mut self, cx: &mut Cx<'_>, thread: ThreadId, what: &Happening<'_>) {
        match *what {
            Happening::Call(site) => {
                if let Role::UserOp(op) = self.role(site) {
                    self.begin_op(thread, op, site, Some(site));
                }
            }
            Happening::Returned(site) => {
                if matches!(*self.open_slot(thread), Some(OpenOp { call: Some(c), .. }) if c == site)
                {
                    self.close(thread);
                }
            }
            Happening::BlockBegin => {
                if let Some(addr) = cx.view().waits_on(thread) {
                    self.facts.push(Fact::Blocked { thread, addr });
                }
            }
            Happening::BlockEnd => self.facts.push(Fact::Resumed { thread }),
            Happening::Spawned { child } => self.facts.push(Fact::Spawned { thread, child }),
            Happening::Ended => {
                self.close(thread);
                self.facts.push(Fact::Ended { thread });
            }
            _ => {}
        }
    }

    fn finish(self: Box<Self>) -> Option<Report> {
        Some(Arc::new(Facts(self.facts)))
    }
}
