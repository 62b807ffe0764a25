//! Thread-safe classes with the kinds of bugs CovCon found in real ones,
//! each next to a correct version, exported for `weft gen --class PREFIX`:
//!
//! | prefix | class | bug |
//! |---|---|---|
//! | `vec` | Vector-like | `add_all(other)` reads the other's length, then each element under separate locks: a concurrent `remove_all` shrinks it and the read goes past the end |
//! | `map` | synchronized map | `put_all(other)` and `equals(other)` lock both maps, receiver first: two threads going opposite ways deadlock |
//! | `log` | logger | `publish` reads the handler count, then each handler, under separate locks: a concurrent `remove_handler` makes it read past the end |
//! | `range` | integer range | `set_min`/`set_max` check the other bound, then set, under separate locks: both succeed and the range inverts |
//!
//! The correct versions (`cvec`, `cmap`, `clog`, `crange`) hold one lock
//! for the whole operation, and `cmap` takes two maps' locks in one order.
//! Instances are handles (indices in a registry per class).
mod registry;

use registry::Registry;
use std::sync::Mutex;

// ---- vec / cvec ------------------------------------------------------------

static VECS: Registry<Mutex<Vec<i32>>> = Registry::new();
static CVECS: Registry<Mutex<Vec<i32>>> = Registry::new();

fn vec_len_of(r: &Registry<Mutex<Vec<i32>>>, h: i32) -> i32 {
    r.get(h).map_or(-1, |v| v.lock().unwrap().len() as i32)
}

fn vec_push_to(r: &Registry<Mutex<Vec<i32>>>, h: i32, x: i32) -> i32 {
    r.get(h).map_or(-1, |v| {
        let mut v = v.lock().unwrap();
        v.push(x);
        v.len() as i32
    })
}

fn vec_remove_all_in(r: &Registry<Mutex<Vec<i32>>>, h: i32, other: i32) -> i32 {
    let (Some(v), Some(o)) = (r.get(h), r.get(other)) else {
        return -1;
    };
    let remove: Vec<i32> = o.lock().unwrap().clone();
    let mut v = v.lock().unwrap();
    v.retain(|x| !remove.contains(x));
    v.len() as i32
}

#[unsafe(no_mangle)]
pub extern "C" fn vec_new() -> i32 {
    VECS.add(Mutex::new(Vec::new()))
}
#[unsafe(no_mangle)]
pub extern "C" fn vec_push(h: i32, x: i32) -> i32 {
    vec_push_to(&VECS, h, x)
}
#[unsafe(no_mangle)]
pub extern "C" fn vec_len(h: i32) -> i32 {
    vec_len_of(&VECS, h)
}
#[unsafe(no_mangle)]
pub extern "C" fn vec_remove_all(h: i32, other: i32) -> i32 {
    vec_remove_all_in(&VECS, h, other)
}
/// Appends all of `other`: its length first, then element by element.
#[unsafe(no_mangle)]
pub extern "C" fn vec_add_all(h: i32, other: i32) -> i32 {
    let (Some(v), Some(o)) = (VECS.get(h), VECS.get(other)) else {
        return -1;
    };
    let n = o.lock().unwrap().len();
    for i in 0..n {
        let x = o.lock().unwrap()[i];
        v.lock().unwrap().push(x);
    }
    v.lock().unwrap().len() as i32
}

#[unsafe(no_mangle)]
pub extern "C" fn cvec_new() -> i32 {
    CVECS.add(Mutex::new(Vec::new()))
}
#[unsafe(no_mangle)]
pub extern "C" fn cvec_push(h: i32, x: i32) -> i32 {
    vec_push_to(&CVECS, h, x)
}
#[unsafe(no_mangle)]
pub extern "C" fn cvec_len(h: i32) -> i32 {
    vec_len_of(&CVECS, h)
}
/// Removes `other`'s elements, holding both locks (lower handle first).
#[unsafe(no_mangle)]
pub extern "C" fn cvec_remove_all(h: i32, other: i32) -> i32 {
    let (Some(v), Some(o)) = (CVECS.get(h), CVECS.get(other)) else {
        return -1;
    };
    if h == other {
        let mut v = v.lock().unwrap();
        v.clear();
        return 0;
    }
    let (mut first, second) = if h < other {
        let a = v.lock().unwrap();
        (a, o.lock().unwrap())
    } else {
        let b = o.lock().unwrap();
        (v.lock().unwrap(), b)
    };
    let remove = second.clone();
    first.retain(|x| !remove.contains(x));
    first.len() as i32
}
/// Appends `other`'s elements, holding both locks (lower handle first).
#[unsafe(no_mangle)]
pub extern "C" fn cvec_add_all(h: i32, other: i32) -> i32 {
    let (Some(v), Some(o)) = (CVECS.get(h), CVECS.get(other)) else {
        return -1;
    };
    if h == other {
        let mut v = v.lock().unwrap();
        let copy = v.clone();
        v.extend(copy);
        return v.len() as i32;
    }
    let (mut first, second) = if h < other {
        let a = v.lock().unwrap();
        (a, o.lock().unwrap())
    } else {
        let b = o.lock().unwrap();
        (v.lock().unwrap(), b)
    };
    first.extend(second.iter().copied());
    first.len() as i32
}

