//! The rewrite: a [`Reencode`] pass over the module that dispatches each
//! concern to its own emitter.
//!
//! - [`sections`]: what the rewrite appends to the module's sections (the
//!   `weft_rt` imports, the point buffer, the entry wrappers, the logging
//!   functions);
//! - [`markers`]: what a function's name asks of the runtime at its entry
//!   and exits (SV-COMP's functions, atomic sections, library steps);
//! - [`calls`]: logged calls and the call of a thread's start routine;
//! - [`library_calls`]: the program's calls of C library functions that
//!   touch its memory, through wrappers that tell the host what they
//!   touched;
//! - [`bulk`]: bulk instructions (points, bounds guards, log entries);
//! - [`segments`]: `memory.init` and `data.drop` of the shared memory's
//!   segments, which an instance must keep;
//! - [`accesses`]: loads, stores and atomics (points, log entries, checks
//!   against the size the guest sees);
//! - [`replaced`]: instructions the host carries out (wait, notify,
//!   `memory.grow`, `memory.size`, `unreachable`).
//!
//! Each instruction goes to the first emitter that claims it; an
//! instruction no emitter claims is copied.

mod accesses;
mod bulk;
mod calls;
mod fast_paths;
mod library_calls;
mod markers;
mod pointer_casts;
mod replaced;
mod scratch;
mod sections;
mod segments;
mod signal_entry;
#[cfg(test)]
mod testing;

use super::InstrumentError;
use super::access_log::LogFunctions;
use super::count_test::CountTest;
use super::entries::EntryWrappers;
use super::sites::{Site, SiteId, SiteTable};
use super::survey::{MemoryPlan, Survey};
use super::{AccessKind, InstrumentOptions};
use crate::abi::{self, Signature};
use crate::library::Owner;
use crate::library::steps::RuntimeCall;
use fast_paths::FastPathFlow;
use scratch::Scratch;
use std::collections::{HashMap, HashSet};
use wasm_encoder::reencode::{Error, Reencode, utils};
use wasm_encoder::{CodeSection, Encode, Function, ImportSection, Instruction, TypeSection};
use wasmparser::{FunctionBody, Operator};

type Result<T> = std::result::Result<T, Error<InstrumentError>>;

pub(crate) struct Rewriter<'s> {
    survey: &'s Survey,
    options: InstrumentOptions,
    /// Whose code is at a code offset: a library's private state is not
    /// logged (when accesses are), and only the program's own calls of
    /// the C library go through the wrappers of [`library_calls`].
    owner_at: &'s dyn Fn(u32) -> Owner,
    /// With `caller_memory`: the functions whose calls from the program
    /// go through wrappers, by original index (see [`library_calls`]).
    wrapped: Vec<library_calls::Wrapped>,
    /// Whether the function being rewritten is one of `wrapped`: its own
    /// accesses are not logged.
    in_wrapped: bool,
    /// Whether the function being rewritten is an allocator call logged as
    /// one access of the allocator's lock (see
    /// [`InstrumentOptions::allocator_as_one_lock`]): its own atomics are
    /// not logged.
    in_allocator_lock: bool,
    /// Whether the function being rewritten is one of a thread's creation
    /// and end whose plain accesses are not logged (see
    /// [`InstrumentOptions::quiet_thread_lifecycle`]).
    in_quiet_lifecycle: bool,
    pub sites: SiteTable,
    /// Index of the next defined function whose body is parsed.
    next_defined: u32,
    emitted_types: bool,
    emitted_imports: bool,
    emitted_globals: bool,
    emitted_memories: bool,
    emitted_exports: bool,
    /// The entry wrappers to append, when the start function is folded in.
    entries: Option<EntryWrappers>,
    /// Index of the next global the global section defines.
    next_global: u32,
    /// Encoded instructions that put the module's own mutable globals back
    /// to their initial values (run first by the entry wrappers).
    global_resets: Vec<u8>,
    /// With library steps: the functions that are one step each (see
    /// [`crate::library::steps::is_library_step_function`]), by original index.
    library_steps: HashSet<u32>,
    /// With library steps: those of them that are a slow path of
    /// [`crate::library::steps::RUST_STD_SLOW_PATHS`].
    slow_paths: HashSet<u32>,
    /// With [`InstrumentOptions::read_lock_one_step`]: those slow paths
    /// that are `RwLock::read_contended`.
    read_slow_paths: HashSet<u32>,
    /// Each compare-exchange that an atomic load ran right before on every
    /// path (see [`FastPathFlow::only_last`]), as (compare-exchange,
    /// load), while [`Rewriter::read_slow_paths`] has any.
    after_load: HashMap<SiteId, SiteId>,
    /// The library steps that are no scheduling points (the runtime's
    /// bookkeeping, under [`InstrumentOptions::quiet_bookkeeping`]), by
    /// original index.
    quiet_steps: HashSet<u32>,
    /// The export through which weft runs the program's signal handlers,
    /// when the module has them (see [`signal_entry`]).
    signal_entry: Option<signal_entry::SignalEntry>,
    /// The copies of table 0 for calls through a pointer of another type
    /// than the function's (see [`pointer_casts`]).
    casts: Vec<pointer_casts::CastTable>,
}

