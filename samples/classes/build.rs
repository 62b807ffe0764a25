//! Exports the classes' functions from the binary (wasm-ld keeps only
//! `_start` otherwise).
fn main() {
    for name in [
        "vec_new",
        "vec_push",
        "vec_len",
        "vec_remove_all",
        "vec_add_all",
        "cvec_new",
        "cvec_push",
        "cvec_len",
        "cvec_remove_all",
        "cvec_add_all",
        "map_new",
        "map_put",
        "map_put_all",
        "map_equals",
        "cmap_new",
        "cmap_put",
        "cmap_put_all",
        "cmap_equals",
        "log_new",
        "log_add_handler",
        "log_remove_handler",
        "log_publish",
        "clog_new",
        "clog_add_handler",
        "clog_remove_handler",
        "clog_publish",
        "range_new",
        "range_set_min",
        "range_set_max",
        "range_width",
        "crange_new",
        "crange_set_min",
        "crange_set_max",
        "crange_width",
    ] {
        println!("cargo:rustc-link-arg=--export={name}");
    }
}
