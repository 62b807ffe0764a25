//! The mailboxes of guest actors (`weft.actor_*`): weft holds every message
//! and picks each delivery, at random or following a schedule of receive
//! events, and records the receives for coverage and schedule generation.
//!
//! Receives are identified across executions by creation paths, as in Bita:
//! an actor by its type, the receive that created it and how many actors
//! that receive created before; a message by its kind, the receive that
//! sent it and how many messages that receive sent before; a receive by its
//! receiver and message. The driver (the code around the event loop) is
//! the receive with hash 0. Deliveries keep per-sender FIFO order.

use crate::runtime::ExecutionResult;
use crate::runtime::analysis::{Analysis, Report};
use std::collections::VecDeque;
use std::sync::Arc;

/// The driver's actor id in the guest ABI.
pub const DRIVER: u32 = u32::MAX;

/// A created actor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActorInfo {
    /// Its type.
    pub kind: String,
    /// Its creation-path hash.
    pub hash: u64,
    /// The receive that created it (`None`: the driver).
    pub created_in: Option<usize>,
}

/// One delivery, in the order they happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Receive {
    /// The receive's hash.
    pub hash: u64,
    /// Receiving actor ([`DRIVER`] for a reply to an ask).
    pub receiver: u32,
    /// Sending actor ([`DRIVER`] for the driver).
    pub sender: u32,
    /// The message's kind.
    pub kind: String,
    /// The receive in which the message was sent (`None`: the driver).
    pub sent_in: Option<usize>,
    /// For a message the driver sent after the actors went quiet (it waits
    /// for that, as `settle` does): how many receives happened before, all
    /// of which come before this one in every execution. 0 otherwise.
    pub after_quiet: usize,
    /// The behaviour the receive switched its actor to, if it did.
    pub became: Option<String>,
}

/// Everything the actors did in one execution.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ActorLog {
    /// Actors, by id.
    pub actors: Vec<ActorInfo>,
    /// Deliveries, in order.
    pub receives: Vec<Receive>,
    /// Messages sent but never delivered.
    pub undelivered: usize,
}

impl ActorLog {
    /// `kind #id` of an actor, or `driver`.
    pub fn name(&self, id: u32) -> String {
        match self.actors.get(id as usize) {
            Some(a) => format!("{} #{id}", a.kind),
            None => "driver".to_string(),
        }
    }
}

#[derive(Clone, Debug)]
struct Pending {
    to: u32,
    from: u32,
    kind: String,
    body: Vec<u8>,
    hash: u64,
    sent_in: Option<usize>,
    after_quiet: usize,
}

/// How free deliveries (after any schedule) are chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Delivery {
    /// Uniformly among the deliverable messages.
    #[default]
    Uniform,
    /// The oldest message first, except that with this percent chance a
    /// random other one overtakes it: the random message delays of a
    /// real actor runtime.
    Delays(u8),
}

/// Why a delivery could not be made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoDelivery {
    /// No message is left.
    Quiet,
    /// The schedule's next receive is not among the messages held.
    Diverged {
        /// Receives of the schedule done.
        done: usize,
    },
}

/// A message chosen for delivery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivered {
    /// Receiving actor.
    pub to: u32,
    /// Sending actor.
    pub from: u32,
    /// Kind.
    pub kind: String,
    /// Body.
    pub body: Vec<u8>,
}

/// The mailboxes and what happened, during one execution.
#[derive(Clone, Debug, Default)]
pub struct Mailboxes {
    log: ActorLog,
    pending: Vec<Pending>,
    /// The receive being handled (`None`: the driver).
    current: Option<usize>,
    /// Actors and messages created by the current receive so far.
    spawned_here: u32,
    sent_here: u32,
    /// The driver's counts (it is one long receive).
    driver_spawned: u32,
    driver_sent: u32,
    /// Receives before the actors last went quiet (see
    /// [`Receive::after_quiet`]).
    quiet_at: usize,
    /// Receive hashes still to follow.
    schedule: VecDeque<u64>,
    followed: usize,
    /// How free deliveries are chosen.
    delivery: Delivery,
}

/// A 64-bit hash of `parts`.
fn hash(parts: &[&[u8]]) -> u64 {
    let mut h = blake3::Hasher::new();
    for p in parts {
        h.update(&(p.len() as u64).to_le_bytes());
        h.update(p);
    }
    u64::from_le_bytes(h.finalize().as_bytes()[..8].try_into().expect("8 bytes"))
}

