//! Global variables from DWARF: where `weft serializability --atomic-set
//! NAME` finds the memory a name stands for (`x`, or one field `x.b`), and
//! which variable an address is in (for race reports).
//! Needs full debug information (C built by `weft build` has it; Rust needs
//! `debug = true`).

use super::symbols::Reader;
use gimli::{AttributeValue, DebuggingInformationEntry, Dwarf, Reader as _, Unit, UnitOffset};

/// A range of linear memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// First byte.
    pub start: u32,
    /// Length in bytes.
    pub len: u32,
}

/// The memory of the global variable `path` (`name` or `name.field`).
///
/// # Errors
///
/// A message saying what was not found.
pub fn global_region(dwarf: &Dwarf<Reader>, path: &str) -> Result<Region, String> {
    let (name, field) = match path.split_once('.') {
        Some((n, f)) => (n, Some(f)),
        None => (path, None),
    };
    let found = find_entry(dwarf, gimli::DW_TAG_variable, |unit, entry| {
        if entry.depth() != 1 || attr_name(dwarf, unit, entry).as_deref() != Some(name) {
            return None;
        }
        let start = address(entry)?;
        let ty = type_of(entry)?;
        Some(match field {
            None => byte_size(unit, ty)
                .map(|len| Region { start, len })
                .ok_or(format!("`{name}` has no size in DWARF")),
            Some(field) => member(dwarf, unit, ty, field)
                .map(|(offset, len)| Region {
                    start: start + offset,
                    len,
                })
                .ok_or(format!("`{name}` has no field `{field}` in DWARF")),
        })
    });
    if let Some(region) = found {
        return region;
    }
    Err(format!(
        "no global variable `{name}` in the module's DWARF (it needs full debug information: C from `weft build` has it, Rust needs `debug = true`)"
    ))
}

/// The variables with a fixed address (globals, statics, a function's
/// `static` locals), read from DWARF once and looked up by address.
#[derive(Debug, Default)]
pub struct VariableIndex {
    /// By start address; where variables overlap (a C library may describe
    /// a symbol with a size that covers its neighbours), the smaller first.
    variables: Vec<Variable>,
}

#[derive(Debug)]
struct Variable {
    start: u32,
    len: u32,
    name: String,
    unit: gimli::DebugInfoOffset,
    ty: UnitOffset,
}

impl VariableIndex {
    /// Indexes the variables of `dwarf`.
    pub fn new(dwarf: &Dwarf<Reader>) -> Self {
        let mut variables = Vec::new();
        let mut units = dwarf.units();
        while let Ok(Some(header)) = units.next() {
            let Some(unit_offset) = header.offset().to_debug_info_offset(&header) else {
                continue;
            };
            let Ok(unit) = dwarf.unit(header) else {
                continue;
            };
            let mut entries = unit.entries();
            while let Ok(Some(entry)) = entries.next_dfs() {
                if entry.tag() != gimli::DW_TAG_variable {
                    continue;
                }
                let found = (|| {
                    let start = address(entry)?;
                    let ty = type_of(entry)?;
                    let len = total_size(&unit, ty)?;
                    let name = attr_name(dwarf, &unit, entry)?;
                    Some(Variable {
                        start,
                        len: len.max(1),
                        name,
                        unit: unit_offset,
                        ty,
                    })
                })();
                variables.extend(found);
            }
        }
        variables.sort_by_key(|v| (v.start, v.len));
        VariableIndex { variables }
    }

    /// What the `width` bytes at `addr` are, in source terms: `name`,
    /// `name[2].field` inside arrays and structs, with `+offset` when
    /// `addr` is not the first byte of what it names; the innermost part
    /// that holds them all (a store that writes two fields at once names
    /// their struct). The members of a library's own types (a pthread
    /// mutex's `__u`, a Rust `Mutex`'s `inner` and `data`) are left out:
    /// `counter` names a `Mutex<i32>`, its lock word and its value. Also
    /// whether the bytes are exactly a number, a pointer or an enumeration
    /// (whose value reads as a number; a Rust `Option` or a struct does
    /// not).
    pub fn describe(&self, dwarf: &Dwarf<Reader>, addr: u32, width: u32) -> Option<(String, bool)> {
        let holds = |v: &&Variable| (v.start..v.start.saturating_add(v.len)).contains(&addr);
        let end = self.variables.partition_point(|v| v.start <= addr);
        let variable = self.variables[..end]
            .iter()
            .filter(holds)
            .min_by_key(|v| v.len)?;
        let mut name = variable.name.clone();
        let mut offset = addr - variable.start;
        let mut scalar = false;
        if let Ok(header) = dwarf.debug_info.header_from_offset(variable.unit)
            && let Ok(unit) = dwarf.unit(header)
        {
            let (left, leaf) = describe_within(dwarf, &unit, variable.ty, offset, width, &mut name);
            offset = left;
            scalar = offset == 0
                && total_size(&unit, leaf) == Some(width)
                && unit.entry(leaf).is_ok_and(|e| {
                    matches!(
                        e.tag(),
                        gimli::DW_TAG_base_type
                            | gimli::DW_TAG_pointer_type
                            | gimli::DW_TAG_enumeration_type
                    )
                });
        }
        if offset != 0 {
            name.push_str(&format!("+{offset}"));
        }
        Some((name, scalar))
    }
}

