//! Guest SDK of weft for Rust programs built for `wasm32-wasip1-threads`.
//!
//! A thin binding of the `weft` import module documented in
//! `guest-sdk/ABI.md`. Outside wasm (for example when the same program is
//! built natively) every call is a no-op, except that [`assert_always`]
//! panics, so programs stay portable.
//!
//! ```no_run
//! weft_guest::thread_name("producer");
//! weft_guest::event("produced-first-item");
//! weft_guest::assert_always(1 + 1 == 2, "arithmetic works");
//! ```
#![no_std]

#[cfg(target_family = "wasm")]
mod ffi {
    #[link(wasm_import_module = "weft")]
    unsafe extern "C" {
        pub fn event(name_ptr: *const u8, name_len: usize);
        pub fn thread_name(name_ptr: *const u8, name_len: usize);
        pub fn assert(cond: i32, msg_ptr: *const u8, msg_len: usize);
        pub fn choose(bound: i64) -> i64;
        pub fn assume(cond: i32);
        pub fn atomic_begin();
        pub fn atomic_end();
        pub fn atomic_set(name_ptr: *const u8, name_len: usize, ptr: *const u8, len: usize);
        pub fn unit_begin(name_ptr: *const u8, name_len: usize);
        pub fn unit_end();
        pub fn actor_spawn(type_ptr: *const u8, type_len: usize) -> i32;
        pub fn actor_send(
            to: i32,
            kind_ptr: *const u8,
            kind_len: usize,
            body_ptr: *const u8,
            body_len: usize,
        );
        pub fn actor_receive(buf_ptr: *mut u8, buf_cap: usize, header: *mut u32, awaiting: i32)
        -> i32;
        pub fn actor_become(name_ptr: *const u8, name_len: usize);
        pub fn actor_unhandled();
        pub fn gen_call(method: i32, a0: i64, a1: i64, a2: i64, a3: i64) -> i64;
    }
}

#[cfg(target_family = "wasm")]
pub mod actors;

#[cfg(target_family = "wasm")]
pub mod class;

/// Marks a named event in the calling thread. Under weft it is a scheduling
/// point and appears in traces and reports.
pub fn event(name: &str) {
    #[cfg(target_family = "wasm")]
    // SAFETY: the pointer and length describe a live `str`; the host only
    // reads them during the call.
    unsafe {
        ffi::event(name.as_ptr(), name.len())
    };
    #[cfg(not(target_family = "wasm"))]
    let _ = name;
}

/// Names the calling thread in weft's reports.
pub fn thread_name(name: &str) {
    #[cfg(target_family = "wasm")]
    // SAFETY: as in `event`.
    unsafe {
        ffi::thread_name(name.as_ptr(), name.len())
    };
    #[cfg(not(target_family = "wasm"))]
    let _ = name;
}

/// Checks a property that must hold in every execution. Under weft a false
/// `cond` ends the execution with an `assertion` failure carrying `message`;
/// natively it panics.
pub fn assert_always(cond: bool, message: &str) {
    #[cfg(target_family = "wasm")]
    // SAFETY: as in `event`.
    unsafe {
        ffi::assert(cond as i32, message.as_ptr(), message.len())
    };
    #[cfg(not(target_family = "wasm"))]
    if !cond {
        panic!("{}", message);
    }
}

/// A nondeterministic value in `0..bound` (any value when `bound` is 0),
/// chosen by weft and saved in replay files. Natively: 0.
pub fn choose(bound: u64) -> u64 {
    #[cfg(target_family = "wasm")]
    // SAFETY: a plain value call.
    return unsafe { ffi::choose(bound as i64) as u64 };
    #[cfg(not(target_family = "wasm"))]
    {
        let _ = bound;
        0
    }
}

/// Discards the execution (it is not a bug) when `cond` is false: the input
/// was outside what the program assumes.
pub fn assume(cond: bool) {
    #[cfg(target_family = "wasm")]
    // SAFETY: a plain value call.
    unsafe {
        ffi::assume(cond as i32)
    };
    #[cfg(not(target_family = "wasm"))]
    let _ = cond;
}

