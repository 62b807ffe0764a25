//! A StringBuffer-like thread-safe class, exported for `weft gen --class
//! sb`: every method locks the buffer, but `sb_append(h, other)` reads the
//! other buffer's length and then its characters in two critical sections,
//! like the JDK's `StringBuffer.append(StringBuffer)`. If the other buffer
//! shrinks in between, the copy reads past its end and panics, which no
//! sequential order of the same calls does.
//!
//! Buffers are handles (indices in a registry); `sb_new` makes one.
use std::sync::{Arc, Mutex};

struct Buffer {
    chars: Mutex<Vec<u8>>,
}

static BUFFERS: Mutex<Vec<Arc<Buffer>>> = Mutex::new(Vec::new());

fn buffer(handle: i32) -> Option<Arc<Buffer>> {
    BUFFERS.lock().unwrap().get(handle as usize).cloned()
}

/// A new, empty buffer; its handle.
#[unsafe(no_mangle)]
pub extern "C" fn sb_new() -> i32 {
    let mut buffers = BUFFERS.lock().unwrap();
    buffers.push(Arc::new(Buffer {
        chars: Mutex::new(Vec::new()),
    }));
    buffers.len() as i32 - 1
}

/// Length, or -1 for a bad handle.
#[unsafe(no_mangle)]
pub extern "C" fn sb_len(handle: i32) -> i32 {
    buffer(handle).map_or(-1, |b| b.chars.lock().unwrap().len() as i32)
}

/// Appends one character; returns the new length.
#[unsafe(no_mangle)]
pub extern "C" fn sb_append_char(handle: i32, c: i32) -> i32 {
    let Some(b) = buffer(handle) else { return -1 };
    let mut chars = b.chars.lock().unwrap();
    chars.push(c as u8);
    chars.len() as i32
}

/// Truncates (or pads with zeros) to `n` characters.
#[unsafe(no_mangle)]
pub extern "C" fn sb_set_length(handle: i32, n: i32) -> i32 {
    let Some(b) = buffer(handle) else { return -1 };
    let n = n.clamp(0, 1024) as usize;
    b.chars.lock().unwrap().resize(n, 0);
    n as i32
}

/// The character at `i`, or -1 out of range.
#[unsafe(no_mangle)]
pub extern "C" fn sb_char_at(handle: i32, i: i32) -> i32 {
    let Some(b) = buffer(handle) else { return -1 };
    let chars = b.chars.lock().unwrap();
    usize::try_from(i)
        .ok()
        .and_then(|i| chars.get(i))
        .map_or(-1, |&c| c as i32)
}

/// Appends `other`'s characters: its length first, then its characters,
/// each under its lock, but not under one.
#[unsafe(no_mangle)]
pub extern "C" fn sb_append(handle: i32, other: i32) -> i32 {
    let (Some(b), Some(o)) = (buffer(handle), buffer(other)) else {
        return -1;
    };
    let n = o.chars.lock().unwrap().len();
    let copied: Vec<u8> = {
        let chars = o.chars.lock().unwrap();
        chars[..n].to_vec()
    };
    let mut chars = b.chars.lock().unwrap();
    chars.extend_from_slice(&copied);
    chars.len() as i32
}

fn main() {
    weft_guest::class::serve();
}
