//! [`Program`]: a module instrumented and compiled once, then executed
//! many times, each execution on instances and a memory kept warm from the
//! one before.

use super::analysis_imports;
use super::compile_cache;
use super::executor;
use super::live_locals::LiveLocals;
use super::read_granules::ReadGranules;
use super::shared_memory;
use super::state::ExecHandle;
use super::store_data::ThreadData;
use super::{Analysis, ExecutionResult, RunConfig, rt_imports, sdk_imports, signal_imports, wasi};
use crate::abi;
use crate::debuginfo::bookkeeping::owner_at;
use crate::debuginfo::symbols::LazySymbols;
use crate::instrument::{self, InstrumentOptions, MemoryPlan, PointModel, SiteTable};
use crate::library::Owner;
use crate::sched::Scheduler;
use std::sync::{Arc, Mutex};
use wasmtime::{Config, Engine, Linker, Module};

/// Errors loading a module.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Instrumentation rejected the module.
    #[error(transparent)]
    Instrument(#[from] instrument::InstrumentError),
    /// The module imports something weft does not provide.
    #[error("the module imports `{module}.{name}`, which weft does not provide")]
    UnknownImport {
        /// Import module.
        module: String,
        /// Import name.
        name: String,
    },
    /// The module imports an SDK function of an analysis that the program
    /// was loaded without.
    #[error(
        "the module imports `{module}.{name}`, an SDK function this program was loaded without (load it with `weft::execution::load`)"
    )]
    ImportNotLinked {
        /// Import module.
        module: String,
        /// Import name.
        name: String,
    },
    /// The module lacks an export weft needs.
    #[error("the module does not export `{0}`")]
    MissingExport(&'static str),
    /// The module spawns threads without a shared memory.
    #[error("the module imports `wasi.thread-spawn` but its memory is not shared")]
    SpawnWithoutSharedMemory,
    /// wasmtime could not compile the module.
    #[error("cannot compile the module: {0}")]
    Compile(String),
}

/// A module compiled for weft, ready to execute under any schedule.
pub struct Program {
    pub(super) engine: Engine,
    pub(super) module: Module,
    pub(super) linker: Linker<ThreadData>,
    pub(super) sites: Arc<SiteTable>,
    pub(super) memory: MemoryPlan,
    pub(super) hash: blake3::Hash,
    pub(super) options: InstrumentOptions,
    /// Whether executions share one memory, reset in between (see
    /// [`shared_memory`]): not when the module makes WASI calls that weft
    /// passes on to wasmtime-wasi, which checks guest pointers against the
    /// whole mapping rather than the size the guest sees.
    pub(super) reuses_memory: bool,
    /// The exports the main thread and spawned threads start in.
    pub(super) entries: (&'static str, &'static str),
    /// The shared memory kept for the next execution.
    pub(super) warm_memory: Option<Arc<shared_memory::GuestMemory>>,
    /// The instance template, built for `warm_memory` (or for a module
    /// without shared memory).
    pub(super) instance_pre: Option<wasmtime::InstancePre<ThreadData>>,
    /// Whether a finished thread's store and instance run the thread with
    /// the same id in the next execution (see
    /// [`instrument::Instrumented::reusable_instances`]); only with a reused
    /// memory, which they import.
    pub(super) reuses_instances: bool,
    /// The stores and instances kept for the next execution, by thread id:
    /// they import `warm_memory`.
    pub(super) warm_threads: Vec<Option<executor::WarmThread>>,
    /// The handle every store's data holds to the running execution.
    pub(super) exec: ExecHandle,
    /// The functions the module imports, as (module, name).
    pub(super) imported_funcs: Vec<(String, String)>,
    /// When the module logs its plain accesses: the sites its bitmap of
    /// scheduled sites covers.
    pub(super) access_log: Option<u64>,
    /// Names of the module's code and data, for reports.
    pub(super) symbols: Arc<LazySymbols>,
    /// What links the imports of the analyses the program was loaded with.
    pub(super) analysis_links: Arc<[analysis_imports::Link]>,
    /// How long loading it took.
    pub(super) load_times: LoadTimes,
    /// Under the race check, for each site: whether it is a plain access in
    /// a library's code (see [`Rewritten::library`]).
    pub(super) library: Option<Arc<[bool]>>,
    /// The instrumented module, for a program compiled to read threads'
    /// wasm state from it.
    pub(super) instrumented_wasm: Arc<[u8]>,
    /// When this program is compiled for guest debugging, and its
    /// executions read every thread's frames (see [`super::frames`]):
    /// which of a frame's locals still count.
    pub(super) live_locals: Option<Arc<LiveLocals>>,
    /// The same module compiled to read threads' frames, made the first
    /// time an execution needs it (see [`Program::state_reader`]).
    pub(super) state_reader: Option<Box<Program>>,
    /// When the module tracks its reads (see
    /// [`InstrumentOptions::track_reads`]): where each thread's map of read
    /// bytes lies in its point-buffer memory, as (offset, bytes), and the
    /// granules the executions read (shared with the state reader, whose
    /// executions a stateful search runs).
    pub(super) read_map: Option<(u64, u64)>,
    pub(super) read_granules: Option<Arc<Mutex<ReadGranules>>>,
}

