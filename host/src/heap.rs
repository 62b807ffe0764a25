//! How the heap of a process that runs executions treats memory it frees.
//!
//! Every execution builds buffers that grow to the size of its trace (its
//! events, decisions, preemptions and what the analyses record) and frees
//! them when it ends, and the next execution builds them again. By default
//! glibc gives large freed blocks back to the kernel (blocks it mapped on
//! their own, and the free top of a heap past a threshold), so the next
//! execution faults every page of them in again, zero-filled (with 100
//! threads, 190 faults per execution and an eighth of its time in the
//! kernel; 18 faults and a twentieth with the heap kept). Fixing the two
//! thresholds keeps freed memory in the heap for the next execution to
//! reuse; the process's memory stays as large as its largest execution.

/// Large blocks come from the heap, not from a mapping of their own, up to
/// this size (glibc's largest).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MAP_ABOVE_BYTES: libc::c_int = 32 << 20;

/// Free memory at a heap's top goes back to the kernel only past this.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_ABOVE_BYTES: libc::c_int = 512 << 20;

/// Makes freed memory stay in the heap (see the module's doc): the `weft`
/// command does it first thing, and a program that runs many executions
/// through the library may do the same. Call once, before the process
/// starts other threads. It does nothing where the C library is not glibc.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only changes allocator parameters; no other thread
    // allocates yet.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MAP_ABOVE_BYTES);
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_ABOVE_BYTES);
    }
}
