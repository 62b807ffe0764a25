//! Bita's running example, from the Gatling load-testing tool (simplified,
//! with its Error/CheckForError extension). Actions report their results to
//! a Writer and tell a Terminator they are done; when every action is done
//! the Terminator makes the Writer flush and close its results. A Write
//! that arrives after the Flush finds the results closed: the Writer answers
//! Error, the action passes it to the Terminator, and the driver, asking
//! the Terminator CheckForError, sees the failure.
//!
//! With the argument `correct`, an action reports done only after the
//! Writer acknowledged its Write, so every Write precedes the Flush.
use weft_guest::actors::{self, Actor, ActorId, Context, Envelope, Handled};

/// Collects results until flushed.
struct Writer {
    results: Option<Vec<Vec<u8>>>,
}

impl Actor for Writer {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "Write" => {
                match self.results.as_mut() {
                    Some(results) => {
                        results.push(msg.body.to_vec());
                        cx.reply("Written", b"");
                    }
                    // Closed already: the result is lost.
                    None => cx.reply("Error", msg.body),
                }
            }
            "Flush" => {
                let count = self.results.take().map_or(0, |r| r.len());
                cx.become_("closed");
                cx.reply("Flushed", &[count as u8]);
            }
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

/// Runs one request and reports it.
struct Action {
    name: &'static str,
    writer: ActorId,
    terminator: ActorId,
    correct: bool,
}

impl Actor for Action {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "Execute" => {
                cx.send(self.writer, "Write", self.name.as_bytes());
                if !self.correct {
                    cx.send(self.terminator, "ActionDone", b"");
                }
            }
            "Written" => {
                if self.correct {
                    cx.send(self.terminator, "ActionDone", b"");
                }
            }
            "Error" => cx.send(self.terminator, "Error", msg.body),
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

/// Counts finished actions; flushes the writer after the last.
struct Terminator {
    remaining: u32,
    writer: ActorId,
    error: bool,
}

impl Actor for Terminator {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "ActionDone" => {
                self.remaining -= 1;
                if self.remaining == 0 {
                    cx.send(self.writer, "Flush", b"");
                }
            }
            "Flushed" => {}
            "Error" => self.error = true,
            "CheckForError" => cx.reply("ErrorStatus", &[self.error as u8]),
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

fn main() {
    let correct = std::env::args().nth(1).as_deref() == Some("correct");
    actors::run(|driver| {
        let writer = driver.spawn(
            "Writer",
            Writer {
                results: Some(Vec::new()),
            },
        );
        let terminator = driver.spawn(
            "Terminator",
            Terminator {
                remaining: 2,
                writer,
                error: false,
            },
        );
        for name in ["first", "second"] {
            let action = driver.spawn(
                "Action",
                Action {
                    name,
                    writer,
                    terminator,
                    correct,
                },
            );
            driver.send(action, "Execute", b"");
        }
        driver.settle();
        let status = driver.ask(terminator, "CheckForError", b"");
        assert_eq!(status.body, [0], "a result was written after the flush");
    });
}