/// A module rewritten for one instrumentation, as the cache keeps it.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct Rewritten {
    /// The rewritten module.
    instrumented: instrument::Instrumented,
    /// Under the race check (the module logs its plain accesses), for each
    /// site: whether it is a plain access in a library's code (the C
    /// library's thread library or a runtime), which the check takes only
    /// as synchronisation. Known when the module is rewritten, so that a
    /// command that reads the rewrite from the cache needs no debug
    /// information to run.
    library: Option<Vec<bool>>,
}

/// Rewrites `wasm` for `options`; under the race check, with the sites
/// classified by whose code they are in.
fn rewrite(
    wasm: &[u8],
    options: &InstrumentOptions,
    symbols: &LazySymbols,
) -> Result<Rewritten, instrument::InstrumentError> {
    if !options.log_accesses {
        return Ok(Rewritten {
            instrumented: instrument::instrument(wasm, options)?,
            library: None,
        });
    }
    symbols.with(|symbols| {
        // A runtime's private state is not logged: the race check leaves it
        // out, and logging it was most of what the check cost.
        let instrumented =
            instrument::instrument_logging(wasm, options, &|offset| owner_at(symbols, offset))?;
        let library = (0..instrumented.sites.len())
            .map(|id| {
                instrumented
                    .sites
                    .get(id as instrument::SiteId)
                    .is_some_and(|site| {
                        site.kind.is_plain()
                            && owner_at(symbols, site.code_offset) != Owner::Program
                    })
            })
            .collect();
        Ok(Rewritten {
            instrumented,
            library: Some(library),
        })
    })
}

/// How long loading a program took, phase by phase.
#[derive(Clone, Copy, Debug, Default)]
pub struct LoadTimes {
    /// Hashing the module and rewriting it with weft's instrumentation.
    pub instrument: std::time::Duration,
    /// Making the engine (its pool of instances, stacks and memories).
    pub engine: std::time::Duration,
    /// Compiling the instrumented module, or reading it from the compile
    /// cache.
    pub compile: std::time::Duration,
    /// Making the linker of weft's imports.
    pub link: std::time::Duration,
}

/// Fuel between two time-slice scheduling points of a thread that reaches
/// no other scheduling point.
pub(super) const SLICE_FUEL: u64 = 100_000;

impl Program {
    /// Instruments and compiles `wasm`. With
    /// [`log_accesses`](InstrumentOptions::log_accesses), the plain accesses
    /// of a language runtime's private state (the C allocator's and
    /// thread-specific data's, Rust `std`'s own functions': see
    /// [`Owner`]) are left unlogged, as no analysis needs them.
    ///
    /// # Errors
    ///
    /// A [`LoadError`] when the module is invalid, unsupported, imports what
    /// weft does not provide or lacks `_start`.
    pub fn load(wasm: &[u8], options: InstrumentOptions) -> Result<Self, LoadError> {
        Self::load_with(wasm, options, &[])
    }

