//! The one place where the names and signatures of every host import live.
//!
//! Two import modules exist so that user code and inserted code never collide:
//! - [`RT_MODULE`] (`weft_rt`): imports that instrumentation inserts; no guest
//!   source ever names them.
//! - [`SDK_MODULE`] (`weft`): imports that guest SDKs call; documented for
//!   guest authors in `guest-sdk/ABI.md`.
//!
//! Threads are created through the WASI threads proposal: the guest imports
//! [`THREAD_SPAWN`] and exports [`THREAD_START_EXPORT`].

/// Import module of the calls that instrumentation inserts.
pub const RT_MODULE: &str = "weft_rt";

/// Import module of the guest SDK calls.
pub const SDK_MODULE: &str = "weft";

/// Export the rewrite appends to a C program whose signal handlers weft
/// runs: `weft_signal_entry(sig, code)` (see
/// `instrument::rewrite::signal_entry`).
pub const SIGNAL_ENTRY_EXPORT: &str = "weft_signal_entry";

/// Import module of the C library's signal functions
/// (`guest-sdk/c/weft_signal.c`, see `runtime::signal_imports`).
pub const SIGNAL_MODULE: &str = "weft_signal";

/// `wasi.thread-spawn(start_arg: i32) -> i32`: creates a thread; returns its
/// id (> 0) or a negative number on failure.
/// See <https://github.com/WebAssembly/wasi-threads>.
pub const THREAD_SPAWN: (&str, &str) = ("wasi", "thread-spawn");

/// Export a new thread starts in: `wasi_thread_start(tid: i32, start_arg: i32)`.
pub const THREAD_START_EXPORT: &str = "wasi_thread_start";

/// Entry point of a WASI command.
pub const MAIN_EXPORT: &str = "_start";

/// Export instrumentation adds to a module with a start function: calls the
/// start function, then [`MAIN_EXPORT`] (the start section is dropped).
pub const MAIN_WRAPPER: &str = "weft_main";

/// Like [`MAIN_WRAPPER`], for [`THREAD_START_EXPORT`] and its arguments.
pub const THREAD_WRAPPER: &str = "weft_thread";

/// Signature of an import, as wasm value types.
#[derive(Clone, Copy, Debug)]
pub struct Signature {
    /// Import name within its module.
    pub name: &'static str,
    /// Parameter types.
    pub params: &'static [Val],
    /// Result types.
    pub results: &'static [Val],
}

/// The value types the ABI uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Val {
    /// `i32`
    I32,
    /// `i64`
    I64,
}

/// `point(addr: i32, site: i32) -> i32`: a memory access at `site` is about to
/// touch `addr` (before the static offset); returns non-zero when the guest
/// must call [`PARK`] because the scheduler chose another thread.
pub const POINT: Signature = Signature {
    name: "point",
    params: &[Val::I32, Val::I32],
    results: &[Val::I32],
};

/// `park()`: gives up the processor; returns when the scheduler runs this
/// thread again.
pub const PARK: Signature = Signature {
    name: "park",
    params: &[],
    results: &[],
};

/// `wait32(addr, expected: i32, timeout_ns: i64, site) -> i32`: replaces
/// `memory.atomic.wait32`; returns 0 (woken), 1 (not equal) or 2 (timed out).
pub const WAIT32: Signature = Signature {
    name: "wait32",
    params: &[Val::I32, Val::I32, Val::I64, Val::I32],
    results: &[Val::I32],
};

/// `wait64(addr, expected: i64, timeout_ns: i64, site) -> i32`: replaces
/// `memory.atomic.wait64`.
pub const WAIT64: Signature = Signature {
    name: "wait64",
    params: &[Val::I32, Val::I64, Val::I64, Val::I32],
    results: &[Val::I32],
};

/// `notify(addr, count: i32, site) -> i32`: replaces `memory.atomic.notify`;
/// returns the number of threads woken.
pub const NOTIFY: Signature = Signature {
    name: "notify",
    params: &[Val::I32, Val::I32, Val::I32],
    results: &[Val::I32],
};

