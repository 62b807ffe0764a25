//! Wrong: the readers read both sides under one read lock, but the writer
//! changes them under two separate write locks: a reader can look between
//! the two.
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
    SHAPE.write().unwrap().width = side;
    SHAPE.write().unwrap().height = side;
}

/// Returns width - height as the readers see it.
fn look() -> i32 {
    let shape = SHAPE.read().unwrap();
    shape.width - shape.height
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
