//! Every exploration strategy on correct programs (no false failure, in
//! particular no livelock reported for a spin lock) and on a bug only some
//! of them find, and the strategy option's errors.

use crate::support::{arg, manifest, sample, sample_names, weft_in};

const STRATEGIES: [&str; 5] = ["random", "pct", "pos", "surw", "portfolio"];

fn explore(module: &str, strategy: &str, iterations: &str) -> crate::support::Output {
    let dir = tempfile::tempdir().unwrap();
    weft_in(
        dir.path(),
        &[
            "explore",
            arg(&sample(module)),
            "--strategy",
            strategy,
            "--iterations",
            iterations,
            "--json",
            "--no-save",
        ],
    )
}

/// Correct samples that finish quickly, spin locks and busy waiting
/// included.
fn correct_samples() -> Vec<String> {
    sample_names()
        .into_iter()
        .filter(|name| manifest(name)["expect"] == "pass")
        .filter(|name| !["classes", "imunit-tck", "checksum"].contains(&name.as_str()))
        .collect()
}

#[test]
fn no_strategy_reports_a_failure_on_a_correct_program() {
    let samples = correct_samples();
    assert!(samples.iter().any(|s| s == "spin-lock-c"));
    assert!(samples.iter().any(|s| s == "busy-wait-c"));
    for name in &samples {
        for strategy in STRATEGIES {
            let out = explore(name, strategy, "200");
            assert_eq!(out.code, 0, "{name} under {strategy}: {}", out.stdout);
        }
    }
}

#[test]
fn the_default_portfolio_finds_the_two_stage_bug_and_names_the_strategy() {
    let out = explore("two-stage-c", "portfolio", "2000");
    assert_eq!(out.code, 1, "{}", out.stdout);
    let json = out.json();
    assert_eq!(json["failure"]["kind"], "assertion");
    // Uniform random walk misses it.
    let out = explore("two-stage-c", "random", "300");
    assert_eq!(out.code, 0, "{}", out.stdout);
}

#[test]
fn an_unknown_strategy_is_a_usage_error() {
    let out = explore("lost-update", "dfs-forever", "10");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("dfs-forever"), "{}", out.stderr);
}

#[test]
fn dfs_finds_a_one_preemption_bug_and_says_when_its_bound_is_exhausted() {
    let out = explore("lost-update-c", "dfs", "5000");
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(out.json()["failure"]["kind"], "assertion");
    let dir = tempfile::tempdir().unwrap();
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&sample("spin-lock-c")),
            "--strategy",
            "dfs",
            "--preemption-bound",
            "0",
            "--no-save",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("schedules with at most 0 preemptions: no failure"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_preemption_bound_without_dfs_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&sample("lost-update")),
            "--preemption-bound",
            "2",
        ],
    );
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("--strategy dfs"), "{}", out.stderr);
}

#[test]
fn stateful_without_dpor_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    for strategy in ["random", "dfs"] {
        let out = weft_in(
            dir.path(),
            &[
                "explore",
                arg(&sample("lost-update")),
                "--strategy",
                strategy,
                "--stateful",
            ],
        );
        assert_eq!(out.code, 2, "{strategy}");
        assert!(out.stderr.contains("--strategy dpor"), "{}", out.stderr);
    }
}

