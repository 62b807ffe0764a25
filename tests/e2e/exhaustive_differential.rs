//! The exhaustive search against plain enumeration of every schedule and
//! value (`weft::fuzzing::exhaustive`) on programs generated from seeded
//! bytes: the same outcomes whenever `dpor` claims to have explored every
//! schedule, and never an outcome enumeration does not see.

use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;
use weft::fuzzing::exhaustive::{Compared, Generated, compare, compare_stateful};

/// Programs compared per test run.
const PROGRAMS: u64 = 300;

#[test]
fn dpor_sees_what_enumerating_every_schedule_sees() {
    holds_to_enumeration(PROGRAMS, "dpor", compare);
}

/// Programs compared per run with the stateful search, each compiled a
/// second time to read frames.
const STATEFUL_PROGRAMS: u64 = 120;

#[test]
fn the_stateful_search_sees_what_enumerating_every_schedule_sees() {
    holds_to_enumeration(STATEFUL_PROGRAMS, "the stateful dpor", compare_stateful);
}

/// Programs of counting operations compared per run, each side, and how
/// many of them at least fit enumeration (each of their threads' counting
/// operations is a decision of enumeration, so fewer fit than of the
/// other programs).
const COUNTING_PROGRAMS: (u64, u64) = (150, 45);

#[test]
fn counting_operations_commute_only_where_enumeration_agrees() {
    let (programs, fitting) = COUNTING_PROGRAMS;
    holds_to_enumeration_on(
        (programs, fitting),
        "dpor",
        compare,
        Generated::counting_from_bytes,
    );
    holds_to_enumeration_on(
        (programs / 2, fitting / 2),
        "the stateful dpor",
        compare_stateful,
        Generated::counting_from_bytes,
    );
}

/// Compares `search` (named `name`) with enumeration on the programs of
/// the first `programs` seeds: no disagreement, and the comparison bites
/// (enough programs fit enumeration, about half do, and the search claims
/// most of those).
fn holds_to_enumeration(
    programs: u64,
    name: &str,
    search: fn(&Generated) -> Result<Compared, String>,
) {
    holds_to_enumeration_on(
        (programs, programs * 2 / 5),
        name,
        search,
        Generated::from_bytes,
    );
}

/// [`holds_to_enumeration`] on the programs `generate` makes, of which
/// at least `fitting` of `programs` must fit enumeration.
fn holds_to_enumeration_on(
    (programs, fitting): (u64, u64),
    name: &str,
    search: fn(&Generated) -> Result<Compared, String>,
    generate: fn(&[u8]) -> Generated,
) {
    let mut claimed = 0;
    let mut compared = 0;
    let mut too_large = 0;
    let mut outcomes = 0;
    let mut executions = (0, 0);
    let mut failures = Vec::new();
    for seed in 0..programs {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let mut bytes = vec![0u8; 64];
        rng.fill_bytes(&mut bytes);
        let program = generate(&bytes);
        match search(&program) {
            Err(disagreement) => failures.push(format!("seed {seed}: {disagreement}")),
            Ok(Compared::TooLarge) => too_large += 1,
            Ok(Compared::Agree { dpor, every }) => {
                compared += 1;
                executions.0 += dpor.executions;
                executions.1 += every.executions;
                if dpor.withheld.is_none() {
                    claimed += 1;
                    outcomes += every.outcomes.len();
                }
            }
        }
    }
    eprintln!(
        "{compared} programs compared ({claimed} with a claim, {outcomes} outcomes among them; {} executions under {name}, {} enumerating), {too_large} too large",
        executions.0, executions.1
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(compared >= fitting, "only {compared} programs compared");
    assert!(claimed >= compared / 2, "only {claimed} claims");
}
