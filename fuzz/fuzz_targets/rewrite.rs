//! The rewriter on modules `wasm-smith` generates from the input (threads,
//! bulk memory, SIMD, multi-value and reference types on), and on the raw
//! input as a module.
#![no_main]

use arbitrary::Unstructured;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    weft::fuzzing::rewrite(data);
    let mut u = Unstructured::new(data);
    let Ok(config) = u.arbitrary::<wasm_smith::Config>() else {
        return;
    };
    let config = wasm_smith::Config {
        threads_enabled: true,
        max_memories: 1,
        memory64_enabled: false,
        ..config
    };
    if let Ok(module) = wasm_smith::Module::new(config, &mut u) {
        weft::fuzzing::rewrite(&module.to_bytes());
    }
});
