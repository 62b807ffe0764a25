//! Zig version of lost-update: two threads increment a shared counter with a
//! separate atomic load and store, so an increment can be lost.
const std = @import("std");
const weft = @import("weft");

pub const os = struct {
    pub const heap = struct {
        pub const page_allocator = weft.page_allocator;
    };
};

const threads = 2;
const increments = 10;

var counter = std.atomic.Value(u32).init(0);
/// Released once every thread is spawned (see the SDK's note on std.Thread).
var start_gate = weft.WaitGroup{};

fn worker() void {
    start_gate.wait();
    var i: u32 = 0;
    while (i < increments) : (i += 1) {
        const seen = counter.load(.acquire);
        counter.store(seen + 1, .release);
    }
}

pub fn main() !void {
    start_gate.add(1);
    var handles: [threads]std.Thread = undefined;
    for (&handles) |*h| h.* = try std.Thread.spawn(.{ .allocator = std.heap.page_allocator, .stack_size = 64 * 1024 }, worker, .{});
    start_gate.finish();
    for (handles) |h| h.join();
    const total = counter.load(.acquire);
    std.debug.print("counter = {d}\n", .{total});
    weft.assertAlways(total == threads * increments, "lost an update");
}
