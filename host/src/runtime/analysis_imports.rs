//! What the SDK imports of analyses may use: the calling thread, guest
//! memory and text, the installed analysis of a type, and how to end the
//! execution from inside a call.

use super::analysis::{Analysis, Cx};
use super::outcome::Outcome;
use crate::abi;
use crate::trace::ThreadId;
use wasmtime::{Caller, Linker};

pub(crate) use super::ThreadData;
pub(crate) use super::memory_access::{read, write};
pub(crate) use super::sdk_imports::{Ended, text};

/// Adds an analysis's SDK imports to a program's linker.
pub(crate) type Link = fn(&mut Linker<ThreadData>) -> wasmtime::Result<()>;

/// The SDK functions an analysis provides, and how it links them.
pub(crate) struct Imports {
    /// The functions (module [`abi::SDK_MODULE`]).
    pub functions: &'static [abi::Signature],
    /// Adds them to a program's linker.
    pub link: Link,
}

/// The calling guest thread.
pub(crate) fn thread(caller: &Caller<'_, ThreadData>) -> ThreadId {
    caller.data().tid
}

/// Runs `f` on the running execution's analysis of type `T`; `None` when
/// none is installed.
pub(crate) fn with_analysis<T: Analysis, R>(
    caller: &Caller<'_, ThreadData>,
    f: impl FnOnce(&mut T, &mut Cx<'_>) -> R,
) -> Option<R> {
    caller.data().exec.get().with_analysis(f)
}

/// Ends the execution with `outcome` and returns the error that unwinds the
/// calling thread.
pub(crate) fn end_with(caller: &Caller<'_, ThreadData>, outcome: Outcome) -> wasmtime::Error {
    caller.data().exec.get().finish(outcome);
    wasmtime::Error::new(Ended)
}

/// Whether the execution has ended (a replayed schedule ran out of values,
/// say): the caller must unwind with [`Ended`].
pub(crate) fn ended(caller: &Caller<'_, ThreadData>) -> bool {
    caller.data().exec.get().end.is_some()
}

/// Records an event of the calling thread named `text` in the trace (with
/// `addr`).
pub(crate) fn record_label(caller: &Caller<'_, ThreadData>, text: &str, addr: u32) {
    caller
        .data()
        .exec
        .get()
        .record_label(caller.data().tid, text, addr);
}