/// A name from [`VariableIndex::describe`] without its `+offset`: the
/// whole of what it names (a lock, whichever of its words was touched).
pub fn without_offset(name: &str) -> &str {
    match name.rsplit_once('+') {
        Some((base, offset)) if offset.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => name,
    }
}

/// Appends to `path` the array elements and struct members of type `ty`
/// that hold byte `offset`, and returns the offset left inside the last
/// and its type.
fn describe_within(
    dwarf: &Dwarf<Reader>,
    unit: &Unit<Reader>,
    mut ty: UnitOffset,
    mut offset: u32,
    width: u32,
    path: &mut String,
) -> (u32, UnitOffset) {
    for _ in 0..32 {
        let Ok(entry) = unit.entry(ty) else {
            return (offset, ty);
        };
        match entry.tag() {
            gimli::DW_TAG_array_type => {
                let Some(element) = type_of(&entry) else {
                    return (offset, ty);
                };
                let Some(size) = byte_size(unit, element).filter(|&s| s > 0) else {
                    return (offset, ty);
                };
                if (offset % size).saturating_add(width) > size {
                    return (offset, ty);
                }
                path.push_str(&format!("[{}]", offset / size));
                offset %= size;
                ty = element;
            }
            gimli::DW_TAG_structure_type | gimli::DW_TAG_union_type => {
                let library = attr_name(dwarf, unit, &entry).is_some_and(|n| library_type(&n));
                let Some((name, at, member_ty)) = member_at(dwarf, unit, ty, offset) else {
                    return (offset, ty);
                };
                let fits = total_size(unit, member_ty)
                    .is_some_and(|size| (offset - at).saturating_add(width) <= size);
                if !fits {
                    return (offset, ty);
                }
                // C's reserved names (`__u`, `__i`) are a library's inside.
                if name.starts_with("__") {
                    return (offset, ty);
                }
                if !library {
                    path.push('.');
                    path.push_str(&name);
                }
                offset -= at;
                ty = member_ty;
            }
            gimli::DW_TAG_typedef
            | gimli::DW_TAG_const_type
            | gimli::DW_TAG_volatile_type
            | gimli::DW_TAG_atomic_type => match type_of(&entry) {
                Some(next) => ty = next,
                None => return (offset, ty),
            },
            _ => return (offset, ty),
        }
    }
    (offset, ty)
}

/// Rust's standard wrappers whose fields a story leaves out: the data of
/// a `Mutex<T>` reads as the mutex's own name.
fn library_type(name: &str) -> bool {
    let base = name.split('<').next().unwrap_or(name);
    matches!(
        base,
        "Mutex"
            | "RwLock"
            | "Condvar"
            | "UnsafeCell"
            | "SyncUnsafeCell"
            | "Cell"
            | "RefCell"
            | "Futex"
            | "Flag"
            | "Atomic"
            | "OnceLock"
            | "LazyLock"
            | "Once"
            | "ManuallyDrop"
            | "MaybeUninit"
    ) || base.starts_with("Atomic")
}

/// (name, offset, type) of the member of struct or union `ty` that holds
/// byte `offset`.
fn member_at(
    dwarf: &Dwarf<Reader>,
    unit: &Unit<Reader>,
    ty: UnitOffset,
    offset: u32,
) -> Option<(String, u32, UnitOffset)> {
    let mut tree = unit.entries_tree(Some(ty)).ok()?;
    let root = tree.root().ok()?;
    let mut children = root.children();
    while let Ok(Some(child)) = children.next() {
        let entry = child.entry();
        if entry.tag() != gimli::DW_TAG_member {
            continue;
        }
        let at = entry
            .attr_value(gimli::DW_AT_data_member_location)
            .and_then(|v| v.udata_value())
            .unwrap_or(0) as u32;
        let Some(member_ty) = type_of(entry) else {
            continue;
        };
        let size = total_size(unit, member_ty).unwrap_or(0);
        if (at..at.saturating_add(size)).contains(&offset) {
            let name = attr_name(dwarf, unit, entry).unwrap_or_default();
            return Some((name, at, member_ty));
        }
    }
    None
}