#[test]
fn dpor_finds_a_bug_and_claims_only_what_it_explored() {
    let out = explore("lost-update-c", "dpor", "5000");
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(out.json()["failure"]["kind"], "assertion");
    // A correct hand-off with a spinning reader: every schedule runs, and
    // the report says so.
    let dir = tempfile::tempdir().unwrap();
    let out = weft_in(
        dir.path(),
        &["explore", arg(&sample("publish-c")), "--strategy", "dpor"],
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stdout.contains("explored all") && out.stdout.contains("schedules: no failure"),
        "{}",
        out.stdout
    );
    let json = explore("publish-c", "dpor", "100000").json();
    assert_eq!(json["exhaustive"], true);
    // Cut short by --iterations (it takes 2): no claim.
    let json = explore("publish-c", "dpor", "1").json();
    assert_eq!(json["exhaustive"], false);
    // A guest value from every 64-bit value is not enumerated: no claim.
    let choose = crate::support::wat_file(
        dir.path(),
        "choose",
        r#"(module (import "weft" "choose" (func $choose (param i64) (result i64)))
             (func (export "_start") (drop (call $choose (i64.const 0)))))"#,
    );
    let out = weft_in(
        dir.path(),
        &["explore", arg(&choose), "--strategy", "dpor", "--json"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let json = out.json();
    assert_eq!(json["exhaustive"], false);
    // It says that the search ended and why it claims nothing.
    assert_eq!(json["search_ended_without_claim"], true);
    let text = weft_in(dir.path(), &["explore", arg(&choose), "--strategy", "dpor"]);
    assert!(
        text.stdout.contains("no claim") && text.stdout.contains("every 64-bit value"),
        "{}",
        text.stdout
    );
    let plain =
        crate::support::wat_file(dir.path(), "plain", r#"(module (func (export "_start")))"#);
    let out = weft_in(
        dir.path(),
        &["explore", arg(&plain), "--strategy", "dpor", "--json"],
    );
    assert_eq!(out.json()["exhaustive"], true, "{}", out.stdout);
}

#[test]
fn workers_and_shards_report_the_failure_a_single_run_reports() {
    let run = |extra: &[&str]| {
        let dir = tempfile::tempdir().unwrap();
        let module = sample("two-stage-c");
        let mut args = vec![
            "explore",
            arg(&module),
            "--iterations",
            "2000",
            "--json",
            "--no-save",
        ];
        args.extend_from_slice(extra);
        let out = weft_in(dir.path(), &args);
        (out.code, out.stdout)
    };
    let json = |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap();
    let (code, one) = run(&["--jobs", "1"]);
    assert_eq!(code, 1, "{one}");
    let one = json(&one);
    let (_, two) = run(&["--jobs", "2"]);
    let two = json(&two);
    for key in [
        "failing_execution_index",
        "trace_hash",
        "executions",
        "failing_execution_seed",
    ] {
        assert_eq!(one[key], two[key], "{key}");
    }
    // Three shards, merged, find the same failure.
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for k in 0..3 {
        let shard = format!("{k}/3");
        let (_, out) = run(&["--shard", &shard]);
        let file = dir.path().join(format!("shard{k}.json"));
        std::fs::write(&file, out).unwrap();
        files.push(file);
    }
    let mut args = vec!["merge", "--json"];
    args.extend(files.iter().map(|f| arg(f)));
    let out = weft_in(dir.path(), &args);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let merged = out.json();
    assert_eq!(
        merged["failing_execution_index"],
        one["failing_execution_index"]
    );
    assert_eq!(merged["trace_hash"], one["trace_hash"]);
    assert_eq!(merged["shards_missing"], 0);
    // The same shard twice is no exploration.
    let out = weft_in(dir.path(), &["merge", arg(&files[0]), arg(&files[0])]);
    assert_eq!(out.code, 2);
    // Nor are shards run with other options, or of another program under
    // the same file name.
    let (_, other_races) = run(&["--shard", "1/3", "--races", "off"]);
    let other = dir.path().join("elsewhere");
    std::fs::create_dir(&other).unwrap();
    let impostor = other.join("two-stage-c.wasm");
    std::fs::copy(sample("lost-update-c"), &impostor).unwrap();
    let other_module = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&impostor),
            "--iterations",
            "10",
            "--shard",
            "2/3",
            "--json",
            "--no-save",
        ],
    );
    for (result, expected) in [
        (other_races, "differ"),
        (other_module.stdout, "different modules"),
    ] {
        let file = dir.path().join("other.json");
        std::fs::write(&file, result).unwrap();
        let out = weft_in(dir.path(), &["merge", arg(&files[0]), arg(&file)]);
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(out.stderr.contains(expected), "{}", out.stderr);
    }
}

