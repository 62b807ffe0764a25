//! C and C++ projects built by their own build with `weft cc` and
//! `weft c++`: the Makefile project and the CMake project of
//! `docs/examples`, copied elsewhere, build into modules weft explores and
//! replays, and builds are reproducible.

use crate::support::{arg, root, weft_in};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The weft under test.
fn weft() -> &'static str {
    env!("CARGO_BIN_EXE_weft")
}

/// A build tool: the one in the repository's `.tools/venv` (`./x` puts
/// CMake there), else the one on the `PATH`.
fn tool(name: &str) -> PathBuf {
    let local = root().join(".tools/venv/bin").join(name);
    if local.is_file() {
        local
    } else {
        PathBuf::from(name)
    }
}

/// A copy of the example project `name` in a new folder.
fn copy_of(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let copied = Command::new("cp")
        .arg("-r")
        .arg(root().join("docs/examples").join(name))
        .arg(dir.path().join("project"))
        .status()
        .unwrap();
    assert!(copied.success());
    dir
}

/// Runs `cmd` in `dir`; fails the test with its output unless it succeeds.
fn succeeds(cmd: &mut Command, dir: &Path) -> String {
    let out = cmd
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e} (`./x test` installs make and CMake)"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    text
}

/// `make CC="weft cc"` in `dir`; returns the module it built.
fn make(dir: &Path) -> Vec<u8> {
    succeeds(Command::new("make").arg(format!("CC={} cc", weft())), dir);
    std::fs::read(dir.join("pipeline")).unwrap()
}

#[test]
fn a_makefile_project_builds_with_weft_cc_and_its_race_is_found() {
    let copy = copy_of("pipeline-make");
    let project = copy.path().join("project");
    let module = make(&project);
    let found = weft_in(
        &project,
        &["explore", "pipeline", "--save-failure", "bug.weft.json"],
    );
    assert_eq!(found.code, 1, "{}{}", found.stdout, found.stderr);
    assert!(
        found.stdout.contains("data race on")
            && found.stdout.contains("(`total`)")
            && found.stdout.contains("stats_record (src/stats.c:9)"),
        "{}",
        found.stdout
    );
    let replayed = weft_in(&project, &["replay", "bug.weft.json"]);
    assert_eq!(replayed.code, 1, "{}{}", replayed.stdout, replayed.stderr);
    // The same sources give the same module, rebuilt or built elsewhere:
    // saved replay files still replay.
    succeeds(Command::new("make").arg("clean"), &project);
    assert!(make(&project) == module, "a rebuild changed the module");
    let other = copy_of("pipeline-make");
    assert!(
        make(&other.path().join("project")) == module,
        "a build in another folder changed the module"
    );
    // With the races left out, the lost count is an assertion.
    let lost = weft_in(
        &project,
        &[
            "explore", "pipeline", "--races", "off", "--points", "memory",
        ],
    );
    assert_eq!(lost.code, 1, "{}{}", lost.stdout, lost.stderr);
    assert!(lost.stdout.contains("assertion"), "{}", lost.stdout);
}

#[test]
fn a_cmake_project_builds_with_the_toolchain_file_weft_setup_writes() {
    let copy = copy_of("bank-cmake");
    let project = copy.path().join("project");
    let data = copy.path().join("data");
    let said = succeeds(
        Command::new(weft())
            .arg("setup")
            .env("XDG_DATA_HOME", &data),
        copy.path(),
    );
    let toolchain = data.join("weft/toolchain.cmake");
    assert!(said.contains(arg(&toolchain)), "{said}");
    succeeds(
        Command::new(tool("cmake"))
            .args(["-B", "build"])
            .arg(format!("-DCMAKE_TOOLCHAIN_FILE={}", toolchain.display())),
        &project,
    );
    succeeds(
        Command::new(tool("cmake")).args(["--build", "build"]),
        &project,
    );
    let found = weft_in(
        &project,
        &[
            "explore",
            "build/transfers.wasm",
            "--save-failure",
            "bug.weft.json",
        ],
    );
    assert_eq!(found.code, 1, "{}{}", found.stdout, found.stderr);
    assert!(
        found
            .stdout
            .contains("Account::withdraw(long) (src/account.cpp:5)"),
        "{}",
        found.stdout
    );
    // Sent with its module, it replays from anywhere.
    let elsewhere = tempfile::tempdir().unwrap();
    let bundle = elsewhere.path().join("bug.weft");
    let bundled = weft_in(&project, &["bundle", "bug.weft.json", "-o", arg(&bundle)]);
    assert_eq!(bundled.code, 0, "{}", bundled.stderr);
    let replayed = weft_in(elsewhere.path(), &["replay", "bug.weft"]);
    assert_eq!(replayed.code, 1, "{}{}", replayed.stdout, replayed.stderr);
    assert!(replayed.stdout.contains("reproduced the data-race failure"));
}

#[test]
fn weft_cc_answers_like_a_compiler_and_refuses_what_would_trap() {
    let dir = tempfile::tempdir().unwrap();
    // Build systems ask the compiler about itself.
    let machine = succeeds(
        Command::new(weft()).args(["cc", "-dumpmachine"]),
        dir.path(),
    );
    assert!(machine.starts_with("wasm32-"), "{machine}");
    let version = succeeds(Command::new(weft()).args(["c++", "--version"]), dir.path());
    assert!(version.contains("clang"), "{version}");
    // A compile error is the compiler's, with its exit code.
    std::fs::write(dir.path().join("bad.c"), "int main(void) { return x; }\n").unwrap();
    let bad = Command::new(weft())
        .args(["cc", "-c", "bad.c"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("undeclared identifier 'x'"));
    // A call that does not match the definition would link to a stub that
    // traps: the link fails and leaves no program behind.
    std::fs::write(
        dir.path().join("a.c"),
        "int twice(int x) { return 2 * x; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("main.c"),
        "long twice(long x, long y);\nint main(void) { return (int)twice(1, 2); }\n",
    )
    .unwrap();
    let mismatched = Command::new(weft())
        .args(["cc", "-o", "prog", "a.c", "main.c"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&mismatched.stderr);
    assert_eq!(mismatched.status.code(), Some(1), "{said}");
    assert!(said.contains("weft cc: error: calls of `twice`"), "{said}");
    assert!(!dir.path().join("prog").exists());
}
