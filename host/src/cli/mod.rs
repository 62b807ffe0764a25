//! The `weft` command line: parse, call the library, print. One file per
//! command; `common` holds the options and output they share.

mod actors;
mod args;
mod bench;
mod build;
mod bundle;
mod cache;
mod cc;
mod explore;
mod files;
mod generate;
mod grade;
mod infer;
mod merge;
mod minimize;
mod output;
mod progress;
#[cfg(test)]
mod reference;
mod replay;
mod run;
mod serializability;
mod setup;
mod svcomp;
mod terminal;
mod test;
mod test_selection;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Deterministic testing of WebAssembly programs with threads.
#[derive(Parser, Debug)]
#[command(name = "weft", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    Run(run::RunArgs),
    Explore(explore::ExploreArgs),
    Merge(merge::MergeArgs),
    Replay(replay::ReplayArgs),
    Minimize(minimize::MinimizeArgs),
    Bundle(bundle::BundleArgs),
    Bench(bench::BenchArgs),
    Build(build::BuildArgs),
    Cc(cc::CcArgs),
    #[command(name = "c++")]
    Cxx(cc::CxxArgs),
    Test(test::TestArgs),
    InferSchedule(infer::InferArgs),
    Serializability(serializability::SerializabilityArgs),
    Actors(actors::ActorsArgs),
    Gen(generate::GenArgs),
    Svcomp(svcomp::SvcompArgs),
    Grade(grade::GradeArgs),
    Cache(cache::CacheArgs),
    Setup(setup::SetupArgs),
}

/// Exit code when no failure was found.
pub const EXIT_PASS: u8 = 0;
/// Exit code when a failure was found or reproduced.
pub const EXIT_FAILURE: u8 = 1;
/// Exit code for usage and input errors.
pub const EXIT_ERROR: u8 = 2;
/// Exit code when no failure was found but an execution was cut short by a
/// limit (steps, a compute budget, an execution's wall time) while still
/// making progress: no verdict.
pub const EXIT_INCONCLUSIVE: u8 = 3;

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    crate::heap::keep_freed_memory();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Explore(args) => explore::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Minimize(args) => minimize::run(args),
        Command::Bundle(args) => bundle::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Build(args) => build::run(args),
        Command::Cc(args) => cc::run_c(args),
        Command::Cxx(args) => cc::run_cxx(args),
        Command::Test(args) => test::run(args),
        Command::Cache(args) => cache::run(args),
        Command::InferSchedule(args) => infer::run(args),
        Command::Serializability(args) => serializability::run(args),
        Command::Actors(args) => actors::run(args),
        Command::Gen(args) => generate::run(args),
        Command::Svcomp(args) => svcomp::run(args),
        Command::Grade(args) => grade::run(args),
        Command::Setup(args) => setup::run(args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprintln!(
                "weft: error: {}",
                terminal::escape_str(&format!("{error:#}"))
            );
            ExitCode::from(EXIT_ERROR)
        }
    }
}