impl<'s> Rewriter<'s> {
    /// A rewriter of `survey`'s module that appends `entries`, if any, and
    /// logs the plain accesses of code that `owner_at` does not call a
    /// library's private state.
    pub fn new(
        survey: &'s Survey,
        options: InstrumentOptions,
        entries: Option<EntryWrappers>,
        owner_at: &'s dyn Fn(u32) -> Owner,
    ) -> Self {
        let mut rewriter = Rewriter {
            survey,
            options,
            owner_at,
            wrapped: Vec::new(),
            in_wrapped: false,
            in_allocator_lock: false,
            in_quiet_lifecycle: false,
            sites: SiteTable::default(),
            next_defined: 0,
            emitted_types: false,
            emitted_imports: false,
            emitted_globals: false,
            emitted_memories: false,
            emitted_exports: false,
            entries,
            next_global: survey.imported_globals,
            global_resets: Vec::new(),
            library_steps: HashSet::new(),
            slow_paths: HashSet::new(),
            read_slow_paths: HashSet::new(),
            after_load: HashMap::new(),
            quiet_steps: HashSet::new(),
            signal_entry: None,
            casts: survey.cast_tables(),
        };
        rewriter.signal_entry = rewriter.find_signal_entry();
        if options.library_steps {
            rewriter.find_library_steps();
        }
        if options.caller_memory && rewriter.logs_accesses() {
            rewriter.wrapped = rewriter.find_wrapped_functions();
        }
        rewriter
    }

    /// Reads each function's name once: which are library steps, and
    /// which of those are slow paths of Rust std's locks.
    fn find_library_steps(&mut self) {
        for (&index, name) in &self.survey.func_names {
            let quiet = self.options.quiet_bookkeeping
                && crate::library::steps::is_quiet_bookkeeping_function(name);
            let runtime = if self.options.rust_runtime_steps {
                crate::library::steps::rust_std_runtime_function(name)
            } else {
                None
            };
            if quiet || runtime == Some(RuntimeCall::Quiet) {
                self.library_steps.insert(index);
                self.quiet_steps.insert(index);
            }
            if runtime == Some(RuntimeCall::Step) {
                self.library_steps.insert(index);
            }
            if !crate::library::steps::is_library_step_function(name) {
                continue;
            }
            self.library_steps.insert(index);
            let method = crate::library::steps::rust_std_library_step(name);
            if method
                .is_some_and(|method| crate::library::steps::RUST_STD_SLOW_PATHS.contains(&method))
            {
                self.slow_paths.insert(index);
            }
            if self.options.read_lock_one_step && method == Some("RwLock::read_contended") {
                self.read_slow_paths.insert(index);
            }
        }
    }

    /// Whether function `func` (original index) is one library step.
    pub(super) fn is_library_step(&self, func: u32) -> bool {
        self.library_steps.contains(&func)
    }

