//! The folders weft keeps its files in for the user, placed as the XDG
//! base directory specification places them: compiled modules (the
//! cache), and what `weft setup` installs (the data).

use std::path::PathBuf;

/// weft's folder under the base directory the environment variable
/// `variable` names (`XDG_CACHE_HOME`, `XDG_DATA_HOME`), else under
/// `~/fallback` (`.cache`, `.local/share`); `None` when neither is set.
pub(crate) fn weft_folder(variable: &str, fallback: &str) -> Option<PathBuf> {
    let set = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    set(variable)
        .map(PathBuf::from)
        .or_else(|| set("HOME").map(|home| PathBuf::from(home).join(fallback)))
        .map(|base| base.join("weft"))
}
