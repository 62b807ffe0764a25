//! Every sample shows its manifest's expected outcome under both strategies,
//! and again without its DWARF (as a release build has it); every failure
//! found replays to the same trace in fresh processes.

use crate::support::{Output, arg, manifest, sample, sample_names, weft_in, without_dwarf};
use serde_json::Value;
use std::path::Path;

/// `weft explore MODULE --strategy STRATEGY --iterations 1000 --json EXTRA`
/// in `dir`.
fn explore(dir: &Path, module: &Path, strategy: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "explore",
        arg(module),
        "--strategy",
        strategy,
        "--iterations",
        "1000",
        "--json",
    ];
    args.extend_from_slice(extra);
    weft_in(dir, &args)
}

fn check_sample(name: &str) {
    let expect = manifest(name);
    let module = sample(name);
    let dir = tempfile::tempdir().unwrap();
    let strategies: Vec<String> = match expect["strategies"].as_array() {
        Some(list) => list
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect(),
        None => vec!["random".into(), "pct".into()],
    };
    for strategy in strategies.iter().map(String::as_str) {
        let replay = dir.path().join(format!("{name}-{strategy}.weft.json"));
        let out = explore(
            dir.path(),
            &module,
            strategy,
            &["--save-failure", arg(&replay)],
        );
        let json = out.json();
        if expect["expect"] == "pass" {
            assert_eq!(out.code, 0, "{name} under {strategy}: {}", out.stdout);
            assert_eq!(json["status"], "pass");
            let discarded = json["discarded"].as_u64().unwrap();
            assert_eq!(json["executions"].as_u64().unwrap() - discarded, 1000);
            continue;
        }
        assert_eq!(
            out.code, 1,
            "{name} under {strategy} found no failure: {}",
            out.stdout
        );
        assert_eq!(json["status"], "failure");
        assert_eq!(
            json["failure"]["kind"], expect["kind"],
            "{name} under {strategy}"
        );
        assert_eq!(json["replay_file"], arg(&replay));
        let expected_hash = json["trace_hash"].as_str().unwrap().to_string();
        for _ in 0..10 {
            let again = weft_in(dir.path(), &["replay", arg(&replay), "--json"]);
            assert_eq!(
                again.code, 1,
                "replay of {name} ({strategy}): {}",
                again.stderr
            );
            let again = again.json();
            assert_eq!(again["trace_hash"], expected_hash.as_str());
            assert_eq!(again["failure"]["kind"], expect["kind"]);
        }
    }
    check_without_dwarf(name, &expect, &strategies[0]);
}

/// The verdict of the sample's module without DWARF is the manifest's: the
/// runtime's bookkeeping is told apart by function names, so a release
/// build gets no false race inside the allocator or the thread library.
fn check_without_dwarf(name: &str, expect: &Value, strategy: &str) {
    let dir = tempfile::tempdir().unwrap();
    let module = without_dwarf(&sample(name), dir.path());
    let out = explore(dir.path(), &module, strategy, &[]);
    let json = out.json();
    if expect["expect"] == "pass" {
        assert_eq!(
            json["status"], "pass",
            "{name} without DWARF: {}",
            out.stdout
        );
    } else {
        assert_eq!(
            json["failure"]["kind"], expect["kind"],
            "{name} without DWARF: {}",
            out.stdout
        );
    }
}

#[test]
fn manifests_cover_the_required_samples() {
    let names = sample_names();
    for required in [
        "lost-update",
        "abba-deadlock",
        "lazy-init-race",
        "lost-wakeup",
        "bounded-buffer",
    ] {
        assert!(
            names.iter().any(|n| n == required),
            "sample {required} is missing"
        );
    }
    let correct = names
        .iter()
        .filter(|n| manifest(n)["expect"] == "pass")
        .count();
    assert!(correct >= 2, "at least two correct samples");
}

macro_rules! sample_tests {
    ($($test:ident => $name:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                check_sample($name);
            }
        )*
    };
}

