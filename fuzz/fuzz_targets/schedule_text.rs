//! The IMUnit schedule language on arbitrary text.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| weft::fuzzing::schedule_text(data));