#[test]
fn merged_shards_pass_only_when_every_shard_ran_and_passed() {
    let dir = tempfile::tempdir().unwrap();
    // checksum computes longer than this compute budget: every execution
    // is cut short, and each shard is inconclusive.
    let shard = |k: u32, extra: &[&str]| {
        let mut args = vec![
            "explore".to_string(),
            sample("checksum").display().to_string(),
            "--iterations".into(),
            "2".into(),
            "--shard".into(),
            format!("{k}/2"),
            "--json".into(),
            "--no-save".into(),
        ];
        args.extend(extra.iter().map(|a| a.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = weft_in(dir.path(), &args);
        let file = dir.path().join(format!("shard{k}-{}.json", extra.len()));
        std::fs::write(&file, &out.stdout).unwrap();
        (out.code, file)
    };
    let (code, cut0) = shard(0, &["--max-fuel", "200000"]);
    assert_eq!(code, 3);
    let (_, cut1) = shard(1, &["--max-fuel", "200000"]);
    let out = weft_in(dir.path(), &["merge", arg(&cut0), arg(&cut1)]);
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("INCONCLUSIVE: shard 0/2 reached no verdict"),
        "{}",
        out.stdout
    );
    // Passing shards merge to a pass; with one missing, to no verdict.
    let (code, pass0) = shard(0, &[]);
    assert_eq!(code, 0);
    let (_, pass1) = shard(1, &[]);
    let out = weft_in(dir.path(), &["merge", arg(&pass0), arg(&pass1)]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let out = weft_in(dir.path(), &["merge", "--json", arg(&pass0)]);
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert_eq!(out.json()["status"], "inconclusive");
    // A count edited by hand is refused.
    let text = std::fs::read_to_string(&pass1).unwrap();
    let edited = text.replace("\"executions\": 2", "\"executions\": 1000000000000");
    assert_ne!(text, edited);
    std::fs::write(&pass1, edited).unwrap();
    let out = weft_in(dir.path(), &["merge", arg(&pass0), arg(&pass1)]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stderr.contains("was changed"), "{}", out.stderr);
}

#[test]
fn shard_and_jobs_mistakes_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let module = sample("lost-update-c");
    for args in [
        vec!["--shard", "3/2"],
        vec!["--shard", "1/0"],
        vec!["--jobs", "0"],
        vec!["--jobs", "33"],
        vec!["--jobs", "18446744073709551615"],
        vec!["--jobs", "1000000000000"],
        vec!["--shard", "5/18446744073709551615"],
        vec!["--shard", "0/1000001"],
        vec!["--strategy", "dpor", "--jobs", "2"],
        vec!["--strategy", "dfs", "--shard", "0/2"],
    ] {
        let mut all = vec!["explore", arg(&module)];
        all.extend(args.iter().copied());
        let out = weft_in(dir.path(), &all);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    }
}

/// Runs `wat` under `dpor` (races as failures) and returns its JSON result.
fn dpor_json(dir: &std::path::Path, name: &str, wat: &str, extra: &[&str]) -> serde_json::Value {
    let module = crate::support::wat_file(dir, name, wat);
    let mut args = vec![
        "explore",
        arg(&module),
        "--strategy",
        "dpor",
        "--json",
        "--no-save",
    ];
    args.extend_from_slice(extra);
    weft_in(dir, &args).json()
}

#[test]
fn dpor_proves_nothing_it_cut_short() {
    let dir = tempfile::tempdir().unwrap();
    // A thread that has not run when `_start` returns still runs first in
    // another schedule.
    let json = dpor_json(
        dir.path(),
        "unjoined",
        r#"(module
             (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
             (memory (export "memory") 1 1 shared)
             (func (export "wasi_thread_start") (param i32 i32) unreachable)
             (func (export "_start") (drop (call $spawn (i32.const 0)))))"#,
        &[],
    );
    assert!(
        json["failure"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("unreachable")),
        "{json}"
    );
    // Guest values of small ranges are enumerated: the one value of three
    // that fails is found, and a program whose every value passes is
    // proven.
    let values = |failing: u32| {
        format!(
            r#"(module
                 (import "weft" "choose" (func $choose (param i64) (result i64)))
                 (import "weft" "assert" (func $assert (param i32 i32 i32)))
                 (memory 1)
                 (func (export "_start")
                   (call $assert
                     (i32.ne (i32.wrap_i64 (call $choose (i64.const 3))) (i32.const {failing}))
                     (i32.const 0) (i32.const 0))))"#
        )
    };
    let json = dpor_json(dir.path(), "value2", &values(2), &[]);
    assert_eq!(json["failure"]["kind"], "assertion", "{json}");
    let json = dpor_json(dir.path(), "value3", &values(3), &[]);
    assert_eq!(json["exhaustive"], true, "{json}");
    assert_eq!(json["executions"], 3, "{json}");
    // An allocation the memory limit refused: no claim, and why.
    let json = dpor_json(
        dir.path(),
        "grow",
        r#"(module (memory 1)
             (func (export "_start") (drop (memory.grow (i32.const 20000)))))"#,
        &[],
    );
    assert_eq!(json["exhaustive"], false, "{json}");
    let why = json["claim_withheld_because"].as_str().unwrap_or_default();
    assert!(why.contains("memory limit"), "{json}");
    // Races not checked and plain accesses no points: no claim.
    let json = dpor_json(
        dir.path(),
        "unchecked",
        r#"(module (func (export "_start")))"#,
        &["--races", "off"],
    );
    assert_eq!(json["exhaustive"], false, "{json}");
}

