//! A process registry, Erlang style: workers register a name, clients look
//! the name up and send work to the process they found. A worker that
//! stops unregisters itself, but a client that looked it up just before
//! still sends it work, which the stopped worker no longer handles.
//!
//! With the argument `correct`, a stopped worker answers work with Gone
//! (and clients take that as "not found").
use weft_guest::actors::{self, Actor, ActorId, Context, Envelope, Handled};

struct Registry {
    names: Vec<(u8, ActorId)>,
}

impl Actor for Registry {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "Register" => self.names.push((msg.body[0], cx.sender())),
            "Unregister" => self.names.retain(|(n, _)| *n != msg.body[0]),
            "Whereis" => match self.names.iter().find(|(n, _)| *n == msg.body[0]) {
                Some((_, pid)) => cx.reply("Found", &[*pid as u8]),
                None => cx.reply("NotFound", b""),
            },
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

struct Worker {
    name: u8,
    registry: ActorId,
    running: bool,
    correct: bool,
}

impl Actor for Worker {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match (msg.kind, self.running) {
            ("Start", _) => {
                self.running = true;
                cx.become_("running");
                cx.send(self.registry, "Register", &[self.name]);
            }
            ("Stop", true) => {
                self.running = false;
                cx.become_("stopped");
                cx.send(self.registry, "Unregister", &[self.name]);
            }
            ("Work", true) => cx.reply("Done", b""),
            ("Work", false) if self.correct => cx.reply("Gone", b""),
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

struct Client {
    registry: ActorId,
}

impl Actor for Client {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "Go" => cx.send(self.registry, "Whereis", &[7]),
            "Found" => cx.send(msg.body[0] as ActorId, "Work", b""),
            "NotFound" | "Done" | "Gone" => {}
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

fn main() {
    let correct = std::env::args().nth(1).as_deref() == Some("correct");
    actors::run(|driver| {
        let registry = driver.spawn("Registry", Registry { names: Vec::new() });
        let worker = driver.spawn(
            "Worker",
            Worker {
                name: 7,
                registry,
                running: false,
                correct,
            },
        );
        driver.send(worker, "Start", b"");
        driver.settle();
        let client = driver.spawn("Client", Client { registry });
        driver.send(client, "Go", b"");
        driver.send(worker, "Stop", b"");
    });
}