// ---- map / cmap --------------------------------------------------------------

static MAPS: Registry<Mutex<Vec<(i32, i32)>>> = Registry::new();
static CMAPS: Registry<Mutex<Vec<(i32, i32)>>> = Registry::new();

fn put_into(m: &mut Vec<(i32, i32)>, k: i32, v: i32) {
    match m.iter_mut().find(|(key, _)| *key == k) {
        Some(entry) => entry.1 = v,
        None => m.push((k, v)),
    }
}

/// Locks two maps: the receiver first (`map`), or the lower handle first
/// (`cmap`); the same map once.
fn with_both<R>(
    r: &Registry<Mutex<Vec<(i32, i32)>>>,
    h: i32,
    other: i32,
    ordered: bool,
    f: impl FnOnce(&mut Vec<(i32, i32)>, Option<&mut Vec<(i32, i32)>>) -> R,
) -> Option<R> {
    let (a, b) = (r.get(h)?, r.get(other)?);
    if h == other {
        return Some(f(&mut a.lock().unwrap(), None));
    }
    if ordered && other < h {
        let mut second = b.lock().unwrap();
        let mut first = a.lock().unwrap();
        return Some(f(&mut first, Some(&mut second)));
    }
    let mut first = a.lock().unwrap();
    let mut second = b.lock().unwrap();
    Some(f(&mut first, Some(&mut second)))
}

fn map_put_in(r: &Registry<Mutex<Vec<(i32, i32)>>>, h: i32, k: i32, v: i32) -> i32 {
    r.get(h).map_or(-1, |m| {
        let mut m = m.lock().unwrap();
        put_into(&mut m, k, v);
        m.len() as i32
    })
}

fn map_put_all_in(r: &Registry<Mutex<Vec<(i32, i32)>>>, h: i32, other: i32, ordered: bool) -> i32 {
    with_both(r, h, other, ordered, |m, o| {
        if let Some(o) = o {
            for &(k, v) in o.iter() {
                put_into(m, k, v);
            }
        }
        m.len() as i32
    })
    .unwrap_or(-1)
}

fn map_equals_in(r: &Registry<Mutex<Vec<(i32, i32)>>>, h: i32, other: i32, ordered: bool) -> i32 {
    with_both(r, h, other, ordered, |m, o| match o {
        None => 1,
        Some(o) => {
            let same = m.len() == o.len() && m.iter().all(|e| o.contains(e));
            same as i32
        }
    })
    .unwrap_or(-1)
}

#[unsafe(no_mangle)]
pub extern "C" fn map_new() -> i32 {
    MAPS.add(Mutex::new(Vec::new()))
}
#[unsafe(no_mangle)]
pub extern "C" fn map_put(h: i32, k: i32, v: i32) -> i32 {
    map_put_in(&MAPS, h, k, v)
}
#[unsafe(no_mangle)]
pub extern "C" fn map_put_all(h: i32, other: i32) -> i32 {
    map_put_all_in(&MAPS, h, other, false)
}
#[unsafe(no_mangle)]
pub extern "C" fn map_equals(h: i32, other: i32) -> i32 {
    map_equals_in(&MAPS, h, other, false)
}

#[unsafe(no_mangle)]
pub extern "C" fn cmap_new() -> i32 {
    CMAPS.add(Mutex::new(Vec::new()))
}
#[unsafe(no_mangle)]
pub extern "C" fn cmap_put(h: i32, k: i32, v: i32) -> i32 {
    map_put_in(&CMAPS, h, k, v)
}
#[unsafe(no_mangle)]
pub extern "C" fn cmap_put_all(h: i32, other: i32) -> i32 {
    map_put_all_in(&CMAPS, h, other, true)
}
#[unsafe(no_mangle)]
pub extern "C" fn cmap_equals(h: i32, other: i32) -> i32 {
    map_equals_in(&CMAPS, h, other, true)
}

// ---- log / clog ------------------------------------------------------------

static LOGS: Registry<Mutex<Vec<i32>>> = Registry::new();
static CLOGS: Registry<Mutex<Vec<i32>>> = Registry::new();

