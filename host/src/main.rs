//! The `weft` command; all of it lives in the library's `cli` module.

fn main() -> std::process::ExitCode {
    weft::main()
}
