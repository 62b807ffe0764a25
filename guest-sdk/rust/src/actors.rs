//! Actors whose message deliveries weft schedules.
//!
//! An actor is an object with a `receive` handler; actors talk only by
//! messages (a kind, like `"Write"`, and a body of bytes). weft holds every
//! message sent and decides which one is delivered next; a handler runs to
//! completion before any other receive starts (all actors run on the
//! calling thread). [`run`] is the event loop:
//!
//! ```no_run
//! use weft_guest::actors::{self, Actor, Context, Envelope, Handled};
//!
//! struct Echo;
//! impl Actor for Echo {
//!     fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled {
//!         cx.reply("Echoed", msg.body);
//!         Handled::Yes
//!     }
//! }
//!
//! actors::run(|driver| {
//!     let echo = driver.spawn("Echo", Echo);
//!     let reply = driver.ask(echo, "Ping", b"hi");
//!     assert_eq!(reply.body, b"hi");
//! });
//! ```
extern crate alloc;

use super::ffi;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// An actor's id, as weft numbers them.
pub type ActorId = u32;

/// The driver: the code passed to [`run`], which is not an actor but can
/// spawn actors, send to them and ask them.
pub const DRIVER: ActorId = u32::MAX;

/// Whether a handler handled a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handled {
    /// It did.
    Yes,
    /// The actor's current behaviour does not handle this kind of message:
    /// weft reports it as a failure.
    No,
}

/// A delivered message.
#[derive(Debug)]
pub struct Envelope<'a> {
    /// Its kind.
    pub kind: &'a str,
    /// Its body.
    pub body: &'a [u8],
    /// Who sent it ([`DRIVER`] for the driver).
    pub sender: ActorId,
}

/// A message the driver got back from [`Driver::ask`].
#[derive(Debug)]
pub struct Reply {
    /// Its kind.
    pub kind: String,
    /// Its body.
    pub body: Vec<u8>,
}

/// An actor: state plus a run-to-completion handler.
pub trait Actor {
    /// Handles one message.
    fn receive(&mut self, cx: &mut Context, msg: &Envelope) -> Handled;
}

/// What a handler (or the driver) can do.
pub struct Context {
    me: ActorId,
    sender: ActorId,
    spawned: Vec<(ActorId, Box<dyn Actor>)>,
}

impl Context {
    /// The actor handling the message.
    pub fn me(&self) -> ActorId {
        self.me
    }

    /// The sender of the message being handled.
    pub fn sender(&self) -> ActorId {
        self.sender
    }

    /// Creates an actor of type `kind`; it receives messages from the next
    /// delivery on.
    pub fn spawn(&mut self, kind: &str, actor: impl Actor + 'static) -> ActorId {
        // SAFETY: a live `str`, read during the call.
        let id = unsafe { ffi::actor_spawn(kind.as_ptr(), kind.len()) } as ActorId;
        self.spawned.push((id, Box::new(actor)));
        id
    }

    /// Sends a message; weft decides when it is delivered.
    pub fn send(&self, to: ActorId, kind: &str, body: &[u8]) {
        // SAFETY: live slices, read during the call.
        unsafe {
            ffi::actor_send(
                to as i32,
                kind.as_ptr(),
                kind.len(),
                body.as_ptr(),
                body.len(),
            )
        }
    }

    /// Sends a message to the sender of the message being handled.
    pub fn reply(&self, kind: &str, body: &[u8]) {
        self.send(self.sender, kind, body);
    }

    /// Tells weft that this receive changes the actor's behaviour (for the
    /// coverage of behaviour changes); the actor changes its own state.
    pub fn become_(&self, behaviour: &str) {
        // SAFETY: a live `str`, read during the call.
        unsafe { ffi::actor_become(behaviour.as_ptr(), behaviour.len()) }
    }
}

/// The driver's handle: a [`Context`] that can also wait for replies.
pub struct Driver {
    cx: Context,
    actors: Vec<Option<Box<dyn Actor>>>,
}

impl Driver {
    /// Creates an actor (see [`Context::spawn`]).
    pub fn spawn(&mut self, kind: &str, actor: impl Actor + 'static) -> ActorId {
        let id = self.cx.spawn(kind, actor);
        self.adopt();
        id
    }

    /// Sends a message (see [`Context::send`]).
    pub fn send(&self, to: ActorId, kind: &str, body: &[u8]) {
        self.cx.send(to, kind, body);
    }

    /// Sends a message and delivers messages until a reply to the driver
    /// arrives. If none can arrive, weft reports a deadlock.
    pub fn ask(&mut self, to: ActorId, kind: &str, body: &[u8]) -> Reply {
        self.send(to, kind, body);
        loop {
            if let Delivery::Reply(reply) = self.deliver(to as i32) {
                return reply;
            }
        }
    }

    /// Delivers messages until none is left (replies to the driver that
    /// nobody waits for are dropped).
    pub fn settle(&mut self) {
        while !matches!(self.deliver(-1), Delivery::Quiet) {}
    }

    fn adopt(&mut self) {
        for (id, actor) in self.cx.spawned.drain(..) {
            let id = id as usize;
            if self.actors.len() <= id {
                self.actors.resize_with(id + 1, || None);
            }
            self.actors[id] = Some(actor);
        }
    }

    /// Lets weft deliver the next message, and runs its handler.
    fn deliver(&mut self, awaiting: i32) -> Delivery {
        let mut header = [0u32; 4];
        let mut buf = vec![0u8; 64 * 1024];
        // SAFETY: `buf` and `header` are live and as large as said.
        let got = unsafe {
            ffi::actor_receive(buf.as_mut_ptr(), buf.len(), header.as_mut_ptr(), awaiting)
        };
        if got == 0 {
            return Delivery::Quiet;
        }
        let [receiver, sender, kind_len, body_len] = header;
        let kind_end = kind_len as usize;
        let kind = core::str::from_utf8(&buf[..kind_end]).unwrap_or("?");
        let body = &buf[kind_end..kind_end + body_len as usize];
        if receiver == DRIVER {
            return Delivery::Reply(Reply {
                kind: String::from(kind),
                body: body.to_vec(),
            });
        }
        let msg = Envelope { kind, body, sender };
        let mut actor = self
            .actors
            .get_mut(receiver as usize)
            .and_then(Option::take);
        match actor.as_mut() {
            Some(actor) => {
                let mut cx = Context {
                    me: receiver,
                    sender,
                    spawned: Vec::new(),
                };
                if actor.receive(&mut cx, &msg) == Handled::No {
                    // SAFETY: a call without arguments.
                    unsafe { ffi::actor_unhandled() };
                }
                self.cx.spawned.append(&mut cx.spawned);
            }
            // SAFETY: as above.
            None => unsafe { ffi::actor_unhandled() },
        }
        if let Some(slot) = self.actors.get_mut(receiver as usize) {
            *slot = actor;
        }
        self.adopt();
        Delivery::Handled
    }
}

/// What one delivery did.
enum Delivery {
    /// No message was left.
    Quiet,
    /// An actor handled a message.
    Handled,
    /// A reply reached the driver.
    Reply(Reply),
}

/// Runs `main` as the driver, then delivers messages until none is left.
pub fn run(main: impl FnOnce(&mut Driver)) {
    let mut driver = Driver {
        cx: Context {
            me: DRIVER,
            sender: DRIVER,
            spawned: Vec::new(),
        },
        actors: Vec::new(),
    };
    main(&mut driver);
    driver.settle();
}