#[unsafe(no_mangle)]
pub extern "C" fn log_new() -> i32 {
    LOGS.add(Mutex::new(Vec::new()))
}
#[unsafe(no_mangle)]
pub extern "C" fn log_add_handler(h: i32, id: i32) -> i32 {
    vec_push_to(&LOGS, h, id)
}
fn remove_handler_in(r: &Registry<Mutex<Vec<i32>>>, h: i32, id: i32) -> i32 {
    r.get(h).map_or(-1, |l| {
        let mut l = l.lock().unwrap();
        l.retain(|&x| x != id);
        l.len() as i32
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn log_remove_handler(h: i32, id: i32) -> i32 {
    remove_handler_in(&LOGS, h, id)
}
/// Sends a record to every handler: their count first, then one by one.
#[unsafe(no_mangle)]
pub extern "C" fn log_publish(h: i32, record: i32) -> i32 {
    let Some(l) = LOGS.get(h) else { return -1 };
    let n = l.lock().unwrap().len();
    let mut sum = 0;
    for i in 0..n {
        let handler = l.lock().unwrap()[i];
        sum += handler.wrapping_mul(record) & 0xff;
    }
    sum
}

#[unsafe(no_mangle)]
pub extern "C" fn clog_new() -> i32 {
    CLOGS.add(Mutex::new(Vec::new()))
}
#[unsafe(no_mangle)]
pub extern "C" fn clog_add_handler(h: i32, id: i32) -> i32 {
    vec_push_to(&CLOGS, h, id)
}
#[unsafe(no_mangle)]
pub extern "C" fn clog_remove_handler(h: i32, id: i32) -> i32 {
    remove_handler_in(&CLOGS, h, id)
}
/// Sends a record to a snapshot of the handlers.
#[unsafe(no_mangle)]
pub extern "C" fn clog_publish(h: i32, record: i32) -> i32 {
    let Some(l) = CLOGS.get(h) else { return -1 };
    let handlers = l.lock().unwrap().clone();
    handlers
        .iter()
        .map(|&handler| handler.wrapping_mul(record) & 0xff)
        .sum()
}

// ---- range / crange --------------------------------------------------------

/// `(min, max)`, with `min <= max` always.
static RANGES: Registry<Mutex<(i32, i32)>> = Registry::new();
static CRANGES: Registry<Mutex<(i32, i32)>> = Registry::new();

#[unsafe(no_mangle)]
pub extern "C" fn range_new() -> i32 {
    RANGES.add(Mutex::new((0, 10)))
}
/// Sets the lower bound if it stays below the upper one: checked, then set.
#[unsafe(no_mangle)]
pub extern "C" fn range_set_min(h: i32, v: i32) -> i32 {
    let Some(r) = RANGES.get(h) else { return -1 };
    let ok = v <= r.lock().unwrap().1;
    if ok {
        r.lock().unwrap().0 = v;
    }
    ok as i32
}
/// Sets the upper bound if it stays above the lower one: checked, then set.
#[unsafe(no_mangle)]
pub extern "C" fn range_set_max(h: i32, v: i32) -> i32 {
    let Some(r) = RANGES.get(h) else { return -1 };
    let ok = v >= r.lock().unwrap().0;
    if ok {
        r.lock().unwrap().1 = v;
    }
    ok as i32
}
/// The number of integers in the range; the invariant is checked.
fn width_in(r: &Registry<Mutex<(i32, i32)>>, h: i32) -> i32 {
    let Some(r) = r.get(h) else { return -1 };
    let (min, max) = *r.lock().unwrap();
    assert!(min <= max, "the range is inverted: {min} > {max}");
    max.wrapping_sub(min)
}

#[unsafe(no_mangle)]
pub extern "C" fn range_width(h: i32) -> i32 {
    width_in(&RANGES, h)
}

#[unsafe(no_mangle)]
pub extern "C" fn crange_new() -> i32 {
    CRANGES.add(Mutex::new((0, 10)))
}
#[unsafe(no_mangle)]
pub extern "C" fn crange_set_min(h: i32, v: i32) -> i32 {
    let Some(r) = CRANGES.get(h) else { return -1 };
    let mut r = r.lock().unwrap();
    let ok = v <= r.1;
    if ok {
        r.0 = v;
    }
    ok as i32
}
#[unsafe(no_mangle)]
pub extern "C" fn crange_set_max(h: i32, v: i32) -> i32 {
    let Some(r) = CRANGES.get(h) else { return -1 };
    let mut r = r.lock().unwrap();
    let ok = v >= r.0;
    if ok {
        r.1 = v;
    }
    ok as i32
}
#[unsafe(no_mangle)]
pub extern "C" fn crange_width(h: i32) -> i32 {
    width_in(&CRANGES, h)
}

fn main() {
    weft_guest::class::serve();
}