    /// Whether function `func` (original index) is a library step that is
    /// no scheduling point.
    pub(super) fn is_quiet_step(&self, func: u32) -> bool {
        self.quiet_steps.contains(&func)
    }

    /// Appends the globals the rewrite adds: the dropped-segment flags,
    /// then the library depth.
    fn append_globals(&mut self, globals: &mut wasm_encoder::GlobalSection) {
        self.append_dropped_flags(globals);
        self.append_library_depth(globals);
        self.emitted_globals = true;
    }

    /// Puts every mutable global back to its initial value: the module's
    /// own and those the rewrite adds.
    fn emit_global_resets(&self, f: &mut Function) {
        f.raw(self.global_resets.iter().copied());
        self.emit_dropped_flag_resets(f);
        self.emit_library_depth_reset(f);
    }

    /// Whether accesses to the shared memory are logged (a module without
    /// code has none).
    pub fn logs_accesses(&self) -> bool {
        self.options.log_accesses
            && self.shares_memory()
            && !self.survey.defined_func_types.is_empty()
    }

    /// Where the map of read bytes lies in memory 1, as (offset, bytes),
    /// when the rewrite tracks reads (see [`abi::READ_MAP`]).
    pub(super) fn read_map(&self) -> Option<(u64, u64)> {
        let MemoryPlan::Shared(plan) = &self.survey.memory else {
            return None;
        };
        if !self.options.track_reads {
            return None;
        }
        Some(abi::READ_MAP.place(self.logged_sites(), plan.max_pages))
    }

    /// The sites whose accesses the module logs, when it logs them (see
    /// [`Rewriter::logs_accesses`]).
    pub fn logged_sites(&self) -> Option<u64> {
        self.logs_accesses().then_some(self.survey.site_bound)
    }

    /// Rewrites one function body: its entry markers, then each
    /// instruction through the emitters.
    fn rewrite_body(&mut self, body: FunctionBody<'_>) -> Result<Function> {
        let defined = self.next_defined;
        self.next_defined += 1;
        let func = self.survey.func_imports + defined;
        self.in_wrapped = self.wrapped_position(func).is_some();
        let name = self.survey.func_names.get(&func).map(String::as_str);
        if let Some(replaced) = self.replaced_body(defined, name) {
            return Ok(replaced);
        }

        let mut locals = Vec::new();
        let mut local_count = self.survey.params_of_defined(defined as usize);
        for pair in body.get_locals_reader()? {
            let (count, ty) = pair?;
            local_count += count;
            locals.push((count, self.val_type(ty)?));
        }
        let mut operators = Vec::new();
        let mut reader = body.get_operators_reader()?;
        while !reader.eof() {
            let pos = reader.original_position();
            operators.push((pos, reader.read()?));
        }
        let needs_scratch = self.survey.thread_start_c() == Some(func)
            || operators
                .iter()
                .any(|(_, op)| self.access_needs_scratch(op) || self.bulk_needs_scratch(op));
        let scratch = Scratch::at(local_count);
        if needs_scratch {
            locals.extend(Scratch::DECLS);
            local_count += Scratch::COUNT;
        }
        let kept_depth = self.keeps_library_depth(func, &operators).then(|| {
            locals.push((1, wasm_encoder::ValType::I32));
            local_count
        });

        let mut f = Function::new(locals);
        let markers = self.emit_entry_markers(&mut f, func, name, kept_depth);
        self.in_allocator_lock = self.takes_allocator_lock(func, name, &operators);
        self.in_quiet_lifecycle = self.options.quiet_thread_lifecycle
            && name.is_some_and(crate::library::c_functions::is_thread_lifecycle);
        if self.in_allocator_lock {
            self.emit_allocator_lock(&mut f);
        }
        let last = operators.len().saturating_sub(1);
        let mut flow = (!self.slow_paths.is_empty()).then(FastPathFlow::new);
        let counts: Vec<Option<CountTest>> = (0..operators.len())
            .map(|index| CountTest::at(&operators, index))
            .collect();
        for (index, (pos, op)) in operators.into_iter().enumerate() {
            let mut ran_before = None;
            if let Some(flow) = &flow {
                self.note_fast_paths(flow, &op);
                ran_before = flow.only_last();
            }
            let first_site = self.sites.len() as SiteId;
            let resumes = self.emit_markers_before(&mut f, markers, &op, index == last);
            let claimed = self.emit_call(&mut f, &op, func, pos, &scratch)?
                || self.emit_library_call(&mut f, &op, func, pos)
                || self.emit_bulk_instruction(&mut f, &op, func, pos, &scratch)?
                || self.emit_data_drop(&mut f, &op)
                || self.emit_access(&mut f, &op, func, pos, &scratch)?
                || self.emit_replaced(&mut f, &op, func, pos)
                || self.emit_cast_call(&mut f, &op);
            if !claimed {
                f.instruction(&self.instruction(op.clone())?);
            }
            if resumes {
                self.emit_resume_marker(&mut f, markers);
            }
            let site = (self.sites.len() as SiteId > first_site).then_some(first_site);
            if let (Some(site), Some(load)) = (site, ran_before) {
                self.note_after_load(site, load);
            }
            if let Some(test) = counts[index] {
                let rmw = (first_site..self.sites.len() as SiteId).find(|&id| {
                    self.sites
                        .get(id)
                        .is_some_and(|s| s.kind == AccessKind::AtomicRmw)
                });
                if let Some(site) = rmw {
                    self.sites.count(site, test);
                }
            }
            if let Some(flow) = &mut flow {
                flow.after(&op, site);
            }
        }
        Ok(f)
    }