/// `memory_grow(delta_pages: i32) -> i32`: replaces `memory.grow` on a shared
/// memory so that weft enforces its memory limit; returns the old size in
/// pages or -1.
pub const MEMORY_GROW: Signature = Signature {
    name: "memory_grow",
    params: &[Val::I32],
    results: &[Val::I32],
};

/// `weft_rt.atomic_begin()` / `weft_rt.atomic_end()`: inserted around the
/// bodies of functions named `__VERIFIER_atomic_*` (see [`ATOMIC_BEGIN`]).
pub const RT_ATOMIC_BEGIN: Signature = Signature {
    name: "atomic_begin",
    params: &[],
    results: &[],
};

/// See [`RT_ATOMIC_BEGIN`].
pub const RT_ATOMIC_END: Signature = Signature {
    name: "atomic_end",
    params: &[],
    results: &[],
};

/// `weft_rt.library_begin(function, argument)` / `weft_rt.library_end()`: inserted
/// around the bodies of the C library's synchronisation, thread and
/// allocation functions (see [`crate::library::steps::is_library_step_function`]) when a module is
/// instrumented with
/// [`library_steps`](crate::instrument::InstrumentOptions::library_steps):
/// a call is one step of the search (no other thread runs inside it unless
/// it blocks), as model checkers see `pthread_mutex_lock`. `function` is
/// the function's index in the original module, `argument` its first
/// argument when that is an `i32` (the mutex, the thread joined), else 0.
pub const RT_LIBRARY_BEGIN: Signature = Signature {
    name: "library_begin",
    params: &[Val::I32, Val::I32],
    results: &[],
};

/// `weft_rt.library_enter(function, argument)`: instead of
/// [`RT_LIBRARY_BEGIN`] at the entry of an allocation function (`malloc`,
/// `free`, ...) when a module is instrumented with
/// [`quiet_bookkeeping`](crate::instrument::InstrumentOptions::quiet_bookkeeping):
/// the call is one step, as a library call is, but no scheduling point: the
/// thread goes on into it from its step before (allocation commutes with
/// everything the program does). Ends with [`RT_LIBRARY_END`].
pub const RT_LIBRARY_ENTER: Signature = Signature {
    name: "library_enter",
    params: &[Val::I32, Val::I32],
    results: &[],
};

/// `weft_rt.library_begin_quick() -> i32` / `weft_rt.library_enter_quick()
/// -> i32`: the entry of a library step under
/// [`quick_library_entry`](crate::instrument::InstrumentOptions::quick_library_entry),
/// before [`RT_LIBRARY_BEGIN`] / [`RT_LIBRARY_ENTER`]. When the call needs
/// nothing asynchronous of the host (it is nested in another step or an
/// atomic section, or it is quiet and no signal is due), the step begins
/// here and the answer is 0; else the answer is 1, nothing changed, and
/// the guest makes the full call. Most calls are nested (the library's
/// functions call each other): this one costs no suspension of the
/// thread's fiber.
pub const RT_LIBRARY_BEGIN_QUICK: Signature = Signature {
    name: "library_begin_quick",
    params: &[],
    results: &[Val::I32],
};

/// See [`RT_LIBRARY_BEGIN_QUICK`].
pub const RT_LIBRARY_ENTER_QUICK: Signature = Signature {
    name: "library_enter_quick",
    params: &[],
    results: &[Val::I32],
};

/// See [`RT_LIBRARY_BEGIN`].
pub const RT_LIBRARY_END: Signature = Signature {
    name: "library_end",
    params: &[],
    results: &[],
};

/// `weft_rt.library_pause()` / `weft_rt.library_resume(function)`:
/// inserted around a call through a function pointer inside a function of
/// [`crate::library::steps::is_library_step_function`] (code that may be the program's, a thread's
/// routine say): the library step, however deeply nested, ends before the
/// call and a new one starts after it.
pub const RT_LIBRARY_PAUSE: Signature = Signature {
    name: "library_pause",
    params: &[],
    results: &[],
};

