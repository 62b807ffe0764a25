//! Module rewriting: turns a guest module into one whose every scheduling
//! point calls the host.
//!
//! What the pass does (one concern per file):
//! - `survey`: reads the module once and decides the [`MemoryPlan`].
//! - `ops`: which instructions become hooked accesses or host calls.
//! - `rewrite`: the [`wasm_encoder::reencode::Reencode`] pass: appends the
//!   `weft_rt` imports of [`crate::abi`], shifts function indices, hooks
//!   accesses (`point` + `park`), replaces `memory.atomic.wait32/64`,
//!   `memory.atomic.notify` and shared `memory.grow` by host calls, turns a
//!   defined shared memory into an import and makes its active data segments
//!   passive (the host applies them once per execution). Every load, store
//!   and bulk instruction on the shared memory checks its end against the
//!   size the guest sees (see `runtime::shared_memory`), and the entry
//!   wrappers (`entries`) put the instance's state back so that it can
//!   run one execution after another.
//! - [`sites`]: the table mapping each hooked instruction to its code site.
//!
//! wasmtime's own `memory.atomic.wait` blocks the OS thread, which would hang
//! a host that runs every guest thread on one OS thread; that is why waits
//! and notifies must become host calls.

mod access_log;
pub mod count_test;
mod entries;
mod ops;
mod prefill;
mod rewrite;
pub mod sites;
mod survey;

pub use sites::{AccessKind, Site, SiteId, SiteTable};
#[cfg(test)]
pub(crate) use survey::DataInit;
pub(crate) use survey::function_names;
pub use survey::{MOST_TABLE_ELEMENTS, MOST_TABLES, MemoryPlan, SharedMemoryPlan};

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

/// How the calls of the library model are scheduled: the C library's,
/// libc++'s and Rust std's locks, condition variables, once, channels,
/// thread creation, join and exit, allocation and stdio (see
/// [`crate::library::steps`]). A replay file records the model it was made
/// with ([`PointModel::NAME_FIELD`]).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum PointModel {
    /// Each call is one step: a scheduling point where the call starts
    /// (none where the runtime allocates or sets a thread up), none inside
    /// the library's code. A call
    /// that must wait (a held lock, an empty channel) blocks its thread
    /// inside that step until another thread's step lets it go on. The
    /// default of every strategy.
    #[default]
    LibraryCalls,
    /// The library's own atomics, waits and spawns are scheduling points,
    /// as they are in the program (the model of replay files that name
    /// none is the one their instrumentation gives).
    SyncInternals,
}

impl PointModel {
    /// The replay file's field that names the model.
    pub const NAME_FIELD: &'static str = "point_model";

    /// Every model this build knows.
    pub const ALL: [PointModel; 2] = [PointModel::LibraryCalls, PointModel::SyncInternals];

    /// Its name, as the command line and replay files spell it.
    pub fn name(self) -> &'static str {
        match self {
            PointModel::LibraryCalls => "library-calls",
            PointModel::SyncInternals => "sync-internals",
        }
    }

    /// The model named `name`, if this build knows it.
    pub fn named(name: &str) -> Option<PointModel> {
        PointModel::ALL
            .into_iter()
            .find(|model| model.name() == name)
    }

    /// The model of code instrumented with `options`.
    pub fn of(options: &InstrumentOptions) -> PointModel {
        if options.library_steps {
            PointModel::LibraryCalls
        } else {
            PointModel::SyncInternals
        }
    }

    /// The instrumentation of the model (points, logging and the rest
    /// left as by default): under [`PointModel::LibraryCalls`], each call
    /// of the library model is one step, and the runtime's bookkeeping
    /// ([`InstrumentOptions::quiet_bookkeeping`]) is no scheduling point
    /// unless `exhaustive` (the exhaustive search's library model commutes
    /// allocation steps by their records); for the exhaustive search, a
    /// Rust read lock's inlined fast path is one step too
    /// ([`InstrumentOptions::read_lock_one_step`]).
    pub fn instrument(self, exhaustive: bool) -> InstrumentOptions {
        let library_steps = self == PointModel::LibraryCalls;
        InstrumentOptions {
            library_steps,
            quiet_bookkeeping: library_steps && !exhaustive,
            quick_library_entry: library_steps,
            library_depth_in_guest: library_steps,
            rust_runtime_steps: library_steps && !exhaustive,
            read_lock_one_step: library_steps && exhaustive,
            ..InstrumentOptions::default()
        }
    }
}

