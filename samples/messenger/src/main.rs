//! An instant messenger: a server keeps one session actor per logged-in
//! user and forwards messages to it. On logout the server closes the
//! session but forgets it only when the session confirms; a message for
//! that user arriving in between is forwarded to a closed session, which
//! no longer handles deliveries.
//!
//! With the argument `correct`, the server forgets the session at once.
use weft_guest::actors::{self, Actor, ActorId, Context, Envelope, Handled};

struct Server {
    sessions: Vec<(u8, ActorId)>,
    correct: bool,
}

impl Server {
    fn session(&self, user: u8) -> Option<ActorId> {
        self.sessions
            .iter()
            .find(|(u, _)| *u == user)
            .map(|(_, s)| *s)
    }
}

impl Actor for Server {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "Login" => {
                let user = msg.body[0];
                let session = cx.spawn("Session", Session { user, open: true });
                self.sessions.push((user, session));
                cx.reply("LoggedIn", &[user]);
            }
            "Logout" => {
                let user = msg.body[0];
                if let Some(session) = self.session(user) {
                    cx.send(session, "Close", b"");
                    if self.correct {
                        self.sessions.retain(|(u, _)| *u != user);
                    }
                }
            }
            "Closed" => {
                let user = msg.body[0];
                self.sessions.retain(|(u, _)| *u != user);
            }
            "Message" => {
                let to = msg.body[0];
                match self.session(to) {
                    Some(session) => cx.send(session, "Deliver", &msg.body[1..]),
                    None => cx.reply("Offline", &[to]),
                }
            }
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

struct Session {
    user: u8,
    open: bool,
}

impl Actor for Session {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match (msg.kind, self.open) {
            ("Deliver", true) => {}
            ("Close", true) => {
                self.open = false;
                cx.become_("closed");
                cx.reply("Closed", &[self.user]);
            }
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

/// A user's client: logs in, then logs out or writes to another user.
struct Client {
    user: u8,
    server: ActorId,
    then: &'static str,
}

impl Actor for Client {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "Start" => cx.send(self.server, "Login", &[self.user]),
            "LoggedIn" => match self.then {
                "logout" => cx.send(self.server, "Logout", &[self.user]),
                _ => cx.send(self.server, "Message", &[1, b'h', b'i']),
            },
            "Offline" => {}
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

fn main() {
    let correct = std::env::args().nth(1).as_deref() == Some("correct");
    actors::run(|driver| {
        let server = driver.spawn(
            "Server",
            Server {
                sessions: Vec::new(),
                correct,
            },
        );
        for (user, then) in [(1, "logout"), (2, "write")] {
            let client = driver.spawn("Client", Client { user, server, then });
            driver.send(client, "Start", b"");
        }
    });
}
