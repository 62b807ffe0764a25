//! The bodies of the fuzz targets in `fuzz/` (run with `cargo fuzz`), which
//! the test suite also runs on the committed corpus: each reader of
//! outside input takes arbitrary bytes and must return an error, never
//! panic, and what it accepts must hold together.

pub mod differential;
pub mod exhaustive;

use crate::debuginfo::symbols::Symbols;
use crate::imunit::schedule::Schedule;
use crate::instrument::{InstrumentOptions, Points, features, instrument};
use crate::replay::file::ReplayFile;

/// The IMUnit schedule language: text that parses parses the same again
/// from its own printing.
pub fn schedule_text(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(schedule) = text.parse::<Schedule>() {
        let printed = schedule.to_string();
        let again: Schedule = printed
            .parse()
            .unwrap_or_else(|e| panic!("`{printed}` (printed from `{text}`) does not parse: {e}"));
        assert_eq!(again, schedule, "`{text}` printed as `{printed}`");
    }
}

/// The replay file reader: a file it accepts is written back as the same
/// file.
pub fn replay_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(file) = ReplayFile::parse(text, "fuzz.weft.json") {
        let again = ReplayFile::parse(&file.to_json(), "again.weft.json")
            .expect("a replay file weft writes is one it reads");
        assert_eq!(again, file);
    }
}

/// The rewriter, on a module (from `wasm-smith`, or raw bytes): a module
/// it accepts comes out valid at every instrumentation level.
pub fn rewrite(wasm: &[u8]) {
    let levels = [
        InstrumentOptions::default(),
        InstrumentOptions {
            points: Points::Memory,
            ..Default::default()
        },
        InstrumentOptions {
            log_calls: true,
            log_accesses: true,
            ..Default::default()
        },
    ];
    // The rewrite adds a memory with one-byte pages (the point buffer).
    let mut rewritten = features();
    rewritten.insert(wasmparser::WasmFeatures::CUSTOM_PAGE_SIZES);
    for options in levels {
        if let Ok(out) = instrument(wasm, &options)
            && let Err(e) =
                wasmparser::Validator::new_with_features(rewritten).validate_all(&out.wasm)
        {
            panic!("the rewrite of a valid module is invalid ({options:?}): {e}");
        }
    }
}

/// The DWARF and name-section readers, on any bytes: they describe what
/// they can and never fail.
pub fn symbols(wasm: &[u8]) {
    let symbols = Symbols::new(wasm);
    let _ = symbols.has_lines();
    let _ = symbols.function_names().count();
    for index in [0, 1, 100, u32::MAX] {
        let _ = symbols.function_name(index);
    }
    for offset in [0, 1, 100, u32::MAX] {
        let _ = symbols.frames(offset);
    }
    // Variables by address, through arrays and struct fields.
    for addr in [0, 1, 1024, 65_536, 1 << 20, u32::MAX] {
        for width in [1, 4, 8, u32::MAX] {
            let _ = symbols.describe_variable(addr, width);
        }
    }
}
