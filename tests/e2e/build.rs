//! `weft build`: C and WAT sources to modules, and clear errors otherwise.

use crate::support::{arg, build_c, root, weft_in};
use std::path::Path;

#[test]
fn builds_wat_and_c_sources_that_then_run() {
    let dir = tempfile::tempdir().unwrap();
    let wat = dir.path().join("tiny.wat");
    std::fs::write(&wat, r#"(module (func (export "_start")))"#).unwrap();
    let out = weft_in(dir.path(), &["build", arg(&wat)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(dir.path().join("tiny.wasm").exists());

    let c = dir.path().join("hello.c");
    std::fs::write(
        &c,
        r#"#include <pthread.h>
#include <stdio.h>
#include "weft.h"
static void *hi(void *arg) { weft_thread_name("helper"); weft_event("hello"); return arg; }
int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, hi, NULL);
    pthread_join(t, NULL);
    puts("hello from C");
    return 0;
}
"#,
    )
    .unwrap();
    let module = dir.path().join("hello.wasm");
    let out = weft_in(dir.path(), &["build", arg(&c), "-o", arg(&module)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = weft_in(
        dir.path(),
        &["explore", arg(&module), "--iterations", "50", "--json"],
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(out.json()["stdout"], "hello from C\n");
}

#[test]
fn build_errors_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let rs = dir.path().join("prog.py");
    std::fs::write(&rs, "print(1)").unwrap();
    let out = weft_in(dir.path(), &["build", arg(&rs)]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains(
            "weft builds `.c` (and preprocessed `.i`), `.cpp`, `.rs`, `.zig` and `.wat` files"
        ),
        "{}",
        out.stderr
    );

    let bad = dir.path().join("bad.c");
    std::fs::write(&bad, "int main(void) { return undefined_name; }\n").unwrap();
    let out = weft_in(dir.path(), &["build", arg(&bad)]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("zig cc failed"), "{}", out.stderr);
    assert!(out.stderr.contains("undefined_name"), "{}", out.stderr);
}

#[test]
fn builds_folders_by_what_they_hold() {
    let dir = tempfile::tempdir().unwrap();
    let package = dir.path().join("racy");
    std::fs::create_dir_all(package.join("src")).unwrap();
    std::fs::write(
        package.join("Cargo.toml"),
        "[package]\nname = \"racy\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(
        package.join("src/main.rs"),
        r#"use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
static N: AtomicU32 = AtomicU32::new(0);
fn main() {
    let t = std::thread::spawn(|| N.store(N.load(SeqCst) + 1, SeqCst));
    N.store(N.load(SeqCst) + 1, SeqCst);
    t.join().unwrap();
    assert_eq!(N.load(SeqCst), 2);
}
"#,
    )
    .unwrap();
    let out = weft_in(dir.path(), &["build", arg(&package)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let module = package.join("racy.wasm");
    let out = weft_in(
        dir.path(),
        &["explore", arg(&module), "--json", "--no-save"],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(out.json()["failure"]["kind"], "assertion");

    let wat_dir = dir.path().join("tiny");
    std::fs::create_dir_all(&wat_dir).unwrap();
    std::fs::write(
        wat_dir.join("main.wat"),
        r#"(module (func (export "_start")))"#,
    )
    .unwrap();
    let out = weft_in(dir.path(), &["build", arg(&wat_dir)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(wat_dir.join("tiny.wasm").exists());
}

#[test]
fn old_c_builds_and_compiler_flags_pass_through() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("old.c");
    // Implicit int, a call before any declaration, a thread function that
    // returns int: what compilers accepted until recently.
    std::fs::write(
        &c,
        r#"#include <pthread.h>
int x;
worker(void *arg) {
    x = helper(N);
    return 0;
}
int helper(int n) { return n + 1; }
main() {
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    pthread_join(t, 0);
    return x != N + 1;
}
"#,
    )
    .unwrap();
    let module = dir.path().join("old.wasm");
    let out = weft_in(
        dir.path(),
        &["build", arg(&c), "-o", arg(&module), "--", "-DN=5"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = weft_in(
        dir.path(),
        &["explore", arg(&module), "--iterations", "20", "--json"],
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    // Without the flag, N is undeclared: a compile error, exit 2.
    let out = weft_in(dir.path(), &["build", arg(&c), "-o", arg(&module)]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("'N'"), "{}", out.stderr);
    // Flags are for C and C++ only.
    let wat = dir.path().join("tiny.wat");
    std::fs::write(&wat, r#"(module (func (export "_start")))"#).unwrap();
    let out = weft_in(dir.path(), &["build", arg(&wat), "--", "-DN=5"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("for C and C++ sources"),
        "{}",
        out.stderr
    );
}

/// A main thread that leaves through `pthread_exit` lets its threads finish
/// (the process ends with the last one), and a bug they have is found and
/// replayed.
#[test]
fn pthread_exit_from_main_lets_the_threads_run_on() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("leaves.c");
    std::fs::write(
        &c,
        r#"#include <assert.h>
#include <pthread.h>
#include <stdio.h>
static int done;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static void *work(void *arg) {
    pthread_mutex_lock(&m);
    done++;
    pthread_mutex_unlock(&m);
    if (arg) pthread_exit(arg);
    return NULL;
}
static void *check(void *arg) {
    pthread_mutex_lock(&m);
    int seen = done;
    pthread_mutex_unlock(&m);
    assert(seen != 1);
    return arg;
}
int main(void) {
    pthread_t t[3];
    pthread_create(&t[0], NULL, work, NULL);
    pthread_create(&t[1], NULL, work, &t);
    pthread_create(&t[2], NULL, check, NULL);
    puts("main leaves");
    pthread_exit(NULL);
}
"#,
    )
    .unwrap();
    let module = dir.path().join("leaves.wasm");
    let out = weft_in(dir.path(), &["build", arg(&c), "-o", arg(&module)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = weft_in(dir.path(), &["explore", arg(&module), "--json"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let report = out.json();
    assert_eq!(report["failure"]["kind"], "assertion", "{}", out.stdout);
    assert!(
        report["failure"]["message"]
            .as_str()
            .unwrap()
            .contains("seen != 1"),
        "{}",
        out.stdout
    );
    let replay = weft_in(dir.path(), &["replay", "leaves.weft.json"]);
    assert_eq!(replay.code, 1, "{}", replay.stdout);
    assert!(replay.stdout.contains("reproduced"), "{}", replay.stdout);
}

/// `weft svcomp` builds a task's program, finds the `reach_error()` call a
/// lost update leads to (`abort` from a failed `assert` elsewhere only cuts
/// the path) and writes the witness, which replays, and its page.
#[test]
fn svcomp_tasks_get_verdicts_and_witnesses() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/svcomp");
    let out = dir.path().join("out");
    let run = weft_in(
        dir.path(),
        &[
            "svcomp",
            arg(&root.join("split-critical.yml")),
            "--time-limit",
            "6s",
            "--out",
            arg(&out),
            "--json",
            "--html",
        ],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let report = run.json();
    let unreach = &report["tasks"][0];
    assert_eq!(unreach["property"], "unreach-call", "{}", run.stdout);
    assert_eq!(unreach["verdict"], "false", "{}", run.stdout);
    assert_eq!(report["wrong"], 0, "{}", run.stdout);
    let witness = unreach["witness"].as_str().unwrap();
    // The witness's page sits beside it.
    let page = std::fs::read_to_string(out.join("split-critical.unreach-call.html")).unwrap();
    assert!(page.contains(r#""kind":"assertion""#), "{page}");
    let replay = weft_in(dir.path(), &["replay", witness]);
    assert_eq!(replay.code, 1, "{}", replay.stdout);
    assert!(
        replay.stdout.contains("reach_error() was reached"),
        "{}",
        replay.stdout
    );
}

/// `weft build` of a C++ file with std threads gives a module whose bug is
/// found and replayed; compiler flags pass through.
#[test]
fn builds_cpp_with_std_threads() {
    let dir = tempfile::tempdir().unwrap();
    let cpp = dir.path().join("counter.cpp");
    std::fs::write(
        &cpp,
        r#"#include <atomic>
#include <cassert>
#include <thread>
#include <vector>
std::atomic<int> hits{0};
int main() {
    std::vector<std::thread> workers;
    for (int i = 0; i < WORKERS; i++)
        workers.emplace_back([] { int seen = hits.load(); hits.store(seen + 1); });
    for (auto &w : workers) w.join();
    assert(hits.load() == WORKERS);
}
"#,
    )
    .unwrap();
    let module = dir.path().join("counter.wasm");
    let out = weft_in(
        dir.path(),
        &["build", arg(&cpp), "-o", arg(&module), "--", "-DWORKERS=3"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = weft_in(dir.path(), &["explore", arg(&module), "--json"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(out.json()["failure"]["kind"], "assertion", "{}", out.stdout);
    let replay = weft_in(dir.path(), &["replay", "counter.weft.json"]);
    assert_eq!(replay.code, 1, "{}", replay.stdout);
}

/// A C file preprocessed for i386 glibc (`.i`, with `regparm` declarations
/// and glibc's pthread types) builds and runs.
#[test]
fn builds_files_preprocessed_for_x86_glibc() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("task.i");
    std::fs::write(
        &source,
        r#"# 1 "task.c"
typedef unsigned long int pthread_t;
typedef union { char __size[36]; long int __align; } pthread_attr_t;
typedef struct __pthread_internal_slist { struct __pthread_internal_slist *__next; } __pthread_slist_t;
typedef union { struct __pthread_mutex_s { int __lock; unsigned int __count; int __owner; int __kind; unsigned int __nusers; __extension__ union { int __spins; __pthread_slist_t __list; }; } __data; char __size[24]; long int __align; } pthread_mutex_t;
extern int pthread_create (pthread_t *__restrict __newthread, const pthread_attr_t *__restrict __attr, void *(*__start_routine) (void *), void *__restrict __arg) __attribute__ ((__nothrow__)) __attribute__ ((__nonnull__ (1, 3)));
extern int pthread_join (pthread_t __th, void **__thread_return);
extern int pthread_mutex_lock (pthread_mutex_t *__mutex) __attribute__ ((__nothrow__));
extern int pthread_mutex_unlock (pthread_mutex_t *__mutex) __attribute__ ((__nothrow__));
typedef struct { int __buf[8]; } __pthread_unwind_buf_t;
extern void __pthread_register_cancel (__pthread_unwind_buf_t *__buf) __attribute__ ((__regparm__ (1)));
extern void __assert_fail (const char *__assertion, const char *__file, unsigned int __line, const char *__function) __attribute__ ((__nothrow__ , __leaf__)) __attribute__ ((__noreturn__));
extern void abort(void);
void reach_error() { __assert_fail ("0", "task.c", 3, __extension__ __PRETTY_FUNCTION__); }
int count;
pthread_mutex_t m = { { 0, 0, 0, 0, 0, { 0 } } };
void *inc(void *arg) { int t; pthread_mutex_lock(&m); t = count; pthread_mutex_unlock(&m); pthread_mutex_lock(&m); count = t + 1; pthread_mutex_unlock(&m); return 0; }
int main() { pthread_t a, b; pthread_create(&a, 0, inc, 0); pthread_create(&b, 0, inc, 0); pthread_join(a, 0); pthread_join(b, 0); if (count != 2) { ERROR: {reach_error(); abort();} } return 0; }
"#,
    )
    .unwrap();
    let out = weft_in(dir.path(), &["build", arg(&source)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = weft_in(
        dir.path(),
        &[
            "explore",
            "task.wasm",
            "--property",
            "unreach-call",
            "--json",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(out.json()["verdict"], "false", "{}", out.stdout);
}

/// Every witness `weft svcomp` writes replays: one of `unreach-call` found
/// by a hunt that switched at racy plain accesses, and one of
/// `no-data-race`.
#[test]
fn svcomp_witnesses_of_both_properties_replay() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/svcomp");
    let out = dir.path().join("out");
    let run = weft_in(
        dir.path(),
        &[
            "svcomp",
            arg(&root.join("counter-unlocked.yml")),
            "--time-limit",
            "6s",
            "--out",
            arg(&out),
            "--json",
        ],
    );
    let report = run.json();
    assert_eq!(report["wrong"], 0, "{}", run.stdout);
    let tasks = report["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 2, "{}", run.stdout);
    for task in tasks {
        assert_eq!(task["verdict"], "false", "{}", run.stdout);
        let witness = task["witness"].as_str().unwrap();
        let replay = weft_in(dir.path(), &["replay", witness]);
        assert_eq!(replay.code, 1, "{}{}", replay.stdout, replay.stderr);
        assert!(replay.stdout.contains("reproduced"), "{}", replay.stdout);
    }
}

/// A witness the exhaustive search finds, after the hunt gave up, replays
/// too: thirty nondeterministic booleans must all be false, which random
/// choices almost never give (one in 2^30) and the search tries first.
#[test]
fn svcomp_witnesses_of_the_search_phase_replay() {
    let dir = tempfile::tempdir().unwrap();
    write_unreach_call_task(
        dir.path(),
        "zeros",
        false,
        r#"#include <pthread.h>
extern _Bool __VERIFIER_nondet_bool(void);
extern void reach_error(void);
static int ones;
static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 30; i++)
        if (__VERIFIER_nondet_bool())
            __atomic_fetch_add(&ones, 1, __ATOMIC_SEQ_CST);
    return 0;
}
int main(void) {
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    pthread_join(t, 0);
    if (__atomic_load_n(&ones, __ATOMIC_SEQ_CST) == 0)
        reach_error();
    return 0;
}
"#,
    );
    let run = weft_in(
        dir.path(),
        &[
            "svcomp",
            "zeros.yml",
            "--time-limit",
            "3s",
            "--out",
            "out",
            "--json",
        ],
    );
    let report = run.json();
    let task = &report["tasks"][0];
    assert_eq!(task["verdict"], "false", "{}{}", run.stdout, run.stderr);
    assert_the_search_phase_witness_replays(dir.path(), task);
}

/// Under `unreach-call`, a race stops the search: it searches again
/// switching at the racy plain accesses too, until no other race shows.
/// `flag` proves a racy publication safe (sequential consistency); `lost`
/// reaches the call only with thirty zero draws (which the hunt
/// practically never makes and the search makes first) and a lost update
/// (which needs a switch between a plain read and a plain write), and its
/// witness replays.
#[test]
fn svcomp_searches_a_racy_program_again_switching_at_its_racy_accesses() {
    let dir = tempfile::tempdir().unwrap();
    let programs = [
        (
            "flag",
            true,
            r#"#include <pthread.h>
extern void reach_error(void);
static int data, ready;
static void *writer(void *arg) { (void)arg; data = 42; ready = 1; return 0; }
int main(void) {
    pthread_t t;
    pthread_create(&t, 0, writer, 0);
    if (ready && data != 42)
        reach_error();
    pthread_join(t, 0);
    return 0;
}
"#,
        ),
        (
            "lost",
            false,
            r#"#include <pthread.h>
extern _Bool __VERIFIER_nondet_bool(void);
extern void reach_error(void);
static int counter;
static void *worker(void *arg) {
    (void)arg;
    counter = counter + 1;
    return 0;
}
int main(void) {
    int ones = 0;
    for (int i = 0; i < 30; i++)
        ones += __VERIFIER_nondet_bool();
    pthread_t a, b;
    pthread_create(&a, 0, worker, 0);
    pthread_create(&b, 0, worker, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    if (ones == 0 && counter == 1)
        reach_error();
    return 0;
}
"#,
        ),
    ];
    for (name, holds, source) in programs {
        write_unreach_call_task(dir.path(), name, holds, source);
        let task = format!("{name}.yml");
        let args = [
            "svcomp",
            &task,
            "--time-limit",
            "6s",
            "--out",
            "out",
            "--json",
        ];
        let run = weft_in(dir.path(), &args);
        let report = run.json();
        let task = &report["tasks"][0];
        let expected = if holds { "true" } else { "false" };
        let shown = format!("{}{}", run.stdout, run.stderr);
        assert_eq!(task["verdict"], expected, "{name}: {shown}");
        // `weft explore`'s exhaustive search for the call, with races
        // checked, does the same.
        let module = format!("out/{name}.wasm");
        let explored = weft_in(
            dir.path(),
            &[
                "explore",
                &module,
                "--strategy",
                "dpor",
                "--property",
                "unreach-call",
                "--races",
                "fail",
                "--json",
            ],
        );
        let shown = format!("{}{}", explored.stdout, explored.stderr);
        assert_eq!(explored.json()["verdict"], expected, "{name}: {shown}");
        if !holds {
            assert_eq!(explored.code, 1, "{shown}");
            let replay = explored.json()["replay_file"].as_str().unwrap().to_string();
            let replayed = weft_in(dir.path(), &["replay", &replay]);
            assert_eq!(replayed.code, 1, "{}{}", replayed.stdout, replayed.stderr);
            assert!(replayed.stdout.contains("reach"), "{}", replayed.stdout);
        }
        if holds {
            let reason = task["reason"].as_str().unwrap_or_default();
            assert!(
                reason.contains("plain-access sites of racy variables"),
                "{shown}"
            );
            continue;
        }
        assert_the_search_phase_witness_replays(dir.path(), task);
    }
}

/// Writes the C program `source` as `name.c` in `dir`, and `name.yml`, an
/// SV-COMP task of it under `unreach-call` whose expected verdict is
/// `holds`.
fn write_unreach_call_task(dir: &Path, name: &str, holds: bool, source: &str) {
    let properties = root().join("bench/svcomp/properties");
    std::fs::write(dir.join(format!("{name}.c")), source).unwrap();
    std::fs::write(
        dir.join(format!("{name}.yml")),
        format!(
            "format_version: '2.0'\ninput_files: '{name}.c'\nproperties:\n  - property_file: {}\n    expected_verdict: {holds}\noptions:\n  language: C\n  data_model: ILP32\n",
            properties.join("unreach-call.prp").display()
        ),
    )
    .unwrap();
}

/// Checks that the witness of `task` (an entry of `weft svcomp --json`
/// run in `dir`) was found by the exhaustive search and that `weft
/// replay` reproduces it.
fn assert_the_search_phase_witness_replays(dir: &Path, task: &serde_json::Value) {
    let witness = task["witness"].as_str().unwrap();
    let saved = std::fs::read_to_string(dir.join(witness)).unwrap();
    let saved: serde_json::Value = serde_json::from_str(&saved).unwrap();
    assert_eq!(saved["found_by"]["strategy"], "dpor", "{saved}");
    let replay = weft_in(dir, &["replay", witness]);
    assert_eq!(replay.code, 1, "{}{}", replay.stdout, replay.stderr);
    assert!(replay.stdout.contains("reproduced"), "{}", replay.stdout);
}

#[test]
fn a_program_of_several_files_builds_from_its_files_or_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("counter");
    std::fs::create_dir_all(&program).unwrap();
    std::fs::write(
        program.join("counter.h"),
        "void counter_add(int n);\nint counter_get(void);\n",
    )
    .unwrap();
    std::fs::write(
        program.join("counter.c"),
        r#"#include <pthread.h>
#include "counter.h"
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int total;
void counter_add(int n) { pthread_mutex_lock(&lock); total += n; pthread_mutex_unlock(&lock); }
int counter_get(void) { pthread_mutex_lock(&lock); int t = total; pthread_mutex_unlock(&lock); return t; }
"#,
    )
    .unwrap();
    std::fs::write(
        program.join("main.c"),
        r#"#include <assert.h>
#include <pthread.h>
#include "counter.h"
static void *add(void *arg) { counter_add(*(int *)arg); return 0; }
int main(void) {
    int one = 1, two = 2;
    pthread_t a, b;
    pthread_create(&a, 0, add, &one);
    pthread_create(&b, 0, add, &two);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(counter_get() == 3);
    return 0;
}
"#,
    )
    .unwrap();
    // The folder: every C file in it.
    let out = weft_in(dir.path(), &["build", arg(&program)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let module = program.join("counter.wasm");
    let out = weft_in(
        dir.path(),
        &["explore", arg(&module), "--iterations", "200", "--json"],
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    // The files, named one by one.
    let named = dir.path().join("named.wasm");
    let out = weft_in(
        dir.path(),
        &[
            "build",
            arg(&program.join("main.c")),
            arg(&program.join("counter.c")),
            "-o",
            arg(&named),
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(named.exists());
    // One file alone does not link, and the error says which symbol.
    let out = weft_in(dir.path(), &["build", arg(&program.join("main.c"))]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("counter_add"), "{}", out.stderr);
    // Files of different languages are not one program.
    let wat = dir.path().join("x.wat");
    std::fs::write(&wat, "(module)").unwrap();
    let out = weft_in(
        dir.path(),
        &["build", arg(&program.join("main.c")), arg(&wat)],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("not one program") || out.stderr.contains("of one program"),
        "{}",
        out.stderr
    );
}

/// Building the same C source twice, from two folders, gives the same
/// module: no temporary folder or working directory reaches it, so a saved
/// replay file still matches a rebuilt module.
#[test]
fn a_c_build_is_reproducible_from_any_folder() {
    let source = r#"#include <pthread.h>
static int hits;
static void *work(void *arg) { hits++; return 0; }
int main(void) { pthread_t t; pthread_create(&t, 0, work, 0); pthread_join(t, 0); return hits - 1; }
"#;
    let mut modules = Vec::new();
    for _ in 0..2 {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("prog.c"), source).unwrap();
        let out = weft_in(dir.path(), &["build", "prog.c", "-o", "prog.wasm"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        modules.push(std::fs::read(dir.path().join("prog.wasm")).unwrap());
    }
    assert!(modules[0] == modules[1], "two builds differ");
}

/// Building the same Zig source twice gives the same module: the SDK's
/// folder, which zig's debug information names, is the same each time.
#[test]
fn a_zig_build_is_reproducible() {
    let dir = tempfile::tempdir().unwrap();
    let source = root().join("samples/lost-update-zig/main.zig");
    let mut modules = Vec::new();
    for _ in 0..2 {
        let out = weft_in(dir.path(), &["build", arg(&source), "-o", "prog.wasm"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        modules.push(std::fs::read(dir.path().join("prog.wasm")).unwrap());
        std::fs::remove_file(dir.path().join("prog.wasm")).unwrap();
    }
    assert!(modules[0] == modules[1], "two builds differ");
}

/// Old C that calls the verification functions without declaring them
/// builds and runs as written; a call whose signature differs from the
/// definition's is a build error that names the function, not a trap at
/// run time.
#[test]
fn undeclared_calls_build_right_and_mismatched_ones_are_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("old.c"),
        r#"#include <pthread.h>
#include <assert.h>
int counter;
void *work(void *arg) {
    __VERIFIER_atomic_begin();
    int seen = counter;
    counter = seen + 1;
    __VERIFIER_atomic_end();
    return 0;
}
int main(void) {
    pthread_t t;
    pthread_create(&t, 0, work, 0);
    work(0);
    pthread_join(t, 0);
    assert(counter == 2);
    return 0;
}
"#,
    )
    .unwrap();
    let built = weft_in(dir.path(), &["build", "old.c"]);
    assert_eq!(built.code, 0, "{}", built.stderr);
    let explored = weft_in(
        dir.path(),
        &["explore", "old.wasm", "--points", "memory", "--no-save"],
    );
    assert_eq!(explored.code, 0, "{}{}", explored.stdout, explored.stderr);

    std::fs::write(
        dir.path().join("main.c"),
        "int helper(int a, int b);\nint main(void) { return helper(1, 2); }\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("helper.c"), "void helper(void) {}\n").unwrap();
    let mismatched = weft_in(
        dir.path(),
        &["build", "main.c", "helper.c", "-o", "two.wasm"],
    );
    assert_eq!(mismatched.code, 2, "{}", mismatched.stdout);
    assert!(
        mismatched.stderr.contains("calls of `helper` do not match"),
        "{}",
        mismatched.stderr
    );
    assert!(!dir.path().join("two.wasm").exists());
}

/// A `weft` built in the repository finds the zig that `./x` installed in
/// `.tools/venv`, from any folder and without `WEFT_ZIG`: with only
/// `rustc` on the PATH, it still builds C.
#[test]
fn weft_finds_the_repositorys_zig_from_any_folder() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let rustc = std::process::Command::new("rustup")
        .args(["which", "rustc"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "rustc".into());
    let rustc = which_on_path(&rustc);
    std::os::unix::fs::symlink(&rustc, bin.join("rustc")).unwrap();
    let source = dir.path().join("hello.c");
    std::fs::write(&source, "int main(void) { return 0; }\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["build", "hello.c"])
        .current_dir(dir.path())
        .env_remove("WEFT_ZIG")
        .env("PATH", &bin)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("hello.wasm").is_file());
}

/// `weft setup` gives a `weft` installed outside the repository (here, a
/// copy of the binary, with neither zig nor the repository's zig in
/// reach) the zig it builds C with, in its data folder; a second run
/// changes nothing.
#[test]
fn weft_setup_installs_zig_for_a_weft_outside_the_repository() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let weft = bin.join("weft");
    std::fs::copy(env!("CARGO_BIN_EXE_weft"), &weft).unwrap();
    for tool in ["rustup", "rustc"] {
        std::os::unix::fs::symlink(which_on_path(tool), bin.join(tool)).unwrap();
    }
    // The interpreter itself, not a version manager's shim.
    let python = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    let python = String::from_utf8_lossy(&python.stdout).trim().to_string();
    std::os::unix::fs::symlink(python, bin.join("python3")).unwrap();
    let data = dir.path().join("data");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(&weft)
            .args(args)
            .current_dir(dir.path())
            .env_remove("WEFT_ZIG")
            .env("PATH", &bin)
            .env("XDG_DATA_HOME", &data)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), text)
    };
    std::fs::write(dir.path().join("hello.c"), "int main(void) { return 0; }\n").unwrap();
    let (code, text) = run(&["build", "hello.c"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("run `weft setup`"), "{text}");

    let (code, text) = run(&["setup"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("installing zig from PyPI"), "{text}");
    assert!(data.join("weft/venv/bin/python").is_file(), "{text}");
    let (code, text) = run(&["setup"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        !text.contains("installing"),
        "a second run installs nothing: {text}"
    );
    assert!(
        text.contains("data/weft/venv/bin/python -m ziglang"),
        "{text}"
    );

    let (code, text) = run(&["build", "hello.c"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(dir.path().join("hello.wasm").is_file());
}

/// The full path of `program`, as the PATH finds it.
fn which_on_path(program: &str) -> std::path::PathBuf {
    let path = std::path::Path::new(program);
    if path.is_absolute() {
        return path.to_path_buf();
    }
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
        .expect("the program is on the PATH")
}

/// A header wasi-libc lacks is named in the build error, with why and what
/// to do.
#[test]
fn a_header_wasi_libc_lacks_is_named_with_why() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("glibc.c");
    std::fs::write(
        &source,
        "#include <bits/types.h>\n#include <stdio.h>\nint main(void) { return 0; }\n",
    )
    .unwrap();
    let out = weft_in(dir.path(), &["build", arg(&source)]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("wasi-libc") && out.stderr.contains("no `bits/types.h`"),
        "{}",
        out.stderr
    );
    // A function WebAssembly has no way to offer is named with why.
    std::fs::write(
        &source,
        "#include <unistd.h>\nint main(void) { return fork() < 0; }\n",
    )
    .unwrap();
    let out = weft_in(dir.path(), &["build", arg(&source)]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("no `fork`: WebAssembly has no processes"),
        "{}",
        out.stderr
    );
}

/// What real C programs include and wasi-libc lacks or hides: glibc's and
/// the BSDs' `sys/cdefs.h`, the BSD lists of `sys/queue.h`, and (through
/// wasi-libc's own emulations) `signal` and `raise`, anonymous `mmap` and
/// `getpid`. Each works as the program expects.
#[test]
fn headers_real_programs_include_are_there_and_work() {
    let dir = tempfile::tempdir().unwrap();
    let module = build_c(
        dir.path(),
        "posix",
        r#"
#include <sys/cdefs.h>
#include <sys/queue.h>
#include <sys/mman.h>
#include <signal.h>
#include <unistd.h>
#include <weft.h>

__BEGIN_DECLS
static volatile int caught;
static void on_signal(int sig) { caught = sig; }
__END_DECLS

struct job { int id; TAILQ_ENTRY(job) link; };
TAILQ_HEAD(jobs, job);
struct note { int id; SLIST_ENTRY(note) next; };
SLIST_HEAD(notes, note);

int main(void)
{
    signal(SIGUSR1, on_signal);
    raise(SIGUSR1);
    weft_assert(caught == SIGUSR1, "raise calls the handler");

    int *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    weft_assert(page != MAP_FAILED && page[100] == 0, "anonymous memory is zeroed");
    page[100] = 7;
    weft_assert(munmap(page, 4096) == 0, "munmap");

    struct jobs queue = TAILQ_HEAD_INITIALIZER(queue);
    struct job a = {1}, b = {2}, c = {3}, *job;
    TAILQ_INSERT_TAIL(&queue, &a, link);
    TAILQ_INSERT_TAIL(&queue, &c, link);
    TAILQ_INSERT_AFTER(&queue, &a, &b, link);
    int forwards = 0, backwards = 0;
    TAILQ_FOREACH(job, &queue, link) forwards = forwards * 10 + job->id;
    TAILQ_FOREACH_REVERSE(job, &queue, jobs, link) backwards = backwards * 10 + job->id;
    weft_assert(forwards == 123 && backwards == 321, "a tail queue in order");
    TAILQ_REMOVE(&queue, &b, link);
    weft_assert(TAILQ_PREV(&c, jobs, link) == &a && TAILQ_LAST(&queue, jobs) == &c, "removed");

    struct notes notes = SLIST_HEAD_INITIALIZER(notes);
    struct note x = {1}, y = {2};
    SLIST_INSERT_HEAD(&notes, &x, next);
    SLIST_INSERT_HEAD(&notes, &y, next);
    SLIST_REMOVE(&notes, &x, note, next);
    weft_assert(SLIST_FIRST(&notes) == &y && SLIST_NEXT(&y, next) == NULL, "a list");

    weft_assert(getpid() > 1, "getpid");
    return 0;
}
"#,
    );
    let out = weft_in(dir.path(), &["explore", arg(&module)]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}

#[test]
fn weft_cc_refuses_to_write_over_its_source() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("main.c");
    let text = "int main(void) { return 0; }\n";
    std::fs::write(&source, text).unwrap();
    for args in [
        ["cc", "main.c", "-o", "main.c"].as_slice(),
        ["cc", "-c", "main.c", "-o", "./main.c"].as_slice(),
    ] {
        let out = weft_in(dir.path(), args);
        assert_eq!(out.code, 1, "{args:?}: {}", out.stderr);
        assert!(
            out.stderr
                .contains("input file 'main.c' is the same as output file"),
            "{}",
            out.stderr
        );
        assert_eq!(std::fs::read_to_string(&source).unwrap(), text);
    }
}

#[test]
fn weft_cc_names_a_missing_source_as_gcc_does() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        ["cc", "-c", "missing.c"].as_slice(),
        ["cc", "missing.c", "-o", "missing"].as_slice(),
    ] {
        let out = weft_in(dir.path(), args);
        assert_eq!(out.code, 1, "{args:?}: {}", out.stderr);
        assert!(
            out.stderr
                .contains("weft cc: error: missing.c: No such file or directory"),
            "{}",
            out.stderr
        );
        assert!(!out.stderr.contains("checking cache"), "{}", out.stderr);
    }
}

/// A folder of C and C++ files is one C++ program whose C files are
/// compiled as C (a cast C++ would refuse), as is a list of them.
#[test]
fn c_and_cpp_files_of_one_program_build_together() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("mixed");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("helper.c"),
        "#include <stdlib.h>\nint helper(void) { int *p = malloc(sizeof *p); *p = 41; int v = *p + 1; free(p); return v; }\n",
    )
    .unwrap();
    std::fs::write(
        project.join("main.cpp"),
        "#include <cstdio>\n#include <thread>\nextern \"C\" int helper(void);\n\
         int main() { int v = 0; std::thread t([&] { v = helper(); }); t.join(); std::printf(\"%d\\n\", v); return 0; }\n",
    )
    .unwrap();
    let folder = weft_in(dir.path(), &["build", "mixed", "-o", "folder.wasm"]);
    assert_eq!(folder.code, 0, "{}", folder.stderr);
    let listed = weft_in(
        dir.path(),
        &[
            "build",
            "mixed/main.cpp",
            "mixed/helper.c",
            "-o",
            "listed.wasm",
        ],
    );
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    for module in ["folder.wasm", "listed.wasm"] {
        let run = weft_in(dir.path(), &["run", module, "--no-save", "--json"]);
        assert_eq!(run.code, 0, "{module}: {}{}", run.stdout, run.stderr);
        assert_eq!(run.json()["stdout"], "42\n", "{module}: {}", run.stdout);
    }
}

/// Link-time optimisation (`-flto`) inlines `main` into the C library's
/// start-up: the program builds, in one call or compiled then linked, and
/// runs; a program without `main` is still refused.
#[test]
fn a_program_built_with_link_time_optimisation_keeps_its_main() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("m.c"),
        "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("none.c"),
        "int helper(void) { return 1; }\n",
    )
    .unwrap();
    let steps: [&[&str]; 3] = [
        &["cc", "-flto", "-O2", "m.c", "-o", "whole"],
        &["cc", "-flto", "-c", "m.c", "-o", "m.o"],
        &["cc", "-flto", "m.o", "-o", "linked"],
    ];
    for args in steps {
        let out = weft_in(dir.path(), args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    }
    for module in ["whole", "linked"] {
        let run = weft_in(dir.path(), &["run", module, "--no-save", "--json"]);
        assert_eq!(run.code, 0, "{module}: {}{}", run.stdout, run.stderr);
        assert_eq!(run.json()["stdout"], "hi\n", "{module}");
    }
    let out = weft_in(dir.path(), &["cc", "-flto", "none.c", "-o", "none"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("has no `main`"), "{}", out.stderr);
}

/// A C program that two threads update under a lock, in C89.
const C89_COUNTER: &str = "#include <pthread.h>\n#include <stdio.h>\n\
static int n;\nstatic pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;\n\
static void *work(void *arg) { pthread_mutex_lock(&m); n++; pthread_mutex_unlock(&m); return arg; }\n\
int main(void) {\n    pthread_t t[2];\n    int i;\n\
    for (i = 0; i < 2; i++) pthread_create(&t[i], 0, work, 0);\n\
    for (i = 0; i < 2; i++) pthread_join(t[i], 0);\n\
    printf(\"%d\\n\", n);\n    return n != 2;\n}\n";

/// The same in C++17.
const CPP17_COUNTER: &str = "#include <cstdio>\n#include <mutex>\n#include <optional>\n#include <thread>\n\
static int n;\nstatic std::mutex m;\n\
int main() {\n    std::optional<int> one = 1;\n\
    auto add = [&] { std::lock_guard<std::mutex> g(m); n += *one; };\n\
    std::thread a(add), b(add);\n    a.join();\n    b.join();\n\
    std::printf(\"%d\\n\", n);\n    return n != 2;\n}\n";

/// A program's language standard and language are its own: weft's support
/// files are compiled with weft's flags, never the program's (`-std=c99`
/// once made wasi-libc's `mmap` emulation fail, `-std=c++17` the SDK's C
/// file, and `-x c++` made the link read objects as C++); `weft build`'s
/// flags reach a compile and a link as a compiler driver's would.
#[test]
fn a_programs_language_options_are_not_given_to_wefts_own_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.c"), C89_COUNTER).unwrap();
    std::fs::write(dir.path().join("q.cpp"), CPP17_COUNTER).unwrap();
    let builds: [&[&str]; 11] = [
        &["cc", "-std=c99", "p.c", "-o", "c99"],
        &["cc", "-std=c11", "p.c", "-o", "c11"],
        &["cc", "-ansi", "p.c", "-o", "ansi"],
        &["cc", "-std=c89", "-pedantic", "-Werror", "p.c", "-o", "c89"],
        &["cc", "-std=c99", "-c", "p.c", "-o", "p.o"],
        &["cc", "-std=c11", "p.o", "-o", "linked"],
        &["c++", "-std=c++17", "q.cpp", "-o", "cpp17"],
        &["c++", "-x", "c++", "p.c", "-o", "as-cpp"],
        &["build", "p.c", "-o", "built.wasm", "--", "-std=c99"],
        &["build", "q.cpp", "-o", "built-cpp.wasm", "--", "-std=c++17"],
        // Libraries that are parts of wasi-libc, and linker options,
        // under -Werror: a compile is not given them, nor zig's link the
        // libraries (it would link its own C library).
        &[
            "build",
            "p.c",
            "-o",
            "libs.wasm",
            "--",
            "-Werror",
            "-lm",
            "-lpthread",
        ],
    ];
    for args in builds {
        let out = weft_in(dir.path(), args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    }
    for module in [
        "c99",
        "c11",
        "ansi",
        "c89",
        "linked",
        "cpp17",
        "as-cpp",
        "built.wasm",
        "built-cpp.wasm",
        "libs.wasm",
    ] {
        let run = weft_in(dir.path(), &["run", module, "--no-save", "--json"]);
        assert_eq!(run.code, 0, "{module}: {}{}", run.stdout, run.stderr);
        assert_eq!(run.json()["stdout"], "2\n", "{module}");
    }
}
