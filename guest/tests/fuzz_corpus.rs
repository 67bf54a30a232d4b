//! Replays the checked-in fuzz corpora (guest/fuzz/corpus/<target>/) through
//! the same entry points the cargo-fuzz targets call, so a stable
//! `cargo test -p guest` keeps every seed and every past finding passing.
//! See docs/fuzzing.md.

use std::fs;
use std::path::{Path, PathBuf};

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join("corpus")
        .join(target);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display()))
        .map(|entry| entry.expect("a readable directory entry").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "the corpus {} is empty", dir.display());
    files
        .into_iter()
        .map(|path| {
            let bytes = fs::read(&path)
                .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
            (path, bytes)
        })
        .collect()
}

fn replay(target: &str, entry: fn(&[u8])) {
    for (path, bytes) in corpus(target) {
        let outcome = std::panic::catch_unwind(|| entry(&bytes));
        assert!(outcome.is_ok(), "{target} panicked on {}", path.display());
    }
}

#[test]
fn dispatch_corpus() {
    replay("dispatch", guest::fuzzing::dispatch);
}

#[test]
fn server_frames_corpus() {
    replay("server_frames", guest::fuzzing::server_frames);
}

#[test]
fn fold_corpus() {
    replay("fold", guest::fuzzing::fold);
}

#[test]
fn fold_lengths_corpus() {
    replay("fold_lengths", guest::fuzzing::fold_lengths);
}
