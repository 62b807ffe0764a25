//! The Jigsaw web server's resource store, reduced: a cached resource keeps
//! its raw bytes and their length `rlen` as two fields that only make
//! sense together. `update` writes them in two critical sections, so a
//! concurrent `serve` can read the new bytes with the old length: access
//! pattern 8, W_update(raw) R_serve(raw) R_serve(rlen) W_update(rlen), on
//! the atomic set {raw, rlen}.
//!
//! With the argument `correct`, `update` writes both under one lock.
use std::sync::{Arc, Mutex};
use std::thread;
use weft_guest::{atomic_set, thread_name, unit_of_work};

struct Cached {
    raw: [u8; 16],
    rlen: usize,
}

struct Resource {
    cached: Mutex<Cached>,
}

impl Resource {
    fn set_raw(&self, bytes: &[u8]) {
        let mut cached = self.cached.lock().unwrap();
        cached.raw[..bytes.len()].copy_from_slice(bytes);
    }

    fn set_rlen(&self, rlen: usize) {
        self.cached.lock().unwrap().rlen = rlen;
    }

    /// Stores new contents: bytes, then length, in two critical sections.
    fn update(&self, bytes: &[u8]) {
        unit_of_work("Resource::update", || {
            self.set_raw(bytes);
            self.set_rlen(bytes.len());
        })
    }

    /// Stores new contents under one lock.
    fn update_atomically(&self, bytes: &[u8]) {
        unit_of_work("Resource::update_atomically", || {
            let mut cached = self.cached.lock().unwrap();
            cached.raw[..bytes.len()].copy_from_slice(bytes);
            cached.rlen = bytes.len();
        })
    }

    /// What a request gets: the first `rlen` raw bytes.
    fn serve(&self) -> Vec<u8> {
        unit_of_work("Resource::serve", || {
            let cached = self.cached.lock().unwrap();
            cached.raw[..cached.rlen].to_vec()
        })
    }
}

fn main() {
    let correct = std::env::args().nth(1).as_deref() == Some("correct");
    let resource = Arc::new(Resource {
        cached: Mutex::new(Cached {
            raw: *b"old page........",
            rlen: 8,
        }),
    });
    atomic_set("resource", &*resource.cached.lock().unwrap());
    let updater = {
        let resource = Arc::clone(&resource);
        thread::spawn(move || {
            thread_name("updater");
            if correct {
                resource.update_atomically(b"new longer page!");
            } else {
                resource.update(b"new longer page!");
            }
        })
    };
    let server = {
        let resource = Arc::clone(&resource);
        thread::spawn(move || {
            thread_name("server");
            resource.serve()
        })
    };
    updater.join().unwrap();
    let served = server.join().unwrap();
    println!("served {:?}", String::from_utf8_lossy(&served));
}
