//! Entry points for fuzzing (cargo-fuzz targets in guest/fuzz) and for the
//! stable tests that replay their corpora. Each takes arbitrary bytes and
//! must neither panic nor loop, whatever they hold.

use std::time::{Duration, Instant};

use rustpad_mcp_rules::headers::StandardHeaders;

use crate::config::Config;
use crate::rustpad::ot::{Document, Operation};
use crate::rustpad::socket::{PadState, Track};

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
            assert_eq!(reply.error_code.is_some(), response.contains(r#""error":"#));
        }
        crate::mcp::handle_with(&config, line, None, Some(session));
        crate::mcp::handle_with(&config, line, None, Some(line));
        crate::mcp::handle_with(&config, line, Some(&StandardHeaders::default()), None);
        crate::mcp::handle_with(&config, line, Some(&http), Some(session));
    }
}

/// Rustpad's messages as a client receives them: one frame per line.
pub fn server_frames(input: &[u8]) {
    let deadline = Instant::now() + Duration::from_secs(5);
    for track in [Track::Length, Track::Text] {
        let mut state = PadState::new("fuzz", track);
        for frame in String::from_utf8_lossy(input).lines() {
            if state.absorb(frame, deadline).is_err() {
                break;
            }
        }
        if let Some(text) = state.document().text() {
            assert_eq!(text.chars().count(), state.document().len());
        }
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
