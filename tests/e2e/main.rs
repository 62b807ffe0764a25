//! End-to-end tests: the `weft` binary against the samples and against
//! hand-written WAT modules. The samples must be built first
//! (`just samples`, which `just test` does).

mod actors;
mod bad_input;
mod bench;
mod build;
mod cargo_runner;
mod compile_cache;
mod determinism;
mod differential;
mod docs;
mod exhaustive_differential;
mod from_rust;
mod futex_traps;
mod fuzz_corpus;
mod gnulib;
mod grade;
mod inference;
mod instance_reuse;
mod instrumentation;
mod library_steps;
mod limits;
mod litmus;
mod memory_reuse;
mod minimize;
mod ordinary_programs;
mod pages;
mod point_models;
mod projects;
mod races;
mod replay_files;
mod samples;
mod schedules;
mod serializability;
mod signals;
mod sleeps;
mod spec_threads;
mod spinning;
mod strategies;
mod support;
mod testgen;
mod thread_pool;
mod time_limits;
mod trace_hashes;
mod travel;
mod wat_modules;