impl Points {
    /// Where threads may switch, in words (for verdicts that hold only for
    /// the points in use).
    pub fn describe(self) -> &'static str {
        match self {
            Points::Sync => "switching at atomics, waits, spawns and exits",
            Points::Memory => "switching at every memory access",
        }
    }
}

/// Options of the rewrite.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct InstrumentOptions {
    /// Which instructions become scheduling points.
    pub points: Points,
    /// Report every direct and indirect call and its return to the host
    /// (schedule inference reads them; they are not scheduling points).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub log_calls: bool,
    /// Log every plain access to the shared memory for the race detector
    /// (see [`crate::abi::ACCESS_LOG`]): not scheduling points, unless an
    /// execution makes their site one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub log_accesses: bool,
    /// With `log_accesses`: log the memory each of the program's calls of
    /// a C library function reads or writes on its behalf (`memcpy`,
    /// `strcpy`, `fwrite`, `printf`'s `%s`, ...: see
    /// [`crate::library::caller_memory`]) as the program's accesses at
    /// the call, and not the function's own accesses. (Replay files made
    /// before it existed leave it out, and replay as they were made.)
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub caller_memory: bool,
    /// With `log_accesses`: log a compare-exchange of the program's own
    /// code that fails (finds another value than the one it expected) as
    /// the atomic load C11 says it is, not as a write: it neither races
    /// with a plain read nor passes the thread's clock on. (A library's
    /// compare-exchanges stay read-modify-writes, as wasm performs them:
    /// the library's synchronisation is built on that.)
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub failed_cas_reads: bool,
    /// Make each call of the library model one step (see
    /// [`crate::abi::RT_LIBRARY_BEGIN`] and [`PointModel::LibraryCalls`]):
    /// strategies then see the program's synchronisation, not the
    /// instructions inside the library. Off by default here, the rewrite
    /// of the instructions as they are; the commands choose it through
    /// their [`PointModel`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub library_steps: bool,
    /// With `library_steps`: a call of the allocator (`malloc`, `free`,
    /// ...) or of the runtime's own set-up of a thread (see
    /// [`crate::library::steps::is_quiet_bookkeeping_function`]) is one
    /// step but no scheduling point (see [`crate::abi::RT_LIBRARY_ENTER`]):
    /// what it does is the runtime's private bookkeeping, which commutes
    /// with everything the program does, so a switch there shows nothing a
    /// switch at the thread's point before it does not. (The exhaustive
    /// search keeps each allocation a step: its library model commutes
    /// those steps by their records. Replay files made before it existed
    /// leave it out.)
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub quiet_bookkeeping: bool,
    /// With `library_steps`: a library step's entry first asks the host
    /// synchronously whether the call needs its full entry (see
    /// [`crate::abi::RT_LIBRARY_BEGIN_QUICK`]): a nested call then costs a
    /// plain host call instead of a suspension of the thread's fiber. The
    /// same steps and points either way; only the fuel the entry spends
    /// differs, and with it where a thread that computes without a point
    /// uses up its time slice. (Replay files made before it existed leave
    /// it out, and their time slices end where they did.)
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub quick_library_entry: bool,
    /// With `library_steps`: each thread's instance counts how deeply it
    /// is nested in library steps in a global of its own (reset at every
    /// entry, zero around a call through a pointer and a signal's
    /// handlers), and only the outermost step's entry and exit call the
    /// host: a library function that calls others (a lock taken inside
    /// `malloc`, `printf`'s stream lock) costs no host call per nested
    /// call. The same steps and points either way; the entry spends less
    /// fuel, so a thread that computes without a point uses up its time
    /// slice elsewhere. (Replay files made before it existed leave it
    /// out, and replay as they were made.)
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub library_depth_in_guest: bool,
    /// With `library_steps`: Rust std's own runtime machinery outside its
    /// synchronisation types is library steps too (see
    /// [`crate::library::steps::rust_std_runtime_function`]): joining a
    /// thread, reading the environment and printing are one step each, and
    /// a thread's id, the runtime's start and end around `main` and the
    /// runner of thread-local destructors one step but no scheduling point;
    /// and a step that is no scheduling point stays none where it goes on
    /// after a call through a pointer (a spawned thread's start routine,
    /// once the thread's closure returned). A Rust thread then costs a
    /// spawn, a start, an exit and a join, not the dozens of scheduling
    /// points std's code has between them. (The exhaustive search leaves
    /// it off: its library model knows the calls it makes steps. Replay
    /// files made before it existed leave it out, and replay as they were
    /// made.)
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rust_runtime_steps: bool,
    /// With `log_accesses`, `library_steps` and [`Points::Sync`]: a call of
    /// the C allocator that takes its lock (see
    /// [`crate::library::functions::is_allocator`]), which is then one step
    /// no other thread runs inside, logs one atomic read-modify-write of
    /// [`crate::abi::ALLOCATOR_LOCK_WORD`] at its entry and not the lock's
    /// own atomics (which stay scheduling points). The race check then
    /// orders every two allocator calls as the lock does, from half the
    /// log entries. (Replay files made before it existed leave it out, and
    /// log the lock's atomics as they were made.)
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allocator_as_one_lock: bool,
    /// With `log_accesses`: the plain accesses of the C thread library's
    /// functions of a thread's creation and end and of thread attributes
    /// (`pthread_create`, `pthread_exit`, `pthread_attr_init`, ...: see
    /// [`crate::library::c_functions::THREAD_LIFECYCLE`]) are not logged.
    /// The race check never checks them, and what they order is ordered
    /// otherwise: a thread starts knowing all its creator did, and a join
    /// waits for the thread list's lock, which the joined thread holds from
    /// its `pthread_exit` to its end. A fifth to a third of what the check
    /// reads of a program whose threads do little. (Replay files made before
    /// it existed leave it out, and log those accesses as they were made.)
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub quiet_thread_lifecycle: bool,
    /// Mark every read of the shared memory in a map of read bytes (see
    /// [`crate::abi::READ_MAP`]): a stateful search leaves the bytes no
    /// execution has read out of its states. The marks cost fuel, so a
    /// replay file made by such a search records it, and replays with it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub track_reads: bool,
    /// With `library_steps`: the fast path of Rust's `RwLock::read` that
    /// an optimised build inlines into the program (a load of the lock's
    /// word, then a compare-exchange that adds a reader) is one step, as
    /// the call it stands for is: no other thread runs between the two
    /// (see [`SiteTable::read_lock_fast_paths`]). A reader that another
    /// thread's step would have made retry goes on in the slow path, which
    /// takes the lock as the fast path would have. The exhaustive search's
    /// model (replay files made before it existed leave it out, and
    /// replay as made).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_lock_one_step: bool,
}

