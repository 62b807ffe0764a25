//! Instrumented and compiled modules kept on disk between commands:
//! rewriting a module (with its debug information read, under the race
//! check) and compiling the result are most of what a command spends
//! before its first execution, and a test runner, a replay or a grading
//! starts weft on the same module again and again.
//!
//! A compiled entry is keyed by the instrumented module's bytes and the
//! engine's compatibility hash (wasmtime's version and every setting that
//! shapes its code); an instrumented entry by the module's bytes, the
//! instrumentation's options and this build of weft (the size and time of
//! its executable). So a new weft, wasmtime or instrumentation never reads
//! an old entry. The folder is `WEFT_CACHE_DIR`, else `$XDG_CACHE_HOME/weft`, else
//! `~/.cache/weft`; `WEFT_CACHE_DIR=off` turns the cache off. Entries are
//! written whole (to a temporary file, then renamed), each carries the hash
//! of its contents, checked before it is read, and the folder is trimmed to
//! its newest entries past [`MOST_BYTES`]. Any failure to read or write
//! the cache only means compiling.

use crate::instrument::InstrumentOptions;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use wasmtime::{Engine, Module};

/// The most bytes of instrumented and compiled modules the folder keeps.
pub const MOST_BYTES: u64 = 1 << 30;

/// The extension of a compiled module's entry.
const EXTENSION: &str = "cwasm";

/// The extension of an instrumented module's entry.
const INSTRUMENTED: &str = "instrumented";

/// The cache's folder, or `None` when it is off or no folder is known.
pub fn folder() -> Option<PathBuf> {
    match std::env::var_os("WEFT_CACHE_DIR") {
        Some(dir) if dir == "off" => None,
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => crate::user_folders::weft_folder("XDG_CACHE_HOME", ".cache"),
    }
}

/// The module `wasm` compiled for `engine`: from the cache when it holds
/// it, else compiled (and then kept in the cache).
///
/// # Errors
///
/// When `wasm` does not compile.
pub fn compile(engine: &Engine, wasm: &[u8]) -> wasmtime::Result<Module> {
    let Some(path) = folder().map(|dir| dir.join(entry_name(engine, wasm))) else {
        return Module::new(engine, wasm);
    };
    if let Some(module) = read(engine, &path) {
        return Ok(module);
    }
    let module = Module::new(engine, wasm)?;
    if let Ok(compiled) = module.serialize() {
        write(&path, &compiled);
    }
    Ok(module)
}

/// The module `wasm` rewritten with `options` (with what the host learnt
/// of it then): from the cache when it holds it, else made by `rewrite`
/// (and then kept in the cache).
///
/// # Errors
///
/// What `rewrite` returns.
pub fn instrumented<T: serde::Serialize + serde::de::DeserializeOwned, E>(
    wasm: &[u8],
    options: &InstrumentOptions,
    rewrite: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    let Some(path) = folder()
        .zip(weft_build())
        .map(|(dir, build)| dir.join(instrumented_name(build, options, wasm)))
    else {
        return rewrite();
    };
    if let Some(out) = read_whole(&path).and_then(|bytes| postcard::from_bytes(&bytes).ok()) {
        return Ok(out);
    }
    let out = rewrite()?;
    if let Ok(bytes) = postcard::to_stdvec(&out) {
        write(&path, &bytes);
    }
    Ok(out)
}

/// This build of weft, as the size and modification time of its
/// executable: a rebuilt weft (another instrumentation) reads no entry an
/// older one wrote.
fn weft_build() -> Option<&'static str> {
    static BUILD: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    BUILD
        .get_or_init(|| {
            let meta = std::env::current_exe().ok()?.metadata().ok()?;
            let modified = meta
                .modified()
                .ok()?
                .duration_since(std::time::UNIX_EPOCH)
                .ok()?;
            Some(format!(
                "{}:{}:{}",
                env!("CARGO_PKG_VERSION"),
                meta.len(),
                modified.as_nanos()
            ))
        })
        .as_deref()
}

