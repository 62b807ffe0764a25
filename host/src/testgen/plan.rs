//! Generated tests, the plan text the guest driver runs, and what it
//! reports back (see `weft_guest::class`).

use super::class::Class;
use std::fmt::Write as _;

/// An argument of a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arg {
    /// An integer.
    Int(i64),
    /// The result of call number `k` (in plan order).
    Result(usize),
}

/// A call: a method (index in the class's methods, or `None` for the
/// constructor) and its arguments after the handle (the handle first for
/// methods).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Call {
    /// The method, or `None` for the constructor.
    pub method: Option<usize>,
    /// Arguments (for a method, the handle first).
    pub args: Vec<Arg>,
}

/// A concurrent test: a prefix, then two suffixes run concurrently.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Test {
    /// Run by the main thread first.
    pub prefix: Vec<Call>,
    /// Run by two threads at once.
    pub suffixes: [Vec<Call>; 2],
}

impl Test {
    /// The plan text: method numbers are positions in `gen_methods` (the
    /// constructor is 0, method `i` is `i + 1`).
    pub fn plan(&self) -> String {
        let phase = |calls: &[Call]| {
            calls
                .iter()
                .map(|c| {
                    let mut s = c.method.map_or(0, |m| m + 1).to_string();
                    for a in &c.args {
                        match a {
                            Arg::Int(v) => write!(s, " {v}"),
                            Arg::Result(k) => write!(s, " r{k}"),
                        }
                        .expect("writing to a String");
                    }
                    s
                })
                .collect::<Vec<_>>()
                .join(";")
        };
        format!(
            "{}|{}|{}",
            phase(&self.prefix),
            phase(&self.suffixes[0]),
            phase(&self.suffixes[1])
        )
    }

    /// Reads back the text [`Test::plan`] writes; `None` when `plan` is not
    /// one.
    pub fn parse(plan: &str) -> Option<Test> {
        let phase = |text: &str| -> Option<Vec<Call>> {
            if text.is_empty() {
                return Some(Vec::new());
            }
            text.split(';')
                .map(|call| {
                    let mut words = call.split(' ');
                    let method = match words.next()?.parse::<usize>().ok()? {
                        0 => None,
                        m => Some(m - 1),
                    };
                    let args = words
                        .map(|w| match w.strip_prefix('r') {
                            Some(k) => k.parse().ok().map(Arg::Result),
                            None => w.parse().ok().map(Arg::Int),
                        })
                        .collect::<Option<Vec<Arg>>>()?;
                    Some(Call { method, args })
                })
                .collect()
        };
        let mut phases = plan.split('|');
        let test = Test {
            prefix: phase(phases.next()?)?,
            suffixes: [phase(phases.next()?)?, phase(phases.next()?)?],
        };
        phases.next().is_none().then_some(test)
    }

    /// The same calls run sequentially: the prefix, then `order` (phase 1
    /// or 2 for each suffix call, in the order to run them); with, for each
    /// call number of this test, its number in the linearized one.
    pub fn linearized(&self, order: &[u8]) -> (Test, Vec<usize>) {
        let mut next = [0usize, 0];
        let mut calls = self.prefix.clone();
        // Calls keep their numbers: the suffixes' calls are numbered after
        // the prefix, suffix 1 first; renumber references accordingly.
        let base = self.prefix.len();
        let numbered = |phase: u8, i: usize| match phase {
            1 => base + i,
            _ => base + self.suffixes[0].len() + i,
        };
        let mut position = vec![0usize; base + self.suffixes[0].len() + self.suffixes[1].len()];
        for (k, p) in position.iter_mut().enumerate().take(base) {
            *p = k;
        }
        let mut sequence = Vec::new();
        for &phase in order {
            let i = next[phase as usize - 1];
            next[phase as usize - 1] += 1;
            position[numbered(phase, i)] = base + sequence.len();
            sequence.push(self.suffixes[phase as usize - 1][i].clone());
        }
        for mut call in sequence {
            for a in &mut call.args {
                if let Arg::Result(k) = a {
                    *k = position[*k];
                }
            }
            calls.push(call);
        }
        let test = Test {
            prefix: calls,
            suffixes: [Vec::new(), Vec::new()],
        };
        (test, position)
    }

