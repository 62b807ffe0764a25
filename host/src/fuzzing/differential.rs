//! Differential runs of the rewriter: a module under plain wasmtime and,
//! rewritten, under weft at every instrumentation level must end the same
//! way: the same exit code (folded from its entry's results and its
//! memory) or a trap of the same kind.
//!
//! The module gets a `_start` that calls its first exported function
//! without parameters and exits with a code folded from the results and
//! every 4 bytes of memory.

use crate::instrument::{InstrumentOptions, Points};
use crate::runtime::{Limits, Outcome, Program, RunConfig};
use crate::sched::Strategy;
use wasm_encoder::reencode::{Error, Reencode, utils};

/// How an execution ended: `Ok(())` (never, with the added `_start`) or
/// the trap's or exit's text.
type Ending = Result<(), String>;

/// What comparing one module found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compared {
    /// The module has imports or no exported function without parameters.
    NoEntry,
    /// Every level ended as the engine did; `trapped`: by a trap.
    Same {
        /// Whether the engine's run trapped (rather than exited).
        trapped: bool,
        /// Runs not compared because one side ran out of stack (where the
        /// stack runs out depends on frame sizes, which instrumentation
        /// changes).
        stack_exhausted: usize,
    },
}

/// The instrumentation levels compared.
pub fn levels() -> [(&'static str, InstrumentOptions); 4] {
    [
        ("sync", InstrumentOptions::default()),
        (
            "memory",
            InstrumentOptions {
                points: Points::Memory,
                ..Default::default()
            },
        ),
        (
            "calls",
            InstrumentOptions {
                log_calls: true,
                ..Default::default()
            },
        ),
        (
            "races",
            InstrumentOptions {
                log_accesses: true,
                ..Default::default()
            },
        ),
    ]
}

/// Compares `wasm` (a valid module without imports) under plain wasmtime
/// and under weft at every level of [`levels`].
///
/// # Errors
///
/// A description of each level whose ending differs.
pub fn differential(wasm: &[u8]) -> Result<Compared, String> {
    let Some(wasm) = with_start(wasm) else {
        return Ok(Compared::NoEntry);
    };
    let (engine, refused) = under_wasmtime(&wasm);
    let mut stack_exhausted = 0;
    let mut differences = Vec::new();
    for (level, options) in levels() {
        let weft = under_weft(&wasm, options);
        if exhausted(&engine) || exhausted(&weft) {
            stack_exhausted += 1;
        } else if !same(&engine, refused, &weft) {
            differences.push(format!("at {level}: wasmtime {engine:?}, weft {weft:?}"));
        }
    }
    if !differences.is_empty() {
        return Err(differences.join("; "));
    }
    Ok(Compared::Same {
        trapped: engine
            .as_ref()
            .is_err_and(|e| !e.starts_with("the program exited")),
        stack_exhausted,
    })
}

/// Adds to `wasm` (a module without imports) a function `_start` that
/// calls function `callee`, folds its results and the memory's bytes into
/// one number, and ends the process with it as exit code: the import
/// `proc_exit` comes first, so every function index moves up by one.
struct AddStart {
    callee: u32,
    results: Vec<wasmparser::ValType>,
    has_memory: bool,
    /// The types `[] -> []` and `[i32] -> []`, once added.
    types: u32,
    /// The index of `_start`.
    start: u32,
    imported: bool,
}

impl AddStart {
    /// The body of `_start`.
    fn body(&mut self) -> wasm_encoder::Function {
        use wasm_encoder::Instruction as I;
        let locals: Vec<(u32, wasm_encoder::ValType)> = self
            .results
            .clone()
            .into_iter()
            .map(|t| (1, self.val_type(t).expect("a core type")))
            .chain([
                (1, wasm_encoder::ValType::I32),
                (1, wasm_encoder::ValType::I32),
            ])
            .collect();
        let n = self.results.len() as u32;
        let (acc, i) = (n, n + 1);
        let mut f = wasm_encoder::Function::new(locals);
        f.instruction(&I::Call(self.callee + 1));
        for k in (0..n).rev() {
            f.instruction(&I::LocalSet(k));
        }
        // acc = rotl(acc, 5) ^ value, for each result as an i32.
        let fold = |f: &mut wasm_encoder::Function| {
            f.instruction(&I::LocalGet(acc));
            f.instruction(&I::I32Const(5));
            f.instruction(&I::I32Rotl);
            f.instruction(&I::I32Xor);
            f.instruction(&I::LocalSet(acc));
        };
        for (k, ty) in self.results.clone().into_iter().enumerate() {
            let k = k as u32;
            let as_i64 = |f: &mut wasm_encoder::Function| {
                f.instruction(&I::I64Const(32));
                f.instruction(&I::I64ShrU);
                f.instruction(&I::I32WrapI64);
            };
            match ty {
                wasmparser::ValType::I32 => {
                    f.instruction(&I::LocalGet(k));
                    fold(&mut f);
                }
                wasmparser::ValType::F32 => {
                    f.instruction(&I::LocalGet(k));
                    f.instruction(&I::I32ReinterpretF32);
                    fold(&mut f);
                }
                wasmparser::ValType::I64 | wasmparser::ValType::F64 => {
                    let load = |f: &mut wasm_encoder::Function| {
                        f.instruction(&I::LocalGet(k));
                        if ty == wasmparser::ValType::F64 {
                            f.instruction(&I::I64ReinterpretF64);
                        }
                    };
                    load(&mut f);
                    f.instruction(&I::I32WrapI64);
                    fold(&mut f);
                    load(&mut f);
                    as_i64(&mut f);
                    fold(&mut f);
                }
                wasmparser::ValType::V128 => {
                    for lane in 0..4 {
                        f.instruction(&I::LocalGet(k));
                        f.instruction(&I::I32x4ExtractLane(lane));
                        fold(&mut f);
                    }
                }
                wasmparser::ValType::Ref(_) => {
                    f.instruction(&I::LocalGet(k));
                    f.instruction(&I::RefIsNull);
                    fold(&mut f);
                }
            }
        }
        if self.has_memory {
            // Every 4 bytes of the memory, folded in.
            f.instruction(&I::Block(wasm_encoder::BlockType::Empty));
            f.instruction(&I::Loop(wasm_encoder::BlockType::Empty));
            f.instruction(&I::LocalGet(i));
            f.instruction(&I::MemorySize(0));
            f.instruction(&I::I32Const(16));
            f.instruction(&I::I32Shl);
            f.instruction(&I::I32GeU);
            f.instruction(&I::BrIf(1));
            f.instruction(&I::LocalGet(i));
            f.instruction(&I::I32Load(wasm_encoder::MemArg {
                offset: 0,
                align: 2,
                memory_index: 0,
            }));
            fold(&mut f);
            f.instruction(&I::LocalGet(i));
            f.instruction(&I::I32Const(4));
            f.instruction(&I::I32Add);
            f.instruction(&I::LocalSet(i));
            f.instruction(&I::Br(0));
            f.instruction(&I::End);
            f.instruction(&I::End);
        }
        // An exit code from 1 to 100.
        f.instruction(&I::LocalGet(acc));
        f.instruction(&I::I32Const(100));
        f.instruction(&I::I32RemU);
        f.instruction(&I::I32Const(1));
        f.instruction(&I::I32Add);
        f.instruction(&I::Call(0));
        f.instruction(&I::End);
        f
    }
}

impl Reencode for AddStart {
    type Error = std::convert::Infallible;

    fn function_index(&mut self, func: u32) -> Result<u32, Error<Self::Error>> {
        Ok(func + 1)
    }

    fn parse_type_section(
        &mut self,
        types: &mut wasm_encoder::TypeSection,
        section: wasmparser::TypeSectionReader<'_>,
    ) -> Result<(), Error<Self::Error>> {
        utils::parse_type_section(self, types, section)?;
        self.types = types.len();
        types.ty().function([], []);
        types.ty().function([wasm_encoder::ValType::I32], []);
        Ok(())
    }

    fn intersperse_section_hook(
        &mut self,
        module: &mut wasm_encoder::Module,
        after: Option<wasm_encoder::SectionId>,
        before: Option<wasm_encoder::SectionId>,
    ) -> Result<(), Error<Self::Error>> {
        use wasm_encoder::SectionId as S;
        let past_types = after.is_some_and(|a| a as u8 >= S::Type as u8 && a != S::Custom);
        let before_rest = before.is_none_or(|b| b as u8 > S::Import as u8 && b != S::Custom);
        if !self.imported && past_types && before_rest {
            let mut imports = wasm_encoder::ImportSection::new();
            imports.import(
                "wasi_snapshot_preview1",
                "proc_exit",
                wasm_encoder::EntityType::Function(self.types + 1),
            );
            module.section(&imports);
            self.imported = true;
        }
        Ok(())
    }

    fn parse_import_section(
        &mut self,
        imports: &mut wasm_encoder::ImportSection,
        section: wasmparser::ImportSectionReader<'_>,
    ) -> Result<(), Error<Self::Error>> {
        // An empty one (the generator allows no imports).
        utils::parse_import_section(self, imports, section)?;
        imports.import(
            "wasi_snapshot_preview1",
            "proc_exit",
            wasm_encoder::EntityType::Function(self.types + 1),
        );
        self.imported = true;
        Ok(())
    }

    fn parse_function_section(
        &mut self,
        functions: &mut wasm_encoder::FunctionSection,
        section: wasmparser::FunctionSectionReader<'_>,
    ) -> Result<(), Error<Self::Error>> {
        utils::parse_function_section(self, functions, section)?;
        self.start = functions.len() + 1;
        functions.function(self.types);
        Ok(())
    }

    fn parse_export_section(
        &mut self,
        exports: &mut wasm_encoder::ExportSection,
        section: wasmparser::ExportSectionReader<'_>,
    ) -> Result<(), Error<Self::Error>> {
        for export in section {
            let export = export?;
            if export.name != "_start" {
                utils::parse_export(self, exports, export)?;
            }
        }
        exports.export("_start", wasm_encoder::ExportKind::Func, self.start);
        Ok(())
    }

    fn parse_code_section(
        &mut self,
        code: &mut wasm_encoder::CodeSection,
        section: wasmparser::CodeSectionReader<'_>,
    ) -> Result<(), Error<Self::Error>> {
        utils::parse_code_section(self, code, section)?;
        let body = self.body();
        code.function(&body);
        Ok(())
    }
}

/// The first exported function of `wasm` without parameters: its index
/// and result types; and whether `wasm` has a memory.
fn entry(wasm: &[u8]) -> Option<(u32, Vec<wasmparser::ValType>, bool)> {
    let mut types = Vec::new();
    let mut funcs = Vec::new();
    let mut has_memory = false;
    let mut found = None;
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        match payload.ok()? {
            wasmparser::Payload::TypeSection(reader) => {
                for ty in reader.into_iter_err_on_gc_types() {
                    let ty = ty.ok()?;
                    types.push((ty.params().len(), ty.results().to_vec()));
                }
            }
            wasmparser::Payload::FunctionSection(reader) => {
                funcs.extend(
                    reader
                        .into_iter()
                        .map(Result::ok)
                        .collect::<Option<Vec<_>>>()?,
                );
            }
            wasmparser::Payload::MemorySection(reader) => has_memory |= reader.count() > 0,
            wasmparser::Payload::ExportSection(reader) => {
                for export in reader {
                    let export = export.ok()?;
                    if export.kind != wasmparser::ExternalKind::Func || found.is_some() {
                        continue;
                    }
                    let (params, results) = &types[funcs[export.index as usize] as usize];
                    if *params == 0 {
                        found = Some((export.index, results.clone()));
                    }
                }
            }
            _ => {}
        }
    }
    let (index, results) = found?;
    Some((index, results, has_memory))
}

