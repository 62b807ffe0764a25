//! Futex waits and wakes: a thread blocks on an address, a notify wakes
//! waiters in the order they began to wait.

use super::ExecState;
use crate::instrument::SiteId;
use crate::runtime::analysis::Happening;
use crate::runtime::outcome::BlockedThread;
use crate::runtime::thread::ThreadState;
use crate::trace::ThreadId;

impl ExecState {
    /// Puts `me` to sleep on `addr`. A library step it is in counts its
    /// points afresh from here: the bound on them is for a call that spins
    /// without blocking, and how long the call spun before it blocked is no
    /// part of where it stands (states that differ only in it go on alike).
    pub fn block(&mut self, me: ThreadId, addr: u32, deadline: Option<u64>, site: Option<SiteId>) {
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        self.set_state(
            me,
            ThreadState::Waiting {
                addr,
                deadline,
                site,
                ticket,
            },
        );
        // After `set_state`, which drains the points passed before the wait.
        self.threads[me as usize].library_points = 0;
    }

    /// Wakes up to `count` threads waiting on `addr`, oldest first; returns
    /// how many woke.
    pub fn notify(&mut self, me: ThreadId, addr: u32, count: u32) -> u32 {
        let mut waiters: Vec<(u64, usize)> = self
            .live
            .iter()
            .filter_map(|&i| match self.threads[i as usize].state {
                ThreadState::Waiting {
                    addr: a, ticket, ..
                } if a == addr => Some((ticket, i as usize)),
                _ => None,
            })
            .collect();
        waiters.sort_unstable();
        let woken = waiters.len().min(count as usize);
        for &(_, i) in &waiters[..woken] {
            self.set_state(i as ThreadId, ThreadState::Runnable);
            self.threads[i].wake = Some(0);
            self.threads[i].woken_by = Some(me);
            self.happened(
                me,
                Happening::Woke {
                    woken: i as ThreadId,
                    addr,
                },
            );
        }
        woken as u32
    }

    /// Every thread that waits on a futex, and where.
    pub fn blocked_threads(&self) -> Vec<BlockedThread> {
        self.live
            .iter()
            .map(|&i| (i, &self.threads[i as usize]))
            .filter_map(|(i, t)| match t.state {
                ThreadState::Waiting { addr, site, .. } => Some(BlockedThread {
                    thread: i as ThreadId,
                    addr,
                    site,
                    in_handler: t.signals.handling,
                }),
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::without_wasm;
    use super::*;
    use crate::sched::RandomScheduler;

    #[test]
    fn a_notify_wakes_waiters_on_its_address_oldest_first_and_no_more_than_asked() {
        let mut state = without_wasm(4, Box::new(RandomScheduler::new(0)));
        state.block(2, 64, None, None);
        state.block(1, 64, None, None);
        state.block(3, 128, None, None);
        assert_eq!(state.notify(0, 64, 1), 1);
        assert_eq!(state.threads[2].state, ThreadState::Runnable);
        assert_eq!(
            (state.threads[2].wake, state.threads[2].woken_by),
            (Some(0), Some(0))
        );
        let waiting: Vec<(ThreadId, u32)> = state
            .blocked_threads()
            .iter()
            .map(|b| (b.thread, b.addr))
            .collect();
        assert_eq!(waiting, [(1, 64), (3, 128)]);
        assert_eq!(state.notify(0, 64, u32::MAX), 1);
        assert_eq!(state.notify(0, 64, 1), 0);
        assert_eq!(state.blocked_threads().len(), 1);
    }

    #[test]
    fn a_library_step_counts_its_points_afresh_once_its_thread_blocked() {
        let mut state = without_wasm(2, Box::new(RandomScheduler::new(0)));
        state.threads[1].library_depth = 1;
        state.threads[1].library_points = 105;
        state.block(1, 64, None, None);
        assert_eq!(state.threads[1].library_points, 0);
        assert_eq!(state.threads[1].library_depth, 1);
    }
}
