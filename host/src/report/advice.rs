//! What a failure report advises, where the failure may hang on a choice
//! of semantics the user made without thinking of it.

use crate::runtime::{ExecutionResult, Sleeps};
use crate::trace::{Event, EventKind};

/// What the report of `result`'s failure, run under `sleeps`, advises:
/// that a limit refused the program memory or a thread before it failed
/// (the program went on without it: raise the limit to see whether the
/// failure needs it), and that its sleeps ordered nothing.
pub fn for_failure(result: &ExecutionResult, sleeps: Sleeps) -> Option<String> {
    // A failure of a limit's kind names the limit already.
    let named = result
        .outcome
        .failure()
        .is_some_and(|failure| failure.kind.is_limit());
    let refused = result.refused.filter(|_| !named).map(|cut| {
        format!(
            "this execution {}; the failure may follow from that",
            cut.describe()
        )
    });
    let advice: Vec<String> = refused
        .into_iter()
        .chain(sleep_advice(&result.events, sleeps))
        .collect();
    (!advice.is_empty()).then(|| advice.join(". "))
}

/// For a failing execution (its `events`) run under `sleeps`: when a
/// sleep orders nothing (`--sleeps any`) and a thread of it slept, that
/// the failure may need a sleeper to wake before what it slept for
/// happened, and how to explore the program as a real machine's timing
/// would run it.
fn sleep_advice(events: &[Event], sleeps: Sleeps) -> Option<String> {
    if sleeps != Sleeps::Any {
        return None;
    }
    let sleeper = events
        .iter()
        .find(|event| matches!(event.kind, EventKind::Sleep { .. }))?;
    Some(format!(
        "thread {} sleeps in this execution, and under `--sleeps any` a sleep orders nothing: a sleeper may wake before what it slept for happened. If the program counts on its sleeps (a test written for a real machine), explore it with `--sleeps timed`, where a sleeper wakes only once the others had their time (the default of `weft test`)",
        sleeper.thread
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result_with(kind: EventKind) -> Vec<Event> {
        vec![Event {
            thread: 1,
            kind,
            addr: 0,
            site: None,
        }]
    }

    #[test]
    fn a_sleep_under_any_is_named_and_timed_sleeps_need_no_advice() {
        let slept = result_with(EventKind::Sleep { until_ns: 5 });
        let advice = sleep_advice(&slept, Sleeps::Any).unwrap();
        assert!(advice.starts_with("thread 1 sleeps"), "{advice}");
        assert!(advice.contains("--sleeps timed"), "{advice}");
        assert_eq!(sleep_advice(&slept, Sleeps::Timed), None);
        let yielded = result_with(EventKind::Yield);
        assert_eq!(sleep_advice(&yielded, Sleeps::Any), None);
    }
}
