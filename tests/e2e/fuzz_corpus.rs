//! The fuzz targets' bodies (`weft::fuzzing`, run for long by `cargo fuzz`
//! from `fuzz/`) on the committed corpus and on seeded mutations of it, and
//! the rewriter on modules `wasm-smith` generates: a short, deterministic
//! run in every test of the suite.

use arbitrary::Unstructured;
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// The corpus of fuzz target `target`.
fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = crate::support::root().join("fuzz/corpus").join(target);
    let mut inputs: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| std::fs::read(entry.unwrap().path()).unwrap())
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty(), "{} is empty", dir.display());
    inputs
}

/// `count` mutations of `input`: bytes flipped, spans cut or repeated.
fn mutations(input: &[u8], count: u64) -> impl Iterator<Item = Vec<u8>> + '_ {
    (0..count).map(move |n| {
        let mut rng = Pcg64Mcg::seed_from_u64(n ^ (input.len() as u64) << 32);
        let mut bytes = input.to_vec();
        for _ in 0..1 + rng.next_u32() % 4 {
            if bytes.is_empty() {
                break;
            }
            let at = rng.next_u32() as usize % bytes.len();
            match rng.next_u32() % 4 {
                0 => bytes[at] ^= 1 << (rng.next_u32() % 8),
                1 => bytes[at] = rng.next_u32() as u8,
                2 => bytes.truncate(at),
                _ => {
                    let end = (at + 1 + rng.next_u32() as usize % 8).min(bytes.len());
                    let span = bytes[at..end].to_vec();
                    bytes.splice(at..at, span);
                }
            }
        }
        bytes
    })
}

/// Runs `body` on every input of `target`'s corpus and on about `budget`
/// mutations of them, spread over the inputs (at least 5 each).
fn run_target(target: &str, body: fn(&[u8]), budget: u64) {
    let inputs = corpus(target);
    let per_input = (budget / inputs.len() as u64).max(5);
    for input in inputs {
        body(&input);
        for mutated in mutations(&input, per_input) {
            body(&mutated);
        }
    }
}

#[test]
fn the_schedule_reader_survives_its_corpus_and_mutations() {
    run_target("schedule_text", weft::fuzzing::schedule_text, 5000);
}

#[test]
fn the_replay_file_reader_survives_its_corpus_and_mutations() {
    run_target("replay_file", weft::fuzzing::replay_file, 5000);
}

#[test]
fn the_symbol_readers_survive_their_corpus_and_mutations() {
    run_target("symbols", weft::fuzzing::symbols, 500);
    // A module with DWARF, mutated.
    let sample = std::fs::read(crate::support::sample("lost-update-c")).unwrap();
    for mutated in mutations(&sample, 40) {
        weft::fuzzing::symbols(&mutated);
    }
}

#[test]
fn the_rewriter_keeps_generated_modules_valid() {
    run_target("rewrite", weft::fuzzing::rewrite, 400);
    let mut generated = 0;
    for n in 0..300u64 {
        let mut bytes = vec![0u8; 2048];
        Pcg64Mcg::seed_from_u64(n).fill_bytes(&mut bytes);
        let mut u = Unstructured::new(&bytes);
        let Ok(config) = u.arbitrary::<wasm_smith::Config>() else {
            continue;
        };
        let config = wasm_smith::Config {
            threads_enabled: true,
            max_memories: 1,
            memory64_enabled: false,
            ..config
        };
        if let Ok(module) = wasm_smith::Module::new(config, &mut u) {
            weft::fuzzing::rewrite(&module.to_bytes());
            generated += 1;
        }
    }
    assert!(generated > 200, "only {generated} modules generated");
}
