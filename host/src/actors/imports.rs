//! The `weft.actor_*` imports (see `guest-sdk/ABI.md`): the guest's actor
//! event loop asks weft for every delivery.

use super::mailboxes::{Mailboxes, NoDelivery};
use crate::abi;
use crate::failure::{Failure, FailureKind};
use crate::runtime::Outcome;
use crate::runtime::analysis_imports::{self, Ended, Imports, ThreadData};
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
    analysis_imports::read(caller, ptr as u32 as u64, len as u64)
}

fn name(caller: &mut Caller<'_, ThreadData>, ptr: i32, len: i32) -> Result<String> {
    Ok(String::from_utf8_lossy(&read(caller, ptr, len, MAX_NAME)?).into_owned())
}

/// Runs `f` on the execution's mailboxes.
fn with_mailboxes<R>(
    caller: &Caller<'_, ThreadData>,
    f: impl FnOnce(&mut Mailboxes) -> R,
) -> Result<R> {
    analysis_imports::with_analysis(caller, |m: &mut Mailboxes, _| f(m)).ok_or_else(|| {
        wasmtime::Error::msg("an actor call in an execution without actor mailboxes")
    })
}

/// An actor failure of the thread running the actors.
fn actor_failure(kind: FailureKind, thread: u32, message: String) -> Outcome {
    Outcome::Reported(Failure {
        kind,
        message,
        thread,
    })
}

fn spawn(mut caller: Caller<'_, ThreadData>, ptr: i32, len: i32) -> Result<i32> {
    let kind = name(&mut caller, ptr, len)?;
    Ok(with_mailboxes(&caller, |m| m.spawn(kind))? as i32)
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
    })?;
    if !known {
        let me = analysis_imports::thread(&caller);
        return Err(analysis_imports::end_with(
            &caller,
            actor_failure(
                FailureKind::UnhandledMessage,
                me,
                format!("message `{kind}` sent to actor #{to}, which does not exist"),
            ),
        ));
    }
    Ok(())
}

fn become_(mut caller: Caller<'_, ThreadData>, ptr: i32, len: i32) -> Result<()> {
    let behaviour = name(&mut caller, ptr, len)?;
    with_mailboxes(&caller, |m| m.became(behaviour))
}

fn unhandled(caller: Caller<'_, ThreadData>) -> Result<()> {
    let me = analysis_imports::thread(&caller);
    let message = with_mailboxes(&caller, |m| {
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
    })?;
    Err(analysis_imports::end_with(
        &caller,
        actor_failure(FailureKind::UnhandledMessage, me, message),
    ))
}

fn receive(
    mut caller: Caller<'_, ThreadData>,
    buf: i32,
    cap: i32,
    header: i32,
    awaiting: i32,
) -> Result<i32> {
    let me = analysis_imports::thread(&caller);
    let delivered = analysis_imports::with_analysis(&caller, |m: &mut Mailboxes, cx| {
        m.deliver(|bound| cx.choose_value(bound))
    })
    .ok_or_else(|| wasmtime::Error::msg("an actor call in an execution without actor mailboxes"))?;
    if analysis_imports::ended(&caller) {
        // A replayed schedule ran out of values.
        return Err(wasmtime::Error::new(Ended));
    }
    let delivered = match delivered {
        Ok(d) => d,
        Err(NoDelivery::Quiet) if awaiting < 0 => return Ok(0),
        Err(NoDelivery::Quiet) => {
            let waited = with_mailboxes(&caller, |m| m.log().name(awaiting as u32))?;
            return Err(analysis_imports::end_with(
                &caller,
                actor_failure(
                    FailureKind::Deadlock,
                    me,
                    format!(
                        "actor deadlock: the driver waits for a reply from {waited}, and no message is left to deliver"
                    ),
                ),
            ));
        }
        Err(NoDelivery::Diverged { done }) => {
            return Err(analysis_imports::end_with(
                &caller,
                Outcome::Abandoned(format!(
                    "the actor schedule could not be followed after {done} receives"
                )),
            ));
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
    analysis_imports::write(&mut caller, buf as u32 as u64, &bytes)?;
    let mut head = Vec::with_capacity(16);
    for v in [
        delivered.to,
        delivered.from,
        delivered.kind.len() as u32,
        delivered.body.len() as u32,
    ] {
        head.extend_from_slice(&v.to_le_bytes());
    }
    analysis_imports::write(&mut caller, header as u32 as u64, &head)?;
    let text = format!("deliver {} to #{}", delivered.kind, delivered.to as i32);
    analysis_imports::record_label(&caller, &text, delivered.to);
    Ok(1)
}

/// The `weft.actor_*` imports, for the [`Mailboxes`] of the execution.
pub(crate) const IMPORTS: Imports = Imports {
    functions: &[
        abi::ACTOR_SPAWN,
        abi::ACTOR_SEND,
        abi::ACTOR_RECEIVE,
        abi::ACTOR_BECOME,
        abi::ACTOR_UNHANDLED,
    ],
    link: add_to_linker,
};

/// Adds the `weft.actor_*` imports to `linker`.
fn add_to_linker(linker: &mut Linker<ThreadData>) -> Result<()> {
    linker.func_wrap(abi::SDK_MODULE, abi::ACTOR_SPAWN.name, spawn)?;
    linker.func_wrap(abi::SDK_MODULE, abi::ACTOR_SEND.name, send)?;
    linker.func_wrap(abi::SDK_MODULE, abi::ACTOR_RECEIVE.name, receive)?;
    linker.func_wrap(abi::SDK_MODULE, abi::ACTOR_BECOME.name, become_)?;
    linker.func_wrap(abi::SDK_MODULE, abi::ACTOR_UNHANDLED.name, unhandled)?;
    Ok(())
}
