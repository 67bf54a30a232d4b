//! The host knows JSON-RPC framing and nothing of MCP's meaning: its source
//! names no MCP method, except the two it routes itself — the client's
//! answers to its `elicitation/create`, and `notifications/cancelled`.
//! Everything else about a message it learns from the component (the WIT
//! contract) or from the shared rules crate.

use std::fs;
use std::path::{Path, PathBuf};

/// MCP's methods, in 2025-11-25 and 2026-07-28, as a client or server sends them.
const MCP_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "logging/setLevel",
    "completion/complete",
    "sampling/createMessage",
    "roots/list",
    "subscriptions/listen",
    "tasks/get",
    "tasks/list",
    "tasks/cancel",
    "tasks/result",
    "notifications/initialized",
    "notifications/progress",
    "notifications/message",
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
    "notifications/roots/list_changed",
    "notifications/elicitation/complete",
];

/// What the host may name: what it routes itself.
const ROUTED: &[&str] = &["elicitation/create", "notifications/cancelled"];

fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

#[test]
fn the_host_source_names_no_mcp_method_but_those_it_routes() {
    let mut files = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../host/src"),
        &mut files,
    );
    assert!(files.len() > 10, "the host's source was not found");
    let mut named = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap();
        for method in MCP_METHODS {
            if text.contains(&format!("\"{method}\"")) {
                named.push(format!("{} names {method}", file.display()));
            }
        }
    }
    assert!(
        named.is_empty(),
        "the host names MCP methods:\n{}",
        named.join("\n")
    );
    // The two it routes are named, which shows the search looks where it should.
    let all: String = files
        .iter()
        .map(|f| fs::read_to_string(f).unwrap())
        .collect();
    for method in ROUTED {
        assert!(
            all.contains(&format!("\"{method}\"")),
            "{method} is routed by the host"
        );
    }
}
