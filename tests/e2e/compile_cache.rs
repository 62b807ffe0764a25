//! The instrumented and compiled modules weft keeps between commands: a
//! second command on a module reads what the first instrumented and
//! compiled, behaves the same, and a damaged or cleared cache only means
//! doing it again.

use crate::support::{arg, sample};
use std::path::Path;
use std::process::Command;

/// Runs `weft` with `args` and the cache in `cache`; returns the exit code
/// and stdout.
fn weft_cached(cache: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .env("WEFT_CACHE_DIR", cache)
        .output()
        .expect("the weft binary runs");
    (
        out.status.code().expect("an exit code"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn entries(cache: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(cache)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

#[test]
fn a_second_command_reads_the_compiled_module_and_behaves_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let module = sample("lost-update");
    let explore = [
        "explore",
        arg(&module),
        "--iterations",
        "200",
        "--json",
        "--no-save",
    ];
    let (code, first) = weft_cached(&cache, &explore);
    assert_eq!(code, 1, "{first}");
    // For each instrumentation the command used, the instrumented module
    // and its compiled code.
    let kept = entries(&cache);
    let kind = |extension: &str| {
        kept.iter()
            .filter(|p| p.extension().is_some_and(|x| x == extension))
            .count()
    };
    assert!(kind("instrumented") > 0, "{kept:?}");
    assert_eq!(kind("instrumented"), kind("cwasm"), "{kept:?}");
    let (code, second) = weft_cached(&cache, &explore);
    assert_eq!(code, 1);
    let hash =
        |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap()["trace_hash"].clone();
    assert_eq!(hash(&first), hash(&second));
    assert_eq!(
        entries(&cache).len(),
        kept.len(),
        "read, not compiled again"
    );
    let (_, listed) = weft_cached(&cache, &["cache"]);
    assert!(
        listed.contains(&format!("{} instrumented and compiled modules", kept.len())),
        "{listed}"
    );
    // A damaged entry is made again.
    for entry in &kept {
        std::fs::write(entry, b"not an entry").unwrap();
    }
    let (code, third) = weft_cached(&cache, &explore);
    assert_eq!(code, 1);
    assert_eq!(hash(&first), hash(&third));
    let (code, cleared) = weft_cached(&cache, &["cache", "--clear"]);
    assert_eq!(code, 0);
    assert!(cleared.contains("MiB freed"), "{cleared}");
    assert!(entries(&cache).is_empty());
    // Off: nothing is written.
    let off = dir.path().join("off");
    let out = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["run", arg(&module)])
        .env("WEFT_CACHE_DIR", "off")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.code().is_some());
    assert!(!off.exists());
}
