//! Zig version of abba-deadlock: transfers lock the source account, then
//! the destination; two opposite transfers can wait for each other forever.
const std = @import("std");
const weft = @import("weft");

pub const os = struct {
    pub const heap = struct {
        pub const page_allocator = weft.page_allocator;
    };
};

const Account = struct {
    lock: weft.Mutex = .{},
    balance: i64,
};

/// Released once both threads are spawned (see the SDK's note on std.Thread).
var start_gate = weft.WaitGroup{};

fn transfer(from: *Account, to: *Account, amount: i64) void {
    start_gate.wait();
    from.lock.lock();
    defer from.lock.unlock();
    to.lock.lock();
    defer to.lock.unlock();
    from.balance -= amount;
    to.balance += amount;
}

pub fn main() !void {
    var alice = Account{ .balance = 100 };
    var bob = Account{ .balance = 100 };
    const config: std.Thread.SpawnConfig = .{ .allocator = std.heap.page_allocator, .stack_size = 64 * 1024 };
    start_gate.add(1);
    const one = try std.Thread.spawn(config, transfer, .{ &alice, &bob, 10 });
    const two = try std.Thread.spawn(config, transfer, .{ &bob, &alice, 20 });
    start_gate.finish();
    one.join();
    two.join();
    weft.assertAlways(alice.balance + bob.balance == 200, "money was created or lost");
}
