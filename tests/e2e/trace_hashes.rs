//! Trace hashes pinned: every sample, seeds 0 to 20 under random and PCT,
//! under each point model (the library's internals, as every replay file
//! written before point models were named, and library calls), and the
//! analyses' configurations (IMUnit schedules, atomic sets, call
//! logging) on the samples that use them, give the hashes recorded in
//! `tests/fixtures/trace-hashes.txt`. A change to the runtime that moves a
//! scheduling point, a decision or an event fails here; a deliberate one
//! regenerates the file with `WEFT_BLESS=1 cargo nextest run trace_hashes`
//! and says why in its commit.
//!
//! Each line also records the module's blake3 hash, and is compared only
//! when the module built here is that module: Rust samples embed the
//! folder they were built in (panic locations, crate metadata), so in
//! another checkout only the C, Zig and WAT samples compare.

use crate::support::{code_hash, root, sample, sample_names};
use weft::execution::Setup;
use weft::imunit::guard::ScheduleMode;
use weft::instrument::{InstrumentOptions, PointModel, Points};
use weft::race::RaceMode;
use weft::runtime::{Limits, RunConfig};
use weft::sched::Strategy;

/// Seeds 0 to this, inclusive.
const LAST_SEED: u64 = 20;

/// One configuration of a sample whose hashes are pinned.
struct Case {
    label: String,
    sample: String,
    options: InstrumentOptions,
    run: Setup,
}

/// Limits that every execution reaches deterministically: no wall-time
/// limit, and step, fuel and memory limits small enough that endless
/// samples stop soon.
fn limits() -> Limits {
    Limits {
        max_steps: 20_000,
        max_fuel: 50_000_000,
        max_memory_bytes: 64 << 20,
        time_limit: None,
        ..Limits::default()
    }
}

fn cases() -> Vec<Case> {
    let base = Setup {
        run: RunConfig {
            limits: limits(),
            ..RunConfig::default()
        },
        ..Setup::default()
    };
    let mut cases: Vec<Case> = sample_names()
        .into_iter()
        .map(|name| Case {
            label: name.clone(),
            sample: name,
            options: InstrumentOptions::default(),
            run: base.clone(),
        })
        .collect();
    // Every sample again under the point model `library-calls`, as the
    // sampling strategies instrument it.
    let library_calls = PointModel::LibraryCalls.instrument(false);
    let under_library_calls: Vec<Case> = cases
        .iter()
        .map(|case| Case {
            label: format!("{}/library-calls", case.label),
            sample: case.sample.clone(),
            options: library_calls,
            run: base.clone(),
        })
        .collect();
    cases.extend(under_library_calls);
    let schedule = "finishedAdd1 -> startingTake1, [startingTake2] -> startingAdd2";
    for mode in [ScheduleMode::Active, ScheduleMode::Passive] {
        cases.push(Case {
            label: format!("imunit-queue/schedule-{mode:?}"),
            sample: "imunit-queue".into(),
            options: InstrumentOptions::default(),
            run: Setup {
                schedule: Some(schedule.into()),
                schedule_mode: mode,
                ..base.clone()
            },
        });
    }
    for name in ["account", "account-c", "append-atomicity", "list-size"] {
        cases.push(Case {
            label: format!("{name}/atomic-sets"),
            sample: name.into(),
            options: InstrumentOptions {
                points: Points::Memory,
                ..InstrumentOptions::default()
            },
            run: Setup {
                check_atomic_sets: true,
                ..base.clone()
            },
        });
    }
    for name in ["lost-update", "bounded-buffer-c", "stringbuffer"] {
        cases.push(Case {
            label: format!("{name}/log-calls"),
            sample: name.into(),
            options: InstrumentOptions {
                log_calls: true,
                ..InstrumentOptions::default()
            },
            run: base.clone(),
        });
    }
    let logging = InstrumentOptions {
        log_accesses: true,
        ..InstrumentOptions::default()
    };
    for name in [
        "lost-update",
        "racy-counter-c",
        "pthread-sync-c",
        "racy-wat",
    ] {
        cases.push(Case {
            label: format!("{name}/races-fail"),
            sample: name.into(),
            options: logging,
            run: Setup {
                races: RaceMode::Fail,
                ..base.clone()
            },
        });
    }
    // The race check as the commands run it: the C library's calls that
    // touch the program's memory are told to the host, and the program's
    // failed compare-exchanges are loads.
    let as_run = InstrumentOptions {
        caller_memory: true,
        failed_cas_reads: true,
        ..logging
    };
    for name in [
        "racy-counter-c",
        "bounded-buffer-c",
        "logger-c",
        "thread-pool-c",
    ] {
        for (label, options) in [
            ("races-as-run", as_run),
            (
                "races-as-run/library-calls",
                library_calls.with_race_check(true),
            ),
        ] {
            cases.push(Case {
                label: format!("{name}/{label}"),
                sample: name.into(),
                options,
                run: Setup {
                    races: RaceMode::Fail,
                    ..base.clone()
                },
            });
        }
    }
    // The sites of plain-reorder-c's two variables, made scheduling points
    // as `--races schedule` would.
    let reorder = std::fs::read(sample("plain-reorder-c")).unwrap();
    let program = weft::execution::load(&reorder, logging).unwrap();
    let plain_sites: Vec<u32> = (0..program.sites().len() as u32)
        .filter(|&id| {
            program.sites().get(id).is_some_and(|site| {
                matches!(
                    site.kind,
                    weft::instrument::AccessKind::Load | weft::instrument::AccessKind::Store
                )
            })
        })
        .step_by(7)
        .collect();
    cases.push(Case {
        label: "plain-reorder-c/races-schedule".into(),
        sample: "plain-reorder-c".into(),
        options: logging,
        run: Setup {
            races: RaceMode::Schedule,
            run: RunConfig {
                point_sites: plain_sites,
                ..base.run.clone()
            },
            ..base.clone()
        },
    });
    cases
}

