//! Host access to guest memory: the execution's shared memory, or a
//! single-threaded module's own exported memory.

use super::ThreadData;
use super::shared_memory::GuestMemory;
use wasmtime::{Caller, Extern};
use wasmtime::{Result, bail};

/// Reads `len` bytes at `addr` of the calling thread's memory (a read of
/// the program's, when the program tracks its reads).
pub(crate) fn read(caller: &mut Caller<'_, ThreadData>, addr: u64, len: u64) -> Result<Vec<u8>> {
    let range = checked_range(addr, len)?;
    if let Some(shared) = &caller.data().shared_memory {
        let Some(cells) = shared.cells().get(range.clone()) else {
            bail!("out of bounds memory access by a WASI call at {addr:#x}");
        };
        caller.data().exec.get().note_read(range);
        // SAFETY: only one guest thread runs at a time and it is inside this
        // host call, so nothing writes the memory concurrently.
        return Ok(cells.iter().map(|c| unsafe { *c.get() }).collect());
    }
    let memory = private_memory(caller)?;
    let data = memory.data(&caller);
    match data.get(range) {
        Some(bytes) => Ok(bytes.to_vec()),
        None => bail!("out of bounds memory access by a WASI call at {addr:#x}"),
    }
}

/// Writes `bytes` at `addr` of the calling thread's memory.
pub(crate) fn write(caller: &mut Caller<'_, ThreadData>, addr: u64, bytes: &[u8]) -> Result<()> {
    let range = checked_range(addr, bytes.len() as u64)?;
    if let Some(shared) = &caller.data().shared_memory {
        let Some(cells) = shared.cells().get(range) else {
            bail!("out of bounds memory access by a WASI call at {addr:#x}");
        };
        for (cell, byte) in cells.iter().zip(bytes) {
            // SAFETY: as in `read`, no other thread runs during this call.
            unsafe { *cell.get() = *byte };
        }
        return Ok(());
    }
    let memory = private_memory(caller)?;
    match memory.data_mut(caller).get_mut(range) {
        Some(dst) => {
            dst.copy_from_slice(bytes);
            Ok(())
        }
        None => bail!("out of bounds memory access by a WASI call at {addr:#x}"),
    }
}

impl crate::library::caller_memory::GuestBytes for GuestMemory {
    /// The byte at `addr`, if the guest sees it.
    fn byte(&self, addr: u32) -> Option<u8> {
        if addr as usize >= self.visible_bytes() {
            return None;
        }
        let cell = self.cells().get(addr as usize)?;
        // SAFETY: only one guest thread runs at a time, and it is in a host
        // call, so nothing writes the memory concurrently.
        Some(unsafe { *cell.get() })
    }
}

/// The little-endian value of `width` (at most 8) bytes at `addr` of a
/// shared memory; 0 out of bounds.
pub(crate) fn shared_value(memory: &GuestMemory, addr: u32, width: u8) -> u64 {
    let data = memory.cells();
    let start = addr as usize;
    let Some(cells) = data.get(start..start + width.min(8) as usize) else {
        return 0;
    };
    cells.iter().rev().fold(0, |value, cell| {
        // SAFETY: only one guest thread runs at a time, and it is in a host
        // call, so nothing writes the memory concurrently.
        (value << 8) | unsafe { *cell.get() } as u64
    })
}

/// Reads a little-endian `u32` at `addr`.
pub(crate) fn read_u32(caller: &mut Caller<'_, ThreadData>, addr: u64) -> Result<u32> {
    let bytes = read(caller, addr, 4)?;
    Ok(u32::from_le_bytes(bytes.try_into().expect("4 bytes")))
}

fn checked_range(addr: u64, len: u64) -> Result<std::ops::Range<usize>> {
    let end = addr
        .checked_add(len)
        .filter(|end| *end <= usize::MAX as u64);
    match end {
        Some(end) => Ok(addr as usize..end as usize),
        None => bail!("out of bounds memory access by a WASI call at {addr:#x}"),
    }
}

fn private_memory(caller: &mut Caller<'_, ThreadData>) -> Result<wasmtime::Memory> {
    match caller.get_export("memory") {
        Some(Extern::Memory(memory)) => Ok(memory),
        _ => bail!("the module calls WASI but exports no `memory`"),
    }
}
