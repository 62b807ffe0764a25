//! Data races: found by default with both accesses named, reproduced by
//! their replay files, turned into scheduling points with `--races
//! schedule`, and never reported on race-free programs.

use crate::support::{arg, build_c, build_c_with, sample, weft, weft_in, without_sections};

/// The racy samples, each with a source line one of its accesses is on.
const RACY: [(&str, &str); 8] = [
    ("racy-counter-c", "racy-counter-c/main.c:16"),
    ("two-mutexes-c", "two-mutexes-c/main.c:"),
    ("unlocked-path-c", "unlocked-path-c/main.c:"),
    ("aliased-stats-c", "aliased-stats-c/main.c:32"),
    ("plain-reorder-c", "plain-reorder-c/main.c:"),
    ("racy-wat", "at append"),
    ("racy-static", "racy-static/src/main.rs:11"),
    ("racy-cell", "racy-cell/src/main.rs:20"),
];

#[test]
fn the_default_exploration_reports_both_accesses_of_a_race() {
    for (name, place) in RACY {
        let (out, _dir) = weft(&["explore", arg(&sample(name)), "--json", "--no-save"]);
        assert_eq!(out.code, 1, "{name}: {}", out.stdout);
        let json = out.json();
        assert_eq!(json["failure"]["kind"], "data-race", "{name}");
        let message = json["failure"]["message"].as_str().unwrap();
        assert!(message.starts_with("data race on 0x"), "{name}: {message}");
        assert_eq!(message.matches("thread ").count(), 2, "{name}: {message}");
        assert!(
            message.contains(" wrote "),
            "{name}: a race has a write: {message}"
        );
        assert!(message.contains(place), "{name}: {message}");
    }
}

#[test]
fn races_off_reports_no_race() {
    let (out, _dir) = weft(&[
        "explore",
        arg(&sample("racy-counter-c")),
        "--races",
        "off",
        "--json",
        "--no-save",
    ]);
    let json = out.json();
    assert_ne!(json["failure"]["kind"], "data-race", "{}", out.stdout);
}

#[test]
fn races_schedule_finds_the_assertion_a_switch_between_plain_accesses_needs() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("reorder.weft.json");
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&sample("plain-reorder-c")),
            "--races",
            "schedule",
            "--iterations",
            "2000",
            "--json",
            "--save-failure",
            arg(&replay),
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    let json = out.json();
    assert_eq!(json["failure"]["kind"], "assertion", "{}", out.stdout);
    let sites = json["race_points"]["sites"].as_array().unwrap();
    assert!(sites.len() >= 2, "both variables' accesses: {sites:?}");
    // The replay file carries the sites: it reproduces the assertion.
    let saved = crate::support::read_json(&replay);
    assert_eq!(
        saved["run"]["point_sites"].as_array().map(Vec::len),
        Some(sites.len()),
        "{saved}"
    );
    let again = weft_in(dir.path(), &["replay", arg(&replay), "--json"]);
    assert_eq!(again.code, 1, "{}", again.stderr);
    assert_eq!(again.json()["failure"]["kind"], "assertion");
    assert_eq!(again.json()["trace_hash"], json["trace_hash"]);
    // Without the racy sites as points, no switch falls between the two
    // plain writes, and the assertion cannot fail.
    let (plain, _dir) = weft(&[
        "explore",
        arg(&sample("plain-reorder-c")),
        "--races",
        "off",
        "--iterations",
        "2000",
        "--json",
        "--no-save",
    ]);
    assert_eq!(plain.code, 0, "{}", plain.stdout);
}