    /// With [`InstrumentOptions::allocator_as_one_lock`]: whether function
    /// `func`, named `name`, whose body is `operators`, is a call of the
    /// allocator that takes its lock (it has atomic accesses) and that is
    /// one step no other thread runs inside (under [`Points::Sync`] only
    /// its atomics are points, far fewer than a step's most).
    ///
    /// [`Points::Sync`]: super::Points::Sync
    fn takes_allocator_lock(
        &self,
        func: u32,
        name: Option<&str>,
        operators: &[(usize, Operator)],
    ) -> bool {
        self.options.allocator_as_one_lock
            && self.options.points == super::Points::Sync
            && !self.in_wrapped
            && self.is_library_step(func)
            && name.is_some_and(crate::library::functions::is_allocator)
            && self.log_functions().is_some()
            && operators
                .iter()
                .any(|(_, op)| super::ops::atomic_access(op).is_some())
    }

    /// Logs, at the entry of an allocator call that takes the lock, one
    /// atomic read-modify-write of [`abi::ALLOCATOR_LOCK_WORD`] (at
    /// [`abi::ALLOCATOR_LOCK_SITE`]): what the lock's acquire and release
    /// order, as one step orders them.
    fn emit_allocator_lock(&self, f: &mut Function) {
        if let Some(log) = self.log_functions() {
            log.emit_constant_call(f, abi::ALLOCATOR_LOCK_WORD, abi::ALLOCATOR_LOCK_SITE as i32);
        }
    }

    /// With library steps: when `op` calls one of
    /// [`crate::library::steps::RUST_STD_SLOW_PATHS`], notes the atomic operations that may
    /// run right before it (see [`fast_paths`]) as that slow path's fast
    /// paths inlined into the program.
    fn note_fast_paths(&mut self, flow: &FastPathFlow, op: &Operator) {
        let Operator::Call { function_index } = op else {
            return;
        };
        if !self.slow_paths.contains(function_index) {
            return;
        }
        let sites = flow.fast_paths_of_call();
        for &site in &sites {
            self.sites.guard(site, *function_index);
        }
        if self.read_slow_paths.contains(function_index) {
            for &cas in &sites {
                if let Some(&load) = self.after_load.get(&cas)
                    && sites.contains(&load)
                {
                    self.sites.read_lock(load, cas);
                }
            }
        }
    }

