//! The files a command will write, checked before it does any work: no
//! output is one of its inputs or another of its outputs, none would
//! overwrite a module, a replay file or a source it was not meant for, and
//! each can be written. A long exploration must not end by losing what it
//! found to a path that was wrong from the start.

use anyhow::{Result, bail};
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// What an output is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A replay file: it may replace an older replay file.
    Replay,
    /// A module: it may replace an older module.
    Module,
    /// A bundle (a replay file with its module): it may replace an older
    /// bundle.
    Bundle,
    /// A report (a page, JUnit XML): it may replace neither a replay file
    /// nor a module nor a source.
    Report,
}

/// The files one command reads and writes.
#[derive(Default)]
pub struct Outputs {
    inputs: Vec<(&'static str, PathBuf)>,
    /// Each output: the option that names it (or what it is, when nobody
    /// named it), its kind, its path, and whether it was named (a default
    /// that cannot be written fails when it is written, as a command that
    /// finds nothing never writes it; a default's option is the one that
    /// would name another).
    outputs: Vec<(&'static str, Kind, PathBuf, bool)>,
}

impl Outputs {
    /// A command's files, to be declared.
    pub fn new() -> Self {
        Outputs::default()
    }

    /// An input, `what` it is (`the module`, `the replay file`).
    pub fn input(mut self, what: &'static str, path: &Path) -> Self {
        self.inputs.push((what, path.to_path_buf()));
        self
    }

    /// An output of `kind`, named by `option` (`--html`), if given.
    pub fn output(mut self, option: &'static str, kind: Kind, path: Option<&Path>) -> Self {
        if let Some(path) = path {
            self.outputs.push((option, kind, path.to_path_buf(), true));
        }
        self
    }

    /// An output of `kind` at a default path nobody named, which `option`
    /// names instead.
    pub fn default_output(mut self, option: &'static str, kind: Kind, path: Option<&Path>) -> Self {
        if let Some(path) = path {
            self.outputs.push((option, kind, path.to_path_buf(), false));
        }
        self
    }

    /// Checks every output before the command starts.
    ///
    /// # Errors
    ///
    /// When an output is an input, names the same file as another output,
    /// would overwrite something it must not, or cannot be written.
    pub fn check(&self) -> Result<()> {
        for (n, (option, kind, path, named)) in self.outputs.iter().enumerate() {
            for (what, input) in &self.inputs {
                if crate::input::same_file(path, input) {
                    bail!(
                        "`{}` is {what} itself: {option} would overwrite it (choose another {option})",
                        path.display()
                    );
                }
            }
            for (other, _, earlier, _) in &self.outputs[..n] {
                if same_target(path, earlier) {
                    bail!(
                        "{other} and {option} both name `{}`: one would overwrite the other",
                        path.display()
                    );
                }
            }
            let replaceable = match kind {
                Kind::Replay => "a replay file",
                Kind::Module => "a wasm module",
                Kind::Bundle => BUNDLE,
                Kind::Report => "",
            };
            if let Some(what) = precious(path)
                && what != replaceable
            {
                bail!(
                    "`{}` is {what}: {option} would overwrite it (choose another {option})",
                    path.display()
                );
            }
            if *named {
                writable(option, path)?;
            }
        }
        Ok(())
    }
}

/// Whether `a` and `b` name the same file, existing or not.
fn same_target(a: &Path, b: &Path) -> bool {
    let resolve = |p: &Path| -> Option<PathBuf> {
        if let Ok(p) = std::fs::canonicalize(p) {
            return Some(p);
        }
        let parent = match p.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        Some(std::fs::canonicalize(parent).ok()?.join(p.file_name()?))
    };
    match (resolve(a), resolve(b)) {
        (Some(a), Some(b)) => a == b,
        _ => a == b,
    }
}

/// What a bundle, or other gzip data, is called.
const BUNDLE: &str = "a bundle (a replay file with its module) or other compressed data";

/// What an existing file at `path` is, if writing over it would destroy
/// work: a wasm module, a weft replay file or bundle, a program's source.
fn precious(path: &Path) -> Option<&'static str> {
    let metadata = std::fs::metadata(path).ok()?;
    if !metadata.is_file() {
        return None;
    }
    const SOURCES: [&str; 12] = [
        "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "rs", "zig", "wat", "wast", "toml",
    ];
    if path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| SOURCES.contains(&e.to_ascii_lowercase().as_str()))
    {
        return Some("a source file");
    }
    let mut head = [0u8; 512];
    let read = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    let head = &head[..read];
    if head.starts_with(b"\0asm") {
        return Some("a wasm module");
    }
    if head.starts_with(&[0x1f, 0x8b]) {
        // gzip: a bundle carries a module and a replay file that no
        // output of weft's replaces.
        return Some(BUNDLE);
    }
    let text = String::from_utf8_lossy(head);
    if text.trim_start().starts_with('{')
        && text.contains(&format!("\"{}\"", crate::replay::file::FORMAT))
    {
        return Some("a replay file");
    }
    None
}

