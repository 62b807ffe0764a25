//! What a Rust function's symbol says of whose code it is, for modules
//! without DWARF (cargo's release builds).
//!
//! rustc mangles a crate's symbols in one of two schemes: the legacy one
//! (`_ZN...17h<hash>E`, cargo's default for the program and its
//! dependencies) or v0 (`_R...`), in which the Rust standard library that
//! rustup ships is built. So in a module whose program code is
//! legacy-mangled, a v0 symbol is code compiled into the standard library
//! itself: no closure or type of the program can be inside it. Of those,
//! the ones that name the crate `std` (its own functions, and the
//! functions of `core` and `alloc` it instantiated for its own types) are
//! `std`'s bookkeeping, the code DWARF would place in `library/std/src/`.
//! A generic function of `std` that the program instantiated (a spawned
//! closure, a `Mutex` of the program's type) is mangled with the program,
//! and stays the program's.

/// Whether `name` is a legacy-mangled Rust symbol: `_ZN`, the path, then
/// the 16 hex digits of its hash and `E` (and perhaps LLVM's suffix).
pub fn is_legacy_rust(name: &str) -> bool {
    let Some(path) = name.strip_prefix("_ZN") else {
        return false;
    };
    let path = path.split_once('.').map_or(path, |(path, _)| path);
    path.strip_suffix('E')
        .and_then(|path| path.len().checked_sub(19).map(|at| &path[at..]))
        .is_some_and(|hash| {
            hash.starts_with("17h") && hash[3..].bytes().all(|b| b.is_ascii_hexdigit())
        })
}

/// Whether `name` is a v0-mangled symbol that names the crate `std` (a
/// crate root: `C`, an optional disambiguator `s<base-62>_`, then `3std`).
pub fn is_v0_naming_std(name: &str) -> bool {
    name.starts_with("_R")
        && name
            .match_indices('C')
            .any(|(at, _)| crate_root_named(&name[at + 1..], "std"))
}

/// Whether `rest`, which follows a `C`, is a crate root named `crate_name`.
fn crate_root_named(rest: &str, crate_name: &str) -> bool {
    let rest = match rest.strip_prefix('s') {
        Some(disambiguated) => match disambiguated.split_once('_') {
            Some((digits, rest)) if digits.bytes().all(|b| b.is_ascii_alphanumeric()) => rest,
            _ => return false,
        },
        None => rest,
    };
    rest.strip_prefix(&crate_name.len().to_string())
        .is_some_and(|name| name.starts_with(crate_name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_is_told_from_the_standard_library_by_its_mangling() {
        // (symbol, legacy-mangled Rust, v0 naming std)
        let cases = [
            ("_ZN10increments4main17h53cf01c759c563cbE", true, false),
            (
                "_ZN3std6thread9lifecycle15spawn_unchecked17h9321b83b0184704bE",
                true,
                false,
            ),
            (
                "_ZN5alloc4sync16Arc$LT$T$C$A$GT$9drop_slow17h7b6832c69cb5a1ddE.llvm.14971993226461153416",
                true,
                false,
            ),
            (
                "_RNvNvNtNtNtNtCs1cbpOjQgv0Q_3std3sys12thread_local5guard3key6enable3run",
                false,
                true,
            ),
            (
                "_RNvMs_NtNtCs1cbpOjQgv0Q_3std6thread6threadNtB4_6Thread3new",
                false,
                true,
            ),
            (
                "_RINvNtCscFLQViUS3Yz_4core3ptr13drop_in_placeNtNtNtCs1cbpOjQgv0Q_3std6thread9spawnhook10SpawnHooksEBM_",
                false,
                true,
            ),
            (
                "_RNvMs4_NtCsdnZ9ZgO8gZC_5alloc7raw_vecINtB5_11RawVecInnerNtNtCs1cbpOjQgv0Q_3std5alloc6SystemE14grow_amortizedBW_",
                false,
                true,
            ),
            ("_RNvC3std4main", false, true),
            // The standard library's code that does not name std: alloc's
            // and core's own, which DWARF would not call std's either.
            (
                "_RNvNtCsdnZ9ZgO8gZC_5alloc4sync32arcinner_layout_for_value_layout",
                false,
                false,
            ),
            (
                "_RNvXsc_NtNtCscFLQViUS3Yz_4core3num5errorNtB5_13ParseIntErrorNtNtB9_3fmt5Debug3fmt",
                false,
                false,
            ),
            // An identifier that merely spells `3std`.
            ("_RNvCs1cbpOjQgv0Q_4core5x3std", false, false),
            ("malloc", false, false),
            ("__wasi_thread_start_C", false, false),
            ("_ZN3std3foo", false, false),
        ];
        for (symbol, legacy, std) in cases {
            assert_eq!(is_legacy_rust(symbol), legacy, "{symbol}");
            assert_eq!(is_v0_naming_std(symbol), std, "{symbol}");
        }
    }
}
