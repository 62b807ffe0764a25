//! The crate's layers (see `ARCHITECTURE.md`), checked: a module may use
//! modules of its own layer and of the layers below it, never one above.
//! Every `crate::` and `super::` path outside test code counts. (Compiled
//! for tests only.)

use std::path::Path;

/// Module path prefixes and their layers, lowest first; a module belongs to
/// the layer of its longest listed prefix.
const LAYERS: &[(&str, u8)] = &[
    ("abi", 0),
    ("build", 0),
    ("input", 0),
    ("user_folders", 0),
    ("heap", 0),
    ("library", 0),
    ("instrument", 1),
    ("trace", 2),
    ("debuginfo", 2),
    ("sched", 3),
    ("failure", 3),
    ("runtime", 4),
    // The techniques' analyses.
    ("activity", 5),
    ("serializability", 5),
    ("imunit", 5),
    ("actors", 5),
    ("testgen", 5),
    ("race", 5),
    ("explain", 5),
    ("svcomp::property", 5),
    ("execution", 6),
    ("budget", 6),
    // Which executions to run: exploration, replay and the techniques'
    // drivers.
    ("explore", 7),
    ("replay", 7),
    ("serializability::driver", 7),
    ("imunit::driver", 7),
    ("imunit::infer", 7),
    ("imunit::tests_in_module", 7),
    ("actors::driver", 7),
    ("testgen::driver", 7),
    ("testgen::probe", 7),
    ("svcomp", 7),
    ("explain::retell", 7),
    ("classroom", 7),
    ("classroom::driver", 8),
    ("report", 8),
    ("output_paths", 8),
    ("explore_program", 8),
    ("bench", 9),
    ("cli", 9),
    ("", 9),
];

/// The layer of a module path (`serializability::atomic_sets`).
fn layer(path: &str) -> u8 {
    LAYERS
        .iter()
        .filter(|(prefix, _)| {
            prefix.is_empty()
                || path == *prefix
                || path
                    .strip_prefix(prefix)
                    .is_some_and(|rest| rest.starts_with("::"))
        })
        .max_by_key(|(prefix, _)| prefix.len())
        .map_or(9, |&(_, layer)| layer)
}

/// The module path of a source file (`serializability/mod.rs` is `check`).
fn module_of(file: &Path, src: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts.join("::")
}

/// The module paths `code` (of module `module`) names, outside
/// comments and test code.
fn references(code: &str, module: &str) -> Vec<String> {
    let code = code.split("#[cfg(test)]").next().unwrap_or_default();
    let mut found = Vec::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or_default();
        for (start, _) in line.match_indices("crate::") {
            found.push(path_at(&line[start + "crate::".len()..]));
        }
        for (start, _) in line.match_indices("super::") {
            if start > 0 && line[..start].ends_with("::") {
                continue;
            }
            let parent = module.rsplit_once("::").map_or("", |(p, _)| p);
            let rest = path_at(&line[start + "super::".len()..]);
            found.push(if parent.is_empty() {
                rest
            } else {
                format!("{parent}::{rest}")
            });
        }
    }
    found
}

/// The leading `a::b::c` of `text`.
fn path_at(text: &str) -> String {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(text.len());
    text[..end].trim_end_matches(':').to_string()
}

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_module_uses_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut upward = Vec::new();
    for file in files {
        if file.ends_with("main.rs") {
            continue;
        }
        let module = module_of(&file, &src);
        let code = std::fs::read_to_string(&file).unwrap();
        for used in references(&code, &module) {
            if layer(&used) > layer(&module) {
                upward.push(format!(
                    "{module} (layer {}) uses {used} (layer {})",
                    layer(&module),
                    layer(&used)
                ));
            }
        }
    }
    upward.sort();
    upward.dedup();
    assert!(upward.is_empty(), "{}", upward.join("\n"));
}

/// The part of the crate a module path belongs to: its first component
/// (`testgen` for `testgen::driver` and `testgen::probe`).
fn part(path: &str) -> String {
    path.split("::").next().unwrap_or_default().to_string()
}

