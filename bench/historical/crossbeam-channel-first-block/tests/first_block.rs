//! An unbounded channel allocates its first block when the first message
//! is sent: the sender installs it as the tail, then as the head. Another
//! sender that finds the tail installed writes its message into that block
//! at once. Here the receiver is dropped while that can be under way, and
//! its drop discards whatever messages are in the channel.

use crossbeam_channel::unbounded;
use std::thread;

#[test]
fn receiver_dropped_while_the_first_block_is_installed() {
    let (first, receiver) = unbounded::<Box<u64>>();
    let second = first.clone();
    let sender = thread::spawn(move || {
        // The receiver may be gone already: either answer is right.
        let _ = first.send(Box::new(1));
    });
    let _ = second.send(Box::new(2));
    drop(receiver);
    sender.join().unwrap();
}
