//! A StringBuffer-like buffer whose `append(other)` is not atomic, as in
//! the JDK bug AssetFuzzer's authors report: it reads the other buffer's
//! length in one critical section and its contents in another. If the
//! other buffer is cleared and refilled in between, the appended text
//! mixes the old length with the new contents: access pattern 9 on the
//! other buffer's atomic set {len, bytes}.
//!
//! With the argument `correct`, `append` reads length and contents under
//! one lock and is never reported.
use std::sync::{Arc, Mutex};
use std::thread;
use weft_guest::{atomic_set, thread_name, unit_of_work};

const CAPACITY: usize = 32;

struct Text {
    len: usize,
    bytes: [u8; CAPACITY],
}

struct Buffer {
    text: Mutex<Text>,
}

impl Buffer {
    fn new(initial: &str) -> Self {
        let mut bytes = [0; CAPACITY];
        bytes[..initial.len()].copy_from_slice(initial.as_bytes());
        Buffer {
            text: Mutex::new(Text {
                len: initial.len(),
                bytes,
            }),
        }
    }

    fn len(&self) -> usize {
        unit_of_work("Buffer::len", || self.text.lock().unwrap().len)
    }

    /// Copies the first `n` bytes (at most the current length).
    fn prefix(&self, n: usize) -> Vec<u8> {
        unit_of_work("Buffer::prefix", || {
            let text = self.text.lock().unwrap();
            text.bytes[..n.min(text.len)].to_vec()
        })
    }

    /// Replaces the contents.
    fn set(&self, new: &str) {
        unit_of_work("Buffer::set", || {
            let mut text = self.text.lock().unwrap();
            text.len = new.len();
            text.bytes[..new.len()].copy_from_slice(new.as_bytes());
        })
    }

    /// Appends `other`: length first, then contents, in two calls.
    fn append(&self, other: &Buffer) {
        unit_of_work("Buffer::append", || {
            let n = other.len();
            let copied = other.prefix(n);
            self.push(&copied);
        })
    }

    /// Appends `other` under one lock of it.
    fn append_atomically(&self, other: &Buffer) {
        unit_of_work("Buffer::append_atomically", || {
            let copied = {
                let text = other.text.lock().unwrap();
                text.bytes[..text.len].to_vec()
            };
            self.push(&copied);
        })
    }

    fn push(&self, bytes: &[u8]) {
        let mut text = self.text.lock().unwrap();
        let at = text.len;
        let n = bytes.len().min(CAPACITY - at);
        text.bytes[at..at + n].copy_from_slice(&bytes[..n]);
        text.len = at + n;
    }
}

fn main() {
    let correct = std::env::args().nth(1).as_deref() == Some("correct");
    let target = Arc::new(Buffer::new("<"));
    let source = Arc::new(Buffer::new("abc"));
    atomic_set("source", &*source.text.lock().unwrap());
    let appender = {
        let (target, source) = (Arc::clone(&target), Arc::clone(&source));
        thread::spawn(move || {
            thread_name("appender");
            if correct {
                target.append_atomically(&source);
            } else {
                target.append(&source);
            }
        })
    };
    let writer = {
        let source = Arc::clone(&source);
        thread::spawn(move || {
            thread_name("writer");
            source.set("wxyz");
        })
    };
    appender.join().unwrap();
    writer.join().unwrap();
    let text = target.text.lock().unwrap();
    println!("{}", String::from_utf8_lossy(&text.bytes[..text.len]));
}