/// See [`RT_LIBRARY_PAUSE`].
pub const RT_LIBRARY_RESUME: Signature = Signature {
    name: "library_resume",
    params: &[Val::I32],
    results: &[],
};

/// `weft_rt.library_resume_quiet(function)`: instead of
/// [`RT_LIBRARY_RESUME`] in a library step that is no scheduling point
/// (see [`RT_LIBRARY_ENTER`]) under
/// [`rust_runtime_steps`](crate::instrument::InstrumentOptions::rust_runtime_steps):
/// the step goes on as a new one, but without a scheduling point (a
/// signal due waits for the thread's next point).
pub const RT_LIBRARY_RESUME_QUIET: Signature = Signature {
    name: "library_resume_quiet",
    params: &[Val::I32],
    results: &[],
};

/// `weft_rt.assume(cond)`: replaces the body of a program's own
/// `assume_abort_if_not(int)` (see [`ASSUME`]).
pub const RT_ASSUME: Signature = Signature {
    name: "assume",
    params: &[Val::I32],
    results: &[],
};

/// `weft_rt.call(site)` / `weft_rt.returned(site)`: inserted around every
/// call instruction when calls are logged (for schedule inference).
pub const RT_CALL: Signature = Signature {
    name: "call",
    params: &[Val::I32],
    results: &[],
};

/// See [`RT_CALL`].
pub const RT_RETURNED: Signature = Signature {
    name: "returned",
    params: &[Val::I32],
    results: &[],
};

/// `bulk(dst, src, len, site) -> i32`: inserted before `memory.copy` and
/// `memory.fill` (`src` is the fill value) with `--points memory`; like
/// `point`, returns whether the thread must park.
pub const BULK: Signature = Signature {
    name: "bulk",
    params: &[Val::I32, Val::I32, Val::I32, Val::I32],
    results: &[Val::I32],
};

/// `memory_size() -> i32`: replaces `memory.size` on a shared memory; the
/// size in pages the guest sees in this execution.
pub const MEMORY_SIZE: Signature = Signature {
    name: "memory_size",
    params: &[],
    results: &[Val::I32],
};

/// `unreachable()`: replaces the `unreachable` instruction; traps with the
/// same trap. (Raised from the host, the trap unwinds without a signal, which
/// makes a panicking guest much cheaper to end.)
pub const UNREACHABLE: Signature = Signature {
    name: "unreachable",
    params: &[],
    results: &[],
};

/// `bounds(addr: i32, len: i32)`: called before `memory.copy`,
/// `memory.fill` or `memory.init` on a shared memory when the range passes
/// the size the guest sees; traps if `addr + len` is out of bounds.
pub const BOUNDS: Signature = Signature {
    name: "bounds",
    params: &[Val::I32, Val::I32],
    results: &[],
};

/// Where instrumentation sends an access to the shared memory that would
/// end past the size the guest sees (with the address's low four bits
/// added): past the largest memory weft maps (4 GiB less one wasm page), so
/// wasmtime traps it as out of bounds.
pub const OUT_OF_BOUNDS_ADDRESS: u32 = 0xffff_ff00;

/// The word a module instrumented with
/// [`allocator_as_one_lock`](crate::instrument::InstrumentOptions::allocator_as_one_lock)
/// logs one atomic read-modify-write of at the entry of each allocator
/// call that takes the allocator's lock, in place of the lock's own
/// atomics. Odd, so that no guest atomic wider than a byte can be at it,
/// and past [`OUT_OF_BOUNDS_ADDRESS`], so that no byte-wide one can be
/// either (weft maps 4 GiB less one wasm page at most).
pub const ALLOCATOR_LOCK_WORD: u32 = u32::MAX - 2;

/// The site of the log entries of [`ALLOCATOR_LOCK_WORD`]: an atomic
/// read-modify-write a byte wide, in no module's site table (so that the
/// sites of a module, and with them its traces, are the same with and
/// without those entries).
pub const ALLOCATOR_LOCK_SITE: u32 = u32::MAX - 1;

