//! A real C thread pool that pauses its workers with signals
//! (Pithikos's C-Thread-Pool, as Debian packages it in `cthreadpool-dev`:
//! `thpool.c`, `thpool.h`, `example.c`), fetched from Debian's archive at
//! test time and built unchanged with `weft cc`. Its example and weft's
//! own drivers (`tests/fixtures/thread-pool/`: jobs that are old-style
//! `void f()` callbacks, a pause and resume) pass; a copy with a bug
//! seeded (the worker counter updated outside its lock) fails, and the
//! failure replays. The pool reads and writes its `volatile` flags without
//! a lock, which the race check reports (data races under C11), so the
//! pool is explored with `--races off`; pausing sleeps to let the workers
//! start, as the pool's own test does, so it is explored with timed sleeps.

use crate::support::{arg, debian_package, root, weft_in};
use std::path::{Path, PathBuf};

/// Debian's package of the pool, and its SHA-256.
const PACKAGE: &str = "http://deb.debian.org/debian/pool/main/c/cthreadpool/cthreadpool-dev_0.0+git20201207.b259a6e-1_all.deb";
const PACKAGE_SHA256: &str = "66c3f3c75b79d5ae137ec01f7748934839bdf1f66ca6c4c29725ec7bbf503316";

/// The pool's files, fetched and unpacked into `dir`: `thpool.c`,
/// `thpool.h` and `example.c` side by side.
fn fetch_pool(dir: &Path) -> PathBuf {
    let unpacked = debian_package(dir, PACKAGE, PACKAGE_SHA256);
    let pool = dir.join("pool");
    std::fs::create_dir_all(&pool).unwrap();
    for file in [
        "usr/share/cthreadpool/thpool.c",
        "usr/include/cthreadpool/thpool.h",
        "usr/share/doc/cthreadpool-dev/examples/example.c",
    ] {
        let from = unpacked.join(file);
        std::fs::copy(&from, pool.join(from.file_name().unwrap())).unwrap();
    }
    for driver in ["counts.c", "pause.c"] {
        let from = root().join("tests/fixtures/thread-pool").join(driver);
        std::fs::copy(&from, pool.join(driver)).unwrap();
    }
    pool
}

/// Builds `sources` (in `pool`) with `weft cc -pthread` at `level`.
fn build(pool: &Path, sources: &[&str], level: &str) -> PathBuf {
    let name = Path::new(sources[0]).file_stem().unwrap().to_str().unwrap();
    let module = pool.join(format!("{name}{level}.wasm"));
    let mut args = vec!["cc", "-pthread", level];
    args.extend(sources);
    args.extend(["-o", arg(&module)]);
    let out = weft_in(pool, &args);
    assert_eq!(out.code, 0, "{sources:?} {level}: {}", out.stderr);
    module
}

/// `weft explore` of `module` with the race check off and `extra`.
fn explore(pool: &Path, module: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let mut args = vec!["explore", arg(module), "--json", "--races", "off"];
    args.extend(extra);
    let out = weft_in(pool, &args);
    (out.code, out.json())
}

#[test]
fn the_pool_builds_unchanged_and_its_example_and_drivers_pass() {
    let dir = tempfile::tempdir().unwrap();
    let pool = fetch_pool(dir.path());
    for level in ["-O0", "-O2"] {
        let example = build(&pool, &["example.c", "thpool.c"], level);
        let (code, json) = explore(&pool, &example, &["--iterations", "200", "--no-save"]);
        assert_eq!((code, &json["status"]), (0, &"pass".into()), "{json}");
        let counts = build(&pool, &["counts.c", "thpool.c"], level);
        let (code, json) = explore(&pool, &counts, &["--iterations", "300", "--no-save"]);
        assert_eq!((code, &json["status"]), (0, &"pass".into()), "{json}");
        let pause = build(&pool, &["pause.c", "thpool.c"], level);
        let timed = ["--iterations", "200", "--no-save", "--sleeps", "timed"];
        let (code, json) = explore(&pool, &pause, &timed);
        assert_eq!((code, &json["status"]), (0, &"pass".into()), "{json}");
    }
}

#[test]
fn a_bug_seeded_in_a_copy_of_the_pool_is_found_and_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let pool = fetch_pool(dir.path());
    let source = std::fs::read_to_string(pool.join("thpool.c")).unwrap();
    let locked = "\t\t\tpthread_mutex_lock(&thpool_p->thcount_lock);\n\t\t\tthpool_p->num_threads_working++;\n\t\t\tpthread_mutex_unlock(&thpool_p->thcount_lock);\n";
    assert_eq!(source.matches(locked).count(), 1, "the pool changed");
    let unlocked = source.replace(locked, "\t\t\tthpool_p->num_threads_working++;\n");
    std::fs::write(pool.join("thpool_seeded.c"), unlocked).unwrap();
    for level in ["-O0", "-O2"] {
        let module = build(&pool, &["counts.c", "thpool_seeded.c"], level);
        let (code, json) = explore(&pool, &module, &["--iterations", "5000"]);
        assert_eq!(code, 1, "{json}");
        assert_eq!(json["failure"]["kind"], "assertion", "{json}");
        let message = json["failure"]["message"].as_str().unwrap();
        assert!(message.contains("thpool_num_threads_working"), "{message}");
        let replay = json["replay_file"].as_str().unwrap();
        let out = weft_in(&pool, &["replay", replay]);
        assert_eq!(out.code, 1, "{}", out.stdout);
        assert!(out.stdout.contains("reproduced"), "{}", out.stdout);
    }
}
