//! A single-threaded program with plenty of memory traffic: it builds a
//! pseudo-random vector, sorts it, hashes it with FNV-1a, counts words in a
//! generated text with a BTreeMap and prints everything. Its output must be
//! the same with and without weft's instrumentation.
use std::collections::BTreeMap;
use std::fmt::Write;

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ *b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut state: u32 = 0x2545_f491;
    let mut values: Vec<u32> = (0..5000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state % 100_000
        })
        .collect();
    values.sort_unstable();
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    println!(
        "sorted {} values, min {} max {}",
        values.len(),
        values[0],
        values[values.len() - 1]
    );
    println!("fnv1a = {:016x}", fnv1a(&bytes));

    let mut text = String::new();
    for (i, v) in values.iter().enumerate().step_by(7) {
        write!(text, "w{} ", (v + i as u32) % 37).unwrap();
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for word in text.split_whitespace() {
        *counts.entry(word).or_default() += 1;
    }
    let top: Vec<String> = counts
        .iter()
        .take(5)
        .map(|(w, c)| format!("{w}={c}"))
        .collect();
    println!("{} distinct words; first: {}", counts.len(), top.join(", "));
    println!("args: {:?}", &args[1..]);
}