/// Where the instrumented module of a program with shared memory keeps the
/// scheduling points its thread passed without calling the host: a
/// private memory of `bytes` bytes (memory 1, with one-byte pages) of each
/// instance, exported under `export`. While `budget` (an i32 at that
/// offset) is non-zero, a point decrements it and writes its `(site, addr)`
/// pair (two i32, one i64 store) to entry number `budget` (after the
/// decrement) at `entries`, so the entries fill from the granted budget
/// (`granted`, an i32 only the host uses) down. The host grants a budget
/// where its scheduling decisions are forced (one thread can run) or
/// committed ahead by the scheduler, and reads the entries back before it
/// records anything else of that thread. `size` (an
/// i64) is the shared memory's size in bytes as the guest sees it, which the
/// host keeps current for every thread; accesses check against it.
///
/// A module instrumented to log its plain accesses (see [`ACCESS_LOG`]) has
/// a larger memory 1 that holds the log after these bytes.
pub const POINT_BUFFER: PointBuffer = PointBuffer {
    export: "weft_points",
    bytes: 4096,
    budget: 0,
    granted: 4,
    size: 8,
    entries: 32,
};

/// The layout of [`POINT_BUFFER`].
#[derive(Clone, Copy, Debug)]
pub struct PointBuffer {
    /// Export name of the memory.
    pub export: &'static str,
    /// Size of the memory, in bytes.
    pub bytes: u64,
    /// Offset of the remaining budget (i32).
    pub budget: u64,
    /// Offset of the budget last granted (i32).
    pub granted: u64,
    /// Offset of the size of the shared memory the guest sees (i64).
    pub size: u64,
    /// Offset of the first entry.
    pub entries: u64,
}

/// Where a module instrumented to log its accesses (for race detection)
/// logs them, in the same memory as [`POINT_BUFFER`]: a ring of `capacity`
/// i64 entries at `entries`, each `site | addr << 32` (the guest's address
/// operand, before the site's static offset); `memory.copy` and
/// `memory.fill` add a second entry, `len | src << 32`. `len` (an i32)
/// counts the entries the thread ever wrote, so entry `n` is at `n %
/// capacity`; `read` (an i32 only the host uses) counts those the host
/// read. Every plain access to the shared memory is logged, and so is every
/// access at a scheduling point, after the point (whether the host or a
/// budget passed it). Each time `len` passes a multiple of `flush_every`,
/// the guest calls [`LOG_FULL`], so the host reads the log before it wraps;
/// that call depends only on the thread's own accesses, so the fuel a
/// thread spends does not depend on when the host read its log. A thread
/// logs its plain accesses (and makes them scheduling points, by the bitmap
/// below) only while `recording` (an i32) is non-zero: the main thread from
/// its first spawn on (before it, no other thread exists to race with;
/// from the start when the run says so, `RunConfig::log_from_start`),
/// every spawned thread from its start. That depends only on the execution,
/// so it moves fuel the same way in an exploration and its replay. After
/// the entries, a bitmap with one bit per site (bit `site % 8` of byte
/// `flags + site / 8`) says which plain accesses are scheduling points in
/// this execution: those call [`POINT`] (or [`BULK`]) before they are
/// logged.
pub const ACCESS_LOG: AccessLog = AccessLog {
    len: 16,
    read: 20,
    recording: 24,
    entries: 4096,
    capacity: 4096,
    flush_every: 2048,
    flags: 4096 + 8 * 4096,
};

/// The layout of [`ACCESS_LOG`].
#[derive(Clone, Copy, Debug)]
pub struct AccessLog {
    /// Offset of the number of entries written (i32).
    pub len: u64,
    /// Offset of the number of entries read (i32).
    pub read: u64,
    /// Offset of whether plain accesses are logged (i32, non-zero: they
    /// are).
    pub recording: u64,
    /// Offset of the first entry.
    pub entries: u64,
    /// How many entries the ring holds (a power of two).
    pub capacity: u64,
    /// Entries between two calls of [`LOG_FULL`] (a power of two, at most
    /// half the capacity).
    pub flush_every: u64,
    /// Offset of the bitmap of sites that are scheduling points.
    pub flags: u64,
}

