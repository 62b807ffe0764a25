//! The seed of each execution of an exploration: derived from the
//! exploration's seed and the execution's index alone, so that an
//! exploration is reproducible as a whole and every execution on its own,
//! whichever worker runs it.

/// Scheduler seed of the `index`-th execution (from 0) of an exploration.
pub fn execution_seed(seed: u64, index: u64) -> u64 {
    // splitmix64 of the pair: nearby seeds give unrelated schedules.
    let mut z = seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::execution_seed;

    #[test]
    fn execution_seeds_differ() {
        let seeds: std::collections::HashSet<u64> =
            (0..1000).map(|i| execution_seed(1, i)).collect();
        assert_eq!(seeds.len(), 1000);
        assert_eq!(execution_seed(5, 3), execution_seed(5, 3));
    }
}
