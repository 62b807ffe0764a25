//! A bundle: a replay file and its module in one file, for a bug report.
//!
//! It is a gzip-compressed tar archive of two files, the replay file
//! (`NAME.weft.json`, recording its module's path as the module's file
//! name) and the module (`MODULE.wasm`, or the module's file name however
//! it ends): `weft replay BUG.weft` needs
//! nothing else, and `tar xzf BUG.weft` gives back the two files, which
//! replay as they are. Reading one is bounded like every input: a bundle
//! that unpacks to more than a module and a replay file may hold is
//! refused.

use super::file::ReplayFile;
use anyhow::{Context, Result, bail};
use std::io::Read as _;
use std::path::Path;

/// The extension a bundle is written with.
pub const EXTENSION: &str = "weft";

/// A replay file with its module.
pub struct Bundle {
    /// The replay file.
    pub replay: ReplayFile,
    /// The module's file name.
    pub module_name: String,
    /// The module.
    pub wasm: Vec<u8>,
}

/// Whether the file at `path` is a bundle (gzip data) rather than a replay
/// file (JSON text). Only a regular file is opened: a FIFO would block.
pub fn is_bundle(path: &Path) -> bool {
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut magic = [0u8; 2];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && magic == [0x1f, 0x8b]
}

impl Bundle {
    /// Writes the bundle to `path`.
    ///
    /// # Errors
    ///
    /// When the file cannot be written.
    pub fn write(&self, path: &Path) -> Result<()> {
        let file = std::fs::File::create(path)
            .with_context(|| format!("cannot write the bundle `{}`", path.display()))?;
        let gzip = flate2::write::GzEncoder::new(file, flate2::Compression::best());
        let mut archive = tar::Builder::new(gzip);
        let stem = self
            .module_name
            .strip_suffix(".wasm")
            .unwrap_or(&self.module_name);
        let mut replay = self.replay.clone();
        replay.module.path = self.module_name.clone();
        let entries = [
            (format!("{stem}.weft.json"), replay.to_json().into_bytes()),
            (self.module_name.clone(), self.wasm.clone()),
        ];
        for (name, bytes) in &entries {
            let mut header = tar::Header::new_gnu();
            header.set_size(bytes.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            archive
                .append_data(&mut header, name, bytes.as_slice())
                .with_context(|| format!("cannot write the bundle `{}`", path.display()))?;
        }
        archive
            .into_inner()
            .and_then(flate2::write::GzEncoder::finish)
            .with_context(|| format!("cannot write the bundle `{}`", path.display()))?;
        Ok(())
    }

    /// Reads the bundle at `path`.
    ///
    /// # Errors
    ///
    /// When it is not a bundle weft wrote: not gzip, not a tar archive of
    /// one replay file and one module, larger than those may be, or a
    /// replay file that does not parse.
    pub fn read(path: &Path) -> Result<Bundle> {
        let shown = path.display();
        let file = std::fs::File::open(path)
            .with_context(|| format!("cannot read the bundle `{shown}`"))?;
        // Unpacked, a bundle holds at most a module and a replay file.
        let limit = crate::input::MODULE_LIMIT + crate::input::TEXT_LIMIT;
        let unpacked = flate2::read::GzDecoder::new(file).take(limit + 1);
        let mut archive = tar::Archive::new(unpacked);
        let mut replay = None;
        let mut module = None;
        let entries = archive
            .entries()
            .with_context(|| format!("`{shown}` is not a bundle"))?;
        for entry in entries {
            let mut entry = entry.with_context(|| format!("`{shown}` is not a bundle"))?;
            let name = entry
                .path()
                .ok()
                .and_then(|p| p.to_str().map(str::to_string))
                .unwrap_or_default();
            // Refused by the size its header gives, before it is unpacked.
            let most = if name.ends_with(".weft.json") {
                crate::input::TEXT_LIMIT
            } else {
                crate::input::MODULE_LIMIT
            };
            if entry.header().size().unwrap_or(u64::MAX) > most {
                bail!(
                    "`{shown}` holds `{}`, larger than {} MiB unpacked: not a bundle weft wrote",
                    name.escape_debug(),
                    most >> 20
                );
            }
            // A module's first bytes are looked at before the rest is
            // unpacked: what is no module is refused unread.
            let mut bytes = Vec::new();
            (&mut entry)
                .take(4)
                .read_to_end(&mut bytes)
                .with_context(|| format!("`{shown}` is not a bundle"))?;
            if !name.ends_with(".weft.json") && bytes != b"\0asm" {
                bail!(
                    "`{shown}` holds `{}`, which is neither a replay file nor a module: a bundle holds one of each",
                    name.escape_debug()
                );
            }
            entry
                .read_to_end(&mut bytes)
                .with_context(|| format!("`{shown}` is not a bundle"))?;
            if name.ends_with(".weft.json") && replay.is_none() {
                let text = String::from_utf8(bytes)
                    .with_context(|| format!("the replay file in `{shown}` is not text"))?;
                replay = Some(ReplayFile::parse(&text, &format!("{shown}:{name}"))?);
            } else if module.is_none() && bytes.starts_with(b"\0asm") {
                // The module, whatever its file is called (a Makefile's
                // `prog` has no extension).
                module = Some((name, bytes));
            } else {
                bail!(
                    "`{shown}` holds `{}`: a bundle holds one replay file and one module",
                    name.escape_debug()
                );
            }
        }
        let (Some(replay), Some((module_name, wasm))) = (replay, module) else {
            bail!("`{shown}` is not a bundle of a replay file and its module");
        };
        Ok(Bundle {
            replay,
            module_name,
            wasm,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::Setup;
    use crate::instrument::InstrumentOptions;
    use crate::replay::file::{FORMAT, FoundBy, ModuleRef, VERSION};
    use crate::sched::Strategy;
    use crate::trace::TraceHash;

    fn replay_file() -> ReplayFile {
        ReplayFile {
            format: FORMAT.into(),
            version: VERSION,
            module: ModuleRef {
                path: "../build/m.wasm".into(),
                blake3: "ab".repeat(32),
            },
            point_model: None,
            instrument: InstrumentOptions::default(),
            run: Setup::default(),
            found_by: FoundBy {
                strategy: Strategy::Random,
                seed: 1,
                pct_depth: None,
                execution: 0,
            },
            decisions: vec![0, 1],
            values: Vec::new(),
            trace_hash: TraceHash([7; 16]),
            failure: None,
        }
    }

    #[test]
    fn a_bundle_holds_the_replay_file_and_its_module_and_unpacks_with_tar() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bug.weft");
        let bundle = Bundle {
            replay: replay_file(),
            module_name: "m.wasm".into(),
            wasm: b"\0asm\x01\0\0\0".to_vec(),
        };
        bundle.write(&path).unwrap();
        assert!(is_bundle(&path));
        let read = Bundle::read(&path).unwrap();
        assert_eq!(read.wasm, bundle.wasm);
        assert_eq!(read.module_name, "m.wasm");
        // Inside, the replay file finds its module beside it.
        assert_eq!(
            read.replay.module,
            ModuleRef {
                path: "m.wasm".into(),
                blake3: "ab".repeat(32)
            }
        );
        assert_eq!(read.replay.decisions, bundle.replay.decisions);
    }

    #[test]
    fn a_module_without_the_wasm_extension_is_bundled_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prog.weft");
        let bundle = Bundle {
            replay: replay_file(),
            module_name: "prog".into(),
            wasm: b"\0asm\x01\0\0\0".to_vec(),
        };
        bundle.write(&path).unwrap();
        let read = Bundle::read(&path).unwrap();
        assert_eq!(read.module_name, "prog");
        assert_eq!(read.wasm, bundle.wasm);
        assert_eq!(read.replay.module.path, "prog");
    }

    #[test]
    fn an_entry_too_large_or_not_a_module_is_refused_unread() {
        use std::io::Write as _;
        let dir = tempfile::tempdir().unwrap();
        // A header that announces 2 GiB, and nothing after it.
        let mut header = tar::Header::new_gnu();
        header.set_path("huge.wasm").unwrap();
        header.set_size(2 << 30);
        header.set_mode(0o644);
        header.set_cksum();
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gzip.write_all(header.as_bytes()).unwrap();
        let huge = dir.path().join("huge.weft");
        std::fs::write(&huge, gzip.finish().unwrap()).unwrap();
        let error = Bundle::read(&huge).err().unwrap().to_string();
        assert!(error.contains("larger than"), "{error}");
        // Zeros where the module should be.
        let zeros = dir.path().join("zeros.weft");
        let gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let mut archive = tar::Builder::new(gzip);
        let mut header = tar::Header::new_gnu();
        header.set_size(4096);
        header.set_mode(0o644);
        header.set_cksum();
        archive
            .append_data(&mut header, "m.wasm", &[0u8; 4096][..])
            .unwrap();
        let bytes = archive.into_inner().unwrap().finish().unwrap();
        std::fs::write(&zeros, bytes).unwrap();
        let error = Bundle::read(&zeros).err().unwrap().to_string();
        assert!(
            error.contains("neither a replay file nor a module"),
            "{error}"
        );
    }

    #[test]
    fn what_is_not_a_bundle_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.weft.json");
        std::fs::write(&json, replay_file().to_json()).unwrap();
        assert!(!is_bundle(&json));
        assert!(Bundle::read(&json).is_err());
        // gzip of something that is not a tar archive.
        let gz = dir.path().join("x.weft");
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut encoder, &[7u8; 4096]).unwrap();
        std::fs::write(&gz, encoder.finish().unwrap()).unwrap();
        assert!(is_bundle(&gz));
        assert!(Bundle::read(&gz).is_err());
    }
}
