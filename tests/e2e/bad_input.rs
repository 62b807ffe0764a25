//! Bad input gets a clear message and exit 2; a guest at fault (endless
//! loop, unbounded allocation or threads) gets a reported failure. Never a
//! panic or a hang.

use crate::support::{arg, sample, wat_file, weft_in};

fn expect_input_error(args: &[&str], dir: &std::path::Path, message: &str) {
    let out = weft_in(dir, args);
    assert_eq!(
        out.code, 2,
        "{args:?}: stdout {} stderr {}",
        out.stdout, out.stderr
    );
    assert!(out.stderr.contains(message), "{args:?}: {}", out.stderr);
    assert_eq!(
        out.stderr.matches(message).count(),
        1,
        "said once: {}",
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
}

#[test]
fn truncated_and_invalid_wasm() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(sample("lost-update")).unwrap();
    let truncated = dir.path().join("truncated.wasm");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    expect_input_error(&["run", arg(&truncated)], dir.path(), "invalid wasm module");
    let garbage = dir.path().join("garbage.wasm");
    std::fs::write(&garbage, b"\0asm\x01\0\0\0\x05garbage").unwrap();
    expect_input_error(
        &["explore", arg(&garbage)],
        dir.path(),
        "invalid wasm module",
    );
    let empty = dir.path().join("empty.wasm");
    std::fs::write(&empty, b"").unwrap();
    expect_input_error(&["run", arg(&empty)], dir.path(), "invalid wasm module");
    expect_input_error(
        &["run", "does-not-exist.wasm"],
        dir.path(),
        "cannot read module",
    );
}

#[test]
fn unknown_import_and_missing_exports() {
    let dir = tempfile::tempdir().unwrap();
    let unknown = wat_file(
        dir.path(),
        "unknown",
        r#"(module (import "env" "mystery" (func)) (func (export "_start") (call 0)))"#,
    );
    expect_input_error(&["run", arg(&unknown)], dir.path(), "imports `env.mystery`");
    let no_start = wat_file(dir.path(), "nostart", r#"(module (func (export "main")))"#);
    expect_input_error(
        &["run", arg(&no_start)],
        dir.path(),
        "does not export `_start`",
    );
    let no_thread_start = wat_file(
        dir.path(),
        "nothreadstart",
        r#"(module (import "wasi" "thread-spawn" (func (param i32) (result i32)))
             (memory 1 1 shared) (func (export "_start")))"#,
    );
    expect_input_error(
        &["run", arg(&no_thread_start)],
        dir.path(),
        "does not export `wasi_thread_start`",
    );
    let two_memories = wat_file(
        dir.path(),
        "twomem",
        r#"(module (memory 1) (memory 1) (func (export "_start")))"#,
    );
    expect_input_error(
        &["run", arg(&two_memories)],
        dir.path(),
        "more than one memory",
    );
    let bad_wat = wat_file(
        dir.path(),
        "bad",
        "(module (func (export \"_start\") (i32.add)))",
    );
    expect_input_error(
        &["run", arg(&bad_wat)],
        dir.path(),
        "invalid wasm module: type mismatch",
    );
    let unparsable = wat_file(
        dir.path(),
        "unparsable",
        "(module (func (export \"_start\")",
    );
    expect_input_error(&["run", arg(&unparsable)], dir.path(), "cannot assemble");
    // weft keeps the top 64 KiB of the 4 GiB space unmapped.
    let four_gib = wat_file(
        dir.path(),
        "fourgib",
        r#"(module (memory 65536 65536 shared) (func (export "_start")))"#,
    );
    expect_input_error(
        &["run", arg(&four_gib), "--max-memory-mib", "4096"],
        dir.path(),
        "initial memory (65536 pages) is larger than weft supports (65535 pages)",
    );
}

