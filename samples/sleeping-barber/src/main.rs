//! The sleeping barber with actors. When the waiting room is empty the
//! barber is told so, and then tells the room it is going to sleep; a
//! customer who enters between those two messages is queued (the barber is
//! not asleep yet), and the barber's Sleeping then makes the room think it
//! sleeps with a customer waiting: a lost wake-up, found when the driver
//! asks how many customers were never served.
//!
//! With the argument `correct`, the room marks the barber asleep in the same
//! receive that finds the room empty.
use weft_guest::actors::{self, Actor, ActorId, Context, Envelope, Handled};

struct Room {
    barber: Option<ActorId>,
    queue: Vec<u8>,
    barber_asleep: bool,
    correct: bool,
}

impl Actor for Room {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "Open" => self.barber = Some(msg.body[0] as ActorId),
            "Enter" => {
                let customer = msg.body[0];
                match self.barber {
                    Some(barber) if self.barber_asleep => {
                        self.barber_asleep = false;
                        cx.send(barber, "Serve", &[customer]);
                    }
                    _ => self.queue.push(customer),
                }
            }
            "NextPlease" => match self.queue.first().copied() {
                Some(customer) => {
                    self.queue.remove(0);
                    cx.reply("Serve", &[customer]);
                }
                None => {
                    if self.correct {
                        self.barber_asleep = true;
                    }
                    cx.reply("NoOne", b"");
                }
            },
            "Sleeping" => self.barber_asleep = true,
            "Unserved" => cx.reply("Unserved", &[self.queue.len() as u8]),
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

struct Barber {
    room: ActorId,
    served: Vec<u8>,
    correct: bool,
}

impl Actor for Barber {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "Serve" => {
                cx.become_("working");
                self.served.push(msg.body[0]);
                cx.send(self.room, "NextPlease", b"");
            }
            "NoOne" => {
                cx.become_("sleeping");
                if !self.correct {
                    cx.send(self.room, "Sleeping", b"");
                }
            }
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

/// Walks into the shop when told.
struct Customer {
    id: u8,
    room: ActorId,
}

impl Actor for Customer {
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
        match msg.kind {
            "Arrive" => cx.send(self.room, "Enter", &[self.id]),
            _ => return Handled::No,
        }
        Handled::Yes
    }
}

fn main() {
    let correct = std::env::args().nth(1).as_deref() == Some("correct");
    actors::run(|driver| {
        let room = driver.spawn(
            "Room",
            Room {
                barber: None,
                queue: Vec::new(),
                barber_asleep: true,
                correct,
            },
        );
        let barber = driver.spawn(
            "Barber",
            Barber {
                room,
                served: Vec::new(),
                correct,
            },
        );
        driver.send(room, "Open", &[barber as u8]);
        driver.settle();
        for id in 1..=3 {
            let customer = driver.spawn("Customer", Customer { id, room });
            driver.send(customer, "Arrive", b"");
        }
        driver.settle();
        let unserved = driver.ask(room, "Unserved", b"");
        assert_eq!(
            unserved.body,
            [0],
            "a customer waits while the barber sleeps"
        );
    });
}
