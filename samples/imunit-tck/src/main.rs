//! Multithreaded unit tests in the style of the JSR-166 TCK, each in two
//! versions, as IMUnit migrated them:
//!
//! - `*_sleep`: the original style. A thread sleeps so that, on a typical
//!   machine, another thread gets somewhere first. Nothing guarantees it,
//!   so each is flaky: under random schedules some executions fail.
//! - `*_events`: the same test with the sleeps replaced by events, and the
//!   intended order stated as a schedule that weft enforces.
//!
//! The tests: a count-down latch, a cyclic barrier, a lock whose
//! acquisition is cancelled (like `lockInterruptibly` and `interrupt`), a
//! semaphore, and a producer and consumer over a bounded channel.
mod sync;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{TryRecvError, sync_channel};
use std::thread;
use std::time::Duration;
use sync::{CancellableLock, Cancelled, CountDownLatch, CyclicBarrier, Semaphore};
use weft_guest::{Test, event, run_tests, thread_name};

/// How a test makes its threads take turns.
#[derive(Clone, Copy)]
enum Style {
    /// Sleeps, and hopes.
    Sleep,
    /// Events, ordered by the test's schedule.
    Events,
}

/// The sleep the TCK calls SHORT_DELAY_MS.
const SHORT_DELAY: Duration = Duration::from_millis(50);

impl Style {
    /// The sleep of the sleep-based version.
    fn pause(self, delay: Duration) {
        if let Style::Sleep = self {
            thread::sleep(delay);
        }
    }

    /// The event of the event-based version.
    fn mark(self, name: &str) {
        if let Style::Events = self {
            event(name);
        }
    }
}

/// `await` returns once the count reaches zero, and not before: the waiter
/// checks that it arrived while the count was still up.
fn latch_await(style: Style) {
    let latch = Arc::new(CountDownLatch::new(2));
    let waiter = {
        let latch = Arc::clone(&latch);
        thread::spawn(move || {
            thread_name("waiter");
            assert!(latch.count() > 0, "the waiter arrived after the count-down");
            style.mark("awaiting");
            latch.wait();
            assert_eq!(latch.count(), 0);
        })
    };
    style.pause(SHORT_DELAY);
    style.mark("countingDown");
    latch.count_down();
    assert_eq!(latch.count(), 1);
    latch.count_down();
    waiter.join().unwrap();
}

/// Two parties meet at a barrier; the first to arrive is counted as
/// waiting.
fn barrier_two_parties(style: Style) {
    let barrier = Arc::new(CyclicBarrier::new(2));
    let party = {
        let barrier = Arc::clone(&barrier);
        thread::spawn(move || {
            thread_name("party");
            style.mark("arriving");
            barrier.wait()
        })
    };
    style.pause(SHORT_DELAY);
    style.mark("checkingWaiting");
    assert_eq!(barrier.waiting(), 1, "the other party is not waiting yet");
    assert_eq!(barrier.wait(), 0, "main should arrive last");
    assert_eq!(party.join().unwrap(), 1);
}

/// A thread queued on a held lock gives up when its acquisition is
/// cancelled.
fn lock_cancelled(style: Style) {
    let lock = Arc::new(CancellableLock::new());
    lock.lock();
    let locker = {
        let lock = Arc::clone(&lock);
        thread::spawn(move || {
            thread_name("locker");
            style.mark("locking");
            assert_eq!(lock.lock_cancellable(), Err(Cancelled));
        })
    };
    style.pause(SHORT_DELAY);
    style.mark("cancelling");
    assert!(lock.has_queued_threads(), "the locker is not queued yet");
    lock.cancel();
    locker.join().unwrap();
    lock.unlock();
}

/// `try_acquire` fails while the only permit is held, and `acquire` gets
/// the permit once it is released.
fn semaphore_try_acquire(style: Style) {
    let semaphore = Arc::new(Semaphore::new(1));
    semaphore.acquire();
    let acquirer = {
        let semaphore = Arc::clone(&semaphore);
        thread::spawn(move || {
            thread_name("acquirer");
            assert!(!semaphore.try_acquire(), "the permit was free");
            style.mark("triedAcquire");
            semaphore.acquire();
            semaphore.release();
        })
    };
    style.pause(SHORT_DELAY);
    style.mark("releasing");
    semaphore.release();
    acquirer.join().unwrap();
}

/// Over a channel of capacity 1: the consumer takes the first item, finds
/// nothing more, and blocks on the second until the producer sends it.
fn producer_consumer(style: Style) {
    let (items, received) = sync_channel::<u32>(1);
    let sent = Arc::new(AtomicU32::new(0));
    let producer = {
        let sent = Arc::clone(&sent);
        thread::spawn(move || {
            thread_name("producer");
            items.send(1).unwrap();
            sent.store(1, Ordering::SeqCst);
            style.mark("finishedSend1");
            style.pause(SHORT_DELAY * 2);
            style.mark("startingSend2");
            items.send(2).unwrap();
            sent.store(2, Ordering::SeqCst);
        })
    };
    style.pause(SHORT_DELAY);
    style.mark("startingRecv1");
    assert_eq!(received.recv().unwrap(), 1);
    assert_eq!(
        sent.load(Ordering::SeqCst),
        1,
        "the producer was not done with its first send"
    );
    assert_eq!(
        received.try_recv(),
        Err(TryRecvError::Empty),
        "the second item came early"
    );
    style.mark("startingRecv2");
    assert_eq!(received.recv().unwrap(), 2);
    producer.join().unwrap();
}

/// For each test function, a module with its two versions as `fn()`s.
macro_rules! both_styles {
    ($($name:ident),*) => {
        $(
            mod $name {
                pub fn sleep() {
                    super::$name(super::Style::Sleep);
                }
                pub fn events() {
                    super::$name(super::Style::Events);
                }
            }
        )*
    };
}

both_styles!(
    latch_await,
    barrier_two_parties,
    lock_cancelled,
    semaphore_try_acquire,
    producer_consumer
);

fn main() {
    run_tests(&[
        Test {
            name: "latch_await_sleep",
            run: latch_await::sleep,
            schedules: &[],
        },
        Test {
            name: "latch_await_events",
            run: latch_await::events,
            schedules: &["[awaiting]@waiter -> countingDown"],
        },
        Test {
            name: "barrier_two_parties_sleep",
            run: barrier_two_parties::sleep,
            schedules: &[],
        },
        Test {
            name: "barrier_two_parties_events",
            run: barrier_two_parties::events,
            schedules: &["[arriving]@party -> checkingWaiting"],
        },
        Test {
            name: "lock_cancelled_sleep",
            run: lock_cancelled::sleep,
            schedules: &[],
        },
        Test {
            name: "lock_cancelled_events",
            run: lock_cancelled::events,
            schedules: &["[locking]@locker -> cancelling"],
        },
        Test {
            name: "semaphore_try_acquire_sleep",
            run: semaphore_try_acquire::sleep,
            schedules: &[],
        },
        Test {
            name: "semaphore_try_acquire_events",
            run: semaphore_try_acquire::events,
            schedules: &["triedAcquire -> releasing"],
        },
        Test {
            name: "producer_consumer_sleep",
            run: producer_consumer::sleep,
            schedules: &[],
        },
        Test {
            name: "producer_consumer_events",
            run: producer_consumer::events,
            schedules: &["finishedSend1 -> startingRecv1, [startingRecv2] -> startingSend2"],
        },
    ]);
}
