//! Tests whose schedules are wrong, one per mistake IMUnit users make.
//! `weft test` must fail each of them with a message that names the
//! mistake; run without schedules, every test passes.
//!
//! - `after_event_never_occurs`: the schedule orders an event the test
//!   never fires, so it constrains nothing.
//! - `thread_never_blocks`: `[workerReady]@worker` waits for the worker to
//!   block after `workerReady`, but the worker just ends.
//! - `before_event_never_occurs`: main waits for an event nobody fires: a
//!   schedule deadlock.
//! - `unknown_thread`: the schedule names a thread that does not exist.
//! - `event_fired_twice`: a schedule event inside a loop.
//! - `parse_error`: `-` instead of `->`.
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;
use weft_guest::{Test, event, run_tests, thread_name};

static WORK: AtomicU32 = AtomicU32::new(0);

/// A worker that fires `workerReady`, does some work without blocking, and
/// ends; main fires `mainGo` and joins it.
fn worker_and_main() {
    let worker = thread::spawn(|| {
        thread_name("worker");
        event("workerReady");
        for _ in 0..3 {
            WORK.fetch_add(1, Ordering::SeqCst);
        }
    });
    event("mainGo");
    worker.join().unwrap();
}

/// Fires `tick` three times.
fn ticks() {
    let ticker = thread::spawn(|| {
        thread_name("ticker");
        for _ in 0..3 {
            event("tick");
        }
    });
    event("mainGo");
    ticker.join().unwrap();
}

fn main() {
    run_tests(&[
        Test {
            name: "after_event_never_occurs",
            run: worker_and_main,
            schedules: &["workerReady -> workerDone"],
        },
        Test {
            name: "thread_never_blocks",
            run: worker_and_main,
            schedules: &["[workerReady]@worker -> mainGo"],
        },
        Test {
            name: "before_event_never_occurs",
            run: worker_and_main,
            schedules: &["workerStarted -> mainGo"],
        },
        Test {
            name: "unknown_thread",
            run: worker_and_main,
            schedules: &["workerReady@wroker -> mainGo"],
        },
        Test {
            name: "event_fired_twice",
            run: ticks,
            schedules: &["tick -> mainGo"],
        },
        Test {
            name: "parse_error",
            run: worker_and_main,
            schedules: &["[workerReady] - mainGo@main"],
        },
    ]);
}