    /// Instruments and compiles `wasm`, linking the SDK imports of
    /// `analyses` besides the runtime's own.
    ///
    /// # Errors
    ///
    /// As [`Program::load`].
    pub(crate) fn load_with(
        wasm: &[u8],
        options: InstrumentOptions,
        analyses: &[analysis_imports::Imports],
    ) -> Result<Self, LoadError> {
        let started = std::time::Instant::now();
        let hash = blake3::hash(wasm);
        let symbols = Arc::new(LazySymbols::new(wasm));
        let Rewritten {
            instrumented: out,
            library,
        } = compile_cache::instrumented(wasm, &options, || rewrite(wasm, &options, &symbols))?;
        let linked = |name: &str| {
            sdk_imports::IMPORTS
                .iter()
                .chain(analyses.iter().flat_map(|a| a.functions))
                .any(|s| s.name == name)
        };
        for (module, name) in &out.imported_funcs {
            let sdk = module == abi::SDK_MODULE;
            if module == wasi::MODULE
                || (module.as_str(), name.as_str()) == abi::THREAD_SPAWN
                || (sdk && linked(name))
                || (module == abi::SIGNAL_MODULE
                    && signal_imports::IMPORTS.contains(&name.as_str()))
            {
                continue;
            }
            let (module, name) = (module.clone(), name.clone());
            return Err(if sdk && abi::SDK_IMPORTS.iter().any(|s| s.name == name) {
                LoadError::ImportNotLinked { module, name }
            } else {
                LoadError::UnknownImport { module, name }
            });
        }
        let spawns = out
            .imported_funcs
            .iter()
            .any(|(m, n)| (m.as_str(), n.as_str()) == abi::THREAD_SPAWN);
        if spawns {
            if !matches!(out.memory, MemoryPlan::Shared(_)) {
                return Err(LoadError::SpawnWithoutSharedMemory);
            }
            if !out
                .exported_funcs
                .iter()
                .any(|e| e == abi::THREAD_START_EXPORT)
            {
                return Err(LoadError::MissingExport(abi::THREAD_START_EXPORT));
            }
        }
        let delegates_wasi = out
            .imported_funcs
            .iter()
            .any(|(m, n)| m == wasi::MODULE && !wasi::SHADOWED.contains(&n.as_str()));
        if !out.exported_funcs.iter().any(|e| e == abi::MAIN_EXPORT) {
            return Err(LoadError::MissingExport(abi::MAIN_EXPORT));
        }
        let instrumented = std::time::Instant::now();
        let engine = engine(false).map_err(|e| LoadError::Compile(e.to_string()))?;
        let engine_made = std::time::Instant::now();
        let module = compile_cache::compile(&engine, &out.wasm)
            .map_err(|e| LoadError::Compile(format!("{e:#}")))?;
        let compiled = std::time::Instant::now();
        let analysis_links: Arc<[analysis_imports::Link]> =
            analyses.iter().map(|a| a.link).collect();
        let linker = linker(&engine, &analysis_links)?;
        let load_times = LoadTimes {
            instrument: instrumented - started,
            engine: engine_made - instrumented,
            compile: compiled - engine_made,
            link: compiled.elapsed(),
        };
        let reuses_memory = !delegates_wasi;
        let read_map = match &out.memory {
            MemoryPlan::Shared(plan) if options.track_reads => {
                Some(abi::READ_MAP.place(out.access_log, plan.max_pages))
            }
            _ => None,
        };
        Ok(Program {
            engine,
            module,
            linker,
            sites: Arc::new(out.sites),
            memory: out.memory,
            hash,
            options,
            reuses_memory,
            entries: (out.main_entry.0, out.thread_entry.0),
            warm_memory: None,
            instance_pre: None,
            reuses_instances: reuses_memory && out.reusable_instances,
            warm_threads: Vec::new(),
            exec: ExecHandle::idle(),
            imported_funcs: out.imported_funcs,
            access_log: out.access_log,
            symbols,
            analysis_links,
            load_times,
            library: library.map(Arc::from),
            instrumented_wasm: Arc::from(out.wasm),
            live_locals: None,
            state_reader: None,
            read_map,
            read_granules: read_map
                .map(|(_, bytes)| Arc::new(Mutex::new(ReadGranules::new(bytes)))),
        })
    }

