//! A client of a key-value server, written the way pipelining clients are:
//! requests go out over a connection without waiting for answers, and since
//! the server answers in order, the client matches each response to the
//! oldest request still unanswered. The connection is an actor between the
//! client and the server; on a reconnect, the client closes it, opens a new
//! one and sends every unanswered request again. Here the server restarts
//! after its first answer, and a monitor tells the client to reconnect.
//!
//! The bug: the old connection still delivers the responses that were on
//! their way when it was closed (its read side drains). Such a response is
//! matched to the oldest unanswered request, which was also sent again; the
//! repeated answer then arrives for it on the new connection and is matched
//! to the next request, and so on: from there, every request gets the
//! answer of the one before it.
//!
//! With the argument `correct`, connections are numbered and the client
//! drops a response from any connection but the current one.
use std::collections::VecDeque;
use weft_guest::actors::{self, Actor, ActorId, Context, Envelope, Handled};

/// The keys the driver asks for; the server stores ten times each key.
const KEYS: [u8; 3] = [1, 2, 3];

/// Answers in the order asked; after its first answer it goes down for
/// maintenance, and tells the monitor it is back.
struct Server {
    monitor: ActorId,
    answered: u32,
}

impl Actor for Server {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "Get" => {
                cx.reply("Value", &[msg.body[0] * 10]);
                self.answered += 1;
                if self.answered == 1 {
                    cx.send(self.monitor, "Restarted", b"");
                }
            }
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

/// Watches the server and tells the client to reconnect after a restart.
struct Monitor {
    client: Option<ActorId>,
}

impl Actor for Monitor {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match (msg.kind, self.client) {
            ("Watch", _) => self.client = Some(ActorId::from(msg.body[0])),
            ("Restarted", Some(client)) => cx.send(client, "Reconnect", b""),
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

/// One connection to the server, numbered by the client.
struct Connection {
    number: u8,
    client: ActorId,
    server: ActorId,
    closed: bool,
}

impl Actor for Connection {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "Send" if !self.closed => cx.send(self.server, "Get", msg.body),
            // A closed connection writes nothing more.
            "Send" => {}
            // Its read side still passes on what the server answered.
            "Value" => cx.send(self.client, "Response", &[self.number, msg.body[0]]),
            "Close" => {
                cx.become_("closed");
                self.closed = true;
            }
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

struct Client {
    server: ActorId,
    connection: Option<ActorId>,
    number: u8,
    /// Unanswered requests, oldest first: (request, key).
    unanswered: VecDeque<(usize, u8)>,
    answers: Vec<Option<u8>>,
    correct: bool,
}

impl Client {
    fn connect(&mut self, cx: &mut Context) -> ActorId {
        let connection = cx.spawn(
            "Connection",
            Connection {
                number: self.number,
                client: cx.me(),
                server: self.server,
                closed: false,
            },
        );
        self.connection = Some(connection);
        connection
    }
}

impl Actor for Client {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "Request" => {
                let key = msg.body[0];
                let connection = match self.connection {
                    Some(c) => c,
                    None => self.connect(cx),
                };
                self.unanswered.push_back((self.answers.len(), key));
                self.answers.push(None);
                cx.send(connection, "Send", &[key]);
            }
            "Response" => {
                let (from, value) = (msg.body[0], msg.body[1]);
                if self.correct && from != self.number {
                    return Handled::Yes;
                }
                if let Some((request, _)) = self.unanswered.pop_front() {
                    self.answers[request] = Some(value);
                }
            }
            "Reconnect" => {
                if let Some(old) = self.connection {
                    cx.send(old, "Close", b"");
                }
                self.number += 1;
                let connection = self.connect(cx);
                for &(_, key) in &self.unanswered {
                    cx.send(connection, "Send", &[key]);
                }
            }
            "Answers" => {
                let body: Vec<u8> = self.answers.iter().map(|a| a.unwrap_or(0)).collect();
                cx.reply("Answers", &body);
            }
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

fn main() {
    let correct = std::env::args().nth(1).as_deref() == Some("correct");
    actors::run(|driver| {
        let monitor = driver.spawn("Monitor", Monitor { client: None });
        let server = driver.spawn(
            "Server",
            Server {
                monitor,
                answered: 0,
            },
        );
        let client = driver.spawn(
            "Client",
            Client {
                server,
                connection: None,
                number: 0,
                unanswered: VecDeque::new(),
                answers: Vec::new(),
                correct,
            },
        );
        driver.send(monitor, "Watch", &[client as u8]);
        driver.settle();
        for key in KEYS {
            driver.send(client, "Request", &[key]);
        }
        driver.settle();
        let answers = driver.ask(client, "Answers", b"");
        let expected: Vec<u8> = KEYS.iter().map(|k| k * 10).collect();
        assert_eq!(
            answers.body, expected,
            "a request got the answer to another request"
        );
    });
}
