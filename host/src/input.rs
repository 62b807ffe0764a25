//! Reading the files users name: only regular files, and only up to a
//! size, so that a FIFO, a device or a huge file gets a clear error at once
//! instead of a hang or exhausted memory.

use std::io::Read as _;
use std::path::Path;

/// The most bytes of a module weft reads (1 GiB).
pub const MODULE_LIMIT: u64 = 1 << 30;

/// The most bytes of a text input weft reads (256 MiB): replay files, task
/// definitions, property files, results to merge.
pub const TEXT_LIMIT: u64 = 256 << 20;

/// Why an input file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// A directory, FIFO, socket or device.
    #[error("it is not a regular file (a directory, FIFO or device?)")]
    NotAFile,
    /// Larger than the limit.
    #[error("it is larger than {} MiB", .limit >> 20)]
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
    /// Not UTF-8 where text was expected.
    #[error("it is not text")]
    NotText,
    /// The operating system's error.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The bytes of the regular file at `path`, if it has at most `limit`.
///
/// # Errors
///
/// [`InputError`]: not a regular file, too large, or unreadable.
pub fn read_file(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    // Opening a FIFO would block until someone writes to it: look first.
    let metadata = std::fs::metadata(path)?;
    if !metadata.is_file() {
        return Err(InputError::NotAFile);
    }
    if metadata.len() > limit {
        return Err(InputError::TooLarge { limit });
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    std::fs::File::open(path)?
        .take(limit + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        // It grew while being read.
        return Err(InputError::TooLarge { limit });
    }
    Ok(bytes)
}

/// The text of the regular file at `path`, if it has at most `limit` bytes.
///
/// # Errors
///
/// [`InputError`]: as [`read_file`], or not UTF-8.
pub fn read_text(path: &Path, limit: u64) -> Result<String, InputError> {
    String::from_utf8(read_file(path, limit)?).map_err(|_| InputError::NotText)
}

/// Reads a module file, assembling `.wat` text.
///
/// # Errors
///
/// When the file cannot be read ([`read_file`]) or its text does not
/// assemble.
pub fn read_module(path: &Path) -> anyhow::Result<Vec<u8>> {
    use anyhow::Context as _;
    // Look at the first bytes before reading the whole file: a large file
    // that is no module is refused without being read.
    let text = path.extension().is_some_and(|e| e == "wat");
    if !text {
        let head =
            read_head(path).with_context(|| format!("cannot read module `{}`", path.display()))?;
        let trimmed = head.trim_ascii_start();
        if !head.starts_with(b"\0asm") && !trimmed.starts_with(b"(") && !trimmed.is_empty() {
            anyhow::bail!(
                "`{}` is not a wasm module: it does not start with `\\0asm`, the magic number of WebAssembly modules (nor with `(`, as WAT text does)",
                path.display()
            );
        }
    }
    let bytes = read_file(path, MODULE_LIMIT)
        .with_context(|| format!("cannot read module `{}`", path.display()))?;
    if text || bytes.trim_ascii_start().starts_with(b"(") {
        return wat::parse_bytes(&bytes)
            .map(|b| b.into_owned())
            .with_context(|| format!("cannot assemble `{}`", path.display()));
    }
    Ok(bytes)
}

/// The first bytes (up to 64) of the regular file at `path`.
fn read_head(path: &Path) -> Result<Vec<u8>, InputError> {
    let metadata = std::fs::metadata(path)?;
    if !metadata.is_file() {
        return Err(InputError::NotAFile);
    }
    let mut head = Vec::with_capacity(64);
    std::fs::File::open(path)?.take(64).read_to_end(&mut head)?;
    Ok(head)
}

/// Whether `a` and `b` name the same existing file (so that writing one
/// would overwrite the other).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_is_no_module_is_refused_by_its_first_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let zeros = dir.path().join("zeros.wasm");
        std::fs::write(&zeros, vec![0u8; 1 << 16]).unwrap();
        let error = read_module(&zeros).unwrap_err().to_string();
        assert!(error.contains("is not a wasm module"), "{error}");
        let wat = dir.path().join("m");
        std::fs::write(&wat, "  (module)").unwrap();
        assert!(read_module(&wat).unwrap().starts_with(b"\0asm"));
    }

    #[test]
    fn only_regular_files_within_the_limit_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"abcd").unwrap();
        assert_eq!(read_file(&file, 4).unwrap(), b"abcd");
        assert!(matches!(
            read_file(&file, 3),
            Err(InputError::TooLarge { limit: 3 })
        ));
        assert!(matches!(
            read_file(dir.path(), 10),
            Err(InputError::NotAFile)
        ));
        assert!(matches!(
            read_file(Path::new("/dev/zero"), 10),
            Err(InputError::NotAFile)
        ));
        std::fs::write(&file, [0xff, 0xfe]).unwrap();
        assert!(matches!(read_text(&file, 10), Err(InputError::NotText)));
        assert!(matches!(
            read_file(&dir.path().join("missing"), 10),
            Err(InputError::Io(_))
        ));
    }
}