/// `wasm` with a `_start` calling its entry, if it has one.
fn with_start(wasm: &[u8]) -> Option<Vec<u8>> {
    let (callee, results, has_memory) = entry(wasm)?;
    let mut add = AddStart {
        callee,
        results,
        has_memory,
        types: 0,
        start: 0,
        imported: false,
    };
    let mut module = wasm_encoder::Module::new();
    add.parse_core_module(&mut module, wasmparser::Parser::new(0), wasm)
        .ok()?;
    Some(module.finish())
}

/// Memory growth past weft's default limit is refused, as weft refuses
/// it; whether it was.
struct SameMemoryLimit {
    refused: bool,
}

impl wasmtime::ResourceLimiter for SameMemoryLimit {
    fn memory_growing(
        &mut self,
        _: usize,
        desired: usize,
        _: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let allowed = desired as u64 <= Limits::default().max_memory_bytes;
        self.refused |= !allowed;
        Ok(allowed)
    }

    fn table_growing(&mut self, _: usize, _: usize, _: Option<usize>) -> wasmtime::Result<bool> {
        Ok(true)
    }
}

/// How `_start` ends under plain wasmtime (threads on, no host, weft's
/// memory limit); whether growth was refused.
fn under_wasmtime(wasm: &[u8]) -> (Ending, bool) {
    let mut config = wasmtime::Config::new();
    config.wasm_threads(true).shared_memory(true);
    let engine = wasmtime::Engine::new(&config).unwrap();
    let module = wasmtime::Module::new(&engine, wasm).unwrap();
    let mut store = wasmtime::Store::new(&engine, SameMemoryLimit { refused: false });
    store.limiter(|limit| limit);
    let mut linker = wasmtime::Linker::new(&engine);
    linker
        .func_wrap(
            "wasi_snapshot_preview1",
            "proc_exit",
            |code: i32| -> wasmtime::Result<()> {
                Err(wasmtime::Error::msg(format!(
                    "the program exited with code {code}"
                )))
            },
        )
        .unwrap();
    let ending = linker
        .instantiate(&mut store, &module)
        .map_err(|e| trap_text(&e))
        .and_then(|instance| {
            let start = instance
                .get_typed_func::<(), ()>(&mut store, "_start")
                .unwrap();
            start.call(&mut store, ()).map_err(|e| trap_text(&e))
        });
    (ending, store.data().refused)
}