/// Within a layer, the parts (see [`part`]) use each other without a
/// circle: `replay` may use `testgen::driver`, but then nothing
/// `testgen`'s drivers use, directly or through others, uses `replay`.
#[test]
fn no_parts_of_a_layer_use_each_other_in_a_circle() {
    use std::collections::{BTreeMap, BTreeSet};
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        if file.ends_with("main.rs") || file.ends_with("lib.rs") {
            continue;
        }
        let module = module_of(&file, &src);
        let code = std::fs::read_to_string(&file).unwrap();
        for used in references(&code, &module) {
            let (from, to) = (part(&module), part(&used));
            if from != to && layer(&used) == layer(&module) && !to.is_empty() {
                uses.entry(from).or_default().insert(to);
            }
        }
    }
    // A part reaches itself again through the parts it uses.
    let mut circles = Vec::new();
    for start in uses.keys() {
        let mut path = vec![start.clone()];
        let mut seen = BTreeSet::new();
        if let Some(circle) = circle_back(start, &uses, &mut path, &mut seen) {
            circles.push(circle.join(" -> "));
        }
    }
    assert!(circles.is_empty(), "{}", circles.join("\n"));
}

/// A path from the last part of `path` back to `start`, if there is one.
fn circle_back(
    start: &str,
    uses: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
    path: &mut Vec<String>,
    seen: &mut std::collections::BTreeSet<String>,
) -> Option<Vec<String>> {
    let last = path.last().cloned().unwrap_or_default();
    for next in uses.get(&last).into_iter().flatten() {
        if next == start {
            let mut circle = path.clone();
            circle.push(next.clone());
            return Some(circle);
        }
        if seen.insert(next.clone()) {
            path.push(next.clone());
            if let Some(circle) = circle_back(start, uses, path, seen) {
                return Some(circle);
            }
            path.pop();
        }
    }
    None
}

#[test]
fn modules_take_the_layer_of_their_longest_prefix() {
    assert_eq!(layer("serializability::atomic_sets"), 5);
    assert_eq!(layer("serializability::driver"), 7);
    assert_eq!(layer("svcomp::property"), 5);
    assert_eq!(layer("svcomp::task"), 7);
    assert_eq!(layer("imunit::infer::timeline"), 7);
    assert_eq!(layer("runtime::analysis::Analysis"), 4);
    assert_eq!(layer("serializabilityx"), 9);
}

/// `ARCHITECTURE.md` names every source file but a folder's `mod.rs` (by
/// its path under `host/src`, or in backticks by its name or the end of
/// its path, in its folder's section), so that its map leaves nothing out.
#[test]
fn every_source_file_is_named_in_the_architecture() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = manifest.join("src");
    let map = std::fs::read_to_string(manifest.join("../ARCHITECTURE.md")).unwrap();
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut unnamed: Vec<String> = files
        .iter()
        .filter(|file| !file.ends_with("mod.rs"))
        .map(|file| {
            let relative = file.strip_prefix(&src).unwrap().to_string_lossy();
            relative.replace(std::path::MAIN_SEPARATOR, "/")
        })
        .filter(|relative| {
            let name = relative.rsplit('/').next().unwrap_or(relative);
            !map.contains(relative.as_str()) && !map.contains(&format!("{name}`"))
        })
        .collect();
    unnamed.sort();
    assert!(
        unnamed.is_empty(),
        "not named in ARCHITECTURE.md:\n{}",
        unnamed.join("\n")
    );
}

/// Executions are run only from layer 7 up (the drivers, explorations,
/// replays, grading): below it, only the runtime and `execution` itself
/// name the calls that run one, outside tests.
#[test]
fn only_the_layers_that_choose_executions_run_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut running: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let module = module_of(file, &src);
            let mechanism = module == "execution" || module.starts_with("runtime");
            if layer(&module) >= 7 || mechanism || file.ends_with("main.rs") {
                return None;
            }
            let code = std::fs::read_to_string(file).unwrap();
            let code = code.split("#[cfg(test)]").next().unwrap_or_default();
            [".execute_with(", ".execute(", "execution::execute("]
                .iter()
                .any(|call| code.contains(call))
                .then_some(module)
        })
        .collect();
    running.sort();
    assert!(running.is_empty(), "{}", running.join("\n"));
}
