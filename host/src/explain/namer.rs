//! Names for a story: threads as people read them, variables and locks by
//! their names in the debug info (or their addresses), code sites by file
//! and line, values signed where their top bit is set.

use crate::debuginfo::symbols::LazySymbols;
use crate::debuginfo::variables::without_offset;
use crate::instrument::{SiteId, SiteTable};
use crate::trace::ThreadId;
use std::collections::HashMap;

/// A variable's name, and whether its value reads as a number.
type Described = (String, bool);

/// Names things for a story.
pub(super) struct Namer<'a> {
    pub(super) sites: &'a SiteTable,
    pub(super) symbols: &'a LazySymbols,
    pub(super) thread_names: &'a [Option<String>],
    /// Variable names by address, and whether each is a number, looked up
    /// once each.
    pub(super) variables: std::cell::RefCell<HashMap<(u32, u8), Option<Described>>>,
}

impl Namer<'_> {
    pub(super) fn thread(&self, id: ThreadId) -> String {
        match self.thread_names.get(id as usize).cloned().flatten() {
            Some(name) => format!("thread {id} ({name})"),
            None if id == 0 => "main".to_string(),
            None => format!("thread {id}"),
        }
    }

    /// What the `width` bytes at `addr` are, and whether they are a number.
    pub(super) fn describe(&self, addr: u32, width: u8) -> Option<Described> {
        self.variables
            .borrow_mut()
            .entry((addr, width))
            .or_insert_with(|| {
                self.symbols
                    .with(|s| s.describe_variable(addr, u32::from(width.max(1))))
            })
            .clone()
    }

    pub(super) fn variable_at(&self, addr: u32) -> Option<String> {
        self.describe(addr, 1).map(|(name, _)| name)
    }

    /// Whether the value of an access of `width` bytes at `addr` reads as
    /// a number: memory of no known variable, or exactly a variable's
    /// number; not a struct, two fields at once or a Rust enum.
    pub(super) fn shows_values(&self, addr: u32, width: u8) -> bool {
        self.describe(addr, width).is_none_or(|(_, scalar)| scalar)
    }

    /// `` `name` `` of the variable at `addr`, or its address.
    pub(super) fn data(&self, addr: u32) -> String {
        self.data_of(addr, 1)
    }

    /// `` `name` `` of what an access of `width` bytes at `addr` accesses
    /// (the struct, when it spans two fields), or its address.
    pub(super) fn data_of(&self, addr: u32, width: u8) -> String {
        match self.describe(addr, width) {
            Some((name, _)) => format!("`{name}`"),
            None => format!("the memory at {addr:#x}"),
        }
    }

    /// `` `name` `` of the lock or condition variable whose word is at
    /// `addr` (the word's offset inside it left out).
    pub(super) fn object(&self, addr: Option<u32>) -> String {
        match addr.and_then(|a| self.variable_at(a)) {
            Some(name) => {
                format!("`{}`", without_offset(&name))
            }
            None => match addr {
                Some(a) => format!("the one at {a:#x}"),
                None => "a lock".to_string(),
            },
        }
    }

    /// ` at file:line`, where known.
    pub(super) fn at(&self, site: SiteId) -> String {
        let Some(info) = self.sites.get(site) else {
            return String::new();
        };
        let name = self.symbols.with(|s| s.site(info));
        match (name.file, name.line) {
            (Some(file), Some(line)) => {
                let file = file.rsplit('/').next().unwrap_or(&file).to_string();
                format!(" at {file}:{line}")
            }
            _ => String::new(),
        }
    }
}

/// A value as a person reads it: signed where the top bit is set.
pub(super) fn value(v: u64, width: u8) -> String {
    match width {
        4 => (v as u32 as i32).to_string(),
        8 => (v as i64).to_string(),
        2 => (v as u16 as i16).to_string(),
        1 => (v as u8 as i8).to_string(),
        _ => v.to_string(),
    }
}

/// ` = value`, where the value is known.
pub(super) fn with_value(v: Option<u64>, width: u8) -> String {
    v.map_or(String::new(), |v| format!(" = {}", value(v, width)))
}

/// "a", "a and b", "a, b and c".
pub(super) fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A namer that knows no variable, site or thread name.
    pub(crate) fn bare<'a>(sites: &'a SiteTable, symbols: &'a LazySymbols) -> Namer<'a> {
        Namer {
            sites,
            symbols,
            thread_names: &[],
            variables: Default::default(),
        }
    }

    #[test]
    fn unnamed_things_are_told_by_number_and_address() {
        let (sites, symbols) = (SiteTable::default(), LazySymbols::new(&[]));
        let namer = bare(&sites, &symbols);
        assert_eq!(namer.thread(0), "main");
        assert_eq!(namer.thread(2), "thread 2");
        assert_eq!(namer.data(0x10), "the memory at 0x10");
        assert_eq!(namer.object(Some(0x20)), "the one at 0x20");
        assert_eq!(namer.object(None), "a lock");
        assert_eq!(namer.at(7), "");
        assert!(namer.shows_values(0x10, 4));
    }

    #[test]
    fn values_are_signed_at_their_width_and_lists_read_as_prose() {
        assert_eq!(value(u64::from(u32::MAX), 4), "-1");
        assert_eq!(value(200, 1), "-56");
        assert_eq!(value(200, 2), "200");
        assert_eq!(with_value(Some(3), 4), " = 3");
        assert_eq!(with_value(None, 4), "");
        let items = |n: usize| (0..n).map(|i| i.to_string()).collect::<Vec<_>>();
        assert_eq!(and_list(&items(1)), "0");
        assert_eq!(and_list(&items(2)), "0 and 1");
        assert_eq!(and_list(&items(3)), "0, 1 and 2");
    }
}