#[test]
fn dpor_enumerates_char_sized_nondet_values_of_c_programs() {
    let dir = tempfile::tempdir().unwrap();
    let verify = |name: &str, condition: &str| {
        let c = dir.path().join(format!("{name}.c"));
        std::fs::write(
            &c,
            format!(
                "extern unsigned char __VERIFIER_nondet_uchar(void);\n\
                 extern void reach_error(void);\n\
                 int main(void) {{ unsigned char c = __VERIFIER_nondet_uchar(); \
                 if ({condition}) reach_error(); return 0; }}\n"
            ),
        )
        .unwrap();
        let module = dir.path().join(format!("{name}.wasm"));
        let out = weft_in(dir.path(), &["build", arg(&c), "-o", arg(&module)]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let args = [
            "explore",
            arg(&module),
            "--strategy",
            "dpor",
            "--property",
            "unreach-call",
            "--races",
            "fail",
            "--json",
            "--no-save",
        ];
        weft_in(dir.path(), &args).json()
    };
    // One value of 256 reaches the error: the search finds it.
    let json = verify("one_value", "c == 200");
    assert_eq!(json["verdict"], "false", "{json}");
    // None does: every value was tried, and the search says so.
    let json = verify("no_value", "c > 255");
    assert_eq!(json["verdict"], "true", "{json}");
    assert_eq!(json["exhaustive"], true, "{json}");
}

/// Three workers meet at a barrier, then each takes a mutex to count
/// itself, a write lock to append to a log and a read lock to look at it.
const LOCKED_SECTIONS: &str = r#"#include <assert.h>
#include <pthread.h>

static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t log_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t start;
static int counter, log_entries[3], log_length;

static void *worker(void *arg) {
    pthread_barrier_wait(&start);
    pthread_mutex_lock(&counter_lock);
    counter++;
    pthread_mutex_unlock(&counter_lock);
    pthread_rwlock_wrlock(&log_lock);
    log_entries[log_length++] = (int)(long)arg;
    pthread_rwlock_unlock(&log_lock);
    pthread_rwlock_rdlock(&log_lock);
    assert(log_length >= 1);
    pthread_rwlock_unlock(&log_lock);
    return 0;
}

int main(void) {
    pthread_t threads[3];
    pthread_barrier_init(&start, 0, 3);
    for (long i = 0; i < 3; i++)
        pthread_create(&threads[i], 0, worker, (void *)i);
    for (int i = 0; i < 3; i++)
        pthread_join(threads[i], 0);
    assert(counter == 3 && log_length == 3);
    return 0;
}
"#;

#[test]
fn the_stateful_search_runs_no_more_executions_than_the_stateless_one() {
    // What a state's future did is reversed against the steps before it
    // as the steps of one execution are: a lock after its thread's own
    // release, or after a step here it depends on, is no race of an
    // earlier step (before, the stateful search ran ten times as many
    // executions as the stateless one here).
    let dir = tempfile::tempdir().unwrap();
    let module = crate::support::build_c(dir.path(), "sections", LOCKED_SECTIONS);
    let mut executions = Vec::new();
    for stateful in [false, true] {
        let mut args = vec!["explore", arg(&module), "--strategy", "dpor", "--json"];
        args.extend(stateful.then_some("--stateful"));
        args.extend(["--iterations", "5000", "--no-save"]);
        let out = weft_in(dir.path(), &args);
        assert_eq!(out.code, 0, "{}", out.stdout);
        let json = out.json();
        assert_eq!(json["exhaustive"], true, "{}", out.stdout);
        executions.push(json["executions"].as_u64().unwrap());
    }
    assert!(
        executions[1] <= executions[0],
        "stateless, then stateful: {executions:?}"
    );
}