    /// With [`InstrumentOptions::read_lock_one_step`]: notes the
    /// instruction at `site`, which the atomic load at `load` ran right
    /// before, if it is a compare-exchange after an atomic load (a read
    /// lock's fast path, should both lead to `RwLock::read_contended`).
    fn note_after_load(&mut self, site: SiteId, load: SiteId) {
        if self.read_slow_paths.is_empty() {
            return;
        }
        let kind = |id| self.sites.get(id).map(|s| s.kind);
        if kind(site) == Some(AccessKind::AtomicCmpxchg)
            && kind(load) == Some(AccessKind::AtomicLoad)
        {
            self.after_load.insert(site, load);
        }
    }

    /// Function index of the `n`-th appended `weft_rt` import.
    fn rt_func(&self, sig: &Signature) -> u32 {
        let n = abi::RT_IMPORTS
            .iter()
            .position(|s| s.name == sig.name)
            .expect("every rt signature is listed in RT_IMPORTS") as u32;
        self.survey.func_imports + n
    }

    fn shares_memory(&self) -> bool {
        matches!(self.survey.memory, MemoryPlan::Shared(_))
    }

    /// Index of the first function the rewrite appends after the module's
    /// own: the entry wrappers, then the logging functions.
    fn first_appended_function(&self) -> u32 {
        self.survey.func_imports
            + abi::RT_IMPORTS.len() as u32
            + self.survey.defined_func_types.len() as u32
    }

    /// The functions that log accesses, when the module has them (see
    /// [`super::access_log`]): appended after the defined functions and the
    /// entry wrappers.
    fn log_functions(&self) -> Option<LogFunctions> {
        if !self.logs_accesses() {
            return None;
        }
        let first = self.first_appended_function()
            + self.entries.map_or(0, |e| e.wrappers().count() as u32);
        Some(LogFunctions {
            log: first,
            log_bulk: first + 1,
        })
    }

    /// A site whose access may become a scheduling point through the access
    /// log's bitmap, which has a bit for each site the survey counted.
    fn checked_site(&self, site: i32) -> Result<i32> {
        if site as u64 >= self.survey.site_bound {
            return Err(Error::UserError(InstrumentError::Rewrite(format!(
                "site {site} is past the {} the survey counted",
                self.survey.site_bound
            ))));
        }
        Ok(site)
    }

    /// The code offset of the instruction at `pos` in the module's bytes.
    fn code_offset(&self, pos: usize) -> u32 {
        pos.saturating_sub(self.survey.code_section_start) as u32
    }

    /// Whose code the instruction at `pos` is.
    fn owner_of(&self, pos: usize) -> Owner {
        (self.owner_at)(self.code_offset(pos))
    }

    /// Whether a plain access at `pos` is logged (when accesses are).
    fn logs_at(&self, pos: usize) -> bool {
        !self.in_wrapped && !self.in_quiet_lifecycle && self.owner_of(pos) != Owner::Private
    }

    /// A new site for the access of `kind` at `pos` in function `func`.
    fn site(&mut self, kind: AccessKind, func: u32, pos: usize, offset: u64, width: u8) -> i32 {
        let code_offset = self.code_offset(pos);
        self.sites.push(Site {
            kind,
            func,
            code_offset,
            mem_offset: offset,
            width,
            callee: None,
            touch: None,
        }) as i32
    }
}