#[test]
fn endless_loop_hits_the_step_limit() {
    let dir = tempfile::tempdir().unwrap();
    let spin = wat_file(
        dir.path(),
        "spin",
        r#"(module (memory 1 1 shared)
             (func (export "_start") (loop $l (drop (i32.atomic.load (i32.const 0))) (br $l))))"#,
    );
    let out = weft_in(
        dir.path(),
        &[
            "run",
            arg(&spin),
            "--max-steps",
            "5000",
            "--json",
            "--no-save",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(out.json()["failure"]["kind"], "livelock");
    let compute = wat_file(
        dir.path(),
        "compute",
        r#"(module (func (export "_start") (loop $l (br $l))))"#,
    );
    let out = weft_in(
        dir.path(),
        &[
            "run",
            arg(&compute),
            "--max-fuel",
            "20000000",
            "--json",
            "--no-save",
        ],
    );
    // No shared memory to compare states by: a limit reached, no verdict.
    assert_eq!(out.code, 3, "{}", out.stderr);
    let json = out.json();
    assert_eq!(json["status"], "inconclusive");
    assert!(
        json["inconclusive_because"]
            .as_str()
            .unwrap()
            .contains("raise --max-fuel"),
        "{json}"
    );
}

#[test]
fn unbounded_allocation_hits_the_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let out = weft_in(
        dir.path(),
        &[
            "run",
            arg(&sample("alloc-forever")),
            "--max-memory-mib",
            "64",
            "--json",
            "--no-save",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let json = out.json();
    assert_eq!(json["failure"]["kind"], "memory-limit");
    assert!(
        json["failure"]["message"]
            .as_str()
            .unwrap()
            .contains("67108864")
    );
}

#[test]
fn unbounded_threads_hit_the_thread_limit() {
    let dir = tempfile::tempdir().unwrap();
    let bomb = wat_file(
        dir.path(),
        "bomb",
        r#"(module
             (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
             (memory 1 1 shared)
             (func (export "wasi_thread_start") (param i32 i32)
               (loop $l (drop (i32.atomic.load (i32.const 0))) (br $l)))
             (func (export "_start")
               (loop $l
                 (if (i32.lt_s (call $spawn (i32.const 0)) (i32.const 0)) (then unreachable))
                 (br $l))))"#,
    );
    let out = weft_in(
        dir.path(),
        &[
            "run",
            arg(&bomb),
            "--max-threads",
            "8",
            "--json",
            "--no-save",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(out.json()["failure"]["kind"], "thread-limit");
}

#[test]
fn the_thread_limit_counts_threads_alive_not_threads_created() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("pairs.c");
    std::fs::write(
        &c,
        r#"#include <pthread.h>
static int done;
static void *work(void *arg) { (void)arg; return 0; }
int main(void) {
    for (int i = 0; i < 150; i++) {
        pthread_t t;
        if (pthread_create(&t, 0, work, 0) != 0) return 1;
        pthread_join(t, 0);
        done++;
    }
    return done != 150;
}
"#,
    )
    .unwrap();
    let module = dir.path().join("pairs.wasm");
    let out = weft_in(dir.path(), &["build", arg(&c), "-o", arg(&module)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // 150 threads in all, never more than a few alive: fine under the
    // default limit of 128 alive at once.
    for strategy in ["random", "pct", "pos", "surw"] {
        let out = weft_in(
            dir.path(),
            &[
                "explore",
                arg(&module),
                "--strategy",
                strategy,
                "--iterations",
                "10",
                "--json",
                "--no-save",
            ],
        );
        assert_eq!(out.code, 0, "{strategy}: {}", out.stdout);
    }
    let out = weft_in(dir.path(), &["run", arg(&module), "--max-threads", "500"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
}

#[test]
fn limits_that_make_no_sense_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let module = sample("lost-update-c");
    for (option, value) in [
        ("--iterations", "0"),
        ("--time-limit", "0s"),
        ("--execution-time-limit", "0s"),
        ("--pct-depth", "0"),
        ("--pct-depth", "4294967295"),
        ("--max-memory-mib", "17592186044416"),
        ("--max-threads", "0"),
    ] {
        let out = weft_in(dir.path(), &["explore", arg(&module), option, value]);
        assert_eq!(out.code, 2, "{option} {value}: {}", out.stderr);
        assert!(out.stderr.contains(option), "{option}: {}", out.stderr);
    }
}

#[test]
fn outputs_never_overwrite_their_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let wat = wat_file(
        dir.path(),
        "racy",
        &std::fs::read_to_string(crate::support::root().join("samples/racy-wat/main.wat")).unwrap(),
    );
    let before = std::fs::read(&wat).unwrap();
    let out = weft_in(dir.path(), &["build", arg(&wat), "-o", arg(&wat)]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("would overwrite"), "{}", out.stderr);
    assert_eq!(std::fs::read(&wat).unwrap(), before);
    let module = dir.path().join("racy.wasm");
    std::fs::copy(sample("racy-wat"), &module).unwrap();
    let before = std::fs::read(&module).unwrap();
    let out = weft_in(
        dir.path(),
        &["explore", arg(&module), "--save-failure", arg(&module)],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("would overwrite"), "{}", out.stderr);
    assert_eq!(std::fs::read(&module).unwrap(), before);
}

#[test]
fn usage_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = weft_in(dir.path(), &["explore"]);
    assert_eq!(out.code, 2);
    let out = weft_in(dir.path(), &["run", "x.wasm", "--strategy", "bogus"]);
    assert_eq!(out.code, 2);
}

/// A property weft does not check, a `.prp` file that states none it
/// checks, a `--races` that contradicts the property and a task file that
/// is not one are usage errors that say what is wrong.
#[test]
fn bad_properties_and_tasks_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let module = sample("lost-update-c");
    let prp = dir.path().join("memsafety.prp");
    std::fs::write(&prp, "CHECK( init(main()), LTL(G valid-free) )\n").unwrap();
    let cases: [(&[&str], &str); 3] = [
        (&["--property", "termination"], "neither `unreach-call`"),
        (&["--property", arg(&prp)], "does not check"),
        (
            &["--property", "no-data-race", "--races", "off"],
            "needs --races fail",
        ),
    ];
    for (options, expected) in cases {
        let mut args = vec!["explore", arg(&module)];
        args.extend_from_slice(options);
        let out = weft_in(dir.path(), &args);
        assert_eq!(out.code, 2, "{options:?}: {}", out.stderr);
        assert!(out.stderr.contains(expected), "{options:?}: {}", out.stderr);
    }
    let task = dir.path().join("task.yml");
    std::fs::write(&task, "just: [a, list\n").unwrap();
    let out = weft_in(dir.path(), &["svcomp", arg(&task)]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("is not a task definition"),
        "{}",
        out.stderr
    );
    let empty = dir.path().join("no-tasks");
    std::fs::create_dir(&empty).unwrap();
    let out = weft_in(dir.path(), &["svcomp", arg(&empty)]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("no task definition"), "{}", out.stderr);
}

#[test]
fn fifos_devices_and_folders_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.wasm");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let not_a_file = "it is not a regular file";
    expect_input_error(&["explore", arg(&fifo)], dir.path(), not_a_file);
    expect_input_error(&["replay", arg(&fifo)], dir.path(), not_a_file);
    expect_input_error(&["run", "/dev/zero"], dir.path(), not_a_file);
    expect_input_error(&["explore", arg(dir.path())], dir.path(), not_a_file);
    let fifo_c = dir.path().join("pipe.c");
    std::process::Command::new("mkfifo")
        .arg(&fifo_c)
        .status()
        .unwrap();
    expect_input_error(&["build", arg(&fifo_c)], dir.path(), not_a_file);
    // A replay file that names a device as its module.
    let replay = dir.path().join("lu.weft.json");
    let found = weft_in(
        dir.path(),
        &[
            "explore",
            arg(&sample("lost-update")),
            "--save-failure",
            arg(&replay),
        ],
    );
    assert_eq!(found.code, 1, "{}", found.stderr);
    let text = std::fs::read_to_string(&replay).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["module"]["path"] = "/dev/zero".into();
    std::fs::write(&replay, json.to_string()).unwrap();
    expect_input_error(&["replay", arg(&replay)], dir.path(), not_a_file);
}

#[test]
fn guest_text_cannot_drive_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    // A thread name and an assertion message with an escape sequence, a
    // carriage return, a NUL and a C1 control.
    let module = wat_file(
        dir.path(),
        "escapes",
        r#"(module
  (import "weft" "thread_name" (func $name (param i32 i32)))
  (import "weft" "assert" (func $assert (param i32 i32 i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "evil\1b]0;owned\07")
  (data (i32.const 32) "clear\1b[2J\0dover\00\c2\9b31m")
  (func (export "_start")
    (call $name (i32.const 0) (i32.const 14))
    (call $assert (i32.const 0) (i32.const 32) (i32.const 20))))"#,
    );
    let out = weft_in(dir.path(), &["run", arg(&module), "--no-save"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    for raw in ['\u{1b}', '\r', '\0', '\u{9b}', '\u{7}'] {
        assert!(!out.stdout.contains(raw), "{raw:?} in {}", out.stdout);
    }
    assert!(
        out.stdout.contains("clear\\u{1b}[2J\\rover\\0\\u{9b}31m"),
        "{}",
        out.stdout
    );
}

/// `tiny` with a custom section `name` holding `payload` appended.
fn with_name_section(dir: &std::path::Path, file: &str, payload: &[u8]) -> std::path::PathBuf {
    let mut wasm =
        wat::parse_str(r#"(module (memory (export "memory") 1) (func (export "_start")))"#)
            .unwrap();
    let mut content = vec![4];
    content.extend_from_slice(b"name");
    content.extend_from_slice(payload);
    wasm.push(0);
    wasm.push(content.len() as u8);
    wasm.extend_from_slice(&content);
    let path = dir.join(file);
    std::fs::write(&path, wasm).unwrap();
    path
}

#[test]
fn malformed_name_sections_are_ignored_as_the_spec_says() {
    let dir = tempfile::tempdir().unwrap();
    // A subsection whose length runs past the end.
    let top = with_name_section(
        dir.path(),
        "top.wasm",
        &[1, 5, 0xff, 0xff, 0xff, 0xff, 0xff],
    );
    // A function-name map whose one name is longer than what follows.
    let nested = with_name_section(dir.path(), "nested.wasm", &[1, 4, 1, 0, 200, b'f']);
    for module in [top, nested] {
        let out = weft_in(dir.path(), &["run", arg(&module), "--no-save"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
}

#[test]
fn random_bytes_get_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("random.wasm");
    std::fs::write(&module, b"65l2 not a module at all").unwrap();
    let out = weft_in(dir.path(), &["run", arg(&module)]);
    assert_eq!(out.code, 2);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("does not start with `\\0asm`"),
        "{}",
        out.stderr
    );
}

#[test]
fn failures_are_the_guests_own_and_attributed_to_their_thread() {
    let dir = tempfile::tempdir().unwrap();
    // proc_exit(7) from the spawned thread.
    let exit = wat_file(
        dir.path(),
        "exit7",
        r#"(module
  (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1 1 shared)
  (func (export "wasi_thread_start") (param i32 i32) (call $exit (i32.const 7)))
  (func (export "_start")
    (drop (call $spawn (i32.const 0)))
    (block $done (loop $l
      (br_if $done (i32.atomic.load (i32.const 8)))
      (drop (memory.atomic.wait32 (i32.const 8) (i32.const 0) (i64.const -1)))
      (br $l)))))"#,
    );
    let out = weft_in(dir.path(), &["run", arg(&exit), "--no-save", "--json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let json = out.json();
    assert_eq!(json["failure"]["kind"], "exit");
    assert_eq!(json["failure"]["thread"], 1, "{}", out.stdout);
    // memory.grow past the module's own maximum fails as wasm says (-1);
    // the guest's trap after it is its own, not weft's memory limit.
    let grow = wat_file(
        dir.path(),
        "grow",
        r#"(module
  (memory (export "memory") 1 2 shared)
  (func (export "_start")
    (if (i32.ne (memory.grow (i32.const 5)) (i32.const -1)) (then unreachable))
    (drop (i32.load (i32.const 70000)))))"#,
    );
    let out = weft_in(dir.path(), &["run", arg(&grow), "--no-save", "--json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let json = out.json();
    assert_eq!(json["failure"]["kind"], "assertion", "{}", out.stdout);
    assert!(
        json["failure"]["message"]
            .as_str()
            .unwrap()
            .contains("out of bounds")
    );
    // A thread out of fuel says so: a limit reached, no verdict (no shared
    // memory to show that it loops).
    let spin = wat_file(
        dir.path(),
        "spin",
        r#"(module (memory (export "memory") 1) (func (export "_start") (loop $l (br $l))))"#,
    );
    let out = weft_in(
        dir.path(),
        &[
            "run",
            arg(&spin),
            "--no-save",
            "--max-fuel",
            "1000",
            "--json",
        ],
    );
    assert_eq!(out.code, 3, "{}", out.stderr);
    let message = out.json()["inconclusive_because"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains("compute budget of 1000 fuel units"),
        "{message}"
    );
}

#[test]
fn a_memory_larger_than_the_limit_from_the_start_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let big = wat_file(
        dir.path(),
        "big",
        r#"(module (memory (export "memory") 65536) (func (export "_start")))"#,
    );
    expect_input_error(
        &["run", arg(&big), "--no-save"],
        dir.path(),
        "initial memory (4096 MiB) exceeds the memory limit (512 MiB): raise --max-memory-mib",
    );
}

#[test]
fn reference_types_and_gc_modules_run() {
    let dir = tempfile::tempdir().unwrap();
    let module = wat_file(
        dir.path(),
        "refs",
        r#"(module
  (type $p (struct (field (mut i32))))
  (memory (export "memory") 1)
  (table $t 2 externref)
  (func (export "_start") (local $s (ref null $p))
    (table.set $t (i32.const 1) (ref.null extern))
    (if (i32.eqz (ref.is_null (table.get $t (i32.const 0)))) (then unreachable))
    (local.set $s (struct.new $p (i32.const 3)))
    (if (i32.ne (struct.get $p 0 (local.get $s)) (i32.const 3)) (then unreachable))))"#,
    );
    let out = weft_in(dir.path(), &["run", arg(&module), "--no-save"]);
    assert_eq!(out.code, 0, "{} {}", out.stdout, out.stderr);
}

#[test]
fn a_table_larger_than_weft_supports_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let module = wat_file(
        dir.path(),
        "table",
        r#"(module (table 100000 funcref) (func (export "_start")))"#,
    );
    expect_input_error(
        &["run", arg(&module)],
        dir.path(),
        "a table starts with 100000 elements; weft supports tables of at most 65536",
    );
}

/// A folder of tasks gets a verdict for each task it can: two tasks of one
/// name in different folders keep apart (their modules, witnesses and
/// rows), and a task weft cannot check (bad YAML, only a property weft
/// does not check, an input file that does not build) is `unknown` with
/// why while the others are verified; bad YAML and a program that does not
/// build are tool errors (exit 2). A program of two files builds.
#[test]
fn svcomp_tasks_of_one_name_and_unusable_tasks_keep_apart() {
    let dir = tempfile::tempdir().unwrap();
    let racy = "extern void abort(void);\nvoid reach_error(void) { abort(); }\n\
                #include <pthread.h>\nint count;\n\
                void *inc(void *a) { int t = count; count = t + 1; return 0; }\n\
                int main(void) { pthread_t a, b; pthread_create(&a, 0, inc, 0);\n\
                pthread_create(&b, 0, inc, 0); pthread_join(a, 0); pthread_join(b, 0);\n\
                if (count != 2) reach_error(); return 0; }\n";
    let task = |expected: bool, input: &str| {
        format!(
            "format_version: '2.0'\ninput_files: {input}\nproperties:\n  \
             - property_file: unreach-call.prp\n    expected_verdict: {expected}\n"
        )
    };
    for (folder, source, expected) in [
        ("a", racy.to_string(), false),
        (
            "b",
            racy.replace(
                "int t = count; count = t + 1;",
                "__atomic_fetch_add(&count, 1, __ATOMIC_SEQ_CST);",
            ),
            true,
        ),
    ] {
        let folder = dir.path().join("tasks").join(folder);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("t.c"), source).unwrap();
        std::fs::write(folder.join("t.yml"), task(expected, "t.c")).unwrap();
    }
    let more = dir.path().join("tasks/more");
    std::fs::create_dir_all(&more).unwrap();
    std::fs::write(more.join("broken.yml"), "just: [a, list\n").unwrap();
    std::fs::write(
        more.join("memsafety.yml"),
        "input_files: m.c\nproperties:\n  - property_file: valid-memsafety.prp\n    expected_verdict: true\n",
    )
    .unwrap();
    std::fs::write(
        more.join("nobuild.c"),
        "int main(void) { return undefined; }\n",
    )
    .unwrap();
    std::fs::write(more.join("nobuild.yml"), task(true, "nobuild.c")).unwrap();
    std::fs::write(
        more.join("two.c"),
        "int helper(void);\nint main(void) { return helper(); }\n",
    )
    .unwrap();
    std::fs::write(more.join("helper.c"), "int helper(void) { return 0; }\n").unwrap();
    std::fs::write(more.join("two.yml"), task(true, "[two.c, helper.c]")).unwrap();
    let out = dir.path().join("out");
    let run = weft_in(
        dir.path(),
        &[
            "svcomp",
            "tasks/a",
            "tasks/b",
            "tasks/more",
            "tasks/a/t.yml",
            "--time-limit",
            "4s",
            "--out",
            arg(&out),
            "--json",
        ],
    );
    // The tasks weft could not read or build are tool errors: the command
    // exits 2 once every task was tried.
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let report = run.json();
    assert_eq!(report["errors"], 2, "{}", run.stdout);
    let rows = report["tasks"].as_array().unwrap();
    let row = |task: &str| {
        rows.iter()
            .find(|r| r["task"] == task)
            .unwrap_or_else(|| panic!("no row {task}: {}", run.stdout))
    };
    assert_eq!(
        rows.len(),
        6,
        "a/t.yml named twice is taken once: {}",
        run.stdout
    );
    assert_eq!(row("a/t")["verdict"], "false", "{}", run.stdout);
    assert_eq!(row("b/t")["verdict"], "true", "{}", run.stdout);
    assert_eq!(row("two")["verdict"], "true", "{}", run.stdout);
    assert!(out.join("a/t.wasm").is_file() && out.join("b/t.wasm").is_file());
    assert_eq!(row("broken")["verdict"], "unknown");
    assert!(
        row("broken")["reason"]
            .as_str()
            .unwrap()
            .contains("not a task definition")
    );
    assert_eq!(row("memsafety")["property"], "valid-memsafety");
    assert!(
        row("memsafety")["reason"]
            .as_str()
            .unwrap()
            .contains("not valid-memsafety")
    );
    assert_eq!(row("nobuild")["verdict"], "unknown");
    assert_eq!(row("nobuild")["error"], true);
    assert_eq!(row("broken")["error"], true);
    assert_eq!(row("memsafety")["error"], false);
    assert_eq!(row("two")["correct"], true);
    assert!(
        row("nobuild")["reason"]
            .as_str()
            .unwrap()
            .contains("undefined")
    );
    // The witness of `a/t` replays: it is not overwritten by `b/t`'s run.
    let witness = row("a/t")["witness"].as_str().unwrap();
    let replay = weft_in(dir.path(), &["replay", witness]);
    assert_eq!(replay.code, 1, "{}{}", replay.stdout, replay.stderr);
    assert!(
        replay.stdout.contains("reach_error() was reached"),
        "{}",
        replay.stdout
    );
}