/// The file name of the entry of `wasm` rewritten with `options` by the
/// weft `build`.
fn instrumented_name(build: &str, options: &InstrumentOptions, wasm: &[u8]) -> String {
    let mut key = blake3::Hasher::new();
    key.update(build.as_bytes());
    key.update(&[0]);
    // Every field by name: a format that leaves out fields at their
    // defaults could give two options one key.
    key.update(format!("{options:?}").as_bytes());
    key.update(&[0]);
    key.update(wasm);
    format!("{}.{INSTRUMENTED}", key.finalize().to_hex())
}

/// The file name of the entry of `wasm` compiled by `engine`.
fn entry_name(engine: &Engine, wasm: &[u8]) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let mut key = blake3::Hasher::new();
    key.update(&hasher.finish().to_le_bytes());
    key.update(wasm);
    format!("{}.{EXTENSION}", key.finalize().to_hex())
}

/// The module an entry holds, if it is there and whole.
fn read(engine: &Engine, path: &Path) -> Option<Module> {
    let compiled = read_whole(path)?;
    // SAFETY: the bytes are what `Module::serialize` wrote for an engine
    // with the same compatibility hash (the entry's name says so), checked
    // whole against the hash written with them; wasmtime checks the
    // version and settings again and refuses a mismatch.
    unsafe { Module::deserialize(engine, &compiled) }.ok()
}

/// The contents of an entry, if it is there and whole (a damaged entry is
/// removed); the entry is touched, so that trimming keeps the entries in
/// use.
fn read_whole(path: &Path) -> Option<Vec<u8>> {
    let mut bytes = std::fs::read(path).ok()?;
    if bytes.len() < blake3::OUT_LEN
        || blake3::hash(&bytes[blake3::OUT_LEN..]).as_bytes() != &bytes[..blake3::OUT_LEN]
    {
        let _ = std::fs::remove_file(path);
        return None;
    }
    let _ = std::fs::File::options()
        .append(true)
        .open(path)
        .and_then(|f| f.set_modified(std::time::SystemTime::now()));
    bytes.drain(..blake3::OUT_LEN);
    Some(bytes)
}

/// Writes an entry whole, then trims the folder.
fn write(path: &Path, compiled: &[u8]) {
    let Some(dir) = path.parent() else {
        return;
    };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let temporary = path.with_extension(format!("{}.tmp", std::process::id()));
    let mut contents = Vec::with_capacity(blake3::OUT_LEN + compiled.len());
    contents.extend_from_slice(blake3::hash(compiled).as_bytes());
    contents.extend_from_slice(compiled);
    if std::fs::write(&temporary, &contents).is_ok() && std::fs::rename(&temporary, path).is_ok() {
        trim(dir, MOST_BYTES);
    } else {
        let _ = std::fs::remove_file(&temporary);
    }
}

/// The entries of `dir` (and the temporary files of entries being
/// written, with `temporary`), each with its metadata.
fn entries(dir: &Path, temporary: bool) -> std::io::Result<Vec<(PathBuf, std::fs::Metadata)>> {
    let is_entry = |path: &Path| {
        path.extension().is_some_and(|x| {
            x == EXTENSION
                || x == INSTRUMENTED
                || (temporary && x.to_string_lossy().ends_with("tmp"))
        })
    };
    Ok(std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .filter(|e| is_entry(&e.path()))
        .filter_map(|e| Some((e.path(), e.metadata().ok()?)))
        .collect())
}

