//! Guest SDK of weft for Zig programs (a thin binding of guest-sdk/ABI.md).
//!
//! `weft build prog.zig` makes this file importable as `@import("weft")`.
//! It also provides `page_allocator`: Zig's own multi-threaded wasm page
//! allocator is unimplemented, so a threaded program routes
//! `std.heap.page_allocator` to this one by declaring in its root file:
//!
//!     pub const os = struct {
//!         pub const heap = struct {
//!             pub const page_allocator = @import("weft").page_allocator;
//!         };
//!     };
//!
//! Zig 0.17 moved its blocking primitives behind `std.Io`; for threaded
//! wasm programs this file offers futex-based `Mutex` and `WaitGroup`
//! (`memory.atomic.wait32`/`notify`, which weft schedules).
//!
//! Note: Zig's `std.Thread` on WASI stores a new thread's id only after
//! `thread-spawn` returns; a thread that finishes before that leaves
//! `join` (and `detach`, which joins a finished thread) waiting forever.
//! weft finds this race under PCT. Until Zig fixes it, hold new threads at a
//! start gate (a `WaitGroup` the spawning thread releases after its last
//! `spawn`) so none can finish before `spawn` has returned.
const std = @import("std");

extern "weft" fn event(name_ptr: [*]const u8, name_len: usize) void;
extern "weft" fn thread_name(name_ptr: [*]const u8, name_len: usize) void;
extern "weft" fn assert(cond: i32, msg_ptr: [*]const u8, msg_len: usize) void;
extern "weft" fn choose(bound: i64) i64;
extern "weft" fn assume(cond: i32) void;
extern "weft" fn atomic_begin() void;
extern "weft" fn atomic_end() void;
extern "weft" fn atomic_set(name_ptr: [*]const u8, name_len: usize, ptr: [*]const u8, len: usize) void;
extern "weft" fn unit_begin(name_ptr: [*]const u8, name_len: usize) void;
extern "weft" fn unit_end() void;
/// Actors (see guest-sdk/ABI.md): the raw imports.
pub extern "weft" fn actor_spawn(type_ptr: [*]const u8, type_len: usize) i32;
pub extern "weft" fn actor_send(to: i32, kind_ptr: [*]const u8, kind_len: usize, body_ptr: [*]const u8, body_len: usize) void;
pub extern "weft" fn actor_receive(buf_ptr: [*]u8, buf_cap: usize, header_ptr: [*]u32, awaiting: i32) i32;
pub extern "weft" fn actor_become(name_ptr: [*]const u8, name_len: usize) void;
pub extern "weft" fn actor_unhandled() void;
/// weft gen: calls method number `method` of the class under test.
pub extern "weft" fn gen_call(method: i32, a0: i64, a1: i64, a2: i64, a3: i64) i64;

/// The memory of `value` (a pointer to a struct, say) forms an atomic set
/// named `name`, for `weft serializability`.
pub fn atomicSet(name: []const u8, value: anytype) void {
    const bytes = std.mem.asBytes(value);
    atomic_set(name.ptr, name.len, bytes.ptr, bytes.len);
}

/// Starts a unit of work of the calling thread; end it with `unitEnd`.
pub fn unitBegin(name: []const u8) void {
    unit_begin(name.ptr, name.len);
}

/// Ends the calling thread's innermost unit of work.
pub fn unitEnd() void {
    unit_end();
}

/// A nondeterministic value in `0..bound` (any value when `bound` is 0),
/// chosen by weft and saved in replay files.
pub fn nondet(bound: u64) u64 {
    return @bitCast(choose(@bitCast(bound)));
}

/// Discards the execution (not a bug) when `cond` is false.
pub fn assumeThat(cond: bool) void {
    assume(@intFromBool(cond));
}

/// Starts a section in which the calling thread is not preempted (unless it
/// blocks); end it with `atomicEnd`.
pub fn atomicBegin() void {
    atomic_begin();
}

/// Ends the innermost `atomicBegin` section.
pub fn atomicEnd() void {
    atomic_end();
}

/// Marks a named event of the calling thread; a scheduling point.
pub fn mark(name: []const u8) void {
    event(name.ptr, name.len);
}

/// Names the calling thread in weft's reports.
pub fn threadName(name: []const u8) void {
    thread_name(name.ptr, name.len);
}

/// Checks a property of every execution: when `cond` is false the execution
/// fails with an `assertion` failure carrying `message`.
pub fn assertAlways(cond: bool, message: []const u8) void {
    assert(@intFromBool(cond), message.ptr, message.len);
}

/// A thread-safe page allocator: every allocation grows the shared memory
/// (`memory.grow` is atomic), and freed pages are not reused. Enough for
/// test programs; put an arena or a fixed-buffer allocator on top for many
/// small allocations.
pub const page_allocator: std.mem.Allocator = .{
    .ptr = undefined,
    .vtable = &.{
        .alloc = alloc,
        .resize = std.mem.Allocator.noResize,
        .remap = std.mem.Allocator.noRemap,
        .free = std.mem.Allocator.noFree,
    },
};

const page_size = 64 * 1024;

fn alloc(_: *anyopaque, len: usize, alignment: std.mem.Alignment, _: usize) ?[*]u8 {
    if (alignment.toByteUnits() > page_size) return null;
    const pages = (len + page_size - 1) / page_size;
    const old = @wasmMemoryGrow(0, pages);
    if (old < 0) return null;
    return @ptrFromInt(@as(usize, @intCast(old)) * page_size);
}

/// Blocks while `*ptr == expected` (until a `wake`).
pub fn futexWait(ptr: *const std.atomic.Value(u32), expected: u32) void {
    _ = asm volatile (
        \\ local.get %[ptr]
        \\ local.get %[expected]
        \\ i64.const -1
        \\ memory.atomic.wait32 0
        \\ local.set %[ret]
        : [ret] "=r" (-> u32),
        : [ptr] "r" (&ptr.raw),
          [expected] "r" (expected),
    );
}

/// Wakes up to `count` threads waiting on `ptr`.
pub fn futexWake(ptr: *const std.atomic.Value(u32), count: u32) void {
    _ = asm volatile (
        \\ local.get %[ptr]
        \\ local.get %[count]
        \\ memory.atomic.notify 0
        \\ local.set %[ret]
        : [ret] "=r" (-> u32),
        : [ptr] "r" (&ptr.raw),
          [count] "r" (count),
    );
}

/// A mutual-exclusion lock: 0 unlocked, 1 locked, 2 locked with waiters.
pub const Mutex = struct {
    state: std.atomic.Value(u32) = .init(0),

    pub fn lock(m: *Mutex) void {
        if (m.state.cmpxchgStrong(0, 1, .acquire, .monotonic) == null) return;
        while (m.state.swap(2, .acquire) != 0) futexWait(&m.state, 2);
    }

    pub fn unlock(m: *Mutex) void {
        if (m.state.swap(0, .release) == 2) futexWake(&m.state, 1);
    }
};

/// Waits until as many `finish` calls as `add` announced have happened.
pub const WaitGroup = struct {
    pending: std.atomic.Value(u32) = .init(0),

    pub fn add(wg: *WaitGroup, n: u32) void {
        _ = wg.pending.fetchAdd(n, .acq_rel);
    }

    pub fn finish(wg: *WaitGroup) void {
        if (wg.pending.fetchSub(1, .acq_rel) == 1) futexWake(&wg.pending, std.math.maxInt(u32));
    }

    pub fn wait(wg: *WaitGroup) void {
        while (true) {
            const left = wg.pending.load(.acquire);
            if (left == 0) return;
            futexWait(&wg.pending, left);
        }
    }
};
