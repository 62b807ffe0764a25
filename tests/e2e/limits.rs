//! Limits are not bugs: an execution cut short by the step limit, a
//! compute budget or its wall time while it still makes progress is
//! inconclusive (exit 3); a livelock is reported only with evidence, a
//! state it came back to under a fair schedule.

use crate::support::{arg, build_c, build_c_with, weft_in};

/// Two workers each add to a counter a million times, taking a lock every
/// hundredth time: correct, and longer than a step limit of 100,000 and
/// ten times as many steps more.
const STRESS: &str = r#"#include <pthread.h>
#include <stdatomic.h>
#include <assert.h>
static atomic_long total;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long locked;
static void *worker(void *arg) {
    for (int i = 0; i < 1000000; i++) {
        atomic_fetch_add(&total, 1);
        if (i % 100 == 0) { pthread_mutex_lock(&lock); locked++; pthread_mutex_unlock(&lock); }
    }
    return arg;
}
int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, worker, 0);
    pthread_create(&b, 0, worker, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(total == 2000000 && locked == 20000);
    return 0;
}
"#;

#[test]
fn a_long_stress_test_is_inconclusive_never_a_livelock() {
    let dir = tempfile::tempdir().unwrap();
    let module = build_c(dir.path(), "stress", STRESS);
    for strategy in ["random", "pct"] {
        let out = weft_in(
            dir.path(),
            &[
                "explore",
                arg(&module),
                "--strategy",
                strategy,
                "--iterations",
                "2",
                "--races",
                "off",
                "--max-steps",
                "100000",
                "--json",
            ],
        );
        assert_eq!(out.code, 3, "{strategy}: {}", out.stdout);
        let json = out.json();
        assert_eq!(json["status"], "inconclusive", "{json}");
        let why = json["inconclusive_because"].as_str().unwrap();
        assert!(
            why.starts_with("2 of 2 executions cut short by a limit")
                && why.contains("raise --max-steps"),
            "{why}"
        );
    }
    // The default limits leave it room enough (ten times the step limit
    // under a fair schedule): it passes.
    let out = weft_in(
        dir.path(),
        &["run", arg(&module), "--races", "off", "--json"],
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
}

/// The main thread polls a flag with `usleep` until a worker, which
/// computes and sleeps first, sets it.
const SLEEP_POLL: &str = r#"#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include <assert.h>
static atomic_int ready;
static int payload;
static void *producer(void *arg) {
    for (int i = 0; i < 50; i++) payload += i;
    usleep(5000);
    atomic_store(&ready, 1);
    return arg;
}
int main(void) {
    pthread_t t;
    pthread_create(&t, 0, producer, 0);
    while (!atomic_load(&ready)) usleep(1000);
    assert(payload == 1225);
    pthread_join(t, 0);
    return 0;
}
"#;

#[test]
fn a_sleep_polling_handshake_passes_under_every_strategy() {
    let dir = tempfile::tempdir().unwrap();
    let module = build_c(dir.path(), "poll", SLEEP_POLL);
    for strategy in ["random", "pct", "pos", "surw"] {
        let out = weft_in(
            dir.path(),
            &[
                "explore",
                arg(&module),
                "--strategy",
                strategy,
                "--iterations",
                "200",
                "--json",
            ],
        );
        assert_eq!(out.code, 0, "{strategy}: {}", out.stdout);
    }
}

/// The same handshake, but the flag is never set: the poller sleeps
/// forever, a livelock with evidence.
#[test]
fn a_poll_that_never_ends_is_a_livelock_named_where_it_loops() {
    let dir = tempfile::tempdir().unwrap();
    let never = SLEEP_POLL.replace("atomic_store(&ready, 1);", "");
    let module = build_c(dir.path(), "never", &never);
    let out = weft_in(
        dir.path(),
        &["run", arg(&module), "--strategy", "pct", "--json"],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    let json = out.json();
    assert_eq!(json["failure"]["kind"], "livelock");
    let message = json["failure"]["message"].as_str().unwrap();
    assert!(
        message.contains("thread 0 loops") && message.contains("never.c:16"),
        "{message}"
    );
    // `weft minimize` says it keeps a livelock's schedule as it is.
    let out = weft_in(dir.path(), &["minimize", "never.weft.json"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("does not minimize the schedule of a livelock"),
        "{}",
        out.stdout
    );
}

/// A test module: a short test, and the long stress test as a test.
const TEST_MODULE: &str = r#"#include <pthread.h>
#include <stdatomic.h>
#include <assert.h>
#include "weft.h"
static atomic_long total;
static void *add(void *arg) {
    for (long i = 0; i < (long)arg; i++) atomic_fetch_add(&total, 1);
    return 0;
}
static void run(long each) {
    total = 0;
    pthread_t a, b;
    pthread_create(&a, 0, add, (void *)each);
    pthread_create(&b, 0, add, (void *)each);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(total == 2 * each);
}
static void short_test(void) { run(10); }
static void stress_test(void) { run(1500000); }
static const struct weft_test tests[] = {
    {"short_test", short_test, 0},
    {"stress_test", stress_test, 0},
};
int main(int argc, char **argv) { return weft_run_tests(argc, argv, tests, 2); }
"#;

#[test]
fn weft_test_reports_a_test_cut_by_a_limit_as_inconclusive_never_ok() {
    let dir = tempfile::tempdir().unwrap();
    let module = build_c(dir.path(), "tests", TEST_MODULE);
    let junit = dir.path().join("junit.xml");
    let out = weft_in(
        dir.path(),
        &[
            "test",
            arg(&module),
            "--iterations",
            "2",
            "--races",
            "off",
            "--max-steps",
            "100000",
            "--junit",
            arg(&junit),
        ],
    );
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert!(
        out.stdout.contains("test short_test ... ok"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("test stress_test ... INCONCLUSIVE"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("test result: INCONCLUSIVE. 1 passed; 0 failed; 1 inconclusive;"),
        "{}",
        out.stdout
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("inconclusive"), "{xml}");
    let out = weft_in(
        dir.path(),
        &[
            "test",
            arg(&module),
            "--iterations",
            "2",
            "--races",
            "off",
            "--max-steps",
            "100000",
            "--json",
        ],
    );
    assert_eq!(out.code, 3, "{}", out.stdout);
    let json = out.json();
    assert_eq!(json["status"], "inconclusive");
    assert_eq!(json["inconclusive"], 1);
    assert_eq!(json["tests"][1]["status"], "inconclusive");
    assert!(
        json["tests"][1]["inconclusive_because"]
            .as_str()
            .unwrap()
            .contains("raise --max-steps"),
        "{json}"
    );
}

/// Starts 150 threads that all wait at one barrier: 150 alive at once.
const MANY_THREADS: &str = r#"#include <pthread.h>
#include <assert.h>

#define N 150
static pthread_barrier_t all_started;

static void *worker(void *arg) {
    (void)arg;
    pthread_barrier_wait(&all_started);
    return 0;
}

int main(void) {
    pthread_t t[N];
    pthread_barrier_init(&all_started, 0, N);
    for (int i = 0; i < N; i++) {
        int created = pthread_create(&t[i], 0, worker, 0);
        assert(created == 0);
    }
    for (int i = 0; i < N; i++)
        pthread_join(t[i], 0);
    return 0;
}
"#;

#[test]
fn a_test_that_needs_more_threads_than_the_limit_has_no_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let module = build_c(dir.path(), "many", MANY_THREADS);
    let out = weft_in(dir.path(), &["test", "--iterations", "2", arg(&module)]);
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert!(
        out.stdout.contains("test many ... INCONCLUSIVE"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("raise --max-threads"), "{}", out.stdout);
    let out = weft_in(
        dir.path(),
        &[
            "test",
            "--iterations",
            "2",
            "--max-threads",
            "192",
            arg(&module),
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
}

/// Every worker has the pool of threads a single run has: a program with a
/// hundred threads alive at once passes on three workers as on one (they
/// once shared one pool, and an execution that found it full was reported
/// as the program's trap).
#[test]
fn workers_do_not_share_the_pool_of_threads() {
    let dir = tempfile::tempdir().unwrap();
    let module = crate::support::build_c(
        dir.path(),
        "crowd",
        r#"#include <pthread.h>
#include <stdatomic.h>
#define THREADS 100
pthread_barrier_t all_in;
atomic_int arrived;
void *worker(void *arg) {
    atomic_fetch_add(&arrived, 1);
    pthread_barrier_wait(&all_in);
    return arg;
}
int main(void) {
    pthread_t threads[THREADS];
    pthread_barrier_init(&all_in, 0, THREADS);
    for (int i = 0; i < THREADS; i++) pthread_create(&threads[i], 0, worker, 0);
    for (int i = 0; i < THREADS; i++) pthread_join(threads[i], 0);
    return atomic_load(&arrived) != THREADS;
}
"#,
    );
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&module),
            "--jobs",
            "3",
            "--iterations",
            "60",
            "--json",
            "--no-save",
        ],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(out.json()["executions"], 60, "{}", out.stdout);
}

/// A program that asks for more memory and another thread than the limits
/// below give, and goes on without them when refused.
const MAKES_DO: &str = r#"#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static void *work(void *arg) { return arg; }
int main(void) {
    char *big = malloc(16 << 20);
    if (!big) puts("no memory: working in small pieces");
    else { big[0] = 1; free(big); }
    pthread_t t;
    if (pthread_create(&t, NULL, work, NULL) != 0) puts("no thread: working alone");
    else pthread_join(t, NULL);
    return 0;
}
"#;

#[test]
fn a_pass_past_a_refused_allocation_or_thread_is_no_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let module = build_c(dir.path(), "makes-do", MAKES_DO);
    for (limit, value, named) in [
        ("--max-memory-mib", "8", "raise --max-memory-mib"),
        ("--max-threads", "1", "raise --max-threads"),
    ] {
        for command in [
            &["explore", "--iterations", "20"][..],
            &["explore", "--strategy", "dfs"],
            &["explore", "--strategy", "pct", "--iterations", "5"],
            &["run"],
        ] {
            let mut args = command.to_vec();
            args.extend([arg(&module), limit, value, "--no-save"]);
            let out = weft_in(dir.path(), &args);
            assert_eq!(out.code, 3, "{args:?}: {}", out.stdout);
            assert!(out.stdout.contains(named), "{args:?}: {}", out.stdout);
        }
    }
    let out = weft_in(dir.path(), &["explore", arg(&module), "--no-save"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
}

/// A pool that starts its workers without checking that each was
/// created, then waits until all of them said they are alive.
const WAITS_FOR_ITS_WORKERS: &str = r#"#include <pthread.h>
#include <stdatomic.h>
#define WORKERS 3
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t started = PTHREAD_COND_INITIALIZER;
static int alive;
static atomic_int spin_alive;
static void *worker(void *arg) {
    pthread_mutex_lock(&lock);
    alive++;
    atomic_fetch_add(&spin_alive, 1);
    pthread_cond_signal(&started);
    pthread_mutex_unlock(&lock);
    return arg;
}
int main(int argc, char **argv) {
    (void)argv;
    pthread_t t[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    if (argc > 1) {
        while (atomic_load(&spin_alive) != WORKERS) {}
    } else {
        pthread_mutex_lock(&lock);
        while (alive != WORKERS)
            pthread_cond_wait(&started, &lock);
        pthread_mutex_unlock(&lock);
    }
    return 0;
}
"#;

#[test]
fn a_deadlock_or_livelock_past_a_refused_thread_is_the_limits() {
    let dir = tempfile::tempdir().unwrap();
    let module = build_c(dir.path(), "waits", WAITS_FOR_ITS_WORKERS);
    // Waiting on a condition variable (a deadlock once refused), then
    // spinning (a livelock once refused): the thread limit's failure, as a
    // trap after a refusal is, and no verdict for `weft test`.
    for extra in [&[][..], &["--", "spin"]] {
        let mut args = vec!["run", arg(&module), "--max-threads", "2", "--no-save"];
        args.extend(["--json"]);
        args.extend(extra);
        let out = weft_in(dir.path(), &args);
        assert_eq!(
            out.json()["failure"]["kind"],
            "thread-limit",
            "{args:?}: {}",
            out.stdout
        );
        let mut args = vec!["test", arg(&module), "--max-threads", "2", "--no-save"];
        args.extend(extra);
        let out = weft_in(dir.path(), &args);
        assert_eq!(out.code, 3, "{args:?}: {}", out.stdout);
        assert!(out.stdout.contains("raise --max-threads"), "{}", out.stdout);
        let mut args = vec!["run", arg(&module), "--no-save"];
        args.extend(extra);
        let out = weft_in(dir.path(), &args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stdout);
    }
}

/// A thread that allocates, fills and keeps the MiB its argument says.
const ALLOCATES: &str = r#"#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
static char *volatile kept;
static void *work(void *arg) {
    size_t n = (size_t)arg;
    char *p = malloc(n);
    assert(p != NULL);
    memset(p, 1, n);
    kept = p;
    return NULL;
}
int main(int argc, char **argv) {
    size_t mib = (size_t)atoi(argv[1]);
    pthread_t t;
    pthread_create(&t, NULL, work, (void *)(mib << 20));
    pthread_join(t, NULL);
    return 0;
}
"#;

#[test]
fn a_c_program_may_use_memory_up_to_the_limit_weft_reports() {
    let dir = tempfile::tempdir().unwrap();
    let module = build_c(dir.path(), "allocates", ALLOCATES);
    // 100 MiB, as natively: no failure (the module may grow to 1 GiB).
    let out = weft_in(dir.path(), &["run", arg(&module), "--no-save", "--", "100"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    // Past `--max-memory-mib`: the limit's failure, named.
    let out = weft_in(
        dir.path(),
        &["run", arg(&module), "--no-save", "--json", "--", "600"],
    );
    assert_eq!(
        out.json()["failure"]["kind"],
        "memory-limit",
        "{}",
        out.stdout
    );
}

/// Two threads add to a counter without a lock: a lost update.
const LOST_UPDATE: &str = r#"#include <pthread.h>
#include <assert.h>
static int x;
static void *add(void *arg) { x++; return arg; }
int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, add, 0);
    pthread_create(&b, 0, add, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(x == 2);
    return 0;
}
"#;

#[test]
fn a_systematic_search_cut_by_the_step_limit_has_no_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let module = build_c(dir.path(), "lost", LOST_UPDATE);
    for strategy in ["dfs", "dpor"] {
        let out = weft_in(
            dir.path(),
            &[
                "explore",
                arg(&module),
                "--strategy",
                strategy,
                "--races",
                "off",
                "--max-steps",
                "20",
                "--iterations",
                "2000",
                "--json",
                "--no-save",
            ],
        );
        assert_eq!(out.code, 3, "{strategy}: {}", out.stdout);
        let json = out.json();
        let why = json["inconclusive_because"].as_str().unwrap();
        assert!(why.contains("raise --max-steps"), "{strategy}: {why}");
        // The search ran out of orders before the step limit, in fewer
        // executions than it was given, instead of running one order
        // past it again and again.
        let executions = json["executions"].as_u64().unwrap();
        assert!(executions < 2000, "{strategy}: {executions}");
        if strategy == "dfs" {
            assert!(
                json["distinct_traces"].as_u64().unwrap() > 1,
                "{}",
                out.stdout
            );
        }
    }
}

#[test]
fn a_bounded_search_that_cannot_see_plain_accesses_claims_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let module = build_c(dir.path(), "lost", LOST_UPDATE);
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&module),
            "--strategy",
            "dfs",
            "--races",
            "off",
            "--preemption-bound",
            "0",
            "--no-save",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(out.stdout.contains("no claim"), "{}", out.stdout);
    assert!(!out.stdout.contains("explored all"), "{}", out.stdout);
}

/// One thread computes for 200 million iterations with no scheduling point:
/// far longer than a small compute budget.
const COMPUTE: &str = r#"#include <stdio.h>
int main(void) {
    volatile unsigned long x = 0;
    for (unsigned long i = 0; i < 200000000UL; i++) x += i;
    printf("%lu\n", (unsigned long)x);
    return 0;
}
"#;

#[test]
fn a_computation_past_a_small_compute_budget_is_inconclusive_never_a_livelock() {
    let dir = tempfile::tempdir().unwrap();
    for level in ["-O0", "-O2"] {
        let module = build_c_with(dir.path(), &format!("compute{level}"), COMPUTE, &[level]);
        for fuel in ["1000", "100000", "500000"] {
            let out = weft_in(
                dir.path(),
                &["run", arg(&module), "--max-fuel", fuel, "--json"],
            );
            assert_eq!(out.code, 3, "{level} {fuel}: {}", out.stdout);
            let why = out.json()["inconclusive_because"].to_string();
            assert!(why.contains("--max-fuel"), "{level} {fuel}: {why}");
        }
    }
}

/// A loop whose counter is a local, over a three-slot ring of atomics whose
/// memory comes back every three iterations; with `WATCHER`, a second
/// thread polls a flag the loop sets at its end.
const RING: &str = r#"#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
static atomic_int slots[3];
static atomic_int done;
static void *watcher(void *arg) { while (!atomic_load(&done)) { } return arg; }
int main(int argc, char **argv) {
    (void)argv;
    pthread_t t;
    if (WATCHER) pthread_create(&t, 0, watcher, 0);
    int sum = 0;
    for (int i = 0; i < 1000000; i++) {
        atomic_store(&slots[i % 3], i % 3);
        sum += atomic_load(&slots[(i + 1) % 3]);
    }
    atomic_store(&done, 1);
    if (WATCHER) pthread_join(t, 0);
    assert(sum >= 0 || argc > 5);
    return 0;
}
"#;

#[test]
fn a_loop_counting_in_a_local_over_memory_that_cycles_is_no_livelock() {
    let dir = tempfile::tempdir().unwrap();
    for (watcher, level) in [("0", "-O0"), ("0", "-O2"), ("1", "-O0"), ("1", "-O2")] {
        let source = RING.replace("WATCHER", watcher);
        let module = build_c_with(
            dir.path(),
            &format!("ring{watcher}{level}"),
            &source,
            &[level],
        );
        let out = weft_in(
            dir.path(),
            &["run", arg(&module), "--max-steps", "100000", "--json"],
        );
        // Memory and every thread's place come back, the loop counter
        // does not: a pass, or inconclusive at the step limit.
        assert!(
            out.code == 0 || out.code == 3,
            "{watcher} {level}: {}",
            out.stdout
        );
        assert_ne!(out.json()["failure"]["kind"], "livelock");
    }
}

/// A thread spins on a flag that only a path never taken sets; `main`
/// joins it.
const FLAG: &str = r#"#include <pthread.h>
#include <stdatomic.h>
static atomic_int flag;
static void *waiter(void *arg) { while (!atomic_load(&flag)) { } return arg; }
int main(int argc, char **argv) {
    (void)argv;
    if (argc > 5) atomic_store(&flag, 1);
    pthread_t t;
    pthread_create(&t, 0, waiter, 0);
    pthread_join(t, 0);
    return 0;
}
"#;

/// A spin lock taken by a thread that exits holding it; a second thread
/// spins to take it.
const ABANDONED_LOCK: &str = r#"#include <pthread.h>
#include <stdatomic.h>
static atomic_flag lock = ATOMIC_FLAG_INIT;
static void *taker(void *arg) { while (atomic_flag_test_and_set(&lock)) { } return arg; }
int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, taker, 0);
    pthread_join(a, 0);
    pthread_create(&b, 0, taker, 0);
    pthread_join(b, 0);
    return 0;
}
"#;

/// An empty loop, as an optimiser makes of a spin whose flag can never
/// change: no scheduling point, nothing but time slices.
const EMPTY_LOOP: &str = r#"#include <pthread.h>
static void *forever(void *arg) { for (;;) { } return arg; }
int main(void) {
    pthread_t t;
    pthread_create(&t, 0, forever, 0);
    pthread_join(t, 0);
    return 0;
}
"#;

#[test]
fn spinning_that_no_schedule_ends_is_a_livelock_shown_on_complete_states() {
    let programs = [
        ("flag", FLAG),
        ("abandoned", ABANDONED_LOCK),
        ("empty", EMPTY_LOOP),
    ];
    for json in livelocks_at_each_level(&programs, &["run", "--json"]) {
        let message = json["failure"]["message"].as_str().unwrap();
        assert!(
            message.contains("comparing every thread's wasm locals"),
            "{message}"
        );
    }
}

/// Builds each of `programs` (name, source) at `-O0` and `-O2` and runs
/// `weft` on it with `args` (the module right after the command): each
/// run is a livelock failure. What each printed, as JSON.
fn livelocks_at_each_level(programs: &[(&str, &str)], args: &[&str]) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().unwrap();
    let mut runs = Vec::new();
    for &(name, source) in programs {
        for level in ["-O0", "-O2"] {
            let module = build_c_with(dir.path(), &format!("{name}{level}"), source, &[level]);
            let mut command = vec![args[0], arg(&module)];
            command.extend(&args[1..]);
            let out = weft_in(dir.path(), &command);
            assert_eq!(out.code, 1, "{name} {level}: {}", out.stdout);
            let json = out.json();
            assert_eq!(
                json["failure"]["kind"], "livelock",
                "{name} {level}: {json}"
            );
            runs.push(json);
        }
    }
    runs
}

/// Two threads, each waiting for the other to be ready before it says it
/// is ready itself: both spin forever, under any schedule.
const HANDSHAKE: &str = r#"#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
static atomic_int client_ready, server_ready;
static void *server(void *arg) {
    while (!atomic_load(&client_ready)) sched_yield();
    atomic_store(&server_ready, 1);
    return arg;
}
int main(void) {
    pthread_t t;
    pthread_create(&t, 0, server, 0);
    while (!atomic_load(&server_ready)) sched_yield();
    atomic_store(&client_ready, 1);
    pthread_join(t, 0);
    return 0;
}
"#;

/// The stateful search goes on past a state its execution came back to,
/// without states, so spinning that no schedule ends is the same livelock
/// as without states: two threads that wait for each other, as well as
/// one alone.
#[test]
fn the_stateful_search_finds_spinning_that_no_schedule_ends_a_livelock() {
    let programs = [
        ("handshake", HANDSHAKE),
        ("flag", FLAG),
        ("abandoned", ABANDONED_LOCK),
    ];
    let args = [
        "explore",
        "--strategy",
        "dpor",
        "--stateful",
        "--max-steps",
        "50000",
        "--no-save",
        "--json",
    ];
    livelocks_at_each_level(&programs, &args);
}
