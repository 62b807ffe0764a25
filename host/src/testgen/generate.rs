//! Tests for a pair of methods (CovCon), or at random (the baseline).
//!
//! Every test starts with two instances (`r0`, shared by both threads, and
//! `r1`, available as an argument; a quarter of the suffix calls are made
//! on `r1`, with `r0` as a possible argument); CovCon's two tests per pair have no
//! further prefix calls and up to five random ones. Suffix 1 calls the
//! pair's methods, the first one first, suffix 2 the other way round. In
//! the test without prefix calls, each suffix is just that while the pair
//! has been tried at most five times, as in the paper; otherwise a suffix
//! has two to five calls, those past the pair of any method. (The paper
//! alternates the pair's methods in suffixes of up to five calls from the
//! sixth try on: a bug that leaves the instance broken without a wrong
//! result then shows only if the pair reads the instance afterwards, and
//! the state the prefix built is first exercised late.) Prefix calls are of
//! the methods seen to change the instance's state, as in the paper (see
//! [`Generator::probe`]). Arguments after
//! the handle are small integers and boundaries (a third of the time one
//! the test already used), the other instance, or earlier prefix results.

use super::class::Class;
use super::plan::{Arg, Call, Test};
use rand_core::RngCore;

/// Integers arguments are drawn from.
const INTS: [i64; 9] = [-1, 0, 1, 2, 3, 10, 100, i32::MAX as i64, i32::MIN as i64];

/// Generates tests for one class.
pub struct Generator<'a, R: RngCore> {
    class: &'a Class,
    rng: R,
    /// Integers the current test already used: reused a third of the time,
    /// so that, say, a removal names what was added.
    used: Vec<i64>,
    /// The methods prefix calls are drawn from (all, until
    /// [`Generator::prefix_methods`] narrows them).
    prefix_methods: Vec<usize>,
}

impl<'a, R: RngCore> Generator<'a, R> {
    /// A generator for `class` drawing from `rng`.
    pub fn new(class: &'a Class, rng: R) -> Self {
        Generator {
            class,
            rng,
            used: Vec::new(),
            prefix_methods: (0..class.methods.len()).collect(),
        }
    }

    /// Prefix calls are drawn from `methods` (those seen to change the
    /// instance's state), or from all methods when it is empty.
    pub fn prefix_methods(&mut self, methods: Vec<usize>) {
        if !methods.is_empty() {
            self.prefix_methods = methods;
        }
    }

