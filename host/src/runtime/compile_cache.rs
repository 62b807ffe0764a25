//! Compiled modules kept on disk between commands: compiling an
//! instrumented module is most of what a command spends before its first
//! execution, and a test runner, a replay or a grading starts weft on the
//! same module again and again.
//!
//! An entry is keyed by the instrumented module's bytes and the engine's
//! compatibility hash (wasmtime's version and every setting that shapes its
//! code), so a new weft, wasmtime or instrumentation never reads an old
//! entry. The folder is `WEFT_CACHE_DIR`, else `$XDG_CACHE_HOME/weft`, else
//! `~/.cache/weft`; `WEFT_CACHE_DIR=off` turns the cache off. Entries are
//! written whole (to a temporary file, then renamed), each carries the hash
//! of its contents, checked before it is read, and the folder is trimmed to
//! its newest entries past [`MOST_BYTES`]. Any failure to read or write
//! the cache only means compiling.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use wasmtime::{Engine, Module};

/// The most bytes of compiled modules the folder keeps.
pub const MOST_BYTES: u64 = 1 << 30;

/// The extension of an entry.
const EXTENSION: &str = "cwasm";

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
    let bytes = std::fs::read(path).ok()?;
    let (hash, compiled) = bytes.split_at_checked(blake3::OUT_LEN)?;
    if blake3::hash(compiled).as_bytes() != hash {
        let _ = std::fs::remove_file(path);
        return None;
    }
    // SAFETY: the bytes are what `Module::serialize` wrote for an engine
    // with the same compatibility hash (the entry's name says so), checked
    // whole against the hash written with them; wasmtime checks the
    // version and settings again and refuses a mismatch.
    let module = unsafe { Module::deserialize(engine, compiled) }.ok();
    // Touched, so that trimming keeps the entries in use.
    let _ = std::fs::File::options()
        .append(true)
        .open(path)
        .and_then(|f| f.set_modified(std::time::SystemTime::now()));
    module
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
        path.extension()
            .is_some_and(|x| x == EXTENSION || (temporary && x.to_string_lossy().ends_with("tmp")))
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