fn trap_text(error: &wasmtime::Error) -> String {
    match error.downcast_ref::<wasmtime::Trap>() {
        Some(trap) => trap.to_string(),
        None => error.root_cause().to_string(),
    }
}

/// How `_start` ends under weft, rewritten with `options`.
fn under_weft(wasm: &[u8], options: InstrumentOptions) -> Ending {
    let mut program = Program::load(wasm, options).map_err(|e| format!("refused: {e:#}"))?;
    let scheduler = crate::explore::scheduler(Strategy::Random, 0, 3, 100);
    // The module is single-threaded: its main thread logs from the start,
    // or the logging code would never run.
    let config = RunConfig {
        log_from_start: options.log_accesses,
        ..RunConfig::default()
    };
    match program.execute(scheduler, &config).outcome {
        Outcome::Exited(0) => Ok(()),
        Outcome::Trap { message, .. } | Outcome::Assertion { message, .. } => Err(message),
        Outcome::Reported(failure) => Err(failure.message),
        other => Err(format!("{other:?}")),
    }
}

/// Whether weft's ending is the engine's: both exit with the same code,
/// or both trap with the engine's trap text; a trap after refused growth
/// is weft's `memory-limit` failure.
fn same(engine: &Ending, refused: bool, weft: &Ending) -> bool {
    match (engine, weft) {
        (Ok(()), Ok(())) => true,
        (Err(_), Err(w)) if refused && w.starts_with("MemoryLimit") => true,
        (Err(e), Err(w)) => w.contains(e.as_str()),
        _ => false,
    }
}

/// Where the stack runs out depends on frame sizes, which instrumentation
/// changes: an ending by stack exhaustion on either side says nothing.
fn exhausted(ending: &Ending) -> bool {
    ending
        .as_ref()
        .is_err_and(|e| e.contains("call stack exhausted"))
}
