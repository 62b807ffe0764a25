//! Helpers shared by the end-to-end tests.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Path of a built sample module; fails clearly when samples are not built.
pub fn sample(name: &str) -> PathBuf {
    let path = root().join("target/samples").join(format!("{name}.wasm"));
    assert!(
        path.exists(),
        "{} is missing: build the samples first (`just samples`)",
        path.display()
    );
    path
}

/// A sample's manifest, `samples/<name>/sample.json`.
pub fn manifest(name: &str) -> Value {
    let text = std::fs::read_to_string(root().join("samples").join(name).join("sample.json"))
        .expect("every sample has a manifest");
    serde_json::from_str(&text).expect("manifests are JSON")
}

/// Names of every sample that has a manifest.
pub fn sample_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("samples"))
        .expect("samples/ exists")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("sample.json").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The JSON file at `path` (a replay file, say).
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// Output of one `weft` invocation.
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// stdout parsed as the JSON object `--json` prints.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

/// Runs `weft` with `args` in `dir`.
pub fn weft_in(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the weft binary runs");
    Output {
        code: out
            .status
            .code()
            .expect("weft exits normally, never by a signal"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `weft` with `args` in a fresh temporary directory (kept alive by the
/// returned guard).
pub fn weft(args: &[&str]) -> (Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("a temp dir");
    (weft_in(dir.path(), args), dir)
}

/// Writes `wat` text to a `.wat` file in `dir` and returns its path.
pub fn wat_file(dir: &Path, name: &str, wat: &str) -> PathBuf {
    let path = dir.join(format!("{name}.wat"));
    std::fs::write(&path, wat).expect("write the module");
    path
}

/// Builds the C program `source` as `name.wasm` in `dir` with `weft build`.
pub fn build_c(dir: &Path, name: &str, source: &str) -> PathBuf {
    build_source(dir, &format!("{name}.c"), source)
}

/// Builds the C program `source` as `name.wasm` in `dir` with `weft build`
/// and the compiler flags `flags` (an optimisation level, say).
pub fn build_c_with(dir: &Path, name: &str, source: &str, flags: &[&str]) -> PathBuf {
    build_source_with(dir, &format!("{name}.c"), source, flags)
}

/// Builds the program `source`, whose language the extension of `file`
/// says, as a module named after it in `dir` with `weft build`.
pub fn build_source(dir: &Path, file: &str, source: &str) -> PathBuf {
    build_source_with(dir, file, source, &[])
}

/// As [`build_source`], with the compiler flags `flags`.
fn build_source_with(dir: &Path, file: &str, source: &str, flags: &[&str]) -> PathBuf {
    let c = dir.join(file);
    let name = c.file_stem().expect("a file name").to_owned();
    std::fs::write(&c, source).expect("write the source");
    let module = dir.join(name).with_extension("wasm");
    let mut args = vec!["build", arg(&c), "-o", arg(&module)];
    if !flags.is_empty() {
        args.push("--");
        args.extend_from_slice(flags);
    }
    let out = weft_in(dir, &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    module
}

/// A string path argument.
pub fn arg(path: &Path) -> &str {
    path.to_str().expect("utf-8 paths")
}

/// A copy of `module` in `dir` without its DWARF sections, as a release
/// build without debug information has it (`cargo build --release` strips
/// DWARF and keeps the name section; so does `cc -O2` without `-g`).
pub fn without_dwarf(module: &Path, dir: &Path) -> PathBuf {
    without_sections(module, dir, "without-dwarf", |name| {
        name.starts_with(".debug_")
    })
}

/// A copy of `module` in `dir` without the custom sections `drop` names,
/// `-SUFFIX` added to its name.
pub fn without_sections(
    module: &Path,
    dir: &Path,
    suffix: &str,
    drop: impl Fn(&str) -> bool,
) -> PathBuf {
    let wasm = std::fs::read(module).expect("read the module");
    let mut stripped = wasm[..8].to_vec();
    for payload in wasmparser::Parser::new(0).parse_all(&wasm) {
        let payload = payload.expect("a valid module");
        let Some((id, range)) = payload.as_section() else {
            continue;
        };
        let dropped = matches!(&payload, wasmparser::Payload::CustomSection(section)
            if drop(section.name()));
        if !dropped {
            wasm_encoder::Section::append_to(
                &wasm_encoder::RawSection {
                    id,
                    data: &wasm[range],
                },
                &mut stripped,
            );
        }
    }
    let name = module.file_stem().expect("a file name").to_string_lossy();
    let path = dir.join(format!("{name}-{suffix}.wasm"));
    std::fs::write(&path, stripped).expect("write the module");
    path
}

/// A hash of what decides how the module runs: every section but the
/// custom ones (debug information and names, which hold build paths).
pub fn code_hash(wasm: &[u8]) -> String {
    let mut hasher = blake3::Hasher::new();
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        let payload = payload.expect("the samples are valid modules");
        if let Some((id, range)) = payload.as_section()
            && !matches!(payload, wasmparser::Payload::CustomSection(_))
        {
            hasher.update(&[id]);
            hasher.update(&wasm[range]);
        }
    }
    hasher.finalize().to_hex()[..16].to_string()
}

/// Debian's package at `url` (a `.deb` whose SHA-256 is `sha256`),
/// fetched into `dir` with curl and unpacked there with `dpkg-deb`;
/// returns the folder it was unpacked into.
pub fn debian_package(dir: &Path, url: &str, sha256: &str) -> PathBuf {
    let deb = dir.join("package.deb");
    let fetched = Command::new("curl")
        .args(["-sSfL", "--retry", "3", "-o"])
        .arg(&deb)
        .arg(url)
        .status()
        .expect("curl runs");
    assert!(fetched.success(), "cannot fetch {url}");
    let sum = Command::new("sha256sum").arg(&deb).output().unwrap();
    let sum = String::from_utf8_lossy(&sum.stdout);
    assert!(sum.starts_with(sha256), "{url}: sha256 {sum}");
    let unpacked = dir.join("unpacked");
    let status = Command::new("dpkg-deb")
        .arg("-x")
        .arg(&deb)
        .arg(&unpacked)
        .status()
        .expect("dpkg-deb runs");
    assert!(status.success(), "dpkg-deb -x {}", deb.display());
    unpacked
}