impl InstrumentOptions {
    /// These options with the race check's logging as the commands run
    /// it (`races`: the check is on): plain accesses logged, the program's
    /// calls of the C library checked at the call, its failed
    /// compare-exchanges logged as loads; or none of it.
    pub const fn with_race_check(self, races: bool) -> Self {
        InstrumentOptions {
            log_accesses: races,
            caller_memory: races,
            failed_cas_reads: races,
            allocator_as_one_lock: races,
            quiet_thread_lifecycle: races,
            ..self
        }
    }
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
        InstrumentError::Invalid(why_invalid(&e))
    }
}

/// What is wrong with a module that does not parse, in one line (the
/// parser's own text for a wrong magic number lists bytes as arrays).
pub fn why_invalid(error: &wasmparser::BinaryReaderError) -> String {
    if error.message().starts_with("magic header not detected") {
        return "it does not start with `\\0asm`, the magic number of WebAssembly modules".into();
    }
    error.to_string()
}

/// A rewritten module and what the host needs to run it. It is kept in
/// the cache between commands (see `runtime::compile_cache`).
#[derive(Debug, Serialize, Deserialize)]
pub struct Instrumented {
    /// The rewritten module's bytes.
    pub wasm: Vec<u8>,
    /// The code site of every hooked instruction.
    pub sites: SiteTable,
    /// How the module's memory is provided.
    pub memory: MemoryPlan,
    /// When the module logs its plain accesses (see
    /// [`crate::abi::ACCESS_LOG`]): how many sites the bitmap of scheduled
    /// sites covers.
    pub access_log: Option<u64>,
    /// Names of the functions the original module exports.
    pub exported_funcs: Vec<String>,
    /// Functions the original module imports, as (module, name).
    pub imported_funcs: Vec<(String, String)>,
    /// The export the main thread starts in: `_start`, or the wrapper that
    /// calls the start function first when the rewrite folded it in.
    pub main_entry: Entry,
    /// The export a spawned thread starts in: `wasi_thread_start` or its
    /// wrapper.
    pub thread_entry: Entry,
    /// Whether an instance, once its thread has finished, can run a thread
    /// of the next execution over the same (reset) shared memory exactly as
    /// a fresh instance would: the entry wrappers put every mutable global
    /// back, `data.drop` only sets a flag, and no instruction changes a
    /// table.
    pub reusable_instances: bool,
}

