//! The sentences of a story as they are told, with repetition folded: a
//! thread that spins (a failed `trylock` again and again, a flag read
//! until it changes) or threads that take turns doing the same thing say
//! it once, then how many more times it happened. A story of a livelock,
//! millions of steps long, stays short and is told quickly.

use crate::trace::ThreadId;

/// The longest run of steps that is recognised as repeating (as many
/// threads as take turns spinning, two steps each).
const MAX_PERIOD: usize = 8;
/// Steps kept before and after each change of thread when a story is
/// shortened.
const CONTEXT: usize = 3;
/// Steps kept at the end of a shortened story.
const TAIL: usize = 8;
/// Stories with at most this many steps are told whole.
const WHOLE: usize = 30;

/// A run of steps that is being repeated.
#[derive(Clone, Copy, Debug)]
struct Cycle {
    /// Index of its first step.
    start: usize,
    /// Its length.
    len: usize,
    /// How far into it the steps being told have got.
    matched: usize,
    /// Full repetitions after the first telling.
    repeats: u64,
}

/// The steps of a story, each with the thread that took it.
#[derive(Debug, Default)]
pub struct Steps {
    told: Vec<(ThreadId, String)>,
    cycle: Option<Cycle>,
}

impl Steps {
    /// Tells that `thread` did `text`.
    pub fn push(&mut self, thread: ThreadId, text: String) {
        if let Some(mut cycle) = self.cycle {
            let (expected_thread, expected) = &self.told[cycle.start + cycle.matched];
            if *expected_thread == thread && *expected == text {
                cycle.matched += 1;
                if cycle.matched == cycle.len {
                    cycle.matched = 0;
                    cycle.repeats += 1;
                }
                self.cycle = Some(cycle);
                return;
            }
            self.end_cycle();
        }
        self.told.push((thread, text));
        self.find_cycle();
    }

    /// The steps told, shortened when there are many: the steps around
    /// each change of thread and the last ones are kept.
    pub fn finish(mut self) -> Vec<String> {
        self.end_cycle();
        shorten(self.told)
    }

    /// Whether the last steps repeat the ones before them; the repetition
    /// is then counted instead of told.
    fn find_cycle(&mut self) {
        let n = self.told.len();
        for len in 1..=MAX_PERIOD.min(n / 2) {
            if self.told[n - len..] == self.told[n - 2 * len..n - len] {
                self.told.truncate(n - len);
                self.cycle = Some(Cycle {
                    start: n - 2 * len,
                    len,
                    matched: 0,
                    repeats: 1,
                });
                return;
            }
        }
    }

    /// Ends the repetition under way: says how often it happened, then
    /// tells the part of it begun but not finished.
    fn end_cycle(&mut self) {
        let Some(cycle) = self.cycle.take() else {
            return;
        };
        let block = cycle.start..cycle.start + cycle.len;
        let thread = self.told[block.end - 1].0;
        let what = match cycle.len {
            1 => "the step above".to_string(),
            n => format!("the {n} steps above"),
        };
        let times = match cycle.repeats {
            1 => "once more".to_string(),
            n => format!("{n} more times"),
        };
        self.told
            .push((thread, format!("… {what} happened {times}, over and over")));
        let begun: Vec<_> = self.told[block.start..block.start + cycle.matched].to_vec();
        self.told.extend(begun);
    }
}

fn shorten(steps: Vec<(ThreadId, String)>) -> Vec<String> {
    if steps.len() <= WHOLE {
        return steps.into_iter().map(|(_, s)| s).collect();
    }
    let mut keep = vec![false; steps.len()];
    for i in 1..steps.len() {
        if steps[i].0 != steps[i - 1].0 {
            let from = i.saturating_sub(CONTEXT);
            let to = (i + CONTEXT).min(steps.len());
            keep[from..to].iter_mut().for_each(|k| *k = true);
        }
        // A repetition is told with the steps it repeats.
        if steps[i].1.starts_with('…') {
            let from = i.saturating_sub(MAX_PERIOD);
            keep[from..=i].iter_mut().for_each(|k| *k = true);
        }
    }
    let tail = steps.len().saturating_sub(TAIL);
    keep[tail..].iter_mut().for_each(|k| *k = true);
    keep[0] = true;
    let mut out = Vec::new();
    let mut skipped: Vec<ThreadId> = Vec::new();
    for (i, (thread, text)) in steps.into_iter().enumerate() {
        if keep[i] {
            if !skipped.is_empty() {
                out.push(elided(&skipped));
                skipped.clear();
            }
            out.push(text);
        } else {
            skipped.push(thread);
        }
    }
    out
}

fn elided(skipped: &[ThreadId]) -> String {
    if skipped.iter().all(|&t| t == skipped[0]) {
        format!("… {} more steps of the same thread, alone", skipped.len())
    } else {
        format!("… {} more steps", skipped.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn told(steps: &[(ThreadId, &str)]) -> Vec<String> {
        let mut s = Steps::default();
        for &(t, text) in steps {
            s.push(t, text.to_string());
        }
        s.finish()
    }

    #[test]
    fn one_thread_spinning_is_told_once_with_a_count() {
        let mut steps = vec![(1, "locked a")];
        steps.extend(std::iter::repeat_n((1, "tried b, taken"), 1000));
        steps.push((1, "got b"));
        assert_eq!(
            told(&steps),
            [
                "locked a",
                "tried b, taken",
                "… the step above happened 999 more times, over and over",
                "got b"
            ]
        );
    }

    #[test]
    fn threads_taking_turns_fold_into_one_round() {
        let mut steps = Vec::new();
        for _ in 0..50 {
            steps.push((1, "tried b, taken"));
            steps.push((2, "tried a, taken"));
        }
        // A round begun but not finished is told after the count.
        steps.push((1, "tried b, taken"));
        steps.push((1, "gave up"));
        assert_eq!(
            told(&steps),
            [
                "tried b, taken",
                "tried a, taken",
                "… the 2 steps above happened 49 more times, over and over",
                "tried b, taken",
                "gave up"
            ]
        );
    }

    #[test]
    fn steps_that_do_not_repeat_are_told_as_they_are() {
        let steps = [(1, "a"), (2, "b"), (1, "c"), (2, "a")];
        assert_eq!(told(&steps), ["a", "b", "c", "a"]);
    }
}
