//! Wrong: `look` holds two read guards at once, one per side. Taking a
//! read lock a thread already holds waits when a writer is waiting in
//! between (the writer goes first), and the writer waits for the reader.
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
    let width = SHAPE.read().unwrap();
    let height = SHAPE.read().unwrap();
    width.width - height.height
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