/// Starts a section in which the calling thread is not preempted (unless it
/// blocks); sections nest. End it with [`atomic_end`].
pub fn atomic_begin() {
    #[cfg(target_family = "wasm")]
    // SAFETY: a call without arguments.
    unsafe {
        ffi::atomic_begin()
    };
}

/// Ends the innermost [`atomic_begin`] section.
pub fn atomic_end() {
    #[cfg(target_family = "wasm")]
    // SAFETY: a call without arguments.
    unsafe {
        ffi::atomic_end()
    };
}

/// Declares that the memory of `value` (a struct, say) forms an atomic set
/// named `name`: its fields are bound by one consistency property, so units
/// of work must access them serializably (`weft serializability`).
pub fn atomic_set<T: ?Sized>(name: &str, value: &T) {
    #[cfg(target_family = "wasm")]
    // SAFETY: the pointers and lengths describe a live `str` and a live
    // value; the host only records the address range.
    unsafe {
        ffi::atomic_set(
            name.as_ptr(),
            name.len(),
            value as *const T as *const u8,
            core::mem::size_of_val(value),
        )
    };
    #[cfg(not(target_family = "wasm"))]
    let _ = (name, value);
}

/// Runs `body` as a unit of work named `name`: a region that should keep
/// every atomic set it touches consistent. Units nest; an access belongs to
/// the outermost one.
pub fn unit_of_work<R>(name: &str, body: impl FnOnce() -> R) -> R {
    #[cfg(target_family = "wasm")]
    // SAFETY: as in `event`.
    unsafe {
        ffi::unit_begin(name.as_ptr(), name.len())
    };
    #[cfg(not(target_family = "wasm"))]
    let _ = name;
    let result = body();
    #[cfg(target_family = "wasm")]
    // SAFETY: a call without arguments.
    unsafe {
        ffi::unit_end()
    };
    result
}

/// A unit test in a module run by `weft test`.
pub struct Test {
    /// The test's name, as `weft test --filter` matches it.
    pub name: &'static str,
    /// The test body.
    pub run: fn(),
    /// IMUnit schedules the test runs under, once each (none: run once
    /// without a schedule).
    pub schedules: &'static [&'static str],
}

/// The `main` of a test module: `weft test` first runs the module with
/// `--weft-list` to learn its tests (one line per test: `weft-test#`, the
/// name, then its schedules, separated by tabs), then runs it once per test
/// and schedule with `--weft-test N`, N the test's index. Run with a
/// test's name, it runs that test; with no argument, all of them. A name
/// must be one line without tabs.
#[cfg(target_family = "wasm")]
pub fn run_tests(tests: &[Test]) {
    extern crate std;
    use std::{eprintln, print, println};
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("--weft-list") => {
            if let Some((index, test)) = tests
                .iter()
                .enumerate()
                .find(|(_, t)| t.name.contains(['\t', '\r', '\n']))
            {
                println!(
                    "weft-test-refused\tthe name of test {index} (`{}`) holds a tab or a line break; test names are one line without tabs",
                    test.name.escape_debug()
                );
                std::process::exit(2);
            }
            for test in tests {
                print!("weft-test#\t{}", test.name);
                for schedule in test.schedules {
                    print!("\t{schedule}");
                }
                println!();
            }
        }
        Some("--weft-test") => {
            let index = args.next().unwrap_or_default();
            match index.parse::<usize>().ok().and_then(|i| tests.get(i)) {
                Some(test) => (test.run)(),
                None => {
                    eprintln!("no test of index `{index}`");
                    std::process::exit(2);
                }
            }
        }
        Some(name) => match tests.iter().find(|t| t.name == name) {
            Some(test) => (test.run)(),
            None => {
                eprintln!("no test named `{name}`");
                std::process::exit(2);
            }
        },
        None => {
            for test in tests {
                (test.run)();
            }
        }
    }
}