impl AccessLog {
    /// The size of memory 1 of a module with `sites` sites.
    pub fn memory_bytes(&self, sites: u64) -> u64 {
        self.flags + sites.div_ceil(8)
    }
}

/// Where a module instrumented to track its reads (see
/// [`crate::instrument::InstrumentOptions::track_reads`]) marks which bytes
/// of the shared memory it read, in the same memory as [`POINT_BUFFER`]:
/// after the point buffer (and the access log, when there is one), one bit
/// per [`ReadMap::GRANULE`] bytes of the shared memory (bit `g % 8` of byte
/// `g / 8` for granule `g`), over a map whose size is a power of two that
/// covers the memory's declared maximum. Every load, atomic access that
/// returns what it found, and SIMD load sets the bits of the granules it
/// reads before it reads them; the map's byte index is masked to its size,
/// so an address past the memory (which then traps) marks some bit rather
/// than missing the map. A thread's bits are never cleared: its instance
/// keeps them from one execution to the next, and the host takes in the
/// map's pages that hold any. A `memory.copy` tells the host its source
/// through [`RT_NOTE_READ`] instead.
pub const READ_MAP: ReadMap = ReadMap;

/// The layout of [`READ_MAP`].
#[derive(Clone, Copy, Debug)]
pub struct ReadMap;

impl ReadMap {
    /// Bytes of shared memory per bit of the map.
    pub const GRANULE: u64 = 8;

    /// Bytes past the map that a mark may touch (a mark writes two bytes,
    /// at most at the map's last byte).
    pub const SLACK: u64 = 8;

    /// Where the map lies in memory 1, as (offset, bytes), in a module
    /// that logs the accesses of `logged_sites` sites (see
    /// [`point_memory_bytes`]) and whose shared memory has at most
    /// `max_pages` wasm pages.
    pub fn place(&self, logged_sites: Option<u64>, max_pages: u64) -> (u64, u64) {
        let offset = point_memory_bytes(logged_sites).next_multiple_of(8);
        (offset, self.bytes(max_pages))
    }

    /// Bytes of the map for a shared memory of at most `max_pages` wasm
    /// pages: a power of two.
    pub fn bytes(&self, max_pages: u64) -> u64 {
        (max_pages.max(1) * 65536)
            .div_ceil(Self::GRANULE * 8)
            .next_power_of_two()
    }
}

/// The size of memory 1 without a map of read bytes: the point buffer, and
/// the access log when the module logs the accesses of `logged_sites`
/// sites.
pub fn point_memory_bytes(logged_sites: Option<u64>) -> u64 {
    logged_sites.map_or(POINT_BUFFER.bytes, |sites| ACCESS_LOG.memory_bytes(sites))
}

/// `note_read(addr, len)`: with [`READ_MAP`], before a `memory.copy`, the
/// source range it reads (the host marks it read).
pub const RT_NOTE_READ: Signature = Signature {
    name: "note_read",
    params: &[Val::I32, Val::I32],
    results: &[],
};

/// `log_full() -> i32`: the thread wrote another
/// [`AccessLog::flush_every`] entries to its access log (see
/// [`ACCESS_LOG`]); the host reads them. Returns non-zero when the guest must call
/// [`PARK`] because the execution ended (a race was found, say).
pub const LOG_FULL: Signature = Signature {
    name: "log_full",
    params: &[],
    results: &[Val::I32],
};

/// `library_access(site, a0, a1, a2, a3, result) -> i32`: a call of a C
/// library function that touches its caller's memory (see
/// [`crate::library::caller_memory`]) returned, at the call site `site`,
/// with arguments `a0`.. (0 past the ones it takes) and `result` (0 for a
/// function without one); the host tells the analyses the ranges it read
/// and wrote as the caller's accesses. Called only while the thread logs
/// its plain accesses (see [`ACCESS_LOG`]). Returns non-zero when the guest
/// must call [`PARK`] because the execution ended.
pub const LIBRARY_ACCESS: Signature = Signature {
    name: "library_access",
    params: &[Val::I32; 6],
    results: &[Val::I32],
};