/// `--races schedule` switches at every plain access to a byte a race was
/// seen on, not only at the two sites seen racing: the counter's other
/// reads and writes (main's read after the joins, here) count too.
#[test]
fn races_schedule_switches_at_every_access_to_a_racy_variable() {
    let (out, _dir) = weft(&[
        "explore",
        arg(&sample("racy-counter-c")),
        "--races",
        "schedule",
        "--iterations",
        "200",
        "--json",
        "--no-save",
    ]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let json = out.json();
    let points = &json["race_points"];
    let racing = points["racing_sites"].as_u64().unwrap();
    let sites = points["sites"].as_array().unwrap().len() as u64;
    assert!(
        racing >= 1 && points["racy_bytes"].as_u64() >= Some(1),
        "{points}"
    );
    assert!(sites > racing, "sites touching the racy bytes: {points}");
    let (text, _dir) = weft(&[
        "explore",
        arg(&sample("racy-counter-c")),
        "--races",
        "schedule",
        "--iterations",
        "200",
        "--no-save",
    ]);
    assert!(
        text.stdout.contains("that raced and those touching the"),
        "{}",
        text.stdout
    );
}

/// musl's `pthread_once` checks its control word with a plain read and a
/// barrier: the C library's own synchronisation, never the program's race
/// (the DWARF of that code names weft's C SDK file, the name section the
/// library's function).
#[test]
fn pthread_once_from_two_threads_is_no_race() {
    let dir = tempfile::tempdir().unwrap();
    let module = crate::support::build_c(
        dir.path(),
        "once",
        r#"#include <assert.h>
#include <pthread.h>
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int table[4], inits;
static void build(void) { inits++; for (int i = 0; i < 4; i++) table[i] = i * i; }
static void *user(void *arg) { pthread_once(&once, build); assert(table[3] == 9); return 0; }
int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, user, 0);
    pthread_create(&b, 0, user, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(inits == 1);
    return 0;
}
"#,
    );
    for strategy in ["portfolio", "dpor"] {
        let out = crate::support::weft_in(
            dir.path(),
            &[
                "explore",
                arg(&module),
                "--strategy",
                strategy,
                "--races",
                "fail",
                "--iterations",
                "1000",
                "--no-save",
            ],
        );
        assert_eq!(out.code, 0, "{strategy}: {}", out.stdout);
    }
}

#[test]
fn race_free_programs_report_no_race_under_any_strategy() {
    for name in [
        "pthread-sync-c",
        "pthread-exit-c",
        "account-cpp",
        "sync-primitives",
        "mutex-counter",
        "spin-lock-c",
    ] {
        for strategy in ["random", "pct", "pos", "surw", "dfs", "dpor"] {
            let (out, _dir) = weft(&[
                "explore",
                arg(&sample(name)),
                "--strategy",
                strategy,
                "--iterations",
                "1000",
                "--json",
                "--no-save",
            ]);
            assert_eq!(out.code, 0, "{name} under {strategy}: {}", out.stdout);
        }
    }
}

/// A module whose main thread writes a plain word, spawns a thread that
/// reads it, and then (with `race_after_spawn`) writes it again without
/// waiting for the thread.
fn spawn_order_module(race_after_spawn: bool) -> String {
    let after = if race_after_spawn {
        "(i32.store (i32.const 0) (i32.const 2))"
    } else {
        ""
    };
    format!(
        r#"(module
  (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
  (memory (export "memory") 1 1 shared)
  (func (export "wasi_thread_start") (param $tid i32) (param $arg i32)
    (drop (i32.load (i32.const 0))))
  (func (export "_start")
    (i32.store (i32.const 0) (i32.const 1))
    (drop (call $spawn (i32.const 0)))
    {after}))"#
    )
}

#[test]
fn the_main_threads_accesses_race_from_its_first_spawn_on() {
    let dir = tempfile::tempdir().unwrap();
    // Before the spawn: ordered before the thread's read, never a race.
    let ordered = crate::support::wat_file(dir.path(), "ordered", &spawn_order_module(false));
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&ordered),
            "--strategy",
            "dpor",
            "--json",
            "--no-save",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(out.json()["exhaustive"], true, "{}", out.stdout);
    // Right after it: the main thread's write races with the thread's read.
    let racy = crate::support::wat_file(dir.path(), "racy", &spawn_order_module(true));
    let out = weft_in(dir.path(), &["explore", arg(&racy), "--json", "--no-save"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(out.json()["failure"]["kind"], "data-race", "{}", out.stdout);
}

#[test]
fn a_module_with_neither_dwarf_nor_names_gets_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let bare = without_sections(&sample("mutex-counter"), dir.path(), "bare", |name| {
        name == "name" || name.starts_with(".debug_")
    });
    let out = weft_in(dir.path(), &["explore", arg(&bare), "--iterations", "5"]);
    assert_eq!(
        out.stderr
            .matches("has neither DWARF nor a name section")
            .count(),
        1,
        "{}",
        out.stderr
    );
    let out = weft_in(
        dir.path(),
        &["explore", arg(&bare), "--iterations", "5", "--races", "off"],
    );
    assert!(!out.stderr.contains("warning"), "{}", out.stderr);
    let named = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&sample("mutex-counter")),
            "--iterations",
            "5",
        ],
    );
    assert!(!named.stderr.contains("warning"), "{}", named.stderr);
}

