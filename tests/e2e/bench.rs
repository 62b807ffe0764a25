//! `weft bench`: it measures what it says on a real sample.

use crate::support::{arg, sample, weft};

#[test]
fn bench_reports_every_figure_for_a_sample() {
    let module = sample("lost-update");
    let (out, _dir) = weft(&["bench", arg(&module), "--executions", "40", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = out.json();
    for field in ["hook_ns", "decision_ns", "switch_ns", "wasmtime_switch_ns"] {
        let ns = report[field].as_f64().unwrap();
        assert!(ns.is_finite() && ns >= 0.0, "{field}: {ns}");
    }
    for field in [
        "executions_per_second",
        "pct_executions_per_second",
        "race_executions_per_second",
    ] {
        let rate = report[field].as_f64().unwrap();
        assert!(rate.is_finite() && rate > 0.0, "{field}: {rate}");
    }
    assert_eq!(report["executions"], 40);
}

#[test]
fn bench_refuses_a_module_that_fails_to_load() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.wasm");
    std::fs::write(&bad, b"\0asm\x01\0\0\0\x01").unwrap();
    let (out, _dir) = weft(&["bench", arg(&bad)]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("weft: error"), "{}", out.stderr);
}