/// `exit_value() -> i64`: inserted in wasi-libc's thread start function
/// ([`THREAD_START_C`]) in place of the call of the thread's start routine:
/// -1 normally (the routine is called), else the value the thread passed to
/// `pthread_exit`, which stands for the routine's result when weft runs
/// the function again after the thread left its routine through
/// [`THREAD_EXIT`].
pub const EXIT_VALUE: Signature = Signature {
    name: "exit_value",
    params: &[],
    results: &[Val::I64],
};

/// `reach_error()`: inserted at the entry of the program's `reach_error`
/// and `__VERIFIER_error`; under a verification property it ends the
/// execution (see [`crate::svcomp`]), else it returns at once.
pub const RT_REACH_ERROR: Signature = Signature {
    name: "reach_error",
    params: &[],
    results: &[],
};

/// `abort()`: inserted at the entry of the program's `abort`; under a
/// verification property it ends the execution as a cut path, else it
/// returns at once.
pub const RT_ABORT: Signature = Signature {
    name: "abort",
    params: &[],
    results: &[],
};

/// `signature_mismatch(function)`: inserted at the entry of a stub wasm-ld
/// links in place of a function called with a signature other than its
/// definition's (named [`SIGNATURE_MISMATCH_PREFIX`] and the function's
/// name), which would trap on `unreachable`: the trap names the function.
pub const RT_SIGNATURE_MISMATCH: Signature = Signature {
    name: "signature_mismatch",
    params: &[Val::I32],
    results: &[],
};

/// How wasm-ld names the stub it links for a call whose signature does not
/// match the called function's definition: this, then the function's name.
pub const SIGNATURE_MISMATCH_PREFIX: &str = "signature_mismatch:";

/// wasi-libc's function that calls a spawned thread's start routine and
/// then ends the thread as POSIX says (cleanup handlers, thread-specific
/// data, waking the joiner): found by its name in the `name` section.
pub const THREAD_START_C: &str = "__wasi_thread_start_C";

/// Export instrumentation adds for [`THREAD_START_EXPORT`] itself (not its
/// wrapper) when it rewrites [`THREAD_START_C`]: weft finishes a thread that
/// called `pthread_exit` by calling it again, which skips the start routine
/// and ends the thread as wasi-libc does.
pub const THREAD_RESUME_EXPORT: &str = "weft_thread_resume";

/// Every `weft_rt` import, in the order instrumentation appends them.
pub const RT_IMPORTS: [Signature; 30] = [
    POINT,
    PARK,
    WAIT32,
    WAIT64,
    NOTIFY,
    MEMORY_GROW,
    RT_ATOMIC_BEGIN,
    RT_ATOMIC_END,
    RT_ASSUME,
    RT_CALL,
    RT_RETURNED,
    BULK,
    MEMORY_SIZE,
    BOUNDS,
    UNREACHABLE,
    LOG_FULL,
    EXIT_VALUE,
    RT_REACH_ERROR,
    RT_ABORT,
    RT_LIBRARY_BEGIN,
    RT_LIBRARY_END,
    RT_LIBRARY_PAUSE,
    RT_LIBRARY_RESUME,
    RT_SIGNATURE_MISMATCH,
    LIBRARY_ACCESS,
    RT_LIBRARY_ENTER,
    RT_LIBRARY_BEGIN_QUICK,
    RT_LIBRARY_ENTER_QUICK,
    RT_NOTE_READ,
    RT_LIBRARY_RESUME_QUIET,
];

/// Functions whose bodies run as one atomic section (the verification
/// convention of C concurrency benchmarks).
pub const ATOMIC_FUNCTION_PREFIX: &str = "__VERIFIER_atomic_";

