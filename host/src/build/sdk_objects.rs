//! The C files linked into every C and C++ program (the SDK's, and the
//! sources of wasi-libc's emulations), compiled as a C library is: with
//! weft's own flags, never the program's. A program built with
//! `-std=c89`, `-ansi`, `-std=c++17` or `-x c++` gets its own sources
//! compiled so, and the same SDK objects as any other; only its
//! optimisation level (`-O2`) reaches them, so that the SDK's code is
//! optimised like the program's, as it always was.
//!
//! The objects are kept in a folder of the temporary directory named after
//! everything that makes them (the SDK's files, the emulations' sources,
//! the compile commands and the zig that runs them), so a build after the
//! first compiles none of them; each is written whole (a temporary file,
//! then a rename), so builds at the same time do not disturb each other.

use super::BuildError;
use super::c::Toolchain;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The optimisation flag among `flags` that wins (the last: `-O2`, `-Os`,
/// `-O`), if any.
pub(super) fn optimisation<S: AsRef<OsStr>>(flags: &[S]) -> Option<&OsStr> {
    flags.iter().map(AsRef::as_ref).rfind(|flag| {
        flag.to_str()
            .is_some_and(|f| f.starts_with("-O") && !f.contains('='))
    })
}

impl Toolchain {
    /// The objects of the C files every program is linked with, in link
    /// order, compiled with weft's flags and the optimisation flag among
    /// `flags` (the program's), each once per machine.
    ///
    /// # Errors
    ///
    /// [`BuildError::Io`] when the objects' folder cannot be written,
    /// [`BuildError::Compile`] when a file does not compile.
    pub fn sdk_objects<S: AsRef<OsStr>>(&self, flags: &[S]) -> Result<Vec<PathBuf>, BuildError> {
        let optimisation = optimisation(flags);
        let compiles: Vec<(PathBuf, Command)> = self
            .sdk_sources()
            .into_iter()
            .map(|source| {
                let cmd = self.compile_command(&source, optimisation.as_slice());
                (source, cmd)
            })
            .collect();
        let folder = self.objects_folder(&compiles)?;
        let objects: Vec<PathBuf> = compiles
            .iter()
            .map(|(source, _)| {
                folder.join(Path::new(source.file_name().unwrap_or_default()).with_extension("o"))
            })
            .collect();
        // The missing ones, compiled side by side.
        let mut running = Vec::new();
        for ((source, mut cmd), object) in compiles.into_iter().zip(&objects) {
            if object.is_file() {
                continue;
            }
            let partial = object.with_extension(format!("o.{}", std::process::id()));
            let child = cmd
                .arg("-o")
                .arg(&partial)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| BuildError::MissingTool(format!("cannot run zig cc: {e}")))?;
            running.push((source, partial, object, child));
        }
        for (source, partial, object, child) in running {
            let out = child
                .wait_with_output()
                .map_err(|e| BuildError::MissingTool(format!("cannot run zig cc: {e}")))?;
            if !out.status.success() {
                let _ = std::fs::remove_file(&partial);
                return Err(BuildError::Compile {
                    tool: "zig cc".into(),
                    file: source.display().to_string(),
                    output: String::from_utf8_lossy(&out.stderr).into_owned(),
                });
            }
            std::fs::rename(&partial, object)
                .map_err(|e| BuildError::Io(format!("cannot write `{}`: {e}", object.display())))?;
        }
        Ok(objects)
    }

    /// The folder of the objects `compiles` make, named after all that
    /// makes them.
    fn objects_folder(&self, compiles: &[(PathBuf, Command)]) -> Result<PathBuf, BuildError> {
        let mut hasher = blake3::Hasher::new();
        hasher.update(self.zig_env.as_bytes());
        // The build's own SDK folder has a name of its own, which the
        // objects do not keep (it is mapped away).
        let sdk = self.sdk.path().as_os_str().as_encoded_bytes();
        for (source, cmd) in compiles {
            let contents = std::fs::read(source)
                .map_err(|e| BuildError::Io(format!("cannot read `{}`: {e}", source.display())))?;
            hasher.update(&contents);
            for arg in std::iter::once(cmd.get_program()).chain(cmd.get_args()) {
                hasher.update(&replace(arg.as_encoded_bytes(), sdk, b"<sdk>"));
                hasher.update(&[0]);
            }
        }
        for (_, contents) in super::c::SDK_FILES {
            hasher.update(contents.as_bytes());
        }
        let id = &hasher.finalize().to_hex()[..16];
        let folder = std::env::temp_dir().join(format!("weft-c-objects-{id}"));
        std::fs::create_dir_all(&folder)
            .map_err(|e| BuildError::Io(format!("cannot create `{}`: {e}", folder.display())))?;
        Ok(folder)
    }
}

/// `bytes` with every `from` replaced by `to`.
fn replace(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while !from.is_empty() && rest.len() >= from.len() {
        match rest.windows(from.len()).position(|w| w == from) {
            Some(at) => {
                out.extend_from_slice(&rest[..at]);
                out.extend_from_slice(to);
                rest = &rest[at + from.len()..];
            }
            None => break,
        }
    }
    out.extend_from_slice(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_optimisation_flag_wins() {
        assert_eq!(optimisation(&["-O2", "-g", "-Os"]), Some(OsStr::new("-Os")));
        assert_eq!(optimisation(&["-std=c99", "-DOPT=3"]), None);
        assert_eq!(optimisation::<&str>(&[]), None);
    }

    #[test]
    fn a_folder_name_is_replaced_wherever_it_is() {
        assert_eq!(
            replace(b"-I/tmp/a -include /tmp/a/x.h", b"/tmp/a", b"<sdk>"),
            b"-I<sdk> -include <sdk>/x.h"
        );
        assert_eq!(replace(b"abc", b"", b"x"), b"abc");
    }
}
