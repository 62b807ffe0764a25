//! Printing a command's report and writing its page.

use super::args::OutputArgs;
use super::files::same_file;
use super::{EXIT_FAILURE, EXIT_INCONCLUSIVE, EXIT_PASS};
use crate::report::html::Page;
use crate::report::text::{Report, Status};
use anyhow::{Context, Result};
use std::io::Write as _;
use std::path::Path;

/// Writes `page` to `path`, which must not be the module `module`.
pub fn write_page(page: &Page, path: &Path, module: &Path) -> Result<()> {
    if same_file(path, module) {
        anyhow::bail!(
            "`{}` is the module itself: the page would overwrite it (choose another --html)",
            path.display()
        );
    }
    page.write(path)
        .with_context(|| format!("cannot write the page `{}`", path.display()))
}

/// Prints `report` as `output` asks (and writes its page, with `--html`);
/// returns the exit code.
pub fn print_report(report: &Report<'_>, output: &OutputArgs) -> u8 {
    let shape = output.shape();
    emit(&if output.json {
        report.json(shape)
    } else {
        report.text(shape)
    });
    if let Err(error) = write_report_page(report, output, |_| {}) {
        eprintln!(
            "weft: error: {}",
            super::terminal::escape_str(&format!("{error:#}"))
        );
        return super::EXIT_ERROR;
    }
    tell_page(output);
    match report.status() {
        Status::Failure => EXIT_FAILURE,
        Status::Inconclusive => EXIT_INCONCLUSIVE,
        Status::Pass => EXIT_PASS,
    }
}

/// Writes `--html`'s page of `report` (nothing without `--html`), changed
/// by `extend` first: an actor chart, highlighted accesses.
pub fn write_report_page(
    report: &Report<'_>,
    output: &OutputArgs,
    extend: impl FnOnce(&mut Page),
) -> Result<()> {
    let Some(path) = &output.html else {
        return Ok(());
    };
    let mut page = report.page(output.shape());
    extend(&mut page);
    write_page(&page, path, report.module)
}

/// Says where `--html`'s page went, after a text report.
pub fn tell_page(output: &OutputArgs) {
    if let Some(path) = output.html.as_ref().filter(|_| !output.json) {
        emit(&format!("page: {}\n", path.display()));
    }
}

/// Prints a command's findings: `json()` as one pretty JSON object when
/// `as_json`, else `text()`.
pub fn print_findings(
    as_json: bool,
    json: impl FnOnce() -> serde_json::Value,
    text: impl FnOnce() -> String,
) {
    if as_json {
        let pretty = serde_json::to_string_pretty(&json()).expect("JSON values always serialise");
        emit(&format!("{pretty}\n"));
    } else {
        emit(&text());
    }
}

/// Writes `text` to stdout; a closed pipe (`weft ... | head`) is not an error.
fn emit(text: &str) {
    let mut stdout = super::terminal::stdout();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}
