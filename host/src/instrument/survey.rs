//! A first read of the module: the facts the rewrite needs before it starts
//! (function types, import counts, the memory and where code begins).

use super::InstrumentError;
use serde::{Deserialize, Serialize};
use wasmparser::{
    CompositeInnerType, DataKind, ExternalKind, Operator, Parser, Payload, TypeRef, ValType,
};

/// The most elements a table may start with (the runtime's pool holds
/// tables of this size).
pub const MOST_TABLE_ELEMENTS: u64 = 1 << 16;

/// The most tables a module may define (the runtime's pool holds this many
/// for each instance).
pub const MOST_TABLES: u32 = 4;

/// How the module's memory relates to threads.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum MemoryPlan {
    /// The module has no memory.
    #[default]
    None,
    /// The module defines a memory that is not shared: it can only run as a
    /// single thread, and the memory stays inside the module.
    Private {
        /// Its initial size in pages.
        min_pages: u64,
    },
    /// The memory is shared: the host creates it once per execution and every
    /// thread's instance imports it.
    Shared(SharedMemoryPlan),
}

/// The shared memory weft provides to every thread of an execution.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedMemoryPlan {
    /// Import module and name under which the instrumented module imports it.
    pub import: (String, String),
    /// Initial size in 64 KiB pages.
    pub min_pages: u64,
    /// Declared maximum size in pages.
    pub max_pages: u64,
    /// Whether the original module defined the memory itself (weft turned the
    /// definition into an import).
    pub was_defined: bool,
    /// Active data segments, applied once per execution before the main thread
    /// starts (not on every thread's instantiation).
    pub init: Vec<DataInit>,
}

/// Bytes to copy into memory at an offset when an execution starts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataInit {
    /// Destination address.
    pub offset: u64,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// What the rewrite needs to know about the original module.
#[derive(Debug, Default)]
pub(crate) struct Survey {
    /// Parameter and result types of each type that is a function type.
    pub func_sigs: Vec<Option<(Vec<ValType>, Vec<ValType>)>>,
    /// Type index of each imported function.
    pub imported_func_types: Vec<u32>,
    /// The start function, which the caller of [`Survey::of`] cut out of the
    /// module (see [`super::entries`]).
    pub start_func: Option<u32>,
    /// Exported functions as (name, function index).
    pub func_exports: Vec<(String, u32)>,
    /// Number of entries in the type index space.
    pub type_count: u32,
    /// Number of imported functions.
    pub func_imports: u32,
    /// Type index of each defined function.
    pub defined_func_types: Vec<u32>,
    /// Offset in the file of the code section's contents.
    pub code_section_start: usize,
    /// The memory plan.
    pub memory: MemoryPlan,
    /// Whether the module has a type section.
    pub has_type_section: bool,
    /// Whether the module has an import section.
    pub has_import_section: bool,
    /// Imported functions as (module, name).
    pub imported_funcs: Vec<(String, String)>,
    /// Names of functions from the name section, by function index.
    pub func_names: std::collections::HashMap<u32, String>,
    /// Number of globals, imported and defined.
    pub global_count: u32,
    /// Number of imported globals.
    pub imported_globals: u32,
    /// Whether the module has a global section.
    pub has_global_section: bool,
    /// Whether each data segment is active for memory 0, by segment index.
    pub data_active: Vec<bool>,
    /// The data segments `memory.init` or `data.drop` name, ascending.
    pub data_named: Vec<u32>,
    /// The code offsets of the start function's copies whose bytes are in
    /// the memory's first image (see [`super::prefill`]).
    pub prefilled: std::collections::BTreeSet<usize>,
    /// Whether any instruction changes a table (`table.set`, `table.grow`,
    /// `table.fill`, `table.copy`, `table.init`, `elem.drop`).
    pub mutates_tables: bool,
    /// At least as many as the sites the rewrite can create: the memory
    /// accesses, bulk instructions, waits, notifies and calls.
    pub site_bound: u64,
    /// The slots of table 0 where active element segments place, at
    /// constant offsets, a function whose type is a loose start routine's
    /// (see [`Survey::loose_start_routines`]): what such a function pointer
    /// calls, when no instruction changes the table.
    pub loose_slots: std::collections::HashMap<u32, LooseRoutine>,
    /// For each function body that names one of [`Survey::loose_slots`] as
    /// a constant: those slots, and the functions the body calls.
    pub loose_slot_uses: Vec<(Vec<u32>, Vec<u32>)>,
    /// Names of globals from the name section, by global index.
    pub global_names: std::collections::HashMap<u32, String>,
    /// For each global some function takes a constant off
    /// (`global.get g; i32.const n; i32.sub`, as a C function makes its
    /// frame below the stack pointer): the largest such constant.
    pub frames_below: std::collections::HashMap<u32, u32>,
    /// The function that the active element segments place in each slot
    /// of table 0 at a constant offset, by slot (a later segment's
    /// function replaces an earlier one's, as instantiation does).
    pub table_functions: std::collections::BTreeMap<u32, u32>,
    /// Whether an active segment of table 0 has an offset that is not a
    /// constant or items that are not plain functions, so that
    /// [`Survey::table_functions`] may not be what the table holds.
    pub table_slots_uncertain: bool,
    /// The types of the calls through table 0 (`call_indirect` and
    /// `return_call_indirect`).
    pub indirect_call_types: std::collections::BTreeSet<u32>,
    /// The source languages the `producers` section names (`C11`,
    /// `Rust`, ...).
    pub languages: Vec<String>,
    /// Number of imported tables.
    pub imported_tables: u32,
    /// The tables the module defines.
    pub defined_tables: Vec<wasmparser::TableType>,
}

