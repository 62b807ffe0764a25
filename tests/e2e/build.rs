//! `weft build`: C and WAT sources to modules, and clear errors otherwise.

use crate::support::{arg, weft_in};

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
        out.stderr
            .contains("weft builds `.c`, `.zig` and `.wat` files"),
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
