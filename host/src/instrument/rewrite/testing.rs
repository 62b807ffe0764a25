//! Unit-test helpers: the text of one rewritten function.

use crate::instrument::{InstrumentOptions, instrument};
use wasmparser::{Parser, Payload, TypeRef};

/// The options the tests start from: synchronisation points, nothing
/// logged, no library steps.
pub(super) fn options() -> InstrumentOptions {
    InstrumentOptions::default()
}

/// The instructions of function `$name` once `wat` is rewritten with
/// `options`, one per line as wasmprinter prints them (without comments,
/// and without the last `end`, which closes the function), with calls of
/// the `weft_rt` imports named `weft_rt.<name>`.
pub(super) fn body_of(wat: &str, options: InstrumentOptions, name: &str) -> Vec<String> {
    let wasm = wat::parse_str(wat).expect("the test's module parses");
    let rewritten = instrument(&wasm, &options).expect("the test's module rewrites");
    let imports = imported_functions(&rewritten.wasm);
    let text = wasmprinter::print_bytes(&rewritten.wasm).expect("the rewritten module prints");
    let header = format!("(func ${name} ");
    let mut lines = text
        .lines()
        .skip_while(|line| !line.trim_start().starts_with(&header));
    lines
        .next()
        .unwrap_or_else(|| panic!("no function ${name} in\n{text}"));
    lines
        .take_while(|line| !line.starts_with("  (") && !line.starts_with("  )"))
        .map(|line| line.split(";;").next().unwrap_or_default().trim())
        .filter(|line| !line.starts_with("(local "))
        .map(|line| name_import_call(line, &imports))
        .collect()
}

/// The names of the imported functions, by index: `module.name`.
fn imported_functions(wasm: &[u8]) -> Vec<String> {
    let mut names = Vec::new();
    for payload in Parser::new(0).parse_all(wasm) {
        if let Payload::ImportSection(reader) = payload.expect("the rewritten module parses") {
            for import in reader.into_imports() {
                let import = import.expect("the rewritten module parses");
                if matches!(import.ty, TypeRef::Func(_)) {
                    names.push(format!("{}.{}", import.module, import.name));
                }
            }
        }
    }
    names
}

/// `call N` of an imported function, as `call module.name`.
fn name_import_call(line: &str, imports: &[String]) -> String {
    if let Some(index) = line.strip_prefix("call ")
        && let Ok(index) = index.parse::<usize>()
        && let Some(name) = imports.get(index)
    {
        return format!("call {name}");
    }
    line.to_string()
}