/// The lines `<case> <strategy> <seed> <trace hash> <outcome kind>
/// <module hash>`.
fn hash_lines() -> Vec<String> {
    let mut lines = Vec::new();
    for case in cases() {
        let wasm = std::fs::read(sample(&case.sample)).unwrap();
        let module = code_hash(&wasm);
        let mut program = weft::execution::load(&wasm, case.options).unwrap();
        for strategy in [Strategy::Random, Strategy::Pct] {
            for seed in 0..=LAST_SEED {
                let result =
                    weft::explore::run_once(&mut program, strategy, seed, 3, &case.run).unwrap();
                let kind = result.outcome.failure().map_or("pass", |f| f.kind.name());
                lines.push(format!(
                    "{} {} {seed} {} {kind} {module}",
                    case.label,
                    strategy.name(),
                    result.trace_hash
                ));
            }
        }
    }
    lines
}

#[test]
fn trace_hashes_are_unchanged() {
    let path = root().join("tests/fixtures/trace-hashes.txt");
    let lines = hash_lines();
    if std::env::var_os("WEFT_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).expect("tests/fixtures/trace-hashes.txt exists");
    // Lines are keyed by everything but the trace hash and outcome.
    let key = |line: &str| {
        let f: Vec<&str> = line.split(' ').collect();
        (
            f[0].to_string(),
            f[1].to_string(),
            f[2].to_string(),
            f[5].to_string(),
        )
    };
    let pinned: std::collections::HashMap<_, &str> =
        expected.lines().map(|l| (key(l), l)).collect();
    let mut compared = 0;
    let mut differing = Vec::new();
    for line in &lines {
        let Some(&want) = pinned.get(&key(line)) else {
            continue;
        };
        compared += 1;
        if want != line {
            differing.push(format!("expected {want}\n     got {line}"));
        }
    }
    // The C, Zig and WAT samples compare in any checkout: each of their
    // lines must find its pinned line (a module whose code changed must be
    // blessed, and its changed lines read, not skipped).
    let uncompared: std::collections::BTreeSet<&str> = lines
        .iter()
        .filter(|l| {
            let sample = l.split([' ', '/']).next().unwrap_or_default();
            ["-c", "-wat", "-zig"].iter().any(|s| sample.ends_with(s))
                && !pinned.contains_key(&key(l))
        })
        .map(|l| l.split(' ').next().unwrap_or_default())
        .collect();
    assert!(
        uncompared.is_empty() && compared > 0,
        "no pinned line for {uncompared:?} (a module's code changed): rebuild the samples, or bless and check that each changed line comes with a changed module hash"
    );
    assert!(
        differing.is_empty(),
        "{} of {compared} compared lines differ:\n{}",
        differing.len(),
        differing
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
