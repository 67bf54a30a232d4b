//! Entry points for fuzzing (cargo-fuzz targets in guest/fuzz) and for the
//! stable tests that replay their corpora. Each takes arbitrary bytes and
//! must neither panic nor loop, whatever they hold.

use std::time::{Duration, Instant};

use rustpad_mcp_rules::headers::StandardHeaders;

use crate::config::Config;
use crate::rustpad::fold::{self, Lengths};
use crate::rustpad::marks::Marked;
use crate::rustpad::ot::{Document, Operation};
use crate::rustpad::state::{PadState, Track, UserOperation};

/// A configuration that never reaches the network: no RUSTPAD_URL.
fn offline() -> Config {
    Config::from_lookup(|name| (name == "RUSTPAD_SEAL_KEY").then(|| "fuzz".repeat(8)))
        .expect("the offline configuration is valid")
}

/// The JSON-RPC dispatch, in both eras and over either transport: one
/// message per line of `input`.
pub fn dispatch(input: &[u8]) {
    let config = offline();
    let session = r#"{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}}}"#;
    let http = StandardHeaders {
        protocol_version: Some("2026-07-28".into()),
        method: Some("tools/call".into()),
        name: Some("get_document".into()),
    };
    for line in String::from_utf8_lossy(input).lines() {
        let reply = crate::mcp::handle_with(&config, line, None, None);
        if let Some(response) = reply.response {
            assert!(!response.contains('\n'), "a response must be one line");
            assert_eq!(reply.error.is_some(), response.contains(r#""error":"#));
        }
        crate::mcp::handle_with(&config, line, None, Some(session));
        crate::mcp::handle_with(&config, line, None, Some(line));
        crate::mcp::handle_with(&config, line, Some(&StandardHeaders::default()), None);
        crate::mcp::handle_with(&config, line, Some(&http), Some(session));
    }
}

/// Rustpad's messages as a client receives them: one frame per line, folded
/// by a session that keeps lengths only (the fast path) and one that keeps
/// the text (the full parse). They must accept and refuse the same frames
/// and agree on the length and revision after each.
pub fn server_frames(input: &[u8]) {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut lengths = PadState::new("fuzz", Track::LENGTH);
    let mut text = PadState::new("fuzz", Track::TEXT);
    for frame in String::from_utf8_lossy(input).lines() {
        let fast = lengths
            .absorb(frame, deadline)
            .map(|event| fold_summary(&event));
        let full = text
            .absorb(frame, deadline)
            .map(|event| fold_summary(&event));
        assert_eq!(fast.is_ok(), full.is_ok(), "{frame}: {fast:?} / {full:?}");
        if fast.is_err() {
            break;
        }
        assert_eq!(fast, full, "{frame}");
        assert_eq!(lengths.document().len(), text.document().len(), "{frame}");
        assert_eq!(lengths.revision(), text.revision(), "{frame}");
        let kept = text
            .document()
            .text()
            .expect("a text session keeps its text");
        assert_eq!(kept.chars().count(), text.document().len());
    }
}

/// What an event says about the fold, comparable across sessions.
fn fold_summary(event: &crate::rustpad::state::Event) -> Option<u64> {
    match event {
        crate::rustpad::state::Event::History { ours } => Some(*ours),
        _ => None,
    }
}

/// The OT fold: `input` is a JSON array of operations applied in order.
pub fn fold(input: &[u8]) {
    let Ok(operations) = serde_json::from_slice::<Vec<Operation>>(input) else {
        return;
    };
    let mut text = Document::with_text();
    let mut lengths = Document::lengths_only();
    for operation in &operations {
        let with_text = text.apply(operation);
        let lengths_only = lengths.apply(operation);
        assert_eq!(
            with_text.is_ok(),
            lengths_only.is_ok(),
            "both folds judge alike"
        );
        if with_text.is_err() {
            break;
        }
        assert_eq!(text.len(), lengths.len());
        assert_eq!(text.text().map(|t| t.chars().count()), Some(text.len()));
    }
}

/// The fast fold of lengths against the full parse and fold: `input` is a
/// History's entries (`[{"id":…,"operation":[…]}, …]`). Both must accept and
/// refuse alike and agree on every length, revision and edit of ours, and
/// on which connections' latest write is marked or finished. The entries
/// skipped were followed before, as an earlier frame's would have been, so
/// a write marked there and finished here is read across the two.
pub fn fold_lengths(input: &[u8]) {
    const ME: u64 = 7;
    let Ok(entries) = std::str::from_utf8(input) else {
        return;
    };
    let deadline = Instant::now() + Duration::from_secs(3600);
    for skip in [0, 1, 2] {
        let start = Lengths {
            length: 0,
            revision: 0,
            ours: 0,
            last_ours: None,
        };
        let mut marked = Marked::default();
        let parsed: Option<Vec<UserOperation>> = serde_json::from_str(entries).ok();
        for entry in parsed.iter().flatten().take(skip as usize) {
            marked.follow(entry.id, entry.operation.changes_nothing());
        }
        let by = fold::Folding {
            me: Some(ME),
            deadline,
            check_every: 4096,
        };
        let fast = fold::fold_lengths(entries, start, skip, by, Some(&mut marked));
        let full = full_fold(entries, skip as usize, ME);
        match (&fast, &full) {
            (Ok(fast), Some((full, full_marked))) => {
                assert_eq!(fast, full, "{entries}");
                for author in full_marked.connections().chain(marked.connections()) {
                    assert_eq!(
                        (marked.is_marked(author), marked.finished(author)),
                        (full_marked.is_marked(author), full_marked.finished(author)),
                        "connection {author} in {entries}, {skip} skipped"
                    );
                }
            }
            (Err(_), None) => {}
            _ => panic!("the folds disagree on {entries:?}: fast {fast:?}, full {full:?}"),
        }
    }
}

/// What a session keeping the text would make of `entries` past the first
/// `skip`, in lengths, and which of all their connections are marked.
fn full_fold(entries: &str, skip: usize, me: u64) -> Option<(Lengths, Marked)> {
    let entries: Vec<UserOperation> = serde_json::from_str(entries).ok()?;
    let mut document = Document::lengths_only();
    let mut marked = Marked::default();
    let (mut revision, mut ours, mut last_ours) = (0, 0, None);
    for entry in &entries[..skip.min(entries.len())] {
        marked.follow(entry.id, entry.operation.changes_nothing());
    }
    for entry in entries.iter().skip(skip) {
        document.apply(&entry.operation).ok()?;
        revision += 1;
        marked.follow(entry.id, entry.operation.changes_nothing());
        if entry.id == me {
            ours += 1;
            last_ours = Some(revision);
        }
    }
    let lengths = Lengths {
        length: document.len() as u64,
        revision,
        ours,
        last_ours,
    };
    Some((lengths, marked))
}
