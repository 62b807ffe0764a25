//! Every command the README and the user guide show runs here, and prints
//! what they show it print.
//!
//! A page's ```` ```console ```` blocks hold its commands: a line `$ CMD`
//! is a command (a trailing `\` continues it), the lines under it are
//! what it prints. The commands of one page run in order in one scratch
//! folder, where `samples/`, `exercises/`, `bench/`, `tests/`, `docs/` and
//! `target/samples/` are the repository's (`docs/` a copy) and `weft` is the binary under
//! test; `cd DIR` changes the folder of the commands after it. Each
//! command must exit 0 (no failure) or 1 (a failure found; cargo says it
//! with 101), and each
//! line shown under it must appear in its output (stdout and stderr), in
//! order, with numbers free to differ (timings, addresses); a line `...`
//! stands for lines left out.

use crate::support::root;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One command of a page and the lines shown under it.
#[derive(Debug)]
struct Shown {
    /// The command, continuation lines joined.
    command: String,
    /// The lines shown as its output.
    output: Vec<String>,
    /// Where the page shows it (`README.md:42`).
    place: String,
}

/// The commands of `page`'s console blocks.
fn commands_of(page: &Path) -> Vec<Shown> {
    let text = std::fs::read_to_string(page).expect("the page exists");
    let name = page
        .strip_prefix(root())
        .unwrap_or(page)
        .display()
        .to_string();
    let mut shown: Vec<Shown> = Vec::new();
    let mut in_console = false;
    let mut continuing = false;
    for (number, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            in_console = !in_console && line.trim() == "```console";
            continuing = false;
            continue;
        }
        if !in_console {
            continue;
        }
        if continuing {
            let last = shown.last_mut().expect("a command continues");
            let part = line.trim();
            continuing = part.ends_with('\\');
            last.command.push(' ');
            last.command.push_str(part.trim_end_matches('\\').trim());
        } else if let Some(command) = line.strip_prefix("$ ") {
            continuing = command.ends_with('\\');
            shown.push(Shown {
                command: command.trim_end_matches('\\').trim().to_string(),
                output: Vec::new(),
                place: format!("{name}:{}", number + 1),
            });
        } else {
            let last = shown
                .last_mut()
                .unwrap_or_else(|| panic!("{name}:{}: output before any `$ ` command", number + 1));
            last.output.push(line.to_string());
        }
    }
    assert!(!in_console, "{name}: a console block is not closed");
    shown
}

/// `line` with every run of digits as one `0`, durations in one unit
/// and spaces collapsed, so that timings and addresses may differ.
fn normalized(line: &str) -> String {
    let chars: Vec<char> = line
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let after_number = out.ends_with('0');
        if c.is_ascii_digit() {
            if !after_number {
                out.push('0');
            }
        } else if after_number && "µmn".contains(c) && chars.get(i + 1) == Some(&'s') {
            // `1.2ms`, `870µs`: a duration, whatever its unit.
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether every shown line appears in `actual`, in order; else the first
/// one that does not.
fn first_missing<'a>(shown: &'a [String], actual: &str) -> Option<&'a str> {
    let actual: Vec<String> = actual.lines().map(normalized).collect();
    let mut at = 0;
    for line in shown {
        let want = normalized(line);
        if want.is_empty() || want == "..." || want == "…" {
            continue;
        }
        match actual[at..].iter().position(|l| *l == want) {
            Some(found) => at += found + 1,
            None => return Some(line),
        }
    }
    None
}

/// A scratch folder that looks like the repository to a page's commands;
/// the example crates are copies, since their builds and tests write
/// beside them.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a scratch folder");
    for shared in ["samples", "exercises", "bench", "guest-sdk", "tests"] {
        std::os::unix::fs::symlink(root().join(shared), dir.path().join(shared))
            .expect("linking a folder of the repository");
    }
    let copied = Command::new("cp")
        .arg("-r")
        .arg(root().join("docs"))
        .arg(dir.path())
        .status()
        .expect("cp runs");
    assert!(copied.success(), "copying docs/");
    std::fs::create_dir(dir.path().join("target")).expect("target/");
    std::os::unix::fs::symlink(
        root().join("target/samples"),
        dir.path().join("target/samples"),
    )
    .expect("linking the built samples");
    dir
}