    /// `count` more programs for the same module, for parallel workers.
    /// Each has an engine of its own, so that its executions have the pool
    /// of instances, stacks and memories a program run alone has, whatever
    /// the other workers run (one pool shared by the workers would make an
    /// execution's threads depend on theirs); they share nothing an
    /// execution changes.
    ///
    /// # Errors
    ///
    /// When the compiled module cannot be carried over to a new engine.
    pub fn workers(&self, count: usize) -> Result<Vec<Program>, LoadError> {
        if count == 0 {
            return Ok(Vec::new());
        }
        let compiled = self
            .module
            .serialize()
            .map_err(|e| LoadError::Compile(format!("{e:#}")))?;
        (0..count).map(|_| self.worker(&compiled)).collect()
    }

    /// Another program for the same module, on an engine of its own, from
    /// its compiled code `compiled` (as `Module::serialize` wrote it).
    fn worker(&self, compiled: &[u8]) -> Result<Program, LoadError> {
        let compile = |e: wasmtime::Error| LoadError::Compile(format!("{e:#}"));
        let engine = engine(false).map_err(compile)?;
        // SAFETY: the bytes were serialized by this process, from a module
        // of an engine with the same configuration.
        let module = unsafe { Module::deserialize(&engine, compiled) }.map_err(compile)?;
        self.sibling(engine, module, None)
    }

    /// Another program for the same module, compiled as `module` on
    /// `engine` (for guest debugging when `live_locals` is given): it shares nothing
    /// an execution changes.
    fn sibling(
        &self,
        engine: Engine,
        module: Module,
        live_locals: Option<Arc<LiveLocals>>,
    ) -> Result<Program, LoadError> {
        let linker = linker(&engine, &self.analysis_links)?;
        Ok(Program {
            engine,
            module,
            linker,
            // A copy of its own: an execution clones its handle at many
            // points, and a count shared between workers on two cores
            // would bounce between their caches at each.
            sites: Arc::new(SiteTable::clone(&self.sites)),
            memory: self.memory.clone(),
            hash: self.hash,
            options: self.options,
            reuses_memory: self.reuses_memory,
            entries: self.entries,
            warm_memory: None,
            instance_pre: None,
            reuses_instances: self.reuses_instances,
            warm_threads: Vec::new(),
            exec: ExecHandle::idle(),
            imported_funcs: self.imported_funcs.clone(),
            access_log: self.access_log,
            symbols: self.symbols.clone(),
            analysis_links: self.analysis_links.clone(),
            load_times: LoadTimes::default(),
            library: self.library.clone(),
            instrumented_wasm: self.instrumented_wasm.clone(),
            live_locals,
            state_reader: None,
            read_map: self.read_map,
            read_granules: self
                .read_map
                .map(|(_, bytes)| Arc::new(Mutex::new(ReadGranules::new(bytes)))),
        })
    }

    /// The same module compiled for guest debugging, whose executions read
    /// every thread's wasm frames where it stops (see [`super::frames`]):
    /// slower, so made the first time an execution must tell a livelock
    /// from a loop whose state changes only in locals.
    ///
    /// # Errors
    ///
    /// When the module cannot be compiled for guest debugging.
    pub(super) fn state_reader(&mut self) -> Result<&mut Program, LoadError> {
        if self.state_reader.is_none() {
            let compile = |e: wasmtime::Error| LoadError::Compile(format!("{e:#}"));
            let engine = engine(true).map_err(compile)?;
            let module =
                compile_cache::compile(&engine, &self.instrumented_wasm).map_err(compile)?;
            let live_locals = Arc::new(LiveLocals::new(self.instrumented_wasm.clone()));
            let mut reader = self.sibling(engine, module, Some(live_locals))?;
            reader.read_granules = self.read_granules.clone();
            self.state_reader = Some(Box::new(reader));
        }
        Ok(self.state_reader.as_mut().expect("made above"))
    }

