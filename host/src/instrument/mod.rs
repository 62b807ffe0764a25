//! Module rewriting: turns a guest module into one whose every scheduling
//! point calls the host.
//!
//! What the pass does (one concern per file):
//! - [`survey`]: reads the module once and decides the [`MemoryPlan`].
//! - [`ops`]: which instructions become hooked accesses or host calls.
//! - [`rewrite`]: the [`wasm_encoder::reencode::Reencode`] pass: appends the
//!   `weft_rt` imports of [`crate::abi`], shifts function indices, hooks
//!   accesses (`point` + `park`), replaces `memory.atomic.wait32/64`,
//!   `memory.atomic.notify` and shared `memory.grow` by host calls, turns a
//!   defined shared memory into an import and makes its active data segments
//!   passive (the host applies them once per execution).
//! - [`sites`]: the table mapping each hooked instruction to its code site.
//!
//! wasmtime's own `memory.atomic.wait` blocks the OS thread, which would hang
//! a host that runs every guest thread on one OS thread; that is why waits
//! and notifies must become host calls.

mod ops;
mod rewrite;
pub mod sites;
mod survey;

pub use sites::{AccessKind, Site, SiteId, SiteTable};
pub use survey::{DataInit, MemoryPlan, SharedMemoryPlan};

use serde::{Deserialize, Serialize};
use wasm_encoder::reencode::Reencode;

/// Which instructions become scheduling points.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Points {
    /// Synchronisation only: atomics, wait/notify, spawn, exit, blocking WASI.
    #[default]
    Sync,
    /// Also every plain scalar load and store.
    Memory,
}

/// Options of the rewrite.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct InstrumentOptions {
    /// Which instructions become scheduling points.
    pub points: Points,
}

/// Errors of [`instrument`].
#[derive(Debug, thiserror::Error)]
pub enum InstrumentError {
    /// The input is not a valid wasm module.
    #[error("invalid wasm module: {0}")]
    Invalid(String),
    /// The module uses something weft does not support.
    #[error("unsupported module: {0}")]
    Unsupported(String),
    /// The rewrite failed; a weft bug if the input validated.
    #[error("cannot rewrite the module: {0}")]
    Rewrite(String),
}

impl From<wasmparser::BinaryReaderError> for InstrumentError {
    fn from(e: wasmparser::BinaryReaderError) -> Self {
        InstrumentError::Invalid(e.to_string())
    }
}

/// A rewritten module and what the host needs to run it.
#[derive(Debug)]
pub struct Instrumented {
    /// The rewritten module's bytes.
    pub wasm: Vec<u8>,
    /// The code site of every hooked instruction.
    pub sites: SiteTable,
    /// How the module's memory is provided.
    pub memory: MemoryPlan,
    /// Names of the functions the original module exports.
    pub exported_funcs: Vec<String>,
    /// Functions the original module imports, as (module, name).
    pub imported_funcs: Vec<(String, String)>,
}

/// The wasm features weft accepts in guest modules.
pub fn features() -> wasmparser::WasmFeatures {
    use wasmparser::WasmFeatures as F;
    F::default() | F::THREADS
}

/// Validates `wasm` and rewrites it so that every scheduling point calls the
/// host.
///
/// # Errors
///
/// [`InstrumentError::Invalid`] if `wasm` does not validate,
/// [`InstrumentError::Unsupported`] for components, several memories,
/// memory64, a non-shared imported memory or a non-constant data offset.
///
/// # Examples
///
/// ```
/// # fn main() -> anyhow::Result<()> {
/// let wasm = wat::parse_str(r#"(module
///     (memory 1 1 shared)
///     (func (export "_start") (drop (i32.atomic.load (i32.const 0)))))"#)?;
/// let out = weft::instrument::instrument(&wasm, &Default::default())?;
/// assert_eq!(out.sites.len(), 1);
/// # Ok(()) }
/// ```
pub fn instrument(
    wasm: &[u8],
    options: &InstrumentOptions,
) -> Result<Instrumented, InstrumentError> {
    wasmparser::Validator::new_with_features(features()).validate_all(wasm)?;
    let survey = survey::Survey::of(wasm)?;
    let mut rewriter = rewrite::Rewriter::new(&survey, options.points);
    let mut module = wasm_encoder::Module::new();
    rewriter
        .parse_core_module(&mut module, wasmparser::Parser::new(0), wasm)
        .map_err(|e| match e {
            wasm_encoder::reencode::Error::UserError(e) => e,
            other => InstrumentError::Rewrite(other.to_string()),
        })?;
    let out = module.finish();
    wasmparser::Validator::new_with_features(features())
        .validate_all(&out)
        .map_err(|e| {
            InstrumentError::Rewrite(format!("the rewritten module does not validate: {e}"))
        })?;
    Ok(Instrumented {
        wasm: out,
        sites: rewriter.sites,
        memory: survey.memory,
        exported_funcs: survey.exported_funcs,
        imported_funcs: survey.imported_funcs,
    })
}