/// Runs every command of `page` (a path from the repository's root) and
/// checks what each prints.
fn run_page(page: &str) {
    let commands = commands_of(&root().join(page));
    let scratch = scratch();
    let weft = PathBuf::from(env!("CARGO_BIN_EXE_weft"));
    let path = format!(
        "{}:{}",
        weft.parent().expect("the binary's folder").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let repository = format!(
        "{}/",
        root().canonicalize().expect("the repository").display()
    );
    let copy = format!(
        "{}/",
        scratch
            .path()
            .canonicalize()
            .expect("the scratch folder")
            .display()
    );
    let mut folder = scratch.path().to_path_buf();
    for shown in commands {
        if let Some(dir) = shown.command.strip_prefix("cd ") {
            folder = folder.join(dir.trim());
            assert!(folder.is_dir(), "{}: no folder {dir}", shown.place);
            continue;
        }
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!("{} 2>&1", shown.command))
            .current_dir(&folder)
            .env("PATH", &path)
            // Crates the pages build keep their builds between runs.
            .env("CARGO_TARGET_DIR", root().join("target/docs-examples"))
            // What `weft setup` writes stays in the scratch folder.
            .env("XDG_DATA_HOME", scratch.path().join("data"))
            .output()
            .expect("bash runs");
        // Paths into the repository read as from its root, where the
        // pages' readers run the commands.
        let text = String::from_utf8_lossy(&out.stdout)
            .replace(&repository, "")
            .replace(&copy, "");
        let code = out.status.code();
        // cargo says that a test failed with 101.
        let cargo_failed = shown.command.starts_with("cargo ") && code == Some(101);
        assert!(
            matches!(code, Some(0 | 1)) || cargo_failed,
            "{}: `{}` exited with {code:?}:\n{text}",
            shown.place,
            shown.command
        );
        if let Some(line) = first_missing(&shown.output, &text) {
            panic!(
                "{}: `{}` does not print\n    {line}\n(in this order) but:\n{text}",
                shown.place, shown.command
            );
        }
    }
}

/// Every page of the guide, and the README: each has its test below.
const PAGES: [&str; 14] = [
    "README.md",
    "docs/actors.md",
    "docs/c-and-cpp.md",
    "docs/class-testing.md",
    "docs/classroom.md",
    "docs/data-races.md",
    "docs/evaluation.md",
    "docs/exploring.md",
    "docs/imunit.md",
    "docs/parallel.md",
    "docs/replay.md",
    "docs/rust-crates.md",
    "docs/serializability.md",
    "docs/verification.md",
];

#[test]
fn every_page_of_the_guide_is_run() {
    let mut pages: Vec<String> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md") && name != "cli.md")
        .map(|name| format!("docs/{name}"))
        .collect();
    pages.push("README.md".into());
    pages.sort();
    let mut known = PAGES.to_vec();
    known.sort();
    assert_eq!(pages, known, "a page of docs/ has no test here");
}

/// The anchor GitHub gives a heading: lower case, spaces as `-`, and
/// only letters, digits, `-` and `_` kept.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

#[test]
fn every_link_between_the_pages_leads_somewhere() {
    let mut pages: Vec<PathBuf> = PAGES.iter().map(|p| root().join(p)).collect();
    pages.push(root().join("docs/cli.md"));
    for page in pages {
        let text = std::fs::read_to_string(&page).expect("the page exists");
        for (at, _) in text.match_indices("](") {
            let target = &text[at + 2..];
            let target = &target[..target.find(')').expect("a link ends")];
            if target.contains("://") {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            let file = if file.is_empty() {
                page.clone()
            } else {
                page.parent().expect("a folder").join(file)
            };
            assert!(file.exists(), "{}: no {target}", page.display());
            if anchor.is_empty() {
                continue;
            }
            let headings: Vec<String> = std::fs::read_to_string(&file)
                .unwrap_or_default()
                .lines()
                .filter_map(|line| line.strip_prefix('#'))
                .map(|line| slug(line.trim_start_matches('#')))
                .collect();
            assert!(
                headings.iter().any(|h| h == anchor),
                "{}: {target} names no heading of {}",
                page.display(),
                file.display()
            );
        }
    }
}

#[test]
fn shown_output_is_compared_line_by_line_with_numbers_free() {
    let shown = vec![
        "found in 12 executions".to_string(),
        "...".to_string(),
        "replay with: weft replay x.weft.json".to_string(),
    ];
    let actual = "weft: found in 7 executions\nfound in 7 executions\nnoise\nreplay with: weft replay x.weft.json\n";
    assert_eq!(normalized("in 1.26ms"), normalized("in  770.62µs"));
    assert_ne!(normalized("in 12 schedules"), normalized("in 12 runs"));
    assert_eq!(first_missing(&shown, actual), None);
    let reversed = "replay with: weft replay x.weft.json\nfound in 7 executions\n";
    assert_eq!(
        first_missing(&shown, reversed),
        Some("replay with: weft replay x.weft.json")
    );
}

#[test]
fn readme() {
    run_page("README.md");
}

#[test]
fn actors() {
    run_page("docs/actors.md");
}

#[test]
fn c_and_cpp() {
    run_page("docs/c-and-cpp.md");
}

#[test]
fn class_testing() {
    run_page("docs/class-testing.md");
}

#[test]
fn classroom() {
    run_page("docs/classroom.md");
}

#[test]
fn data_races() {
    run_page("docs/data-races.md");
}

#[test]
fn evaluation() {
    run_page("docs/evaluation.md");
}

#[test]
fn exploring() {
    run_page("docs/exploring.md");
}

#[test]
fn imunit() {
    run_page("docs/imunit.md");
}

#[test]
fn parallel() {
    run_page("docs/parallel.md");
}

#[test]
fn replay() {
    run_page("docs/replay.md");
}

#[test]
fn rust_crates() {
    run_page("docs/rust-crates.md");
}

#[test]
fn serializability() {
    run_page("docs/serializability.md");
}

#[test]
fn verification() {
    run_page("docs/verification.md");
}
