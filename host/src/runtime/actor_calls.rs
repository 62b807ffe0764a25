//! The `weft.actor_*` imports (see `guest-sdk/ABI.md`): the guest's actor
//! event loop asks weft for every delivery.

use super::actors::{Mailboxes, NoDelivery};
use super::outcome::Outcome;
use super::sdk::Ended;
use super::{ThreadData, memory};
use crate::abi;
use crate::trace::EventKind;
use wasmtime::{Caller, Linker, Result};

/// Longest actor type, message kind or behaviour name, in bytes.
const MAX_NAME: u32 = 256;

/// Largest message body, in bytes.
const MAX_BODY: u32 = 1 << 20;

fn read(caller: &mut Caller<'_, ThreadData>, ptr: i32, len: i32, max: u32) -> Result<Vec<u8>> {
    let len = len as u32;
    if len > max {
        return Err(wasmtime::Error::msg(format!(
            "an actor call passed {len} bytes where at most {max} are allowed"
        )));
    }
    memory::read(caller, ptr as u32 as u64, len as u64)
}

fn name(caller: &mut Caller<'_, ThreadData>, ptr: i32, len: i32) -> Result<String> {
    Ok(String::from_utf8_lossy(&read(caller, ptr, len, MAX_NAME)?).into_owned())
}

fn with_mailboxes<R>(caller: &Caller<'_, ThreadData>, f: impl FnOnce(&mut Mailboxes) -> R) -> R {
    let mut exec = caller.data().exec.get();
    f(exec.actors.get_or_insert_with(Mailboxes::default))
}

fn spawn(mut caller: Caller<'_, ThreadData>, ptr: i32, len: i32) -> Result<i32> {
    let kind = name(&mut caller, ptr, len)?;
    Ok(with_mailboxes(&caller, |m| m.spawn(kind)) as i32)
}

fn send(
    mut caller: Caller<'_, ThreadData>,
    to: i32,
    kind_ptr: i32,
    kind_len: i32,
    body_ptr: i32,
    body_len: i32,
) -> Result<()> {
    let kind = name(&mut caller, kind_ptr, kind_len)?;
    let body = read(&mut caller, body_ptr, body_len, MAX_BODY)?;
    let to = to as u32;
    let known = with_mailboxes(&caller, |m| {
        let known = m.exists(to);
        if known {
            m.send(to, kind.clone(), body);
        }
        known
    });
    if !known {
        let me = caller.data().tid;
        caller.data().exec.get().finish(Outcome::UnhandledMessage {
            thread: me,
            message: format!("message `{kind}` sent to actor #{to}, which does not exist"),
        });
        return Err(wasmtime::Error::new(Ended));
    }
    Ok(())
}

fn become_(mut caller: Caller<'_, ThreadData>, ptr: i32, len: i32) -> Result<()> {
    let behaviour = name(&mut caller, ptr, len)?;
    with_mailboxes(&caller, |m| m.became(behaviour));
    Ok(())
}

fn unhandled(caller: Caller<'_, ThreadData>) -> Result<()> {
    let me = caller.data().tid;
    let mut exec = caller.data().exec.get();
    let message = {
        let m = exec.actors.get_or_insert_with(Mailboxes::default);
        let log = m.log();
        match log.receives.last() {
            Some(r) => format!(
                "{} cannot handle message `{}` from {} in its current behaviour",
                log.name(r.receiver),
                r.kind,
                log.name(r.sender)
            ),
            None => "a message was not handled".to_string(),
        }
    };
    exec.finish(Outcome::UnhandledMessage {
        thread: me,
        message,
    });
    Err(wasmtime::Error::new(Ended))
}

fn receive(
    mut caller: Caller<'_, ThreadData>,
    buf: i32,
    cap: i32,
    header: i32,
    awaiting: i32,
) -> Result<i32> {
    let me = caller.data().tid;
    let delivered = {
        let mut exec = caller.data().exec.get();
        let mut mailboxes = exec.actors.take().unwrap_or_default();
        let result = mailboxes.deliver(|bound| exec.choose_value(bound));
        exec.actors = Some(mailboxes);
        if exec.end.is_some() {
            // A replayed schedule ran out of values.
            return Err(wasmtime::Error::new(Ended));
        }
        result
    };
    let delivered = match delivered {
        Ok(d) => d,
        Err(NoDelivery::Quiet) if awaiting < 0 => return Ok(0),
        Err(NoDelivery::Quiet) => {
            let mut exec = caller.data().exec.get();
            let waited = exec
                .actors
                .as_ref()
                .map_or_else(|| format!("#{awaiting}"), |m| m.log().name(awaiting as u32));
            exec.finish(Outcome::ActorDeadlock {
                thread: me,
                message: format!(
                    "actor deadlock: the driver waits for a reply from {waited}, and no message is left to deliver"
                ),
            });
            return Err(wasmtime::Error::new(Ended));
        }
        Err(NoDelivery::Diverged { done }) => {
            caller
                .data()
                .exec
                .get()
                .finish(Outcome::ActorScheduleDiverged { followed: done });
            return Err(wasmtime::Error::new(Ended));
        }
    };
    let size = delivered.kind.len() + delivered.body.len();
    if size > cap as u32 as usize {
        return Err(wasmtime::Error::msg(format!(
            "a message of {size} bytes does not fit the actor receive buffer ({cap} bytes)"
        )));
    }
    let mut bytes = delivered.kind.clone().into_bytes();
    bytes.extend_from_slice(&delivered.body);
    memory::write(&mut caller, buf as u32 as u64, &bytes)?;
    let mut head = Vec::with_capacity(16);
    for v in [
        delivered.to,
        delivered.from,
        delivered.kind.len() as u32,
        delivered.body.len() as u32,
    ] {
        head.extend_from_slice(&v.to_le_bytes());
    }
    memory::write(&mut caller, header as u32 as u64, &head)?;
    {
        let mut exec = caller.data().exec.get();
        let text = format!("deliver {} to #{}", delivered.kind, delivered.to as i32);
        let label = exec.label(&text);
        exec.record(me, EventKind::Label { label }, delivered.to, None);
    }
    Ok(1)
}

/// Adds the `weft.actor_*` imports to `linker`.
pub(crate) fn add_to_linker(linker: &mut Linker<ThreadData>) -> Result<()> {
    linker.func_wrap(abi::SDK_MODULE, abi::ACTOR_SPAWN.name, spawn)?;
    linker.func_wrap(abi::SDK_MODULE, abi::ACTOR_SEND.name, send)?;
    linker.func_wrap(abi::SDK_MODULE, abi::ACTOR_RECEIVE.name, receive)?;
    linker.func_wrap(abi::SDK_MODULE, abi::ACTOR_BECOME.name, become_)?;
    linker.func_wrap(abi::SDK_MODULE, abi::ACTOR_UNHANDLED.name, unhandled)?;
    Ok(())
}