    /// The call numbered `k`.
    pub fn call(&self, k: usize) -> Option<&Call> {
        self.prefix
            .iter()
            .chain(&self.suffixes[0])
            .chain(&self.suffixes[1])
            .nth(k)
    }

    /// The test as code-like text: `h0 = new(); sb_append(h0, h1) ...`.
    pub fn describe(&self, class: &Class) -> String {
        let mut n = 0;
        let mut phase = |calls: &[Call]| {
            calls
                .iter()
                .map(|c| {
                    let k = n;
                    n += 1;
                    let args: Vec<String> = c
                        .args
                        .iter()
                        .map(|a| match a {
                            Arg::Int(v) => v.to_string(),
                            Arg::Result(r) => format!("r{r}"),
                        })
                        .collect();
                    let name = c.method.map_or(class.constructor.as_str(), |m| {
                        class.methods[m].export.as_str()
                    });
                    format!("r{k} = {name}({})", args.join(", "))
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        let prefix = phase(&self.prefix);
        let one = phase(&self.suffixes[0]);
        let two = phase(&self.suffixes[1]);
        format!("prefix: {prefix}\nthread 1: {one}\nthread 2: {two}")
    }
}

/// What the driver reported: the calls' entries and exits in order, and
/// each call's result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// (phase, call number, entered) in the order they happened.
    pub events: Vec<(u8, usize, bool)>,
    /// Results by call number (`None`: never returned).
    pub results: Vec<Option<i64>>,
}

/// Reads the driver's lines from a run's stdout.
pub fn read_report(stdout: &[u8]) -> Report {
    let mut report = Report::default();
    for line in String::from_utf8_lossy(stdout).lines() {
        let mut f = line.split('\t');
        if f.next() != Some("weft-gen") {
            continue;
        }
        let kind = f.next();
        let phase: u8 = f.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        let Some(call) = f.next().and_then(|c| c.parse::<usize>().ok()) else {
            continue;
        };
        match kind {
            Some("enter") => report.events.push((phase, call, true)),
            Some("exit") => {
                report.events.push((phase, call, false));
                if report.results.len() <= call {
                    report.results.resize(call + 1, None);
                }
                report.results[call] = f.next().and_then(|v| v.parse().ok());
            }
            _ => {}
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(method: Option<usize>, args: &[Arg]) -> Call {
        Call {
            method,
            args: args.to_vec(),
        }
    }

    #[test]
    fn plans_and_linearizations_keep_references_right() {
        let test = Test {
            prefix: vec![call(None, &[])],
            suffixes: [
                vec![call(Some(0), &[Arg::Result(0), Arg::Int(5)])],
                vec![
                    call(Some(1), &[Arg::Result(0)]),
                    call(Some(0), &[Arg::Result(2), Arg::Int(1)]),
                ],
            ],
        };
        assert_eq!(test.plan(), "0|1 r0 5|2 r0;1 r2 1");
        assert_eq!(Test::parse(&test.plan()), Some(test.clone()));
        assert_eq!(
            Test::parse("0||"),
            Some(Test {
                prefix: vec![call(None, &[])],
                suffixes: [vec![], vec![]]
            })
        );
        assert_eq!(Test::parse("0|x|"), None);
        assert_eq!(Test::parse("0|1"), None);
        // Thread 2 first, then thread 1: call 2 moves to position 1.
        let (lin, position) = test.linearized(&[2, 2, 1]);
        assert_eq!(lin.plan(), "0;2 r0;1 r1 1;1 r0 5||");
        assert_eq!(position, vec![0, 3, 1, 2]);
        let report = read_report(b"weft-gen\tenter\t1\t1\nnoise\nweft-gen\texit\t1\t1\t42\n");
        assert_eq!(report.events, vec![(1, 1, true), (1, 1, false)]);
        assert_eq!(report.results, vec![None, Some(42)]);
    }
}