/// A function whose type is not a thread start routine's `(i32) -> i32`
/// but one old C gives `pthread_create`: `() -> i32` or `(i32) -> ()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LooseRoutine {
    /// Its index.
    pub function: u32,
    /// Whether it takes the thread's argument.
    pub takes_arg: bool,
    /// Whether it returns a value (the thread's result).
    pub returns: bool,
}

impl Survey {
    /// Reads `wasm` and collects the facts, rejecting what weft cannot run.
    pub fn of(wasm: &[u8]) -> Result<Self, InstrumentError> {
        let mut survey = Survey::default();
        let mut data_named = std::collections::BTreeSet::new();
        let mut memories = Memories::default();
        for payload in Parser::new(0).parse_all(wasm) {
            match payload? {
                Payload::Version { encoding, .. } if encoding != wasmparser::Encoding::Module => {
                    return Err(InstrumentError::Unsupported(
                        "components are not supported; give a core wasm module".into(),
                    ));
                }
                Payload::TypeSection(reader) => survey.read_types(reader)?,
                Payload::TableSection(reader) => survey.defined_tables = check_tables(reader)?,
                Payload::ImportSection(reader) => survey.read_imports(reader, &mut memories)?,
                Payload::FunctionSection(reader) => {
                    for ty in reader {
                        survey.defined_func_types.push(ty?);
                    }
                }
                Payload::GlobalSection(reader) => {
                    survey.has_global_section = true;
                    survey.global_count += reader.count();
                }
                Payload::MemorySection(reader) => {
                    for ty in reader {
                        memories.defined.push(ty?);
                    }
                }
                Payload::ExportSection(reader) => {
                    for export in reader {
                        let export = export?;
                        if export.kind == ExternalKind::Func {
                            survey
                                .func_exports
                                .push((export.name.to_string(), export.index));
                        }
                    }
                }
                Payload::CustomSection(reader) if reader.name() == "name" => {
                    survey.func_names.extend(function_names(&reader));
                    survey.global_names.extend(global_names(&reader));
                }
                Payload::CustomSection(reader) if reader.name() == "producers" => {
                    survey.languages.extend(languages(&reader));
                }
                Payload::CodeSectionStart { range, .. } => {
                    survey.code_section_start = range.start;
                }
                Payload::CodeSectionEntry(body) => {
                    survey.scan_code(&body, &mut data_named)?;
                }
                Payload::ElementSection(reader) => survey.read_table_slots(reader)?,
                Payload::DataSection(reader) => survey.read_data(reader, &mut memories)?,
                _ => {}
            }
        }
        survey.memory = memories.plan()?;
        survey.data_named = data_named.into_iter().collect();
        Ok(survey)
    }