impl Mailboxes {
    /// Mailboxes that deliver `schedule` (receive hashes) first, then
    /// choose as `delivery` says.
    pub fn new(schedule: &[u64], delivery: Delivery) -> Self {
        Mailboxes {
            schedule: schedule.iter().copied().collect(),
            delivery,
            ..Default::default()
        }
    }

    fn current_hash(&self) -> u64 {
        self.current.map_or(0, |i| self.log.receives[i].hash)
    }

    fn actor_hash(&self, id: u32) -> u64 {
        self.log.actors.get(id as usize).map_or(0, |a| a.hash)
    }

    /// Whether `id` names an actor (or the driver).
    pub fn exists(&self, id: u32) -> bool {
        id == DRIVER || (id as usize) < self.log.actors.len()
    }

    /// The actor handling the current receive ([`DRIVER`] outside one).
    pub fn current_actor(&self) -> u32 {
        self.current
            .map_or(DRIVER, |i| self.log.receives[i].receiver)
    }

    /// `weft.actor_spawn`.
    pub fn spawn(&mut self, kind: String) -> u32 {
        let index = if self.current.is_some() {
            &mut self.spawned_here
        } else {
            &mut self.driver_spawned
        };
        let n = *index;
        *index += 1;
        let hash = hash(&[
            b"actor",
            kind.as_bytes(),
            &self.current_hash().to_le_bytes(),
            &n.to_le_bytes(),
        ]);
        self.log.actors.push(ActorInfo {
            kind,
            hash,
            created_in: self.current,
        });
        self.log.actors.len() as u32 - 1
    }

    /// `weft.actor_send`.
    pub fn send(&mut self, to: u32, kind: String, body: Vec<u8>) {
        let index = if self.current.is_some() {
            &mut self.sent_here
        } else {
            &mut self.driver_sent
        };
        let n = *index;
        *index += 1;
        let hash = hash(&[
            b"message",
            kind.as_bytes(),
            &self.current_hash().to_le_bytes(),
            &n.to_le_bytes(),
        ]);
        let from = self.current_actor();
        self.pending.push(Pending {
            to,
            from,
            kind,
            body,
            hash,
            sent_in: self.current,
            after_quiet: if self.current.is_none() {
                self.quiet_at
            } else {
                0
            },
        });
    }

    /// `weft.actor_become`.
    pub fn became(&mut self, behaviour: String) {
        if let Some(i) = self.current {
            self.log.receives[i].became = Some(behaviour);
        }
    }

    fn receive_hash(&self, p: &Pending) -> u64 {
        let receiver = if p.to == DRIVER {
            0
        } else {
            self.actor_hash(p.to)
        };
        hash(&[b"receive", &receiver.to_le_bytes(), &p.hash.to_le_bytes()])
    }

    /// The messages that may be delivered now: the oldest one of each
    /// (sender, receiver) pair. Indices in `pending`.
    fn deliverable(&self) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for (i, p) in self.pending.iter().enumerate() {
            if !out
                .iter()
                .any(|&j| self.pending[j].from == p.from && self.pending[j].to == p.to)
            {
                out.push(i);
            }
        }
        out
    }

    /// The previous receive's handler returned; picks the next delivery:
    /// the schedule's head while the schedule lasts, else
    /// `choose(number of deliverable messages)`.
    pub fn deliver(
        &mut self,
        mut choose: impl FnMut(u64) -> Option<u64>,
    ) -> Result<Delivered, NoDelivery> {
        self.current = None;
        let candidates = self.deliverable();
        if candidates.is_empty() {
            self.quiet_at = self.log.receives.len();
            return Err(NoDelivery::Quiet);
        }
        let pick = match self.schedule.front() {
            Some(&head) => {
                let Some(&i) = candidates
                    .iter()
                    .find(|&&i| self.receive_hash(&self.pending[i]) == head)
                else {
                    return Err(NoDelivery::Diverged {
                        done: self.followed,
                    });
                };
                self.schedule.pop_front();
                self.followed += 1;
                i
            }
            None => {
                let k = match self.delivery {
                    Delivery::Uniform => choose(candidates.len() as u64),
                    Delivery::Delays(percent) => match choose(100) {
                        Some(coin) if coin < percent as u64 && candidates.len() > 1 => {
                            choose(candidates.len() as u64 - 1).map(|k| k + 1)
                        }
                        Some(_) => Some(0),
                        None => None,
                    },
                };
                let Some(k) = k else {
                    return Err(NoDelivery::Quiet);
                };
                candidates[k as usize]
            }
        };
        let p = self.pending.remove(pick);
        let hash = self.receive_hash(&p);
        self.log.receives.push(Receive {
            hash,
            receiver: p.to,
            sender: p.from,
            kind: p.kind.clone(),
            sent_in: p.sent_in,
            after_quiet: p.after_quiet,
            became: None,
        });
        self.current = Some(self.log.receives.len() - 1);
        self.spawned_here = 0;
        self.sent_here = 0;
        Ok(Delivered {
            to: p.to,
            from: p.from,
            kind: p.kind,
            body: p.body,
        })
    }

    /// What happened, once the execution is over.
    pub fn into_log(mut self) -> ActorLog {
        self.log.undelivered = self.pending.len();
        self.log
    }

    /// What happened so far.
    pub fn log(&self) -> &ActorLog {
        &self.log
    }
}

