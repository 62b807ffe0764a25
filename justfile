# Recipes of weft. On a fresh machine run them through ./x, which installs
# the wasm target and `just` first.

set shell := ["bash", "-euo", "pipefail", "-c"]

guest_target := "wasm32-wasip1-threads"

# zig for C and Zig guests, from the venv ./x sets up (else `weft build` looks for
# `zig` or the ziglang package itself).
export WEFT_ZIG := if path_exists(".tools/venv/bin/python") == "true" { justfile_directory() + "/.tools/venv/bin/python -m ziglang" } else { "" }

# CMake (for the test that builds a CMake project), from the venv ./x sets up,
# when the machine has none: after the machine's own tools.
export PATH := env_var("PATH") + ":" + justfile_directory() + "/.tools/venv/bin"

# List the recipes.
default:
    @just --list

# Build every sample and place it at target/samples/<name>.wasm: Rust crates
# with cargo, C and C++ programs (every .c or .cpp file of the folder), Zig
# (main.zig) and WAT (main.wat) programs with `weft build`.
samples: build
    cargo build --quiet --release --target {{guest_target}} --manifest-path samples/Cargo.toml --target-dir target/guest
    mkdir -p target/samples
    for dir in samples/*/; do \
        name=$(basename "$dir"); \
        if [ -f "$dir/Cargo.toml" ]; then \
            cp "target/guest/{{guest_target}}/release/$name.wasm" "target/samples/$name.wasm"; \
        elif [ -f "$dir/main.c" ] || [ -f "$dir/main.cpp" ]; then \
            ./target/debug/weft build "$dir" -o "target/samples/$name.wasm"; \
        elif [ -f "$dir/main.zig" ]; then \
            ./target/debug/weft build "$dir/main.zig" -o "target/samples/$name.wasm"; \
        elif [ -f "$dir/main.wat" ]; then \
            ./target/debug/weft build "$dir/main.wat" -o "target/samples/$name.wasm"; \
        fi; \
    done
    @echo "samples: $(ls target/samples | wc -l) modules in target/samples/"

# Build the weft binary.
build:
    cargo build --quiet -p weft

# Find the lost update in samples/lost-update, then replay the saved failure.
# Builds only what it needs: weft unoptimised (the `demo` profile, a few
# minutes on a fresh machine) and that one sample.
demo:
    cargo build --quiet --profile demo -p weft
    cargo build --quiet --release --target {{guest_target}} --manifest-path samples/Cargo.toml --target-dir target/guest -p lost-update
    mkdir -p target/samples
    cp target/guest/{{guest_target}}/release/lost-update.wasm target/samples/lost-update.wasm
    @echo '$ weft explore target/samples/lost-update.wasm --save-failure target/lost-update.weft.json'
    ./target/demo/weft explore target/samples/lost-update.wasm --save-failure target/lost-update.weft.json || [ $? -eq 1 ]
    @echo
    @echo '$ weft replay target/lost-update.weft.json'
    ./target/demo/weft replay target/lost-update.weft.json || [ $? -eq 1 ]

# The whole test suite: unit, end-to-end and doc tests.
test: samples
    if cargo nextest --version >/dev/null 2>&1; then \
        cargo nextest run --workspace --no-fail-fast; \
    else \
        cargo test --workspace --no-fail-fast --lib --bins --tests; \
    fi
    cargo test --quiet --workspace --doc

# Formatting and lints, as CI checks them.
lint:
    cargo fmt --all -- --check
    cargo clippy --quiet --workspace --all-targets -- -D warnings
    RUSTDOCFLAGS="-D warnings" cargo doc --quiet --no-deps --document-private-items -p weft
    cargo clippy --quiet --manifest-path samples/Cargo.toml --target {{guest_target}} --target-dir target/guest -- -D warnings
    cargo fmt --manifest-path bench/peers/Cargo.toml -- --check
    cargo clippy --quiet --manifest-path bench/peers/Cargo.toml --all-targets --target-dir target -- -D warnings

# Hot-path benchmarks (release build).
bench: samples
    cargo run --quiet --release -p weft -- bench target/samples/lost-update.wasm

# weft beside Shuttle on the same logic (bench/peers): executions per second
# over threads 2-100 and increments 10-10,000, random and PCT, weft with and
# without the race check, and the ratios (the table of docs/evaluation.md).
# `./x bench-peers --quick` runs a smaller sweep.
bench-peers *args: samples
    cargo bench --quiet --manifest-path bench/peers/Cargo.toml --target-dir target -- {{args}}

# Executions to the first failure per strategy on every buggy sample (median
# and max of 20 seeds, budget 10,000), and no failure on the correct ones.
hunt *args: samples
    cargo build --quiet --release -p weft
    python3 bench/hunt.py {{args}}

# The exhaustive search (dpor, races as failures) on every correct sample:
# schedules and time, `--before OTHER_WEFT` for another build beside it.
prove *args: samples
    cargo build --quiet --release -p weft
    python3 bench/prove.py {{args}}

# Published crates' own test suites through `weft test` as cargo's runner,
# in release and debug, beside native `cargo test`, and historical bugs of
# published versions against their fixes (fetched by cargo at run time;
# skipped offline).
real-suites *args:
    cargo build --quiet --release -p weft
    python3 bench/real_suites.py {{args}}

# Verdicts on the verification tasks of bench/svcomp (expected, found,
# executions per property).
svcomp *args: build
    cargo run --quiet --release -p weft -- svcomp bench/svcomp --out target/svcomp {{args}}

# Bita against uniform random deliveries and random delays on every actor
# sample: coverage after 50 executions and executions to the bug, mean of 10
# seeds (the tables of docs/evaluation.md).
compare-actors *args: samples
    cargo build --quiet --release -p weft
    python3 bench/compare_actors.py {{args}}

# CovCon against random test generation on every buggy class of the samples:
# tests to the first failure, 20 seeds (the tables of docs/evaluation.md).
compare-classes *args: samples
    cargo build --quiet --release -p weft
    python3 bench/compare_classes.py {{args}}