#[test]
fn a_race_is_reported_before_the_exit_it_leads_to() {
    let dir = tempfile::tempdir().unwrap();
    let module = build_c(
        dir.path(),
        "stale",
        r#"#include <pthread.h>
#include <stdio.h>

static int flag;

static void *worker(void *arg) {
    (void)arg;
    flag = 1;
    return NULL;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    int seen = flag;
    pthread_join(t, NULL);
    if (seen != flag) {
        fprintf(stderr, "saw a stale flag\n");
        return 1;
    }
    return 0;
}
"#,
    );
    // The first schedule `dfs` tries reads the flag before the worker
    // sets it, and exits with 1: the race came first.
    let out = weft_in(
        dir.path(),
        &["explore", arg(&module), "--strategy", "dfs", "--json"],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    let json = out.json();
    assert_eq!(json["failure"]["kind"], "data-race", "{}", out.stdout);
    let message = json["failure"]["message"].as_str().unwrap();
    assert!(message.contains("stale.c:15"), "{message}");
    assert!(
        message.ends_with("then: the program exited with code 1"),
        "{message}"
    );
    assert_eq!(json["stderr"], "saw a stale flag\n");
    let replay = json["replay_file"].as_str().unwrap();
    let again = weft_in(dir.path(), &["replay", replay]);
    assert_eq!(again.code, 1, "{}", again.stdout);
    assert!(
        again.stdout.contains("FAILURE: data-race"),
        "{}",
        again.stdout
    );
    // With races off, the exit is the failure.
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&module),
            "--strategy",
            "dfs",
            "--races",
            "off",
            "--json",
            "--no-save",
        ],
    );
    assert_eq!(out.json()["failure"]["kind"], "exit", "{}", out.stdout);
}

#[test]
fn a_plain_access_racing_with_an_atomic_one_in_the_program_is_a_race() {
    let dir = tempfile::tempdir().unwrap();
    let module = build_c(
        dir.path(),
        "mixed",
        r#"#include <pthread.h>
#include <stdio.h>

static int hits;

static void *careful(void *arg) {
    (void)arg;
    __atomic_fetch_add(&hits, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static void *careless(void *arg) {
    (void)arg;
    hits++;
    return NULL;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, careful, NULL);
    pthread_create(&b, NULL, careless, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("hits = %d\n", hits);
    return 0;
}
"#,
    );
    for strategy in ["random", "pct", "dfs"] {
        let out = weft_in(
            dir.path(),
            &[
                "explore",
                arg(&module),
                "--strategy",
                strategy,
                "--json",
                "--no-save",
            ],
        );
        assert_eq!(out.code, 1, "{strategy}: {}", out.stdout);
        let json = out.json();
        assert_eq!(json["failure"]["kind"], "data-race", "{}", out.stdout);
        let message = json["failure"]["message"].as_str().unwrap();
        assert!(message.contains("(`hits`)"), "{message}");
        assert!(message.contains("atomically "), "{message}");
        assert!(message.contains("careless (mixed.c:14)"), "{message}");
        assert!(message.contains("careful (mixed.c:8)"), "{message}");
    }
}

/// 20,000 short-lived threads, two alive at a time, that lock, allocate
/// and print; then two that race on a counter.
const MANY_SHORT_LIVED: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static long counter, unlocked;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static void *work(void *arg) {
    long n = (long)arg;
    char *buf = malloc(32);
    snprintf(buf, 32, "thread %ld", n);
    pthread_mutex_lock(&m);
    counter++;
    pthread_mutex_unlock(&m);
    if (n % 5000 == 0) puts(buf);
    free(buf);
    return 0;
}
static void *careless(void *arg) {
    unlocked++;
    return arg;
}
int main(int argc, char **argv) {
    for (long i = 0; i < 10000; i++) {
        pthread_t a, b;
        pthread_create(&a, 0, work, (void *)(2 * i));
        pthread_create(&b, 0, work, (void *)(2 * i + 1));
        pthread_join(a, 0);
        pthread_join(b, 0);
    }
    if (argc > 1) {
        pthread_t a, b;
        pthread_create(&a, 0, careless, 0);
        pthread_create(&b, 0, careless, 0);
        pthread_join(a, 0);
        pthread_join(b, 0);
    }
    return counter != 20000;
}
"#;

/// Runs `weft` with `args` in `dir`; its exit code, stdout and peak
/// resident memory in MiB.
#[expect(
    clippy::zombie_processes,
    reason = "the child is reaped by `wait4`, which reports its peak memory"
)]
fn weft_with_peak_memory(dir: &std::path::Path, args: &[&str]) -> (i32, String, i64) {
    use std::os::unix::process::ExitStatusExt;
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the weft binary runs");
    let pid = child.id() as libc::pid_t;
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut child.stdout.expect("piped"), &mut stdout)
        .expect("read stdout");
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is valid, and `wait4` writes both out
    // parameters for the child spawned above, which nothing else waits for.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4: {}", std::io::Error::last_os_error());
    let code = std::process::ExitStatus::from_raw(status)
        .code()
        .expect("weft exits normally");
    (code, stdout, usage.ru_maxrss / 1024)
}