    /// The shared memory for the next execution: the warm one, else a new
    /// one (`None` when the module has no shared memory).
    pub(super) fn take_memory(
        &mut self,
    ) -> Result<Option<Arc<shared_memory::GuestMemory>>, String> {
        let MemoryPlan::Shared(plan) = &self.memory else {
            return Ok(None);
        };
        if let Some(memory) = self.warm_memory.take() {
            return Ok(Some(memory));
        }
        self.instance_pre = None;
        self.warm_threads.clear();
        let memory = shared_memory::GuestMemory::new(&self.engine, plan)?;
        Ok(Some(Arc::new(memory)))
    }

    /// Keeps an execution's memory for the next one, reset, when the
    /// program reuses memories, and with it the threads that finished on it
    /// (`warm`), which hold the only other references to it.
    pub(super) fn recycle(
        &mut self,
        memory: Arc<shared_memory::GuestMemory>,
        warm: Vec<Option<executor::WarmThread>>,
    ) {
        let holders = 1 + warm.iter().flatten().count();
        if self.reuses_memory && Arc::strong_count(&memory) == holders && memory.reset().is_ok() {
            self.warm_memory = Some(memory);
            self.warm_threads = warm;
        }
    }

    /// The instance template over `memory` (which `take_memory` gave),
    /// built once per memory.
    pub(super) fn instance_pre(
        &mut self,
        store: &wasmtime::Store<ThreadData>,
        memory: Option<&shared_memory::GuestMemory>,
    ) -> wasmtime::Result<wasmtime::InstancePre<ThreadData>> {
        if let Some(pre) = &self.instance_pre {
            return Ok(pre.clone());
        }
        if let (MemoryPlan::Shared(plan), Some(memory)) = (&self.memory, memory) {
            self.linker.define(
                store,
                &plan.import.0,
                &plan.import.1,
                memory.shared().clone(),
            )?;
        }
        let pre = self.linker.instantiate_pre(&self.module)?;
        self.instance_pre = Some(pre.clone());
        Ok(pre)
    }

    /// The instrumentation options the module was loaded with.
    pub fn options(&self) -> InstrumentOptions {
        self.options
    }

    /// The point model the module was loaded under.
    pub fn point_model(&self) -> PointModel {
        PointModel::of(&self.options)
    }

    /// Whether a thread's store and instance, once the thread has finished,
    /// run the same thread of the next execution instead of a new instance
    /// (a module with a reused shared memory whose instrumented form puts
    /// all its state back at each entry; see
    /// [`instrument::Instrumented::reusable_instances`]).
    pub fn reuses_instances(&self) -> bool {
        self.reuses_instances
    }

    /// The code sites of the instrumented module.
    pub fn sites(&self) -> &SiteTable {
        &self.sites
    }

    /// The code sites, shared.
    pub fn shared_sites(&self) -> Arc<SiteTable> {
        self.sites.clone()
    }

    /// Under the race check, for each site: whether it is a plain access
    /// in a library's code.
    pub fn library_sites(&self) -> Option<&Arc<[bool]>> {
        self.library.as_ref()
    }

    /// How long loading the program took, phase by phase (zero for a
    /// worker made from another program).
    pub fn load_times(&self) -> LoadTimes {
        self.load_times
    }

    /// Names of the module's functions, source lines and variables.
    pub fn symbols(&self) -> &Arc<LazySymbols> {
        &self.symbols
    }

    /// Runs the module once under `scheduler`, with no analysis.
    ///
    /// Guest failures are part of the returned [`ExecutionResult`].
    pub fn execute(
        &mut self,
        scheduler: Box<dyn Scheduler>,
        config: &RunConfig,
    ) -> ExecutionResult {
        self.execute_with(scheduler, config, &Vec::new)
    }

