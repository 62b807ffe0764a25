//! Must-happen-before between the receives of one execution: orders no
//! schedule can change.
//!
//! - Causality: `ri` before `rj` when `ri` sent `rj`'s message or created
//!   `rj`'s receiver, or a later receive of `ri`'s actor (before `rj`) did:
//!   what an actor sends may depend on everything it received before (the
//!   Terminator sends Flush only on its last ActionDone).
//! - Quiescence: the driver sends what it sends after waiting for the
//!   actors to go quiet (`settle`) only once every earlier receive is done.
//! - FIFO: two messages from the same sender to the same receiver arrive in
//!   the order sent.
//!
//! The relation is transitively closed.

use crate::actors::mailboxes::ActorLog;

/// `mhb[i][j]`: receive `i` must happen before receive `j`.
pub fn must_happen_before(log: &ActorLog) -> Vec<Vec<bool>> {
    let r = &log.receives;
    let n = r.len();
    let mut mhb = vec![vec![false; n]; n];
    let causes = |k: usize, j: usize| {
        r[j].sent_in == Some(k)
            || k < r[j].after_quiet
            || log
                .actors
                .get(r[j].receiver as usize)
                .is_some_and(|a| a.created_in == Some(k))
    };
    for i in 0..n {
        for j in i + 1..n {
            let causal =
                causes(i, j) || (i + 1..j).any(|k| r[k].receiver == r[i].receiver && causes(k, j));
            let fifo = r[i].sender == r[j].sender && r[i].receiver == r[j].receiver;
            mhb[i][j] = causal || fifo;
        }
    }
    // Transitive closure (receives only ever precede later ones).
    for k in 0..n {
        let after_k = mhb[k].clone();
        for row in mhb.iter_mut().take(k) {
            if !row[k] {
                continue;
            }
            for (cell, &via) in row.iter_mut().zip(&after_k).skip(k + 1) {
                *cell |= via;
            }
        }
    }
    mhb
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actors::mailboxes::{ActorInfo, DRIVER, Receive};

    fn receive(receiver: u32, sender: u32, sent_in: Option<usize>) -> Receive {
        Receive {
            hash: 0,
            receiver,
            sender,
            kind: String::new(),
            sent_in,
            after_quiet: 0,
            became: None,
        }
    }

    #[test]
    fn causality_fifo_and_closure() {
        let actor = |created_in| ActorInfo {
            kind: "A".into(),
            hash: 0,
            created_in,
        };
        let log = ActorLog {
            actors: vec![actor(None), actor(None), actor(Some(0))],
            receives: vec![
                receive(0, DRIVER, None), // 0: creates actor 2, sends 2
                receive(1, DRIVER, None), // 1: unrelated
                receive(2, 0, Some(0)),   // 2: caused by 0
                receive(1, 2, Some(2)),   // 3: caused by 2
                receive(1, DRIVER, None), // 4: FIFO after 1 (driver -> actor 1)
            ],
            undelivered: 0,
        };
        let mhb = must_happen_before(&log);
        assert!(mhb[0][2] && mhb[2][3]);
        assert!(mhb[0][3], "transitive");
        assert!(mhb[1][4], "fifo");
        assert!(!mhb[1][2] && !mhb[1][3]);
    }

    #[test]
    fn a_driver_message_sent_after_quiescence_follows_every_earlier_receive() {
        // Two receives from different senders, then a driver message sent
        // once both were done: only quiescence orders it.
        let log = ActorLog {
            actors: vec![ActorInfo {
                kind: "A".into(),
                hash: 0,
                created_in: None,
            }],
            receives: vec![
                receive(0, DRIVER, None),
                receive(0, 1, None),
                Receive {
                    after_quiet: 2,
                    ..receive(0, 2, None)
                },
            ],
            undelivered: 0,
        };
        let mhb = must_happen_before(&log);
        assert!(mhb[0][2] && mhb[1][2]);
        assert!(!mhb[0][1]);
    }
}
