//! The two models of sleeps: under `any` (the default of `explore`) a
//! sleeper may wake before the other threads got anywhere, so a sleep
//! orders nothing; under `timed` (the default of `test`) time passes only
//! with work or when every other thread waits, as on a machine never
//! overloaded, and real bugs are still found.

use crate::support::{arg, build_c, build_c_with, weft_in};

/// Four workers each count themselves active and sleep for 100 s; main
/// sleeps for a second "to let them start" and expects all four active.
const WAIT_FOR_START: &str = r#"#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

static atomic_int active;

static void *worker(void *arg) {
    (void)arg;
    atomic_fetch_add(&active, 1);
    sleep(100);
    atomic_fetch_sub(&active, 1);
    return 0;
}

int main(void) {
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], 0, worker, 0);
    sleep(1);
    assert(atomic_load(&active) == 4);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], 0);
    return 0;
}
"#;

/// Two threads bump a counter with a load, a short sleep and a store.
const SLEEPY_LOST_UPDATE: &str = r#"#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

static atomic_int count;

static void *bump(void *arg) {
    (void)arg;
    int seen = atomic_load(&count);
    usleep(10);
    atomic_store(&count, seen + 1);
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, bump, 0);
    pthread_create(&b, 0, bump, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(atomic_load(&count) == 2);
    return 0;
}
"#;

/// Three workers take a lock twice each and nap (`NAP`, a sleep or
/// nothing) between; main checks the count.
const NAPPING_WORKERS: &str = r#"#include <assert.h>
#include <pthread.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int count;

static void *worker(void *arg) {
    (void)arg;
    for (int round = 0; round < 2; round++) {
        pthread_mutex_lock(&lock);
        count++;
        pthread_mutex_unlock(&lock);
        NAP;
    }
    return 0;
}

int main(void) {
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], 0, worker, 0);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], 0);
    assert(count == 6);
    return 0;
}
"#;

#[test]
fn a_sleep_orders_nothing_in_the_exhaustive_search() {
    // Under `any` a sleeper may wake at any point, so its sleep commutes
    // with every step: the search explores the program with its naps in
    // as many schedules as without them, and still claims to be complete.
    let dir = tempfile::tempdir().unwrap();
    let mut explored = Vec::new();
    for (name, nap) in [("naps", "-DNAP=usleep(1000)"), ("awake", "-DNAP=(void)0")] {
        let module = build_c_with(dir.path(), name, NAPPING_WORKERS, &[nap]);
        let out = weft_in(
            dir.path(),
            &[
                "explore",
                arg(&module),
                "--strategy",
                "dpor",
                "--iterations",
                "20000",
                "--json",
                "--no-save",
            ],
        );
        assert_eq!(out.code, 0, "{name}: {}", out.stdout);
        let json = out.json();
        assert_eq!(json["exhaustive"], true, "{name}: {}", out.stdout);
        explored.push(json["executions"].as_u64().unwrap());
    }
    assert_eq!(explored[0], explored[1], "naps, then awake");
    // A sleep between a load and the store that depends on it still lets
    // the search find the lost update.
    let module = build_c(dir.path(), "sleepy", SLEEPY_LOST_UPDATE);
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&module),
            "--strategy",
            "dpor",
            "--json",
            "--no-save",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(out.json()["failure"]["kind"], "assertion");
}

#[test]
fn a_sleep_that_waits_for_threads_to_start_orders_them_only_when_timed() {
    let dir = tempfile::tempdir().unwrap();
    let module = build_c(dir.path(), "start", WAIT_FOR_START);
    let out = weft_in(
        dir.path(),
        &["explore", arg(&module), "--json", "--no-save"],
    );
    assert_eq!(
        out.code, 1,
        "under `any` the sleep orders nothing: {}",
        out.stdout
    );
    // The report says so, and what to run instead.
    let advice = out.json()["advice"].as_str().unwrap().to_string();
    assert!(advice.contains("--sleeps timed"), "{advice}");
    for strategy in ["random", "pct", "pos", "dfs"] {
        let out = weft_in(
            dir.path(),
            &[
                "explore",
                arg(&module),
                "--sleeps",
                "timed",
                "--strategy",
                strategy,
                "--iterations",
                "500",
                "--json",
                "--no-save",
            ],
        );
        assert_eq!(out.code, 0, "{strategy}: {}", out.stdout);
    }
    // `weft test` takes sleeps as timed; `--sleeps any` shows the test
    // counts on its sleep.
    let out = weft_in(dir.path(), &["test", arg(&module)]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let out = weft_in(dir.path(), &["test", arg(&module), "--sleeps", "any"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
}

#[test]
fn timed_sleeps_still_find_a_lost_update_and_its_replay_file_keeps_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let module = build_c(dir.path(), "sleepy", SLEEPY_LOST_UPDATE);
    let replay = dir.path().join("sleepy.weft.json");
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&module),
            "--sleeps",
            "timed",
            "--json",
            "--save-failure",
            arg(&replay),
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(out.json()["failure"]["kind"], "assertion");
    let saved = std::fs::read_to_string(&replay).unwrap();
    assert!(saved.contains("\"sleeps\": \"timed\""), "{saved}");
    let again = weft_in(dir.path(), &["replay", arg(&replay), "--json"]);
    assert_eq!(again.code, 1, "{}", again.stdout);
    assert_eq!(again.json()["trace_hash"], out.json()["trace_hash"]);
}