/// Checks that `path` can be written, creating nothing that stays; only a
/// regular file is opened (a FIFO would block until someone reads it).
fn writable(option: &str, path: &Path) -> Result<()> {
    if path.is_dir() {
        bail!("{option} names `{}`, a folder: name a file", path.display());
    }
    let existed = path.exists();
    if existed && !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        bail!(
            "{option} names `{}`, which is not a regular file (a FIFO or a device?): name a file",
            path.display()
        );
    }
    match std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
    {
        Ok(_) => {
            if !existed {
                let _ = std::fs::remove_file(path);
            }
            Ok(())
        }
        Err(error) => bail!(
            "cannot write {option}'s `{}`: {error} (checked before starting, so that nothing found is lost)",
            path.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_never_overwrite_inputs_each_other_or_precious_files() {
        let dir = tempfile::tempdir().unwrap();
        let module = dir.path().join("m.wasm");
        std::fs::write(&module, b"\0asm\x01\0\0\0").unwrap();
        let replay = dir.path().join("r.weft.json");
        std::fs::write(
            &replay,
            "{\n  \"format\": \"weft-replay\",\n  \"version\": 6\n}",
        )
        .unwrap();
        let source = dir.path().join("main.c");
        std::fs::write(&source, "int main(void) { return 0; }").unwrap();
        let page = dir.path().join("r.html");

        let check = |outputs: Outputs| outputs.check().map_err(|e| e.to_string());
        // A page over the replay file replayed, or over any replay file.
        let error = check(Outputs::new().input("the replay file", &replay).output(
            "--html",
            Kind::Report,
            Some(&replay),
        ))
        .unwrap_err();
        assert!(error.contains("is the replay file itself"), "{error}");
        let error =
            check(Outputs::new().output("--junit", Kind::Report, Some(&replay))).unwrap_err();
        assert!(error.contains("a replay file"), "{error}");
        // A replay file may replace an older one, not a module or a source.
        check(Outputs::new().output("--save-failure", Kind::Replay, Some(&replay))).unwrap();
        for precious in [&module, &source] {
            let error =
                check(Outputs::new().output("--save-failure", Kind::Replay, Some(precious)))
                    .unwrap_err();
            assert!(error.contains("would overwrite"), "{error}");
        }
        // A bundle, by no output.
        let bundle = dir.path().join("bug.weft");
        std::fs::write(&bundle, [0x1f, 0x8b, 8, 0]).unwrap();
        for kind in [Kind::Replay, Kind::Report, Kind::Module] {
            let error = check(Outputs::new().output("-o", kind, Some(&bundle))).unwrap_err();
            assert!(error.contains("a bundle"), "{error}");
        }
        check(Outputs::new().output("-o", Kind::Bundle, Some(&bundle))).unwrap();
        // Two outputs to one file, spelled differently.
        let spelled = dir.path().join(".").join("r.html");
        let error = check(
            Outputs::new()
                .output("--save-failure", Kind::Replay, Some(&page))
                .output("--html", Kind::Report, Some(&spelled)),
        )
        .unwrap_err();
        assert!(error.contains("both name"), "{error}");
        // A folder that does not exist, and a folder itself.
        let error = check(Outputs::new().output(
            "--html",
            Kind::Report,
            Some(&dir.path().join("missing/r.html")),
        ))
        .unwrap_err();
        assert!(error.contains("cannot write --html"), "{error}");
        let error =
            check(Outputs::new().output("--html", Kind::Report, Some(dir.path()))).unwrap_err();
        assert!(error.contains("a folder"), "{error}");
        // A FIFO is refused without being opened, which would block.
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let error = check(Outputs::new().output("--html", Kind::Report, Some(&fifo))).unwrap_err();
        assert!(error.contains("not a regular file"), "{error}");
        // A good output is checked without leaving a file behind.
        check(Outputs::new().output("--html", Kind::Report, Some(&page))).unwrap();
        assert!(!page.exists());
    }
}