/// The mailboxes are an analysis only for their SDK imports and their
/// report, the execution's [`ActorLog`] ([`log_of`]).
impl Analysis for Mailboxes {
    fn finish(self: Box<Self>) -> Option<Report> {
        Some(Arc::new(self.into_log()))
    }
}

/// What the guest's actors did in `result`, if it has actors.
pub fn log_of(result: &ExecutionResult) -> Option<&ActorLog> {
    result.reports.get::<ActorLog>()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(schedule: &[u64], picks: &[u64]) -> (ActorLog, Result<(), NoDelivery>) {
        let mut m = Mailboxes::new(schedule, Delivery::Uniform);
        let a = m.spawn("A".into());
        let b = m.spawn("B".into());
        m.send(a, "x".into(), vec![]);
        m.send(b, "y".into(), vec![]);
        m.send(a, "z".into(), vec![]);
        let mut picks = picks.iter().copied();
        loop {
            match m.deliver(|_| picks.next()) {
                Ok(_) => {}
                Err(NoDelivery::Quiet) => return (m.into_log(), Ok(())),
                Err(e) => return (m.into_log(), Err(e)),
            }
        }
    }

    #[test]
    fn fifo_per_sender_and_receiver_and_stable_hashes() {
        let (first, _) = run(&[], &[0, 0, 0]);
        let kinds: Vec<&str> = first.receives.iter().map(|r| r.kind.as_str()).collect();
        assert_eq!(kinds, ["x", "y", "z"]);
        // z can never overtake x (same sender, same receiver).
        let (other, _) = run(&[], &[1, 0, 0]);
        let kinds: Vec<&str> = other.receives.iter().map(|r| r.kind.as_str()).collect();
        assert_eq!(kinds, ["y", "x", "z"]);
        // The same receive has the same hash in both executions.
        assert_eq!(first.receives[0].hash, other.receives[1].hash);
    }

    #[test]
    fn a_schedule_is_followed_then_delivery_is_free_or_it_diverges() {
        let (free, _) = run(&[], &[0, 0, 0]);
        let want = [free.receives[1].hash, free.receives[0].hash];
        let (followed, outcome) = run(&want, &[0]);
        assert!(outcome.is_ok());
        assert_eq!(followed.receives[0].kind, "y");
        assert_eq!(followed.receives[1].kind, "x");
        // z before x breaks FIFO: the schedule diverges.
        let (_, outcome) = run(&[free.receives[2].hash], &[]);
        assert_eq!(outcome, Err(NoDelivery::Diverged { done: 0 }));
    }

    #[test]
    fn a_driver_message_after_the_actors_went_quiet_follows_every_receive() {
        let (log, _) = run(&[], &[0, 0, 0]);
        assert!(log.receives.iter().all(|r| r.after_quiet == 0));
        let mut m = Mailboxes::new(&[], Delivery::Uniform);
        let a = m.spawn("A".into());
        m.send(a, "x".into(), vec![]);
        assert!(m.deliver(|_| Some(0)).is_ok());
        assert_eq!(m.deliver(|_| Some(0)).err(), Some(NoDelivery::Quiet));
        m.send(a, "after".into(), vec![]);
        assert!(m.deliver(|_| Some(0)).is_ok());
        assert_eq!(m.log().receives[1].after_quiet, 1);
    }
}
