//! A configuration loaded lazily on first use. The "is it loaded yet?" check
//! and the store that publishes it are separate steps, so two threads can
//! both see "not loaded" and both load it: the expensive initialisation runs
//! twice and one thread ends up with a different instance.
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use std::thread;

struct Config {
    workers: u32,
}

static CONFIG: AtomicPtr<Config> = AtomicPtr::new(std::ptr::null_mut());
static LOADS: AtomicU32 = AtomicU32::new(0);

fn load_config() -> Config {
    LOADS.fetch_add(1, Ordering::SeqCst);
    Config { workers: 4 }
}

fn config() -> &'static Config {
    let mut current = CONFIG.load(Ordering::Acquire);
    if current.is_null() {
        current = Box::into_raw(Box::new(load_config()));
        CONFIG.store(current, Ordering::Release);
    }
    // SAFETY: configurations are leaked on purpose and never freed.
    unsafe { &*current }
}

fn main() {
    let handles: Vec<_> = ["reader", "writer"]
        .into_iter()
        .map(|name| {
            thread::spawn(move || {
                weft_guest::thread_name(name);
                config().workers
            })
        })
        .collect();
    let total: u32 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    println!(
        "workers seen: {total}, loads: {}",
        LOADS.load(Ordering::SeqCst)
    );
    weft_guest::assert_always(
        LOADS.load(Ordering::SeqCst) == 1,
        "the configuration was loaded more than once",
    );
}