/// Functions whose call is the error of SV-COMP's `unreach-call`:
/// instrumentation makes their entry call [`RT_REACH_ERROR`].
pub const ERROR_FUNCTIONS: [&str; 2] = ["reach_error", "__VERIFIER_error"];

/// The function whose call only cuts the path under a verification property
/// (a failed `assert` calls it too): instrumentation makes its entry call
/// [`RT_ABORT`].
pub const ABORT_FUNCTION: &str = "abort";

/// A program-defined function whose body becomes `weft_rt.assume`.
pub const ASSUME_FUNCTION: &str = "assume_abort_if_not";

/// `weft.event(name_ptr, name_len)`: marks a named event of the calling
/// thread; a scheduling point.
pub const EVENT: Signature = Signature {
    name: "event",
    params: &[Val::I32, Val::I32],
    results: &[],
};

/// `weft.thread_name(name_ptr, name_len)`: names the calling thread in
/// reports.
pub const THREAD_NAME: Signature = Signature {
    name: "thread_name",
    params: &[Val::I32, Val::I32],
    results: &[],
};

/// `weft.assert(cond, msg_ptr, msg_len)`: when `cond` is 0, the execution
/// fails with an assertion failure carrying the message.
pub const ASSERT: Signature = Signature {
    name: "assert",
    params: &[Val::I32, Val::I32, Val::I32],
    results: &[],
};

/// `weft.choose(bound: i64) -> i64`: a nondeterministic value in
/// `0..bound` (any 64-bit value when `bound` is 0), chosen by the
/// scheduler's seeded generator and recorded for replay.
pub const CHOOSE: Signature = Signature {
    name: "choose",
    params: &[Val::I64],
    results: &[Val::I64],
};

/// `weft.assume(cond)`: when `cond` is 0 the execution is discarded (it is
/// not a bug, the input was outside the program's assumptions).
pub const ASSUME: Signature = Signature {
    name: "assume",
    params: &[Val::I32],
    results: &[],
};

/// `weft.atomic_begin()`: the calling thread is not preempted until the
/// matching `atomic_end` (unless it blocks). Sections nest.
pub const ATOMIC_BEGIN: Signature = Signature {
    name: "atomic_begin",
    params: &[],
    results: &[],
};

/// `weft.atomic_end()`: ends the innermost `atomic_begin` section.
pub const ATOMIC_END: Signature = Signature {
    name: "atomic_end",
    params: &[],
    results: &[],
};

/// `weft.atomic_set(name_ptr, name_len, ptr, len)`: the `len` bytes at
/// `ptr` form an atomic set named `name` (fields bound by one consistency
/// property), for `weft serializability`.
pub const ATOMIC_SET: Signature = Signature {
    name: "atomic_set",
    params: &[Val::I32, Val::I32, Val::I32, Val::I32],
    results: &[],
};

/// `weft.unit_begin(name_ptr, name_len)`: the calling thread starts a unit
/// of work (a region that should leave atomic sets consistent); units nest,
/// and an access belongs to the outermost one.
pub const UNIT_BEGIN: Signature = Signature {
    name: "unit_begin",
    params: &[Val::I32, Val::I32],
    results: &[],
};

/// `weft.unit_end()`: ends the calling thread's innermost unit of work.
pub const UNIT_END: Signature = Signature {
    name: "unit_end",
    params: &[],
    results: &[],
};

/// `weft.actor_spawn(type_ptr, type_len) -> i32`: registers a new actor of
/// the named type; returns its id.
pub const ACTOR_SPAWN: Signature = Signature {
    name: "actor_spawn",
    params: &[Val::I32, Val::I32],
    results: &[Val::I32],
};

/// `weft.actor_send(to, kind_ptr, kind_len, body_ptr, body_len)`: puts a
/// message of the named kind in weft's mailbox of actor `to` (`-1`: the
/// driver, for replies to an ask).
pub const ACTOR_SEND: Signature = Signature {
    name: "actor_send",
    params: &[Val::I32, Val::I32, Val::I32, Val::I32, Val::I32],
    results: &[],
};