sample_tests! {
    lost_update => "lost-update",
    abba_deadlock => "abba-deadlock",
    lazy_init_race => "lazy-init-race",
    lost_wakeup => "lost-wakeup",
    bounded_buffer => "bounded-buffer",
    mutex_counter => "mutex-counter",
    channel_pipeline => "channel-pipeline",
    checksum => "checksum",
    alloc_forever => "alloc-forever",
    spin_forever => "spin-forever",
    lost_update_c => "lost-update-c",
    abba_deadlock_c => "abba-deadlock-c",
    lazy_init_race_c => "lazy-init-race-c",
    lost_wakeup_c => "lost-wakeup-c",
    bounded_buffer_c => "bounded-buffer-c",
    mutex_counter_c => "mutex-counter-c",
    lost_update_wat => "lost-update-wat",
    abba_deadlock_wat => "abba-deadlock-wat",
    lost_update_zig => "lost-update-zig",
    abba_deadlock_zig => "abba-deadlock-zig",
    verifier_account_c => "verifier-account-c",
    verifier_account_atomic_c => "verifier-account-atomic-c",
    imunit_queue => "imunit-queue",
    imunit_tck => "imunit-tck",
    increments => "increments",
    imunit_errors => "imunit-errors",
    account => "account",
    account_c => "account-c",
    account_wat => "account-wat",
    append_atomicity => "append-atomicity",
    jigsaw_rlen => "jigsaw-rlen",
    bank_transfer => "bank-transfer",
    list_size => "list-size",
    gatling => "gatling",
    graph_components => "graph-components",
    pipelined_client => "pipelined-client",
    load_report => "load-report",
    sleeping_barber => "sleeping-barber",
    messenger => "messenger",
    registry => "registry",
    bank_actors => "bank-actors",
    gatling_c => "gatling-c",
    stringbuffer => "stringbuffer",
    stream_classes_c => "stream-classes-c",
    map_views_c => "map-views-c",
    sync_vector_c => "sync-vector-c",
    logger_handlers_c => "logger-handlers-c",
    thread_pool_c => "thread-pool-c",
    work_queue_c => "work-queue-c",
    logger_c => "logger-c",
    classes => "classes",
    range_c => "range-c",
    spin_lock_c => "spin-lock-c",
    busy_wait_c => "busy-wait-c",
    two_stage_c => "two-stage-c",
    publish_c => "publish-c",
    token_ring_c => "token-ring-c",
    circular_buffer_c => "circular-buffer-c",
    reorder_c => "reorder-c",
    wrong_lock_c => "wrong-lock-c",
    carter_c => "carter-c",
    stateful_c => "stateful-c",
    racy_counter_c => "racy-counter-c",
    two_mutexes_c => "two-mutexes-c",
    unlocked_path_c => "unlocked-path-c",
    aliased_stats_c => "aliased-stats-c",
    plain_reorder_c => "plain-reorder-c",
    racy_wat => "racy-wat",
    racy_static => "racy-static",
    racy_cell => "racy-cell",
    pthread_sync_c => "pthread-sync-c",
    pthread_exit_c => "pthread-exit-c",
    split_update_cpp => "split-update-cpp",
    abba_deadlock_cpp => "abba-deadlock-cpp",
    racy_flag_cpp => "racy-flag-cpp",
    lost_wakeup_cpp => "lost-wakeup-cpp",
    account_cpp => "account-cpp",
    handshake_spin_cpp => "handshake-spin-cpp",
    sync_primitives => "sync-primitives",
}

#[test]
fn every_sample_has_a_test() {
    let tested = [
        "lost-update",
        "abba-deadlock",
        "lazy-init-race",
        "lost-wakeup",
        "bounded-buffer",
        "mutex-counter",
        "channel-pipeline",
        "checksum",
        "alloc-forever",
        "spin-forever",
        "lost-update-c",
        "abba-deadlock-c",
        "lazy-init-race-c",
        "lost-wakeup-c",
        "bounded-buffer-c",
        "mutex-counter-c",
        "lost-update-wat",
        "abba-deadlock-wat",
        "lost-update-zig",
        "abba-deadlock-zig",
        "verifier-account-c",
        "verifier-account-atomic-c",
        "imunit-queue",
        "imunit-tck",
        "increments",
        "imunit-errors",
        "account",
        "account-c",
        "account-wat",
        "append-atomicity",
        "jigsaw-rlen",
        "bank-transfer",
        "list-size",
        "gatling",
        "graph-components",
        "pipelined-client",
        "load-report",
        "sleeping-barber",
        "messenger",
        "registry",
        "bank-actors",
        "gatling-c",
        "stringbuffer",
        "stream-classes-c",
        "map-views-c",
        "sync-vector-c",
        "logger-handlers-c",
        "thread-pool-c",
        "work-queue-c",
        "logger-c",
        "classes",
        "range-c",
        "spin-lock-c",
        "busy-wait-c",
        "two-stage-c",
        "publish-c",
        "token-ring-c",
        "circular-buffer-c",
        "reorder-c",
        "wrong-lock-c",
        "carter-c",
        "stateful-c",
        "racy-counter-c",
        "two-mutexes-c",
        "unlocked-path-c",
        "aliased-stats-c",
        "plain-reorder-c",
        "racy-wat",
        "racy-static",
        "racy-cell",
        "pthread-sync-c",
        "pthread-exit-c",
        "split-update-cpp",
        "abba-deadlock-cpp",
        "racy-flag-cpp",
        "lost-wakeup-cpp",
        "account-cpp",
        "handshake-spin-cpp",
        "sync-primitives",
    ];
    for name in sample_names() {
        assert!(
            tested.contains(&name.as_str()),
            "sample {name} has no test in samples.rs"
        );
    }
}