    /// Runs the module once under `scheduler` with the analyses `analyses`
    /// makes installed, in that order; their reports are in
    /// [`ExecutionResult::reports`]. An execution that seems to loop is run
    /// again on [`Program::state_reader`], with analyses made anew, to
    /// compare complete states.
    pub fn execute_with(
        &mut self,
        scheduler: Box<dyn Scheduler>,
        config: &RunConfig,
        analyses: &dyn Fn() -> Vec<Box<dyn Analysis>>,
    ) -> ExecutionResult {
        executor::run(self, scheduler, config, analyses)
    }

    /// Whether the module imports the function `module.name`.
    pub fn imports(&self, module: &str, name: &str) -> bool {
        self.imported_funcs
            .iter()
            .any(|(m, n)| m == module && n == name)
    }
}

/// Most threads alive at once that `--max-threads` may allow: the pool
/// must hold them and the finished threads kept for the next execution
/// (`executor::WARM_THREADS`).
pub const MOST_THREADS: u32 = POOL_SLOTS - executor::WARM_THREADS as u32;

/// Instances, fiber stacks and tables kept ready by the pooling allocator:
/// an execution creates one instance and one fiber per thread, so reusing
/// them instead of mapping fresh ones is most of the per-execution cost.
const POOL_SLOTS: u32 = 320;

/// A linker of `engine` with the runtime's imports and those `links` add.
fn linker(
    engine: &Engine,
    links: &[analysis_imports::Link],
) -> Result<Linker<ThreadData>, LoadError> {
    let mut linker = Linker::new(engine);
    let mut link = || -> wasmtime::Result<()> {
        wasi::add_to_linker(&mut linker)?;
        rt_imports::add_to_linker(&mut linker)?;
        sdk_imports::add_to_linker(&mut linker)?;
        signal_imports::add_to_linker(&mut linker)?;
        for link in links {
            link(&mut linker)?;
        }
        linker.allow_shadowing(true);
        Ok(())
    };
    link().map_err(|e| LoadError::Compile(format!("{e:#}")))?;
    Ok(linker)
}

/// The engine every program runs on (and the switch floor is measured on);
/// with `reads_frames`, compiled for guest debugging (see
/// [`Program::state_reader`]).
pub(crate) fn engine(reads_frames: bool) -> wasmtime::Result<Engine> {
    let mut pool = wasmtime::PoolingAllocationConfig::default();
    pool.total_core_instances(POOL_SLOTS)
        .total_stacks(POOL_SLOTS)
        // Wasm 2.0 allows several tables.
        .max_tables_per_module(crate::instrument::MOST_TABLES)
        .total_tables(POOL_SLOTS * crate::instrument::MOST_TABLES)
        .table_elements(crate::instrument::MOST_TABLE_ELEMENTS as usize)
        // Reset tables with memset instead of decommitting them: a
        // decommitted table page faults again at the next execution.
        .table_keep_resident(1 << 20)
        // Private memories: a single-threaded module's own, and the point
        // buffer of every thread of a module with shared memory (shared
        // memories live outside the pool).
        .total_memories(POOL_SLOTS)
        // Reset by memset the pages a buffer used rather than unmapping them.
        .linear_memory_keep_resident(1 << 16)
        .pagemap_scan(wasmtime::Enabled::Auto)
        .max_memory_size(4 << 30);
    let mut config = Config::new();
    config
        .allocation_strategy(wasmtime::InstanceAllocationStrategy::Pooling(pool))
        .async_stack_zeroing(false)
        // Instrumented frames are larger than the original ones: twice the
        // engine's default wasm stack lets a program recurse at least as
        // deep under weft as it does natively.
        .max_wasm_stack(1 << 20)
        .async_stack_size(3 << 20)
        .wasm_threads(true)
        .shared_memory(true)
        // The point buffer memory has one-byte pages.
        .wasm_custom_page_sizes(true)
        .consume_fuel(true)
        // Reports show the interleaving, not wasm stacks: capturing one on
        // every trap (a panicking guest traps) would only cost time.
        .wasm_backtrace_max_frames(None)
        .cranelift_opt_level(wasmtime::OptLevel::Speed)
        .guest_debug(reads_frames)
        .epoch_interruption(reads_frames);
    Engine::new(&config)
}