/// `weft.actor_receive(buf_ptr, buf_cap, header_ptr, awaiting) -> i32`:
/// weft picks the next delivery; writes the header (receiver, sender, kind
/// length, body length: four `u32`) at `header_ptr` and the kind followed by
/// the body at `buf_ptr`; returns 1, or 0 when no message is left. With
/// `awaiting` >= 0 the driver waits for a reply from that actor, and no
/// message left is a deadlock.
pub const ACTOR_RECEIVE: Signature = Signature {
    name: "actor_receive",
    params: &[Val::I32, Val::I32, Val::I32, Val::I32],
    results: &[Val::I32],
};

/// `weft.actor_become(name_ptr, name_len)`: the receive being handled
/// changes its actor's behaviour.
pub const ACTOR_BECOME: Signature = Signature {
    name: "actor_become",
    params: &[Val::I32, Val::I32],
    results: &[],
};

/// `weft.actor_unhandled()`: the receiver's current behaviour does not
/// handle the message being delivered (a failure).
pub const ACTOR_UNHANDLED: Signature = Signature {
    name: "actor_unhandled",
    params: &[],
    results: &[],
};

/// `weft.gen_call(method, a0, a1, a2, a3) -> i64`: weft calls the exported
/// method numbered `method` in the run's class (see `weft gen`) on the
/// calling thread's instance, with the first arguments its type takes, and
/// returns its result (0 for none).
pub const GEN_CALL: Signature = Signature {
    name: "gen_call",
    params: &[Val::I32, Val::I64, Val::I64, Val::I64, Val::I64],
    results: &[Val::I64],
};

/// `weft.thread_exit(value: i32)`: `pthread_exit(value)`. A spawned thread
/// leaves its start routine at once and ends as if the routine had returned
/// `value`; the main thread waits until every other thread has ended, then
/// the call returns (the guest then exits the process with 0). Only the C
/// SDK binds it (its `pthread_exit`): a Rust or Zig thread left this way
/// would skip its language's own bookkeeping.
pub const THREAD_EXIT: Signature = Signature {
    name: "thread_exit",
    params: &[Val::I32],
    results: &[],
};

/// Every `weft` SDK import.
pub const SDK_IMPORTS: [Signature; 16] = [
    EVENT,
    THREAD_NAME,
    ASSERT,
    CHOOSE,
    ASSUME,
    ATOMIC_BEGIN,
    ATOMIC_END,
    ATOMIC_SET,
    UNIT_BEGIN,
    UNIT_END,
    ACTOR_SPAWN,
    ACTOR_SEND,
    ACTOR_RECEIVE,
    ACTOR_BECOME,
    ACTOR_UNHANDLED,
    GEN_CALL,
];

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &str) -> String {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn every_sdk_binds_and_documents_every_import() {
        let rust_sdk = read("guest-sdk/rust/src/lib.rs");
        let c_sdk = read("guest-sdk/c/weft.h");
        let zig_sdk = read("guest-sdk/zig/weft.zig");
        let doc = read("guest-sdk/ABI.md");
        for sig in SDK_IMPORTS {
            assert!(
                c_sdk.contains(&format!("WEFT_IMPORT(\"{}\")", sig.name)),
                "the C SDK does not bind `weft.{}`",
                sig.name
            );
            assert!(
                zig_sdk.contains(&format!("extern \"weft\" fn {}(", sig.name)),
                "the Zig SDK does not bind `weft.{}`",
                sig.name
            );
            assert!(
                rust_sdk.contains(&format!("pub fn {}(", sig.name)),
                "the Rust SDK does not bind `weft.{}`",
                sig.name
            );
            assert!(
                doc.contains(&format!("`weft.{}`", sig.name)),
                "ABI.md lacks `weft.{}`",
                sig.name
            );
        }
        for sig in RT_IMPORTS {
            assert!(
                doc.contains(&format!("`weft_rt.{}`", sig.name)),
                "ABI.md lacks `weft_rt.{}`",
                sig.name
            );
        }
    }
}
