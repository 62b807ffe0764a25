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
    let found = find_variable(dwarf, |unit, entry| {
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

/// The name of the variable with a fixed address (a global, a static, a
/// function's `static` local) whose memory holds `addr`, with `+offset`
/// when `addr` is not its first byte.
pub fn variable_at(dwarf: &Dwarf<Reader>, addr: u32) -> Option<String> {
    // The smallest variable that holds it (a C library may describe a
    // symbol with a size that covers its neighbours).
    let mut best: Option<(u32, u32, String)> = None;
    find_variable(dwarf, |unit, entry| {
        let start = address(entry)?;
        let len = type_of(entry).and_then(|ty| total_size(unit, ty))?;
        let fits = (start..start.saturating_add(len.max(1))).contains(&addr);
        if fits
            && best.as_ref().is_none_or(|(_, size, _)| len < *size)
            && let Some(name) = attr_name(dwarf, unit, entry)
        {
            best = Some((start, len, name));
        }
        None::<()>
    });
    let (start, _, name) = best?;
    Some(match addr - start {
        0 => name,
        offset => format!("{name}+{offset}"),
    })
}

/// Calls `visit` with each variable entry of `dwarf`, and its unit, until
/// it returns something.
fn find_variable<R>(
    dwarf: &Dwarf<Reader>,
    mut visit: impl FnMut(&Unit<Reader>, &DebuggingInformationEntry<Reader>) -> Option<R>,
) -> Option<R> {
    let mut units = dwarf.units();
    while let Ok(Some(header)) = units.next() {
        let Ok(unit) = dwarf.unit(header) else {
            continue;
        };
        let mut entries = unit.entries();
        while let Ok(Some(entry)) = entries.next_dfs() {
            if entry.tag() == gimli::DW_TAG_variable
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

fn attr_name(
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