/// Calls `visit` with each entry of `dwarf` tagged `tag`, and its unit,
/// until it returns something.
pub(super) fn find_entry<R>(
    dwarf: &Dwarf<Reader>,
    tag: gimli::DwTag,
    mut visit: impl FnMut(&Unit<Reader>, &DebuggingInformationEntry<Reader>) -> Option<R>,
) -> Option<R> {
    let mut units = dwarf.units();
    while let Ok(Some(header)) = units.next() {
        let Ok(unit) = dwarf.unit(header) else {
            continue;
        };
        let mut entries = unit.entries();
        while let Ok(Some(entry)) = entries.next_dfs() {
            if entry.tag() == tag
                && let Some(found) = visit(&unit, entry)
            {
                return Some(found);
            }
        }
    }
    None
}

/// The size of a type, arrays included (their element size times their
/// element count, when DWARF gives no size of its own).
fn total_size(unit: &Unit<Reader>, ty: UnitOffset) -> Option<u32> {
    let entry = unit.entry(ty).ok()?;
    if entry.tag() != gimli::DW_TAG_array_type || entry.attr_value(gimli::DW_AT_byte_size).is_some()
    {
        return byte_size(unit, ty);
    }
    let element = byte_size(unit, type_of(&entry)?)?;
    let mut tree = unit.entries_tree(Some(ty)).ok()?;
    let root = tree.root().ok()?;
    let mut children = root.children();
    let mut count = 1u32;
    while let Ok(Some(child)) = children.next() {
        let range = child.entry();
        if range.tag() != gimli::DW_TAG_subrange_type {
            continue;
        }
        let n = match (
            range
                .attr_value(gimli::DW_AT_count)
                .and_then(|v| v.udata_value()),
            range
                .attr_value(gimli::DW_AT_upper_bound)
                .and_then(|v| v.udata_value()),
        ) {
            (Some(n), _) => n,
            (None, Some(upper)) => upper + 1,
            (None, None) => return None,
        };
        count = count.checked_mul(u32::try_from(n).ok()?)?;
    }
    element.checked_mul(count)
}

pub(super) fn attr_name(
    dwarf: &Dwarf<Reader>,
    unit: &Unit<Reader>,
    entry: &DebuggingInformationEntry<Reader>,
) -> Option<String> {
    let value = entry.attr_value(gimli::DW_AT_name)?;
    let name = dwarf.attr_string(unit, value).ok()?;
    Some(name.to_string_lossy().ok()?.into_owned())
}

/// The address of a variable located by `DW_OP_addr`.
fn address(entry: &DebuggingInformationEntry<Reader>) -> Option<u32> {
    let AttributeValue::Exprloc(expr) = entry.attr_value(gimli::DW_AT_location)? else {
        return None;
    };
    let mut ops = expr.operations(gimli::Encoding {
        format: gimli::Format::Dwarf32,
        version: 4,
        address_size: 4,
    });
    match ops.next().ok()?? {
        gimli::Operation::Address { address } => Some(address as u32),
        _ => None,
    }
}

fn type_of(entry: &DebuggingInformationEntry<Reader>) -> Option<UnitOffset> {
    match entry.attr_value(gimli::DW_AT_type)? {
        AttributeValue::UnitRef(offset) => Some(offset),
        _ => None,
    }
}

/// The size of a type, through typedefs and qualifiers.
fn byte_size(unit: &Unit<Reader>, mut ty: UnitOffset) -> Option<u32> {
    for _ in 0..16 {
        let entry = unit.entry(ty).ok()?;
        if let Some(size) = entry
            .attr_value(gimli::DW_AT_byte_size)
            .and_then(|v| v.udata_value())
        {
            return Some(size as u32);
        }
        ty = type_of(&entry)?;
    }
    None
}

/// (offset, size) of member `field` of the struct type `ty`.
fn member(
    dwarf: &Dwarf<Reader>,
    unit: &Unit<Reader>,
    mut ty: UnitOffset,
    field: &str,
) -> Option<(u32, u32)> {
    // Through typedefs and qualifiers to the struct.
    for _ in 0..16 {
        let entry = unit.entry(ty).ok()?;
        if entry.tag() == gimli::DW_TAG_structure_type || entry.tag() == gimli::DW_TAG_union_type {
            break;
        }
        ty = type_of(&entry)?;
    }
    let mut tree = unit.entries_tree(Some(ty)).ok()?;
    let root = tree.root().ok()?;
    let mut children = root.children();
    while let Ok(Some(child)) = children.next() {
        let entry = child.entry();
        if entry.tag() != gimli::DW_TAG_member
            || attr_name(dwarf, unit, entry).as_deref() != Some(field)
        {
            continue;
        }
        let offset = entry
            .attr_value(gimli::DW_AT_data_member_location)?
            .udata_value()?;
        let size = byte_size(unit, type_of(entry)?)?;
        return Some((offset as u32, size));
    }
    None
}