/// Removes the least recently used entries of `dir` until the rest take at
/// most `most` bytes.
fn trim(dir: &Path, most: u64) {
    let mut found: Vec<(std::time::SystemTime, u64, PathBuf)> = entries(dir, false)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(path, meta)| Some((meta.modified().ok()?, meta.len(), path)))
        .collect();
    let mut total: u64 = found.iter().map(|(_, len, _)| len).sum();
    found.sort();
    for (_, len, path) in found {
        if total <= most {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
}

/// How many entries `dir` holds, and how many bytes they take.
pub fn usage(dir: &Path) -> (u64, u64) {
    entries(dir, false)
        .unwrap_or_default()
        .iter()
        .fold((0, 0), |(n, bytes), (_, meta)| (n + 1, bytes + meta.len()))
}

/// Removes every entry; returns how many bytes they took.
///
/// # Errors
///
/// When the folder exists but cannot be read.
pub fn clear(dir: &Path) -> std::io::Result<u64> {
    let found = match entries(dir, true) {
        Ok(found) => found,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    Ok(found
        .into_iter()
        .filter(|(path, _)| std::fs::remove_file(path).is_ok())
        .map(|(_, meta)| meta.len())
        .sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    const WAT: &str = r#"(module (func (export "_start")))"#;

    #[test]
    fn an_entry_is_written_read_back_and_a_damaged_one_is_compiled_again() {
        let engine = Engine::default();
        let wasm = WAT.as_bytes();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(entry_name(&engine, wasm));
        assert!(read(&engine, &path).is_none());
        let compiled = Module::new(&engine, wasm).unwrap().serialize().unwrap();
        write(&path, &compiled);
        assert!(read(&engine, &path).is_some());
        // A damaged entry is removed, never deserialized.
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(read(&engine, &path).is_none());
        assert!(!path.exists());
        std::fs::write(&path, b"short").unwrap();
        assert!(read(&engine, &path).is_none());
    }

    #[test]
    fn an_instrumented_module_is_kept_whole_under_a_key_of_all_it_depends_on() {
        let wasm = wat::parse_str(
            r#"(module (memory 1 1 shared)
                (func (export "_start") (drop (i32.atomic.load (i32.const 0)))))"#,
        )
        .unwrap();
        let options = InstrumentOptions::default();
        let out = crate::instrument::instrument(&wasm, &options).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(instrumented_name("build", &options, &wasm));
        write(&path, &postcard::to_stdvec(&out).unwrap());
        let back: crate::instrument::Instrumented =
            postcard::from_bytes(&read_whole(&path).unwrap()).unwrap();
        assert_eq!(back.wasm, out.wasm);
        assert_eq!(back.sites.len(), out.sites.len());
        assert_eq!(back.memory, out.memory);
        assert_eq!(back.main_entry, out.main_entry);
        assert_eq!(back.thread_entry, out.thread_entry);
        // Another weft, other options or another module: another entry.
        let logging = InstrumentOptions {
            log_accesses: true,
            ..options
        };
        let name = instrumented_name("build", &options, &wasm);
        assert_ne!(name, instrumented_name("rebuilt", &options, &wasm));
        assert_ne!(name, instrumented_name("build", &logging, &wasm));
        let calls = InstrumentOptions {
            log_calls: true,
            ..options
        };
        assert_ne!(
            instrumented_name("build", &calls, &wasm),
            instrumented_name("build", &logging, &wasm)
        );
        assert_ne!(name, instrumented_name("build", &options, WAT.as_bytes()));
    }

    #[test]
    fn trimming_keeps_the_newest_entries() {
        let dir = tempfile::tempdir().unwrap();
        for (i, name) in ["old", "mid", "new"].iter().enumerate() {
            let path = dir.path().join(format!("{name}.{EXTENSION}"));
            std::fs::write(&path, [0u8; 100]).unwrap();
            let at = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(i as u64);
            std::fs::File::options()
                .append(true)
                .open(&path)
                .unwrap()
                .set_modified(at)
                .unwrap();
        }
        trim(dir.path(), 250);
        assert!(!dir.path().join("old.cwasm").exists());
        assert!(dir.path().join("mid.cwasm").exists() && dir.path().join("new.cwasm").exists());
        assert_eq!(clear(dir.path()).unwrap(), 200);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