    /// Reads the function types of the type section.
    fn read_types(
        &mut self,
        reader: wasmparser::TypeSectionReader<'_>,
    ) -> Result<(), InstrumentError> {
        self.has_type_section = true;
        for group in reader {
            for sub in group?.into_types() {
                let sig = match &sub.composite_type.inner {
                    CompositeInnerType::Func(f) => {
                        Some((f.params().to_vec(), f.results().to_vec()))
                    }
                    _ => None,
                };
                self.func_sigs.push(sig);
            }
        }
        self.type_count = self.func_sigs.len() as u32;
        Ok(())
    }

    /// Reads the imported functions and globals, and the imported memory
    /// into `memories`.
    fn read_imports(
        &mut self,
        reader: wasmparser::ImportSectionReader<'_>,
        memories: &mut Memories,
    ) -> Result<(), InstrumentError> {
        self.has_import_section = true;
        for import in reader.into_imports() {
            let import = import?;
            match import.ty {
                TypeRef::Func(ty) | TypeRef::FuncExact(ty) => {
                    self.func_imports += 1;
                    self.imported_func_types.push(ty);
                    self.imported_funcs
                        .push((import.module.to_string(), import.name.to_string()));
                }
                TypeRef::Global(_) => {
                    self.global_count += 1;
                    self.imported_globals += 1;
                }
                TypeRef::Table(_) => self.imported_tables += 1,
                TypeRef::Memory(ty) => {
                    if memories.imported.is_some() {
                        return Err(multi_memory());
                    }
                    memories.imported =
                        Some((import.module.to_string(), import.name.to_string(), ty));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Reads which data segments are active, and the bytes the active ones
    /// put in memory into `memories`.
    fn read_data(
        &mut self,
        reader: wasmparser::DataSectionReader<'_>,
        memories: &mut Memories,
    ) -> Result<(), InstrumentError> {
        for data in reader {
            let data = data?;
            self.data_active.push(matches!(
                data.kind,
                DataKind::Active {
                    memory_index: 0,
                    ..
                }
            ));
            if let DataKind::Active {
                memory_index: 0,
                offset_expr,
            } = data.kind
            {
                memories.init.push(DataInit {
                    offset: const_offset(&offset_expr)?,
                    bytes: data.data.to_vec(),
                });
            }
        }
        Ok(())
    }

    /// Notes the data segments `body` names and whether it changes a table.
    fn scan_code(
        &mut self,
        body: &wasmparser::FunctionBody<'_>,
        data_named: &mut std::collections::BTreeSet<u32>,
    ) -> Result<(), InstrumentError> {
        let mut reader = body.get_operators_reader()?;
        let (mut loose_slots, mut callees) = (Vec::new(), Vec::new());
        // The global and the constant of a `global.get; i32.const` just read.
        let (mut got, mut taken) = (None, None);
        while !reader.eof() {
            let op = reader.read()?;
            if may_have_site(&op) {
                self.site_bound += 1;
            }
            match op {
                Operator::GlobalGet { global_index } => {
                    (got, taken) = (Some(global_index), None);
                    continue;
                }
                Operator::I32Const { value } if got.is_some() && taken.is_none() => {
                    taken = Some(value as u32);
                    if !self.loose_slots.contains_key(&(value as u32)) {
                        continue;
                    }
                }
                Operator::I32Sub => {
                    if let (Some(global), Some(bytes)) = (got, taken) {
                        let most = self.frames_below.entry(global).or_default();
                        *most = (*most).max(bytes);
                    }
                }
                _ => {}
            }
            (got, taken) = (None, None);
            match op {
                Operator::I32Const { value } if self.loose_slots.contains_key(&(value as u32)) => {
                    loose_slots.push(value as u32);
                }
                Operator::Call { function_index } => callees.push(function_index),
                Operator::CallIndirect {
                    type_index,
                    table_index: 0,
                }
                | Operator::ReturnCallIndirect {
                    type_index,
                    table_index: 0,
                } => {
                    self.indirect_call_types.insert(type_index);
                }
                Operator::MemoryInit { data_index, .. } => {
                    data_named.insert(data_index);
                }
                Operator::DataDrop { data_index } => {
                    data_named.insert(data_index);
                }
                Operator::TableSet { .. }
                | Operator::TableGrow { .. }
                | Operator::TableFill { .. }
                | Operator::TableCopy { .. }
                | Operator::TableInit { .. }
                | Operator::ElemDrop { .. } => self.mutates_tables = true,
                _ => {}
            }
        }
        if !loose_slots.is_empty() {
            self.loose_slot_uses.push((loose_slots, callees));
        }
        Ok(())
    }

    /// Function `function` as a loose start routine, if its type is one's.
    fn loose_routine(&self, function: u32) -> Option<LooseRoutine> {
        let (takes_arg, returns) = match self.func_sig(function)? {
            ([], [ValType::I32]) => (false, true),
            ([ValType::I32], []) => (true, false),
            _ => return None,
        };
        Some(LooseRoutine {
            function,
            takes_arg,
            returns,
        })
    }

    /// The function exported as `name`, if its type is `params -> results`.
    pub fn func_export(&self, name: &str, params: &[ValType], results: &[ValType]) -> Option<u32> {
        let (_, index) = self.func_exports.iter().find(|(n, _)| n == name)?;
        let (p, r) = self.func_sig(*index)?;
        (p == params && r == results).then_some(*index)
    }

    /// Notes the functions the active segments of `reader` place in table 0
    /// at constant offsets ([`Survey::table_functions`]) and the slots that
    /// hold a loose start routine ([`Survey::loose_slots`]); a later
    /// segment's function in a slot replaces an earlier one's, as
    /// instantiation does.
    fn read_table_slots(
        &mut self,
        reader: wasmparser::ElementSectionReader<'_>,
    ) -> Result<(), InstrumentError> {
        for element in reader {
            let element = element?;
            let wasmparser::ElementKind::Active {
                table_index,
                offset_expr,
            } = element.kind
            else {
                continue;
            };
            if table_index.unwrap_or(0) != 0 {
                continue;
            }
            let offset = match offset_expr.get_operators_reader().read() {
                Ok(wasmparser::Operator::I32Const { value }) => value,
                _ => {
                    self.table_slots_uncertain = true;
                    continue;
                }
            };
            let wasmparser::ElementItems::Functions(functions) = element.items else {
                self.table_slots_uncertain = true;
                continue;
            };
            for (n, function) in functions.into_iter().enumerate() {
                let slot = (offset as u32).wrapping_add(n as u32);
                let function = function?;
                self.table_functions.insert(slot, function);
                match self.loose_routine(function) {
                    Some(routine) => self.loose_slots.insert(slot, routine),
                    None => self.loose_slots.remove(&slot),
                };
            }
        }
        Ok(())
    }

    /// The parameter and result types of function `index` (imported or
    /// defined).
    pub fn func_sig(&self, index: u32) -> Option<(&[ValType], &[ValType])> {
        let ty = match index.checked_sub(self.func_imports) {
            Some(defined) => *self.defined_func_types.get(defined as usize)?,
            None => *self.imported_func_types.get(index as usize)?,
        };
        let (params, results) = self.func_sigs.get(ty as usize)?.as_ref()?;
        Some((params, results))
    }

    /// The functions in table 0 that a thread is started with although
    /// their type is not a start routine's `(i32) -> i32`: old C's `void
    /// *worker()` (no parameters: `() -> i32`) and `void worker(void *)`
    /// (no result: `(i32) -> ()`), which C compilers for other targets call
    /// through a `void *(*)(void *)` without trouble and wasm's
    /// `call_indirect` traps on. Such a function's slot is a constant in a
    /// function that calls `pthread_create` (only those: the code that
    /// calls them moves every thread start's fuel, so a module whose
    /// threads start with proper routines keeps its traces). By slot.
    pub fn loose_start_routines(&self) -> Vec<(u32, LooseRoutine)> {
        if self.mutates_tables {
            return Vec::new();
        }
        let creates = |function: &u32| {
            self.func_names
                .get(function)
                .is_some_and(|name| matches!(name.as_str(), "pthread_create" | "__pthread_create"))
        };
        let mut slots: Vec<u32> = self
            .loose_slot_uses
            .iter()
            .filter(|(_, callees)| callees.iter().any(creates))
            .flat_map(|(slots, _)| slots.iter().copied())
            .collect();
        slots.sort_unstable();
        slots.dedup();
        slots
            .into_iter()
            .filter_map(|slot| Some((slot, *self.loose_slots.get(&slot)?)))
            .collect()
    }

    /// wasi-libc's thread start function ([`crate::abi::THREAD_START_C`]), when
    /// the name section names a defined function so with type
    /// `(i32, i32) -> ()`.
    pub fn thread_start_c(&self) -> Option<u32> {
        let (&func, _) = self
            .func_names
            .iter()
            .find(|(_, name)| name.as_str() == crate::abi::THREAD_START_C)?;
        let defined = func.checked_sub(self.func_imports)? as usize;
        let ty = *self.defined_func_types.get(defined)?;
        let (params, results) = self.func_sigs.get(ty as usize)?.as_ref()?;
        (params.as_slice() == [ValType::I32; 2] && results.is_empty()).then_some(func)
    }

    /// Whether type `ty` is the function type `(i32) -> i32`, a thread start
    /// routine's.
    pub fn is_start_routine_type(&self, ty: u32) -> bool {
        self.func_sigs
            .get(ty as usize)
            .and_then(Option::as_ref)
            .is_some_and(|(params, results)| {
                params.as_slice() == [ValType::I32] && results.as_slice() == [ValType::I32]
            })
    }

    /// Number of parameters of the defined function with this index in the
    /// defined-function space.
    pub fn params_of_defined(&self, defined: usize) -> u32 {
        self.defined_func_types
            .get(defined)
            .and_then(|ty| self.func_sigs.get(*ty as usize)?.as_ref())
            .map_or(0, |(params, _)| params.len() as u32)
    }

    /// Whether the defined function with this index in the
    /// defined-function space takes an `i32` first.
    pub fn first_param_is_i32(&self, defined: usize) -> bool {
        self.defined_func_types
            .get(defined)
            .and_then(|ty| self.func_sigs.get(*ty as usize)?.as_ref())
            .is_some_and(|(params, _)| params.first() == Some(&ValType::I32))
    }
}

/// Whether the rewrite may give `op` a site.
fn may_have_site(op: &Operator) -> bool {
    super::ops::memory_access(op).is_some()
        || super::ops::bulk_access(op).is_some()
        || matches!(
            super::ops::replaced(op),
            Some(
                super::ops::Replaced::Wait32(_)
                    | super::ops::Replaced::Wait64(_)
                    | super::ops::Replaced::Notify(_)
            )
        )
        || matches!(
            op,
            Operator::Call { .. } | Operator::CallIndirect { .. } | Operator::CallRef { .. }
        )
}

/// The module's memories as its sections declare them.
#[derive(Default)]
struct Memories {
    /// The imported memory: module, name and type.
    imported: Option<(String, String, wasmparser::MemoryType)>,
    /// The memories it defines.
    defined: Vec<wasmparser::MemoryType>,
    /// What its active data segments put in the memory.
    init: Vec<DataInit>,
}

impl Memories {
    /// How the memory relates to threads: one memory at most, and an
    /// imported one shared.
    fn plan(self) -> Result<MemoryPlan, InstrumentError> {
        if self.imported.is_some() as usize + self.defined.len() > 1 {
            return Err(multi_memory());
        }
        Ok(match (self.imported, self.defined.first()) {
            (None, None) => MemoryPlan::None,
            (Some((module, name, ty)), None) => {
                check_memory_type(&ty)?;
                if !ty.shared {
                    return Err(InstrumentError::Unsupported(format!(
                        "the module imports a memory that is not shared (`{module}.{name}`); \
                         weft provides only shared memories"
                    )));
                }
                MemoryPlan::Shared(SharedMemoryPlan {
                    import: (module, name),
                    min_pages: ty.initial,
                    max_pages: ty.maximum.unwrap_or(ty.initial),
                    was_defined: false,
                    init: self.init,
                })
            }
            (None, Some(ty)) => {
                check_memory_type(ty)?;
                if ty.shared {
                    MemoryPlan::Shared(SharedMemoryPlan {
                        import: ("env".into(), "memory".into()),
                        min_pages: ty.initial,
                        max_pages: ty.maximum.unwrap_or(ty.initial),
                        was_defined: true,
                        init: self.init,
                    })
                } else {
                    MemoryPlan::Private {
                        min_pages: ty.initial,
                    }
                }
            }
            (Some(_), Some(_)) => return Err(multi_memory()),
        })
    }
}

/// The tables the module defines; refuses more tables, or larger ones,
/// than weft supports.
fn check_tables(
    reader: wasmparser::TableSectionReader<'_>,
) -> Result<Vec<wasmparser::TableType>, InstrumentError> {
    if reader.count() > MOST_TABLES {
        return Err(InstrumentError::Unsupported(format!(
            "the module defines {} tables; weft supports at most {MOST_TABLES}",
            reader.count()
        )));
    }
    let mut tables = Vec::new();
    for table in reader {
        let ty = table?.ty;
        if ty.initial > MOST_TABLE_ELEMENTS {
            return Err(InstrumentError::Unsupported(format!(
                "a table starts with {} elements; weft supports tables of at most {MOST_TABLE_ELEMENTS}",
                ty.initial
            )));
        }
        tables.push(ty);
    }
    Ok(tables)
}

fn multi_memory() -> InstrumentError {
    InstrumentError::Unsupported("modules with more than one memory are not supported".into())
}

fn check_memory_type(ty: &wasmparser::MemoryType) -> Result<(), InstrumentError> {
    if ty.memory64 {
        return Err(InstrumentError::Unsupported(
            "64-bit memories (memory64) are not supported".into(),
        ));
    }
    if ty.page_size_log2.is_some() {
        return Err(InstrumentError::Unsupported(
            "custom page sizes are not supported".into(),
        ));
    }
    Ok(())
}

/// Evaluates the offset of an active data segment; only constants are
/// supported.
fn const_offset(expr: &wasmparser::ConstExpr) -> Result<u64, InstrumentError> {
    let mut reader = expr.get_operators_reader();
    let value = match reader.read()? {
        Operator::I32Const { value } => value as u32 as u64,
        Operator::I64Const { value } => value as u64,
        _ => {
            return Err(InstrumentError::Unsupported(
                "a data segment of the shared memory has a non-constant offset".into(),
            ));
        }
    };
    Ok(value)
}

/// The global names of a `name` custom section, by global index; a
/// malformed section only costs the names it cannot give.
fn global_names(reader: &wasmparser::CustomSectionReader<'_>) -> Vec<(u32, String)> {
    names_of(reader, |name| match name {
        wasmparser::Name::Global(map) => Some(map),
        _ => None,
    })
}

/// The function names of a `name` custom section, by function index; a
/// malformed section only costs the names it cannot give.
pub(crate) fn function_names(reader: &wasmparser::CustomSectionReader<'_>) -> Vec<(u32, String)> {
    names_of(reader, |name| match name {
        wasmparser::Name::Function(map) => Some(map),
        _ => None,
    })
}

/// The source languages a `producers` custom section names; a malformed
/// section names none.
fn languages(reader: &wasmparser::CustomSectionReader<'_>) -> Vec<String> {
    let Ok(producers) = wasmparser::ProducersSectionReader::new(wasmparser::BinaryReader::new(
        reader.data(),
        reader.data_offset(),
    )) else {
        return Vec::new();
    };
    producers
        .into_iter()
        .flatten()
        .filter(|field| field.name == "language")
        .flat_map(|field| field.values.into_iter().flatten())
        .map(|value| value.name.to_string())
        .collect()
}

/// The names of one kind (the subsection `pick` chooses) of a `name`
/// custom section, by index.
fn names_of<'a>(
    reader: &wasmparser::CustomSectionReader<'a>,
    pick: impl Fn(wasmparser::Name<'a>) -> Option<wasmparser::NameMap<'a>>,
) -> Vec<(u32, String)> {
    let names = wasmparser::NameSectionReader::new(wasmparser::BinaryReader::new(
        reader.data(),
        reader.data_offset(),
    ));
    names
        .flatten()
        .filter_map(pick)
        .flat_map(|map| {
            map.into_iter()
                .flatten()
                .map(|n| (n.index, n.name.to_string()))
        })
        .collect()
}