/// An export a thread starts in (see [`Instrumented::main_entry`]): one
/// of the ABI's names, kept in the cache as the name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry(pub &'static str);

impl Entry {
    /// Every entry an instrumented module may have.
    const ALL: [&'static str; 4] = [
        crate::abi::MAIN_EXPORT,
        crate::abi::MAIN_WRAPPER,
        crate::abi::THREAD_START_EXPORT,
        crate::abi::THREAD_WRAPPER,
    ];
}

impl Serialize for Entry {
    fn serialize<S: serde::Serializer>(&self, to: S) -> Result<S::Ok, S::Error> {
        to.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: serde::Deserializer<'de>>(from: D) -> Result<Self, D::Error> {
        let name = String::deserialize(from)?;
        Entry::ALL
            .into_iter()
            .find(|entry| *entry == name)
            .map(Entry)
            .ok_or_else(|| serde::de::Error::custom(format!("`{name}` is no entry of weft's ABI")))
    }
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
    instrument_logging(wasm, options, &|_| crate::library::Owner::Program)
}

/// [`instrument`], where `owner` says whose code is at each code offset
/// (as [`Site::code_offset`]): a module that
/// [logs its accesses](InstrumentOptions::log_accesses) logs no plain access
/// of a library's private state (they are left as they are, and have no
/// site), and with [`InstrumentOptions::caller_memory`] only the program's
/// own calls of the C library are told to the host.
///
/// # Errors
///
/// As [`instrument`].
pub fn instrument_logging(
    wasm: &[u8],
    options: &InstrumentOptions,
    owner: &dyn Fn(u32) -> crate::library::Owner,
) -> Result<Instrumented, InstrumentError> {
    wasmparser::Validator::new_with_features(features()).validate_all(wasm)?;
    let (without_start, start_func) = entries::split_start(wasm);
    let mut survey = survey::Survey::of(&without_start)?;
    survey.start_func = start_func;
    let wrappers = entries::EntryWrappers::plan(&survey);
    let reusable_instances = matches!(survey.memory, MemoryPlan::Shared(_))
        && !survey.mutates_tables
        && wrappers.is_some_and(|w| {
            w.thread.is_some()
                || !survey
                    .func_exports
                    .iter()
                    .any(|(name, _)| name == crate::abi::THREAD_START_EXPORT)
        });
    // Without a start section the two are the same bytes; with one that is
    // not folded in, the rewrite keeps it, and code offsets must be the
    // original module's.
    let source = if wrappers.is_none() && start_func.is_some() {
        survey = survey::Survey::of(wasm)?;
        wasm
    } else {
        &without_start[..]
    };
    if wrappers.is_some() {
        let prefill = prefill::plan(source, &survey)?;
        if let MemoryPlan::Shared(plan) = &mut survey.memory {
            plan.init.extend(prefill.data);
        }
        survey.prefilled = prefill.sites;
    }
    let mut rewriter = rewrite::Rewriter::new(&survey, *options, wrappers, owner);
    let mut module = wasm_encoder::Module::new();
    rewriter
        .parse_core_module(&mut module, wasmparser::Parser::new(0), source)
        .map_err(|e| match e {
            wasm_encoder::reencode::Error::UserError(e) => e,
            other => InstrumentError::Rewrite(other.to_string()),
        })?;
    let out = module.finish();
    // The point buffer memory has one-byte pages.
    wasmparser::Validator::new_with_features(
        features() | wasmparser::WasmFeatures::CUSTOM_PAGE_SIZES,
    )
    .validate_all(&out)
    .map_err(|e| {
        InstrumentError::Rewrite(format!("the rewritten module does not validate: {e}"))
    })?;
    Ok(Instrumented {
        wasm: out,
        access_log: rewriter.logged_sites(),
        sites: rewriter.sites,
        memory: survey.memory,
        exported_funcs: survey
            .func_exports
            .into_iter()
            .map(|(name, _)| name)
            .collect(),
        imported_funcs: survey.imported_funcs,
        main_entry: Entry(match wrappers {
            Some(_) => crate::abi::MAIN_WRAPPER,
            None => crate::abi::MAIN_EXPORT,
        }),
        thread_entry: Entry(match wrappers.and_then(|w| w.thread) {
            Some(_) => crate::abi::THREAD_WRAPPER,
            None => crate::abi::THREAD_START_EXPORT,
        }),
        reusable_instances,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmparser::{ExternalKind, Parser, Payload, TypeRef};

    fn rewrite(wat: &str, points: Points) -> Instrumented {
        let wasm = wat::parse_str(wat).unwrap();
        instrument(
            &wasm,
            &InstrumentOptions {
                points,
                ..Default::default()
            },
        )
        .unwrap()
    }

    fn imports(wasm: &[u8]) -> Vec<(String, String, bool)> {
        let mut out = Vec::new();
        for payload in Parser::new(0).parse_all(wasm) {
            if let Payload::ImportSection(reader) = payload.unwrap() {
                for import in reader.into_imports() {
                    let import = import.unwrap();
                    let is_memory = matches!(import.ty, TypeRef::Memory(_));
                    out.push((
                        import.module.to_string(),
                        import.name.to_string(),
                        is_memory,
                    ));
                }
            }
        }
        out
    }

    fn export_index(wasm: &[u8], name: &str) -> u32 {
        for payload in Parser::new(0).parse_all(wasm) {
            if let Payload::ExportSection(reader) = payload.unwrap() {
                for export in reader {
                    let export = export.unwrap();
                    if export.name == name && export.kind == ExternalKind::Func {
                        return export.index;
                    }
                }
            }
        }
        panic!("no export {name}");
    }

    const THREADED: &str = r#"(module
        (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
        (import "env" "memory" (memory 1 10 shared))
        (func $helper (result i32) (i32.atomic.load offset=8 (i32.const 0)))
        (func (export "_start")
          (i32.atomic.store (i32.const 0) (call $helper))
          (drop (i32.atomic.rmw.add (i32.const 4) (i32.const 1)))
          (drop (i64.atomic.rmw.cmpxchg (i32.const 16) (i64.const 1) (i64.const 2)))
          (drop (memory.atomic.wait32 (i32.const 4) (i32.const 0) (i64.const -1)))
          (drop (memory.atomic.notify (i32.const 4) (i32.const 1)))
          (drop (memory.grow (i32.const 1)))
          (drop (i32.load (i32.const 0)))))"#;

    #[test]
    fn logs_calls_only_when_asked() {
        let wasm = wat::parse_str(THREADED).unwrap();
        let options = InstrumentOptions {
            log_calls: true,
            ..Default::default()
        };
        let out = instrument(&wasm, &options).unwrap();
        let calls: Vec<&Site> = (0..out.sites.len() as u32)
            .filter_map(|i| out.sites.get(i))
            .filter(|s| s.kind == AccessKind::Call)
            .collect();
        assert_eq!(calls.len(), 1, "the call of $helper");
        assert_eq!(calls[0].callee, Some(1), "$helper is function 1");
        let plain = rewrite(THREADED, Points::Sync);
        assert_eq!(plain.sites.len() + 1, out.sites.len());
    }

    #[test]
    fn hooks_every_synchronisation_instruction() {
        let out = rewrite(THREADED, Points::Sync);
        let kinds: Vec<AccessKind> = (0..out.sites.len() as u32)
            .map(|i| out.sites.get(i).unwrap().kind)
            .collect();
        use AccessKind::*;
        assert_eq!(
            kinds,
            vec![
                AtomicLoad,
                AtomicStore,
                AtomicRmw,
                AtomicCmpxchg,
                Wait,
                Notify
            ]
        );
        assert_eq!(out.sites.get(0).unwrap().mem_offset, 8);
        assert_eq!(out.sites.get(3).unwrap().width, 8);
        let names: Vec<String> = imports(&out.wasm)
            .into_iter()
            .map(|(m, n, _)| format!("{m}.{n}"))
            .collect();
        assert_eq!(names[..2], ["wasi.thread-spawn", "env.memory"]);
        for sig in crate::abi::RT_IMPORTS {
            assert!(
                names.contains(&format!("weft_rt.{}", sig.name)),
                "{names:?}"
            );
        }
        // `_start` was function 2 (after one import and $helper); the
        // weft_rt functions were imported before it.
        assert_eq!(
            export_index(&out.wasm, "_start"),
            2 + crate::abi::RT_IMPORTS.len() as u32
        );
        assert!(
            matches!(out.memory, MemoryPlan::Shared(ref p) if p.min_pages == 1 && p.max_pages == 10)
        );
    }

    #[test]
    fn memory_points_hook_plain_accesses_too() {
        let sync = rewrite(THREADED, Points::Sync);
        let memory = rewrite(THREADED, Points::Memory);
        assert_eq!(memory.sites.len(), sync.sites.len() + 1);
        assert_eq!(
            memory
                .sites
                .get(memory.sites.len() as u32 - 1)
                .unwrap()
                .kind,
            AccessKind::Load
        );
    }

    #[test]
    fn module_without_types_or_imports_gets_both_sections() {
        let out = rewrite(
            r#"(module (memory 1 1 shared) (func (export "_start") (drop (i32.atomic.load (i32.const 0)))))"#,
            Points::Sync,
        );
        // The defined shared memory became an import, and the hooks were added.
        let imports = imports(&out.wasm);
        assert!(
            imports
                .iter()
                .any(|(m, n, mem)| m == "env" && n == "memory" && *mem)
        );
        assert_eq!(imports.len(), crate::abi::RT_IMPORTS.len() + 1);
    }

    #[test]
    fn active_data_of_a_shared_memory_is_applied_by_the_host() {
        let out = rewrite(
            r#"(module (memory 1 1 shared) (data (i32.const 16) "abc") (func (export "_start")))"#,
            Points::Sync,
        );
        let MemoryPlan::Shared(plan) = out.memory else {
            panic!("the memory is shared");
        };
        assert!(plan.was_defined);
        assert_eq!(
            plan.init,
            vec![DataInit {
                offset: 16,
                bytes: b"abc".to_vec()
            }]
        );
    }

    #[test]
    fn private_memory_stays_in_the_module() {
        let out = rewrite(
            r#"(module (memory 1) (func (export "_start") (drop (memory.grow (i32.const 1)))))"#,
            Points::Sync,
        );
        assert_eq!(out.memory, MemoryPlan::Private { min_pages: 1 });
        assert!(imports(&out.wasm).iter().all(|(_, _, mem)| !mem));
    }

    #[test]
    fn the_start_function_is_folded_into_the_entries() {
        let out = rewrite(
            r#"(module
                (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
                (memory 1 1 shared)
                (func $init (i32.atomic.store (i32.const 0) (i32.const 7)))
                (start $init)
                (func (export "wasi_thread_start") (param i32 i32))
                (func (export "_start") (drop (call $spawn (i32.const 0)))))"#,
            Points::Sync,
        );
        assert_eq!(out.main_entry.0, crate::abi::MAIN_WRAPPER);
        assert_eq!(out.thread_entry.0, crate::abi::THREAD_WRAPPER);
        let mut exports = Vec::new();
        for payload in Parser::new(0).parse_all(&out.wasm) {
            match payload.unwrap() {
                Payload::StartSection { .. } => panic!("the start section stays"),
                Payload::ExportSection(reader) => {
                    exports.extend(reader.into_iter().map(|e| e.unwrap().name.to_string()))
                }
                _ => {}
            }
        }
        for name in [crate::abi::MAIN_WRAPPER, crate::abi::THREAD_WRAPPER] {
            assert!(exports.iter().any(|e| e == name), "{exports:?}");
        }
        // The wrappers call the start function first.
        let wrapper = export_index(&out.wasm, crate::abi::MAIN_WRAPPER);
        let init = export_index(&out.wasm, "_start") - 2;
        let mut bodies = Vec::new();
        for payload in Parser::new(0).parse_all(&out.wasm) {
            if let Payload::CodeSectionEntry(body) = payload.unwrap() {
                bodies.push(body);
            }
        }
        let imports = crate::abi::RT_IMPORTS.len() as u32 + 1;
        let mut ops = bodies[(wrapper - imports) as usize]
            .get_operators_reader()
            .unwrap();
        // (After putting the globals back.)
        let first_call = std::iter::from_fn(|| ops.read().ok())
            .find(|op| matches!(op, wasmparser::Operator::Call { .. }));
        assert!(matches!(
            first_call,
            Some(wasmparser::Operator::Call { function_index }) if function_index == init
        ));
    }

    #[test]
    fn a_module_without_start_function_or_shared_memory_keeps_its_entries() {
        let out = rewrite(
            r#"(module (memory 1) (func (export "_start")))"#,
            Points::Sync,
        );
        assert_eq!(out.main_entry.0, "_start");
        assert_eq!(out.thread_entry.0, "wasi_thread_start");
        assert!(!out.reusable_instances);
    }

    /// The wrappers' instructions up to their first call.
    fn wrapper_prologue(wasm: &[u8]) -> Vec<String> {
        let wrapper = export_index(wasm, crate::abi::MAIN_WRAPPER);
        let imported = imports(wasm).iter().filter(|(_, _, mem)| !mem).count() as u32;
        let body = Parser::new(0)
            .parse_all(wasm)
            .filter_map(|p| match p.unwrap() {
                Payload::CodeSectionEntry(body) => Some(body),
                _ => None,
            })
            .nth((wrapper - imported) as usize)
            .unwrap();
        let mut ops = body.get_operators_reader().unwrap();
        std::iter::from_fn(|| ops.read().ok())
            .take_while(|op| !matches!(op, wasmparser::Operator::Call { .. }))
            .map(|op| format!("{op:?}"))
            .collect()
    }

    #[test]
    fn wrappers_put_every_mutable_global_back_first() {
        let out = rewrite(
            r#"(module
                (memory 2 2 shared)
                (global $sp (mut i32) (i32.const 1024))
                (global $k i32 (i32.const 3))
                (global $e (mut i64) (i64.add (i64.const 1) (i64.const 2)))
                (data $d "ab")
                (func (export "_start")
                  (memory.init $d (i32.const 0) (i32.const 0) (i32.const 2))
                  (data.drop $d)))"#,
            Points::Sync,
        );
        assert_eq!(out.main_entry.0, crate::abi::MAIN_WRAPPER);
        assert!(out.reusable_instances);
        assert_eq!(
            wrapper_prologue(&out.wasm),
            [
                "I32Const { value: 1024 }",
                "GlobalSet { global_index: 0 }",
                "I64Const { value: 1 }",
                "I64Const { value: 2 }",
                "I64Add",
                "GlobalSet { global_index: 2 }",
                // The dropped flag of $d.
                "I32Const { value: 0 }",
                "GlobalSet { global_index: 3 }",
            ]
        );
    }

    #[test]
    fn wrappers_put_the_library_depth_back_after_the_dropped_flags() {
        let wasm = wat::parse_str(
            r#"(module
                (memory 2 2 shared)
                (global $sp (mut i32) (i32.const 1024))
                (data $d "ab")
                (func (export "_start")
                  (memory.init $d (i32.const 0) (i32.const 0) (i32.const 2))
                  (data.drop $d)))"#,
        )
        .unwrap();
        let options = PointModel::LibraryCalls.instrument(false);
        let out = instrument(&wasm, &options).unwrap();
        assert_eq!(
            wrapper_prologue(&out.wasm),
            [
                "I32Const { value: 1024 }",
                "GlobalSet { global_index: 0 }",
                // The dropped flag of $d, then the library depth.
                "I32Const { value: 0 }",
                "GlobalSet { global_index: 1 }",
                "I32Const { value: 0 }",
                "GlobalSet { global_index: 2 }",
            ]
        );
    }

    #[test]
    fn data_drop_sets_a_flag_and_a_dropped_segment_reads_as_empty() {
        let out = rewrite(
            r#"(module
                (memory 1 1 shared)
                (data $d "ab")
                (func (export "_start")
                  (memory.init $d (i32.const 0) (i32.const 0) (i32.const 2))
                  (data.drop $d)))"#,
            Points::Sync,
        );
        let ops = code(&out.wasm);
        let segments = Parser::new(0)
            .parse_all(&out.wasm)
            .find_map(|p| match p.unwrap() {
                Payload::DataSection(reader) => Some(reader.count()),
                _ => None,
            })
            .unwrap();
        assert_eq!(segments, 2, "the empty segment is appended");
        assert!(!ops.iter().any(|op| op.starts_with("DataDrop")), "{ops:?}");
        assert!(
            ops.iter()
                .any(|op| op == "MemoryInit { data_index: 1, mem: 0 }")
        );
        assert!(
            ops.iter()
                .any(|op| op == "MemoryInit { data_index: 0, mem: 0 }")
        );
    }

    /// The operators of every function body of `wasm`, formatted.
    fn code(wasm: &[u8]) -> Vec<String> {
        let mut ops = Vec::new();
        for payload in Parser::new(0).parse_all(wasm) {
            if let Payload::CodeSectionEntry(body) = payload.unwrap() {
                let mut reader = body.get_operators_reader().unwrap();
                while !reader.eof() {
                    ops.push(format!("{:?}", reader.read().unwrap()));
                }
            }
        }
        ops
    }

    #[test]
    fn every_access_to_a_shared_memory_checks_its_end() {
        let accesses = r#"
                (func (export "_start")
                  (drop (i64.load offset=16 (i32.const 0)))
                  (i32.store8 (i32.const 3) (i32.const 1))
                  (v128.store (i32.const 32) (v128.const i64x2 0 0))
                  (drop (i32.atomic.rmw.add (i32.const 4) (i32.const 1)))))"#;
        let shared = rewrite(
            &format!("(module (memory 1 1 shared) {accesses}"),
            Points::Sync,
        );
        let ops = code(&shared.wasm);
        let selects = ops.iter().filter(|op| *op == "Select").count();
        assert_eq!(selects, 4, "{ops:?}");
        let size_reads = ops
            .iter()
            .filter(|op| op.starts_with("I64Load") && op.contains("offset: 8, memory: 1"))
            .count();
        assert_eq!(size_reads, 4, "{ops:?}");
        // The end each access checks: address + offset + width.
        for span in [24, 1, 16, 4] {
            assert!(
                ops.contains(&format!("I64Const {{ value: {span} }}")),
                "{span}: {ops:?}"
            );
        }
        let private = rewrite(&format!("(module (memory 1) {accesses}"), Points::Sync);
        assert!(!code(&private.wasm).iter().any(|op| op == "Select"));
    }

    #[test]
    fn a_module_that_changes_a_table_is_not_reusable() {
        let out = rewrite(
            r#"(module
                (memory 1 1 shared)
                (table 1 funcref)
                (func (export "_start") (table.set (i32.const 0) (ref.null func))))"#,
            Points::Sync,
        );
        assert!(!out.reusable_instances);
        assert!(rewrite(THREADED, Points::Sync).reusable_instances);
    }

    #[test]
    fn unreachable_traps_from_the_host_first() {
        let out = rewrite(
            r#"(module (func (export "_start") (if (i32.const 1) (then unreachable))))"#,
            Points::Sync,
        );
        let trap = crate::abi::RT_IMPORTS
            .iter()
            .position(|s| s.name == crate::abi::UNREACHABLE.name)
            .unwrap() as u32;
        let ops = code(&out.wasm);
        let at = ops.iter().position(|op| op == "Unreachable").unwrap();
        assert_eq!(ops[at - 1], format!("Call {{ function_index: {trap} }}"));
    }

    #[test]
    fn verifier_functions_are_rewritten_by_name() {
        let out = rewrite(
            r#"(module
                (func $__VERIFIER_atomic_step (param i32) (result i32)
                  (if (local.get 0) (then (return (i32.const 1))))
                  (i32.const 2))
                (func $assume_abort_if_not (param i32)
                  (if (i32.eqz (local.get 0)) (then unreachable)))
                (func (export "_start")
                  (drop (call $__VERIFIER_atomic_step (i32.const 0)))
                  (call $assume_abort_if_not (i32.const 1))))"#,
            Points::Sync,
        );
        let rt = |name: &str| {
            crate::abi::RT_IMPORTS
                .iter()
                .position(|s| s.name == name)
                .unwrap() as u32
        };
        let mut calls: Vec<Vec<u32>> = Vec::new();
        for payload in Parser::new(0).parse_all(&out.wasm) {
            if let Payload::CodeSectionEntry(body) = payload.unwrap() {
                let mut reader = body.get_operators_reader().unwrap();
                let mut called = Vec::new();
                while !reader.eof() {
                    if let wasmparser::Operator::Call { function_index } = reader.read().unwrap() {
                        called.push(function_index);
                    }
                }
                calls.push(called);
            }
        }
        // Entry, the early return and the final end of the atomic function.
        assert_eq!(
            calls[0],
            vec![rt("atomic_begin"), rt("atomic_end"), rt("atomic_end")]
        );
        assert_eq!(calls[1], vec![rt("assume")]);
    }

    #[test]
    fn rejects_what_weft_cannot_run() {
        let reject = |wat: &str| {
            let wasm = wat::parse_str(wat).unwrap();
            instrument(&wasm, &InstrumentOptions::default())
                .unwrap_err()
                .to_string()
        };
        assert!(reject("(module (memory i64 1))").contains("memory64"));
        assert!(reject("(module (import \"env\" \"memory\" (memory 1)))").contains("not shared"));
        assert!(reject("(module (memory 1) (memory 1))").contains("more than one memory"));
        assert!(
            instrument(b"\0asm\x01\0\0\0\xff", &InstrumentOptions::default())
                .unwrap_err()
                .to_string()
                .starts_with("invalid wasm module")
        );
    }
}
