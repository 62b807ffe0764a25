//! Readers and writers: a writer thread resizes a rectangle while two
//! reader threads look at it. The rectangle is always a square: its width
//! equals its height. Readers sometimes see something else.
//! Make `resize` and `look` correct; readers should be able to look at the
//! same time. Keep `main` as it is.
use std::sync::RwLock;
use std::thread;

struct Shape {
    width: i32,
    height: i32,
}

static SHAPE: RwLock<Shape> = RwLock::new(Shape {
    width: 1,
    height: 1,
});

/// Makes the shape a square of side `side`.
fn resize(side: i32) {
    let mut shape = SHAPE.write().unwrap();
    shape.width = side;
    shape.height = side;
}

/// Returns width - height as the readers see it.
fn look() -> i32 {
    // TODO: is each side read under the lock enough?
    let width = SHAPE.read().unwrap().width;
    let height = SHAPE.read().unwrap().height;
    width - height
}

fn main() {
    let writer = thread::spawn(|| {
        resize(2);
        resize(3);
    });
    let readers: Vec<_> = (0..2)
        .map(|_| {
            thread::spawn(|| {
                for _ in 0..2 {
                    assert_eq!(look(), 0, "a reader saw a shape that is not a square");
                }
            })
        })
        .collect();
    writer.join().unwrap();
    for r in readers {
        r.join().unwrap();
    }
    let shape = SHAPE.read().unwrap();
    println!("the shape is {} by {}", shape.width, shape.height);
}
