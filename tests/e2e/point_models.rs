//! The point models of `--point-model` under the sampling strategies: with
//! `library-calls`, each call of the library model is one step, a bug that
//! needs a switch between two library calls of one thread is still found
//! and replayed, and the replay file names its model.

use crate::support::{arg, build_c_with, read_json, weft_in};
use std::path::Path;

/// Two threads each read a counter under the lock and write it back under
/// the lock taken again: the update is lost when the other thread's whole
/// update falls between one thread's two critical sections. Each thread
/// prints and allocates as it goes.
const SPLIT_UPDATE: &str = r#"#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int counter;
static void *add_one(void *name) {
    int *seen = malloc(sizeof *seen);
    pthread_mutex_lock(&m); *seen = counter; pthread_mutex_unlock(&m);
    printf("%s saw %d\n", (const char *)name, *seen);
    pthread_mutex_lock(&m); counter = *seen + 1; pthread_mutex_unlock(&m);
    free(seen);
    return 0;
}
int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, add_one, "a");
    pthread_create(&b, 0, add_one, "b");
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(counter == 2);
    return 0;
}
"#;

/// `weft explore MODULE --point-model MODEL --strategy STRATEGY` with a
/// replay file, as JSON.
fn explore(dir: &Path, module: &Path, model: &str, strategy: &str) -> serde_json::Value {
    let replay = dir.join(format!("{model}-{strategy}.weft.json"));
    let out = weft_in(
        dir,
        &[
            "explore",
            arg(module),
            "--point-model",
            model,
            "--strategy",
            strategy,
            "--iterations",
            "1000",
            "--json",
            "--save-failure",
            arg(&replay),
        ],
    );
    assert!(out.code <= 1, "{} {}", out.stdout, out.stderr);
    out.json()
}

#[test]
fn a_switch_between_two_library_calls_of_one_thread_is_found_under_library_calls() {
    let dir = tempfile::tempdir().unwrap();
    for optimisation in ["-O0", "-O2"] {
        let module = build_c_with(dir.path(), "split", SPLIT_UPDATE, &[optimisation]);
        for strategy in ["random", "pct", "pos", "surw", "portfolio"] {
            let json = explore(dir.path(), &module, "library-calls", strategy);
            let said = format!("{optimisation} {strategy}: {json}");
            assert_eq!(json["failure"]["kind"], "assertion", "{said}");
            let replay = json["replay_file"].as_str().unwrap();
            let file = read_json(&dir.path().join(replay));
            assert_eq!(file["point_model"], "library-calls", "{said}");
            assert_eq!(file["instrument"]["quiet_bookkeeping"], true, "{said}");
            assert_eq!(file["instrument"]["quick_library_entry"], true, "{said}");
            assert_eq!(file["instrument"]["rust_runtime_steps"], true, "{said}");
            let again = weft_in(dir.path(), &["replay", replay, "--json"]);
            assert_eq!(again.code, 1, "{said}: {}", again.stderr);
            assert_eq!(again.json()["trace_hash"], json["trace_hash"], "{said}");
        }
    }
}

/// Three threads that each allocate, print and lock, and a `main` whose
/// last assertion always fails: every execution shows its interleaving.
const THREE_STARTS: &str = r#"#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int started;
static void *work(void *name) {
    char *copy = malloc(8);
    snprintf(copy, 8, "%s", (const char *)name);
    pthread_mutex_lock(&m); started++; pthread_mutex_unlock(&m);
    printf("%s\n", copy);
    free(copy);
    return 0;
}
int main(void) {
    pthread_t t[3];
    const char *names[3] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) pthread_create(&t[i], 0, work, (void *)names[i]);
    for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
    assert(started == 0);
    return 0;
}
"#;

#[test]
fn sampling_strategies_never_switch_away_from_a_thread_at_its_start() {
    // The step that stops at a thread's start (the library's thread start,
    // entered before anything of the thread ran) is no step of its own:
    // random and SURW keep the thread running there, so the decisions
    // they draw are over the program's calls.
    let dir = tempfile::tempdir().unwrap();
    let module = build_c_with(dir.path(), "starts", THREE_STARTS, &["-O2"]);
    for strategy in ["random", "surw"] {
        let mut starts = 0;
        for seed in 0..12 {
            let seed = seed.to_string();
            let out = weft_in(
                dir.path(),
                &[
                    "explore",
                    arg(&module),
                    "--strategy",
                    strategy,
                    "--seed",
                    &seed,
                    "--iterations",
                    "1",
                    "--jobs",
                    "1",
                    "--full-trace",
                    "--no-minimize",
                    "--no-save",
                    "--json",
                ],
            );
            assert_eq!(out.code, 1, "{strategy} {seed}: {}", out.stderr);
            let json = out.json();
            let steps = json["interleaving"].as_array().unwrap();
            for (at, step) in steps.iter().enumerate() {
                if step["event"] != "calls wasi_thread_start" {
                    continue;
                }
                starts += 1;
                let next = &steps[at + 1];
                assert_eq!(
                    next["thread"], step["thread"],
                    "{strategy}, seed {seed}: another thread ran at a thread's start: {step} then {next}"
                );
            }
        }
        assert_eq!(
            starts, 36,
            "{strategy}: every thread starts once per execution"
        );
    }
}

#[test]
fn library_calls_take_fewer_decisions_and_steps_than_the_library_internals() {
    let dir = tempfile::tempdir().unwrap();
    let module = build_c_with(dir.path(), "split", SPLIT_UPDATE, &["-O2"]);
    let run = |model: &str| {
        let out = weft_in(
            dir.path(),
            &[
                "run",
                arg(&module),
                "--point-model",
                model,
                "--strategy",
                "pct",
                "--json",
                "--no-save",
            ],
        );
        assert!(out.code <= 1, "{}", out.stderr);
        let json = out.json();
        (
            json["decisions"].as_u64().unwrap(),
            json["steps"].as_u64().unwrap(),
        )
    };
    let (calls, internals) = (run("library-calls"), run("sync-internals"));
    assert!(
        calls.0 * 2 < internals.0,
        "{} decisions with library calls, {} with the library's internals",
        calls.0,
        internals.0
    );
    // A call is one step: what the lock, the allocator and printf pass
    // inside is not counted as steps of the execution.
    assert!(
        calls.1 * 2 < internals.1,
        "{} steps with library calls, {} with the library's internals",
        calls.1,
        internals.1
    );
}

#[test]
fn the_exhaustive_search_steps_over_library_calls_unless_told_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let module = build_c_with(dir.path(), "split", SPLIT_UPDATE, &["-O2"]);
    for (model, steps) in [(None, true), (Some("sync-internals"), false)] {
        let replay = dir.path().join("dpor.weft.json");
        let mut args = vec![
            "explore",
            arg(&module),
            "--strategy",
            "dpor",
            "--json",
            "--save-failure",
            arg(&replay),
        ];
        args.extend(model.iter().flat_map(|model| ["--point-model", *model]));
        let out = weft_in(dir.path(), &args);
        assert_eq!(out.code, 1, "{model:?}: {}", out.stdout);
        let file = read_json(&replay);
        let expected = if steps {
            "library-calls"
        } else {
            "sync-internals"
        };
        assert_eq!(file["point_model"], expected);
        assert!(file["instrument"].get("quiet_bookkeeping").is_none());
        std::fs::remove_file(&replay).unwrap();
    }
}
