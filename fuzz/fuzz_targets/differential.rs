//! Modules `wasm-smith` generates from the input (no imports, one memory,
//! threads on, loops bounded) end the same under plain wasmtime and under
//! weft at every instrumentation level.
#![no_main]

use arbitrary::Unstructured;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(config) = u.arbitrary::<wasm_smith::Config>() else {
        return;
    };
    let config = wasm_smith::Config {
        max_imports: 0,
        max_memories: 1,
        max_memory32_bytes: 1 << 20,
        memory64_enabled: false,
        threads_enabled: true,
        relaxed_simd_enabled: false,
        gc_enabled: false,
        exceptions_enabled: false,
        export_everything: true,
        max_table_elements: weft::instrument::MOST_TABLE_ELEMENTS,
        max_tables: weft::instrument::MOST_TABLES as usize,
        ..config
    };
    let Ok(mut module) = wasm_smith::Module::new(config, &mut u) else {
        return;
    };
    if module.ensure_termination(10_000).is_err() {
        return;
    }
    if let Err(difference) = weft::fuzzing::differential::differential(&module.to_bytes()) {
        panic!("{difference}");
    }
});
