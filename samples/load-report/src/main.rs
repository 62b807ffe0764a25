//! A load generator, written the way Gatling-style tools are: scenarios of
//! virtual users send requests to a server; every response becomes a record
//! that goes to its scenario's recorder, which batches records and passes
//! each batch to the result writer. When every user has finished, the
//! controller drains the recorders and then closes the writer, whose
//! report counts the records written.
//!
//! The bug: a user sends its last record to the recorder and then tells the
//! controller it is done, but messages from different senders are not
//! ordered, so the controller's `Drain` can reach the recorder before that
//! record; and a recorder's last batch can reach the writer after the
//! controller's `Close`, since the two travel on different paths. Either
//! way the report misses requests that were made.
//!
//! With the argument `correct`, the end of the run travels the same path as
//! the records: a user tells its recorder it is done (after its records),
//! a recorder tells the writer its scenario is done (after its batches),
//! and the writer closes itself once every scenario is done.
use weft_guest::actors::{self, Actor, ActorId, Context, Envelope, Handled};

/// Scenarios, by name, and the users each starts.
const SCENARIOS: [(&str, u8); 2] = [("browse", 2), ("checkout", 2)];
/// Requests each user makes.
const REQUESTS: u8 = 2;
/// Records a recorder batches before passing them on.
const BATCH: usize = 2;

/// Answers every request; each answer carries the request's path and a
/// status.
struct Server;

impl Actor for Server {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "Get" => cx.reply("Ok", &[msg.body[0], 200]),
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

/// A virtual user: requests one path after another, records each response.
struct User {
    number: u8,
    server: ActorId,
    recorder: ActorId,
    controller: ActorId,
    made: u8,
    correct: bool,
}

impl User {
    fn request(&mut self, cx: &mut Context) {
        self.made += 1;
        cx.send(self.server, "Get", &[self.number * 10 + self.made]);
    }
}

impl Actor for User {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "Start" => self.request(cx),
            "Ok" => {
                cx.send(self.recorder, "Record", &[self.number, msg.body[0], msg.body[1]]);
                if self.made < REQUESTS {
                    self.request(cx);
                } else if self.correct {
                    cx.send(self.recorder, "UserDone", &[self.number]);
                } else {
                    cx.send(self.controller, "UserDone", &[self.number]);
                }
            }
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

/// Collects one scenario's records and passes them to the writer in
/// batches.
struct Recorder {
    scenario: u8,
    writer: ActorId,
    batch: Vec<u8>,
    users_left: u8,
    correct: bool,
}

impl Recorder {
    fn flush(&mut self, cx: &mut Context) {
        if !self.batch.is_empty() {
            let mut body = vec![self.scenario];
            body.append(&mut self.batch);
            cx.send(self.writer, "Batch", &body);
        }
    }
}

impl Actor for Recorder {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "Record" => {
                self.batch.extend_from_slice(msg.body);
                if self.batch.len() >= BATCH * 3 {
                    self.flush(cx);
                }
            }
            "UserDone" if self.correct => {
                self.users_left -= 1;
                if self.users_left == 0 {
                    self.flush(cx);
                    cx.become_("done");
                    cx.send(self.writer, "ScenarioDone", &[self.scenario]);
                }
            }
            "Drain" => {
                self.flush(cx);
                cx.become_("drained");
                cx.reply("Drained", &[self.scenario]);
            }
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

/// Writes batches to the simulation log and, once closed, reports what it
/// wrote; a batch that arrives after the log was closed is lost.
struct Writer {
    written: u32,
    lost: u32,
    closed: bool,
    scenarios_left: usize,
}

impl Writer {
    fn close(&mut self, cx: &mut Context) {
        self.closed = true;
        cx.become_("closed");
    }
}

impl Actor for Writer {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "Batch" => {
                let records = (msg.body.len() as u32 - 1) / 3;
                if self.closed {
                    self.lost += records;
                } else {
                    self.written += records;
                }
            }
            "ScenarioDone" => {
                self.scenarios_left -= 1;
                if self.scenarios_left == 0 {
                    self.close(cx);
                }
            }
            "Close" => self.close(cx),
            "Report" => {
                let mut body = self.written.to_le_bytes().to_vec();
                body.extend(self.lost.to_le_bytes());
                body.push(self.closed as u8);
                cx.reply("Report", &body);
            }
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

/// Starts the users, and (in the buggy variant) ends the run: drains the
/// recorders once every user is done, then closes the writer once every
/// recorder has drained.
struct Controller {
    recorders: Vec<ActorId>,
    writer: ActorId,
    users_left: u8,
    drained: usize,
}

impl Actor for Controller {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "Run" => {
                for user in msg.body {
                    cx.send(ActorId::from(*user), "Start", b"");
                }
            }
            "UserDone" => {
                self.users_left -= 1;
                if self.users_left == 0 {
                    cx.become_("draining");
                    for &recorder in &self.recorders {
                        cx.send(recorder, "Drain", b"");
                    }
                }
            }
            "Drained" => {
                self.drained += 1;
                if self.drained == self.recorders.len() {
                    cx.send(self.writer, "Close", b"");
                }
            }
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

fn main() {
    let correct = std::env::args().nth(1).as_deref() == Some("correct");
    let users: u8 = SCENARIOS.iter().map(|(_, n)| n).sum();
    actors::run(|driver| {
        let server = driver.spawn("Server", Server);
        let writer = driver.spawn(
            "Writer",
            Writer {
                written: 0,
                lost: 0,
                closed: false,
                scenarios_left: SCENARIOS.len(),
            },
        );
        let recorders: Vec<ActorId> = (0..SCENARIOS.len() as u8)
            .map(|scenario| {
                driver.spawn(
                    "Recorder",
                    Recorder {
                        scenario,
                        writer,
                        batch: Vec::new(),
                        users_left: SCENARIOS[scenario as usize].1,
                        correct,
                    },
                )
            })
            .collect();
        let controller = driver.spawn(
            "Controller",
            Controller {
                recorders: recorders.clone(),
                writer,
                users_left: users,
                drained: 0,
            },
        );
        let mut started = Vec::new();
        for (scenario, &(_, count)) in SCENARIOS.iter().enumerate() {
            for _ in 0..count {
                let number = started.len() as u8 + 1;
                let user = driver.spawn(
                    "User",
                    User {
                        number,
                        server,
                        recorder: recorders[scenario],
                        controller,
                        made: 0,
                        correct,
                    },
                );
                started.push(user as u8);
            }
        }
        driver.send(controller, "Run", &started);
        driver.settle();
        let report = driver.ask(writer, "Report", b"");
        let count = |at: usize| u32::from_le_bytes(report.body[at..at + 4].try_into().unwrap());
        let (written, lost) = (count(0), count(4));
        assert_eq!(report.body[8], 1, "the run ended without closing the log");
        assert_eq!(
            written,
            u32::from(users) * u32::from(REQUESTS),
            "the report misses requests that were made ({lost} records came after the log was closed)"
        );
    });
}
