//! The `weft` command; all of it lives in [`weft::cli`].

fn main() -> std::process::ExitCode {
    weft::cli::main()
}