    /// A sequential probe of whether `method` changes the state: a random
    /// prefix of one to three calls (so that, say, a removal has something
    /// to remove), then the same observing calls (every method once, in a
    /// random order, on the shared instance), without and with a call of
    /// `method` in between.
    /// Both tests have empty suffixes; the observers' results start at
    /// `without.prefix.len() - methods` and `with.prefix.len() - methods`.
    pub fn probe(&mut self, method: usize) -> (Test, Test) {
        let extra = 1 + self.below(3);
        let without = self.prefix(extra);
        let mut with = without.clone();
        with.push(self.call(method, 0, with.len()));
        // In a random order: an observer that changes the state itself
        // hides what the probed call did from those after it.
        let mut order: Vec<usize> = (0..self.class.methods.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, self.below(i + 1));
        }
        let observers: Vec<Call> = order.into_iter().map(|m| self.call(m, 0, 2)).collect();
        let test = |mut prefix: Vec<Call>| {
            prefix.extend(observers.iter().cloned());
            Test {
                prefix,
                suffixes: [Vec::new(), Vec::new()],
            }
        };
        (test(without), test(with))
    }

    fn below(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n.max(1) as u64) as usize
    }

    /// A call of `method` on the shared instance with drawn arguments;
    /// `known` results (prefix call numbers) may be reused.
    fn call(&mut self, method: usize, on: usize, known: usize) -> Call {
        let mut args = vec![Arg::Result(on)];
        for _ in 0..self.class.methods[method].extra_params {
            let arg = match self.below(10) {
                0..=5 => {
                    let value = if !self.used.is_empty() && self.below(3) == 0 {
                        let k = self.below(self.used.len());
                        self.used[k]
                    } else {
                        INTS[self.below(INTS.len())]
                    };
                    self.used.push(value);
                    Arg::Int(value)
                }
                6 | 7 => Arg::Result(1 - on.min(1)),
                _ => Arg::Result(self.below(known)),
            };
            args.push(arg);
        }
        Call {
            method: Some(method),
            args,
        }
    }

    fn prefix(&mut self, extra: usize) -> Vec<Call> {
        self.used.clear();
        let constructor = Call {
            method: None,
            args: Vec::new(),
        };
        let mut calls = vec![constructor.clone(), constructor];
        for _ in 0..extra {
            let k = self.below(self.prefix_methods.len());
            let method = self.prefix_methods[k];
            let on = self.below(2);
            let known = calls.len();
            calls.push(self.call(method, on, known));
        }
        calls
    }

    /// The instance a suffix call is made on: mostly the shared one, `r0`;
    /// sometimes the other, with `r0` available as an argument (so calls
    /// taking two instances meet in both orders).
    fn receiver(&mut self) -> usize {
        usize::from(self.below(4) == 0)
    }

    fn suffix(&mut self, first: usize, second: usize, len: usize, known: usize) -> Vec<Call> {
        (0..len)
            .map(|i| {
                // The pair first; calls past it are of any method, so that
                // what the pair's calls did to the instance gets observed.
                let method = match i {
                    0 => first,
                    1 => second,
                    _ => self.below(self.class.methods.len()),
                };
                let on = self.receiver();
                self.call(method, on, known)
            })
            .collect()
    }

    /// CovCon's two tests for the pair `(m1, m2)`, tried `tried` times.
    pub fn for_pair(&mut self, m1: usize, m2: usize, tried: u64) -> Vec<Test> {
        let mut tests = Vec::new();
        for extra in [0, 1 + self.below(5)] {
            let prefix = self.prefix(extra);
            let known = prefix.len();
            let mut len = || {
                if tried <= 5 && extra == 0 {
                    2
                } else {
                    2 + self.below(4)
                }
            };
            let (l1, l2) = (len(), len());
            let one = self.suffix(m1, m2, l1, known);
            let two = self.suffix(m2, m1, l2, known);
            tests.push(Test {
                prefix,
                suffixes: [one, two],
            });
        }
        tests
    }

    /// A random test: random prefix, random methods in both suffixes.
    pub fn random(&mut self) -> Test {
        let extra = self.below(6);
        let prefix = self.prefix(extra);
        let known = prefix.len();
        let mut suffix = || {
            let len = 1 + self.below(5);
            (0..len)
                .map(|_| {
                    let method = self.below(self.class.methods.len());
                    let on = self.receiver();
                    self.call(method, on, known)
                })
                .collect::<Vec<_>>()
        };
        let (one, two) = (suffix(), suffix());
        Test {
            prefix,
            suffixes: [one, two],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testgen::class::Method;
    use rand_core::SeedableRng;

    #[test]
    fn pair_tests_alternate_the_pair_on_the_shared_instance() {
        let class = Class {
            prefix: "sb".into(),
            constructor: "sb_new".into(),
            methods: vec![
                Method {
                    export: "sb_append".into(),
                    name: "append".into(),
                    extra_params: 1,
                    func: 1,
                },
                Method {
                    export: "sb_len".into(),
                    name: "len".into(),
                    extra_params: 0,
                    func: 2,
                },
            ],
        };
        let mut g = Generator::new(&class, rand_pcg::Pcg64Mcg::seed_from_u64(3));
        let tests = g.for_pair(0, 1, 1);
        assert_eq!(tests.len(), 2);
        assert_eq!(tests[0].prefix.len(), 2, "two instances, no more");
        let methods: Vec<Option<usize>> = tests[0].suffixes[0].iter().map(|c| c.method).collect();
        assert_eq!(methods, vec![Some(0), Some(1)]);
        let methods: Vec<Option<usize>> = tests[0].suffixes[1].iter().map(|c| c.method).collect();
        assert_eq!(methods, vec![Some(1), Some(0)]);
        for call in tests.iter().flat_map(|t| t.suffixes.iter().flatten()) {
            assert!(
                matches!(call.args[0], Arg::Result(0 | 1)),
                "one of the two instances"
            );
        }
        let random = g.random();
        assert!(!random.suffixes[0].is_empty() && !random.suffixes[1].is_empty());
    }
}