impl Reencode for Rewriter<'_> {
    type Error = InstrumentError;

    fn function_index(&mut self, func: u32) -> Result<u32> {
        if func < self.survey.func_imports {
            Ok(func)
        } else {
            Ok(func + abi::RT_IMPORTS.len() as u32)
        }
    }

    fn parse_type_section(
        &mut self,
        types: &mut TypeSection,
        section: wasmparser::TypeSectionReader<'_>,
    ) -> Result<()> {
        utils::parse_type_section(self, types, section)?;
        self.append_types(types);
        Ok(())
    }

    fn parse_import_section(
        &mut self,
        imports: &mut ImportSection,
        section: wasmparser::ImportSectionReader<'_>,
    ) -> Result<()> {
        utils::parse_import_section(self, imports, section)?;
        self.append_imports(imports);
        Ok(())
    }

    fn parse_export_section(
        &mut self,
        exports: &mut wasm_encoder::ExportSection,
        section: wasmparser::ExportSectionReader<'_>,
    ) -> Result<()> {
        utils::parse_export_section(self, exports, section)?;
        self.append_exports(exports)
    }

    fn parse_table_section(
        &mut self,
        tables: &mut wasm_encoder::TableSection,
        section: wasmparser::TableSectionReader<'_>,
    ) -> Result<()> {
        utils::parse_table_section(self, tables, section)?;
        self.append_cast_tables(tables)
    }

    fn parse_element_section(
        &mut self,
        elements: &mut wasm_encoder::ElementSection,
        section: wasmparser::ElementSectionReader<'_>,
    ) -> Result<()> {
        utils::parse_element_section(self, elements, section)?;
        self.append_cast_elements(elements)
    }

    fn parse_function_section(
        &mut self,
        functions: &mut wasm_encoder::FunctionSection,
        section: wasmparser::FunctionSectionReader<'_>,
    ) -> Result<()> {
        utils::parse_function_section(self, functions, section)?;
        self.append_functions(functions);
        Ok(())
    }

    fn parse_code_section(
        &mut self,
        code: &mut CodeSection,
        section: wasmparser::CodeSectionReader<'_>,
    ) -> Result<()> {
        utils::parse_code_section(self, code, section)?;
        self.append_bodies(code)
    }

    fn parse_global_section(
        &mut self,
        globals: &mut wasm_encoder::GlobalSection,
        section: wasmparser::GlobalSectionReader<'_>,
    ) -> Result<()> {
        utils::parse_global_section(self, globals, section)?;
        self.append_globals(globals);
        Ok(())
    }

    fn parse_global(
        &mut self,
        globals: &mut wasm_encoder::GlobalSection,
        global: wasmparser::Global<'_>,
    ) -> Result<()> {
        let index = self.next_global;
        self.next_global += 1;
        if global.ty.mutable {
            let mut reader = global.init_expr.get_operators_reader();
            while !reader.eof() {
                let op = reader.read()?;
                if !matches!(op, wasmparser::Operator::End) {
                    self.instruction(op)?.encode(&mut self.global_resets);
                }
            }
            Instruction::GlobalSet(index).encode(&mut self.global_resets);
        }
        utils::parse_global(self, globals, global)
    }

    fn data_count(&mut self, count: u32) -> Result<u32> {
        Ok(count + u32::from(self.empty_segment().is_some()))
    }

    fn parse_data_section(
        &mut self,
        data: &mut wasm_encoder::DataSection,
        section: wasmparser::DataSectionReader<'_>,
    ) -> Result<()> {
        utils::parse_data_section(self, data, section)?;
        if self.empty_segment().is_some() {
            data.passive([]);
        }
        Ok(())
    }

    fn parse_memory_section(
        &mut self,
        memories: &mut wasm_encoder::MemorySection,
        section: wasmparser::MemorySectionReader<'_>,
    ) -> Result<()> {
        if let MemoryPlan::Shared(plan) = &self.survey.memory {
            if !plan.was_defined {
                utils::parse_memory_section(self, memories, section)?;
            }
            // (A defined shared memory became an import.)
            self.define_point_buffer(memories);
            return Ok(());
        }
        utils::parse_memory_section(self, memories, section)
    }

    fn parse_data(
        &mut self,
        data: &mut wasm_encoder::DataSection,
        datum: wasmparser::Data<'_>,
    ) -> Result<()> {
        if self.shares_memory()
            && matches!(
                datum.kind,
                wasmparser::DataKind::Active {
                    memory_index: 0,
                    ..
                }
            )
        {
            // Applied once per execution by the host; keep the segment (its
            // index may be named by `data.drop`) but make it passive.
            data.passive(datum.data.iter().copied());
            return Ok(());
        }
        utils::parse_data(self, data, datum)
    }

    fn parse_custom_section(
        &mut self,
        module: &mut wasm_encoder::Module,
        section: wasmparser::CustomSectionReader<'_>,
    ) -> Result<()> {
        // DWARF describes the original code offsets; weft reads it from the
        // original module, and the rewritten copy would only mislead.
        if section.name().starts_with(".debug") {
            return Ok(());
        }
        // The spec has engines ignore a malformed name section; so does
        // the rewrite, by leaving it out.
        if let wasmparser::KnownCustom::Name(names) = section.as_known()
            && malformed_names(names)
        {
            return Ok(());
        }
        utils::parse_custom_section(self, module, section)
    }

    fn intersperse_section_hook(
        &mut self,
        module: &mut wasm_encoder::Module,
        _after: Option<wasm_encoder::SectionId>,
        before: Option<wasm_encoder::SectionId>,
    ) -> Result<()> {
        use wasm_encoder::SectionId;
        // The sections that can come before an appended one, in module
        // order (custom sections first: a hook before one is past nothing).
        const ORDER: [SectionId; 9] = [
            SectionId::Custom,
            SectionId::Type,
            SectionId::Import,
            SectionId::Function,
            SectionId::Table,
            SectionId::Memory,
            SectionId::Tag,
            SectionId::Global,
            SectionId::Export,
        ];
        // Whether the hook is past where section `last` goes.
        let past = |last: SectionId| {
            let upto = ORDER.iter().position(|&s| s == last).map_or(0, |i| i + 1);
            before.is_none_or(|id| !ORDER[..upto].contains(&id))
        };
        if !self.emitted_types && !self.survey.has_type_section && past(SectionId::Type) {
            let mut types = TypeSection::new();
            self.append_types(&mut types);
            module.section(&types);
        }
        if !self.emitted_imports && !self.survey.has_import_section && past(SectionId::Import) {
            let mut imports = ImportSection::new();
            self.append_imports(&mut imports);
            module.section(&imports);
        }
        if !self.emitted_memories && self.shares_memory() && past(SectionId::Memory) {
            let mut memories = wasm_encoder::MemorySection::new();
            self.define_point_buffer(&mut memories);
            module.section(&memories);
        }
        if !self.emitted_globals
            && !self.survey.has_global_section
            && self.shares_memory()
            && past(SectionId::Global)
        {
            let mut globals = wasm_encoder::GlobalSection::new();
            self.append_globals(&mut globals);
            module.section(&globals);
        }
        if !self.emitted_exports && self.shares_memory() && past(SectionId::Export) {
            let mut exports = wasm_encoder::ExportSection::new();
            self.export_point_buffer(&mut exports);
            module.section(&exports);
        }
        Ok(())
    }

    fn parse_function_body(
        &mut self,
        code: &mut CodeSection,
        body: FunctionBody<'_>,
    ) -> Result<()> {
        let f = self.rewrite_body(body)?;
        code.function(&f);
        Ok(())
    }
}

/// Whether a name section has anything that does not parse, at any depth.
fn malformed_names(names: wasmparser::NameSectionReader<'_>) -> bool {
    use wasmparser::Name;
    let map_ok = |map: wasmparser::NameMap<'_>| map.into_iter().all(|n| n.is_ok());
    let indirect_ok = |map: wasmparser::IndirectNameMap<'_>| {
        map.into_iter().all(|n| n.is_ok_and(|n| map_ok(n.names)))
    };
    !names.into_iter().all(|name| match name {
        Err(_) => false,
        Ok(
            Name::Function(map)
            | Name::Type(map)
            | Name::Table(map)
            | Name::Memory(map)
            | Name::Global(map)
            | Name::Element(map)
            | Name::Data(map)
            | Name::Tag(map),
        ) => map_ok(map),
        Ok(Name::Local(map) | Name::Label(map) | Name::Field(map)) => indirect_ok(map),
        Ok(Name::Module { .. } | Name::Unknown { .. }) => true,
    })
}
