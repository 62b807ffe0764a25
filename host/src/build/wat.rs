//! WebAssembly text to binary.

use super::BuildError;
use std::path::Path;

/// Assembles the WAT file `source` into `output`.
///
/// # Errors
///
/// [`BuildError::Compile`] with the assembler's message, or
/// [`BuildError::Io`].
pub fn build(source: &Path, output: &Path) -> Result<(), BuildError> {
    let wasm = ::wat::parse_file(source).map_err(|e| BuildError::Compile {
        tool: "wat".into(),
        file: source.display().to_string(),
        output: e.to_string(),
    })?;
    std::fs::write(output, wasm)
        .map_err(|e| BuildError::Io(format!("cannot write `{}`: {e}", output.display())))
}