#[test]
fn the_race_check_keeps_no_memory_per_thread_a_program_created() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let module = build_c_with(dir.path(), "many", MANY_SHORT_LIVED, &["-O2"]);
    let (code, stdout, peak) = weft_with_peak_memory(
        dir.path(),
        &["run", arg(&module), "--races", "fail", "--json"],
    );
    assert_eq!(code, 0, "{stdout}");
    // Each thread's clock slot goes to the next one created after its
    // join: the check's clocks have three entries, not 20,001 (900 MB).
    assert!(peak <= 300, "peak memory {peak} MiB");
    // The race of the last two threads is found and named.
    let out = weft_in(
        dir.path(),
        &[
            "run",
            arg(&module),
            "--races",
            "fail",
            "--json",
            "--",
            "race",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    let message = out.json()["failure"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(message.contains("`unlocked`"), "{message}");
    assert!(
        message.contains("thread 20001") && message.contains("thread 20002"),
        "{message}"
    );
}

/// Threads that allocate: two reuse each other's freed blocks, one writes a
/// global before an allocator call and one reads it after one (a race in
/// the executions where the reader's call comes first).
const ALLOCATING_THREADS: &str = r#"
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int flag;

static void *reuse(void *arg) {
    (void)arg;
    for (int i = 0; i < 3; i++) {
        char *volatile block = malloc(48);
        assert(block != NULL);
        memset(block, i, 48);
        free(block);
    }
    return NULL;
}

static void *publish(void *arg) {
    (void)arg;
    flag = 1;
    char *volatile block = malloc(16);
    free(block);
    return NULL;
}

static void *observe(void *arg) {
    (void)arg;
    char *volatile block = malloc(16);
    free(block);
    return (void *)(long)flag;
}

int main(void) {
    void *(*routines[4])(void *) = {reuse, reuse, publish, observe};
    pthread_t threads[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&threads[i], NULL, routines[i], NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(threads[i], NULL);
    return 0;
}
"#;

/// An allocator call logged as one access of the allocator's lock orders
/// the same accesses as the lock's own atomics did: on programs whose
/// threads allocate (C, C++ and Rust, racy and race-free, one whose
/// threads reuse each other's blocks), every exploration finds the same
/// failing executions and the same first race either way. (Not always the
/// same traces: a time slice ends where the fuel the log spends says.)
#[test]
fn allocator_calls_logged_as_one_lock_order_what_the_locks_atomics_did() {
    // (Not `thread-pool-c`: its tasks compute past many time slices, so
    // its schedules move with the fuel of the entries the option leaves
    // out.)
    let samples = [
        "work-queue-c",
        "lazy-init-race-c",
        "account-cpp",
        "racy-cell",
        "mutex-counter",
        "increments",
    ];
    same_verdicts_either_way(
        ("allocating", ALLOCATING_THREADS),
        &samples,
        |instrument, on| {
            instrument.allocator_as_one_lock = on;
        },
    );
}

/// Threads handed data at their creation, through their result at their
/// join and through a global written before a join; threads created one
/// after the other once others were joined; a detached thread; a thread
/// that leaves through `pthread_exit`; and a race between a creator and
/// the thread it created.
const THREADS_COME_AND_GO: &str = r#"
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

static int before_create[4];
static int after_join;
static int racy;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int detached_done;

static void *square(void *arg) {
    int *slot = arg;
    *slot = *slot * *slot;
    after_join += 1;
    return slot;
}

static void *leave(void *arg) {
    long *out = arg;
    *out = 7;
    pthread_exit(out);
}

static void *detached(void *arg) {
    (void)arg;
    pthread_mutex_lock(&lock);
    detached_done = 1;
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void *reader(void *arg) {
    (void)arg;
    return (void *)(long)racy;
}

int main(void) {
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_create(&t, &attr, detached, NULL);
    pthread_attr_destroy(&attr);
    for (int i = 0; i < 4; i++) {
        before_create[i] = i + 1;
        pthread_create(&t, NULL, square, &before_create[i]);
        void *result;
        pthread_join(t, &result);
        assert(*(int *)result == (i + 1) * (i + 1));
    }
    assert(after_join == 4);
    long left = 0;
    pthread_create(&t, NULL, leave, &left);
    void *result;
    pthread_join(t, &result);
    assert(result == &left && left == 7);
    pthread_create(&t, NULL, reader, NULL);
    racy = 1;
    pthread_join(t, NULL);
    return 0;
}
"#;

/// Leaving the plain accesses of a thread's creation and end unlogged
/// orders what logging them did: on programs that create and join threads
/// (in C at -O0 and -O2, C++ and Rust, racy and race-free, threads that
/// leave through `pthread_exit`, detached ones), every exploration finds
/// the same failing executions and the same first race either way.
#[test]
fn a_threads_creation_and_end_left_unlogged_order_what_their_accesses_did() {
    let samples = [
        "pthread-exit-c",
        "work-queue-c",
        "racy-counter-c",
        "account-cpp",
        "racy-cell",
        "increments",
    ];
    same_verdicts_either_way(
        ("come-and-go", THREADS_COME_AND_GO),
        &samples,
        |instrument, on| {
            instrument.quiet_thread_lifecycle = on;
        },
    );
}

/// Explores the C program `(name, source)`, built at -O0 and at -O2, and
/// each of `samples`, 200 times under random and under PCT with the race
/// check (races fail), with `set` turning an instrumentation option on and
/// off: the same failing executions and the same first failure either way.
fn same_verdicts_either_way(
    (name, source): (&str, &str),
    samples: &[&str],
    set: impl Fn(&mut weft::instrument::InstrumentOptions, bool),
) {
    use weft::execution::Setup;
    use weft::explore::{ExploreOptions, explore};
    use weft::instrument::PointModel;
    use weft::race::RaceMode;
    use weft::runtime::RunConfig;
    use weft::sched::Strategy;

    let dir = tempfile::tempdir().unwrap();
    let mut modules = vec![
        build_c(dir.path(), name, source),
        build_c_with(dir.path(), &format!("{name}-o2"), source, &["-O2"]),
    ];
    modules.extend(samples.iter().map(|name| sample(name)));
    for module in &modules {
        let wasm = std::fs::read(module).unwrap();
        for strategy in [Strategy::Random, Strategy::Pct] {
            let [on, off] = [true, false].map(|on| {
                let mut instrument = PointModel::LibraryCalls
                    .instrument(false)
                    .with_race_check(true);
                set(&mut instrument, on);
                let mut program = weft::execution::load(&wasm, instrument).unwrap();
                let options = ExploreOptions {
                    strategy,
                    iterations: Some(200),
                    keep_going: true,
                    jobs: 1,
                    setup: Setup {
                        run: RunConfig {
                            args: vec!["module.wasm".into(), "2".into(), "3".into()],
                            ..RunConfig::default()
                        },
                        races: RaceMode::Fail,
                        ..Setup::default()
                    },
                    ..ExploreOptions::default()
                };
                let found = explore(&mut program, &options, |_| {}).unwrap();
                let first = found
                    .failure
                    .map(|f| (f.index, f.failure.kind, f.failure.message));
                (found.failing_executions, first)
            });
            let name = module.display();
            assert_eq!(on, off, "{name} under {strategy:?}");
        }
    }
}
