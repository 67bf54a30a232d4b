#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| guest::fuzzing::fold_lengths(data));
