//! Instances behind integer handles.
use std::sync::{Arc, Mutex};

/// The instances of one class; a handle is an index.
pub struct Registry<T> {
    items: Mutex<Vec<Arc<T>>>,
}

impl<T> Registry<T> {
    pub const fn new() -> Self {
        Registry {
            items: Mutex::new(Vec::new()),
        }
    }

    /// Adds an instance; its handle.
    pub fn add(&self, item: T) -> i32 {
        let mut items = self.items.lock().unwrap();
        items.push(Arc::new(item));
        items.len() as i32 - 1
    }

    /// The instance behind `handle`, if any.
    pub fn get(&self, handle: i32) -> Option<Arc<T>> {
        let items = self.items.lock().unwrap();
        usize::try_from(handle)
            .ok()
            .and_then(|i| items.get(i).cloned())
    }
}
