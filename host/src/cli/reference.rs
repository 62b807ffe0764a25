//! `docs/cli.md`, the command-line reference, made from the clap
//! definitions; a test fails when the file is stale, and
//! `WEFT_BLESS=1 cargo test -p weft --lib cli::reference` writes it anew.

use super::Cli;
use clap::CommandFactory;

/// The reference: the top-level help, then each command's full help.
fn reference() -> String {
    let mut cli = Cli::command().term_width(100).max_term_width(100);
    cli.build();
    let mut out = String::from(
        "# Command-line reference\n\n\
         Made from weft's own definitions by\n\
         `WEFT_BLESS=1 cargo test -p weft --lib cli::reference`; a test\n\
         fails when it is stale. `weft help COMMAND` prints the same.\n\n",
    );
    out.push_str("```text\n");
    out.push_str(cli.render_long_help().to_string().trim_end());
    out.push_str("\n```\n");
    for command in cli.get_subcommands_mut() {
        if command.get_name() == "help" {
            continue;
        }
        out.push_str(&format!("\n## weft {}\n\n```text\n", command.get_name()));
        out.push_str(command.render_long_help().to_string().trim_end());
        out.push_str("\n```\n");
    }
    out
}

#[test]
fn docs_cli_md_is_the_reference_of_this_weft() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/cli.md");
    let current = reference();
    if std::env::var_os("WEFT_BLESS").is_some() {
        std::fs::write(&path, &current).expect("docs/cli.md is writable");
        return;
    }
    let written = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        written == current,
        "docs/cli.md is stale: run `WEFT_BLESS=1 cargo test -p weft --lib cli::reference`"
    );
}
