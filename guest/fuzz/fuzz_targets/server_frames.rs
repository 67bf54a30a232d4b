#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| guest::fuzzing::server_frames(data));
