//! The data of one guest thread's wasmtime `Store`: what the host imports
//! reach from a call (the thread's id, the running execution, the shared
//! memory, WASI), and the memory limit wasmtime asks about.

use super::live_locals::LiveLocals;
use super::shared_memory::GuestMemory;
use super::state::ExecHandle;
use crate::trace::ThreadId;
use std::sync::Arc;
use wasmtime::ResourceLimiter;
use wasmtime_wasi::p1::WasiP1Ctx;

/// Store data of one guest thread.
pub(crate) struct ThreadData {
    pub(super) tid: ThreadId,
    pub(super) exec: ExecHandle,
    pub(super) shared_memory: Option<Arc<GuestMemory>>,
    pub(super) args: Arc<Vec<String>>,
    pub(super) env: Arc<Vec<String>>,
    pub(super) max_memory_bytes: u64,
    pub(super) wasi: Option<WasiP1Ctx>,
    /// When the program reads its threads' frames (see
    /// [`super::frames`]): which of a frame's locals still count.
    pub(super) live_locals: Option<Arc<LiveLocals>>,
    /// Once complete states are compared: the epoch checks the thread
    /// passed in its time slice (see [`super::frames::at_epoch_check`]).
    pub(super) slice_checks: Option<u64>,
}

impl ThreadData {
    /// The wasmtime-wasi context, built on first use: most threads never
    /// make a WASI call that weft does not shadow.
    pub(super) fn wasi(&mut self) -> &mut WasiP1Ctx {
        let (args, env) = (&self.args, &self.env);
        self.wasi.get_or_insert_with(|| {
            let pairs: Vec<(&str, &str)> = env
                .iter()
                .map(|entry| entry.split_once('=').unwrap_or((entry, "")))
                .collect();
            wasmtime_wasi::WasiCtxBuilder::new()
                .args(args.as_slice())
                .envs(&pairs)
                .build_p1()
        })
    }
}

impl ResourceLimiter for ThreadData {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired as u64 > self.max_memory_bytes {
            self.exec.get().memory_refused();
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        _desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(true)
    }
}
