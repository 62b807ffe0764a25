//! The rewritten module behaves exactly like the original in a
//! single-threaded run: the `checksum` sample prints the same output under
//! plain wasmtime (original module) and under weft (rewritten), with both
//! instrumentation levels.

use crate::support::{arg, sample, weft};
use wasmtime::{Config, Engine, Linker, MemoryType, Module, SharedMemory, Store};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;

/// Runs the original module with plain wasmtime + wasmtime-wasi.
fn run_original(wasm: &[u8], args: &[&str]) -> String {
    let mut config = Config::new();
    config.wasm_threads(true).shared_memory(true);
    let engine = Engine::new(&config).unwrap();
    let module = Module::new(&engine, wasm).unwrap();
    let mut linker: Linker<WasiP1Ctx> = Linker::new(&engine);
    wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |cx| cx).unwrap();
    let stdout = MemoryOutputPipe::new(1 << 20);
    let wasi = wasmtime_wasi::WasiCtxBuilder::new()
        .args(args)
        .stdout(stdout.clone())
        .build_p1();
    let mut store = Store::new(&engine, wasi);
    for import in module.imports() {
        if let Some(ty) = import.ty().memory() {
            let memory = SharedMemory::new(
                &engine,
                MemoryType::shared(ty.minimum() as u32, ty.maximum().unwrap() as u32),
            )
            .unwrap();
            linker
                .define(&store, import.module(), import.name(), memory)
                .unwrap();
        }
    }
    let instance = linker.instantiate(&mut store, &module).unwrap();
    let start = instance
        .get_typed_func::<(), ()>(&mut store, "_start")
        .unwrap();
    start.call(&mut store, ()).unwrap();
    drop(store);
    String::from_utf8(stdout.contents().to_vec()).unwrap()
}

#[test]
fn checksum_output_is_unchanged_by_instrumentation() {
    let module = sample("checksum");
    let wasm = std::fs::read(&module).unwrap();
    let expected = run_original(&wasm, &["checksum.wasm", "alpha", "beta"]);
    assert!(expected.contains("fnv1a = "), "{expected}");
    for points in ["sync", "memory"] {
        let (out, _dir) = weft(&[
            "run",
            arg(&module),
            "--points",
            points,
            "--json",
            "--no-save",
            "--",
            "alpha",
            "beta",
        ]);
        assert_eq!(out.code, 0, "{points}: {}", out.stderr);
        assert_eq!(out.json()["stdout"], expected.as_str(), "--points {points}");
    }
}

#[test]
fn memory_points_add_plain_accesses_to_the_trace() {
    let module = sample("lost-update");
    let steps = |points: &str, model: &str| {
        let (out, _dir) = weft(&[
            "run",
            arg(&module),
            "--points",
            points,
            "--point-model",
            model,
            "--seed",
            "3",
            "--json",
            "--no-save",
        ]);
        assert!(out.code <= 1, "{}", out.stderr);
        out.json()["steps"].as_u64().unwrap()
    };
    // The library's plain accesses are steps of its internals' model;
    // under library calls they fall inside a call's one step, and the
    // steps added are those outside (the program's, the runtime's start).
    assert!(steps("memory", "sync-internals") > 10 * steps("sync", "sync-internals"));
    assert!(steps("memory", "library-calls") > 4 * steps("sync", "library-calls"));
}
