//! The replay file reader on arbitrary text.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| weft::fuzzing::replay_file(data));
