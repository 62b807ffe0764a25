//! Exports the class's functions from the binary (wasm-ld keeps only
//! `_start` otherwise), so that `weft gen --class sb` finds them.
fn main() {
    for name in [
        "sb_new",
        "sb_append",
        "sb_append_char",
        "sb_len",
        "sb_set_length",
        "sb_char_at",
    ] {
        println!("cargo:rustc-link-arg=--export={name}");
    }
}
