//! The sandbox, proven with a component that tries to escape it: only
//! RUSTPAD_URL's origin is reachable, no files, no environment beyond the
//! configuration, and a spinning or hoarding component is stopped while the
//! server keeps serving.

mod common;

use std::net::TcpListener;

use common::{Server, probe, probe_component};
use rustpad_test_server::{ServerOptions, TestServer};
use serde_json::json;

/// A listener that must never be connected to.
struct Bystander(TcpListener);

impl Bystander {
    fn new() -> Bystander {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        Bystander(listener)
    }

    fn port(&self) -> u16 {
        self.0.local_addr().unwrap().port()
    }

    fn was_contacted(&self) -> bool {
        self.0.accept().is_ok()
    }
}

fn outcome(reply: &serde_json::Value) -> String {
    reply["result"]["outcome"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn start_probe(rustpad: &TestServer, extra: &[(&str, &str)]) -> Server {
    let url = rustpad.url();
    let mut env = vec![("RUSTPAD_URL", url.as_str())];
    env.extend_from_slice(extra);
    Server::start(&env, &["--component", probe_component().to_str().unwrap()])
}

#[tokio::test(flavor = "multi_thread")]
async fn http_reaches_only_the_configured_origin() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    let bystander = Bystander::new();
    let mut server = start_probe(&rustpad, &[]);
    let allowed = probe(
        &mut server,
        1,
        "http",
        json!({"url": format!("{}/api/stats", rustpad.url())}),
    );
    assert_eq!(outcome(&allowed), "status 200");
    let port = rustpad.addr().port();
    for (id, url) in [
        (2, format!("http://127.0.0.1:{}/", bystander.port())),
        (3, format!("http://localhost:{port}/api/stats")),
        (4, format!("https://127.0.0.1:{port}/api/stats")),
        (5, "http://127.0.0.2/".to_string()),
    ] {
        let refused = probe(&mut server, id, "http", json!({ "url": url }));
        assert_eq!(
            outcome(&refused),
            "refused: ErrorCode::HttpRequestDenied",
            "{url}"
        );
    }
    assert!(!bystander.was_contacted());
    let log = server.stderr().join("\n");
    assert!(log.contains("egress denied"), "{log}");
}

#[tokio::test(flavor = "multi_thread")]
async fn websockets_reach_only_the_configured_origin() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    let bystander = Bystander::new();
    let mut server = start_probe(&rustpad, &[]);
    let port = rustpad.addr().port();
    let allowed = probe(
        &mut server,
        1,
        "websocket",
        json!({"url": format!("ws://127.0.0.1:{port}/api/socket/x")}),
    );
    assert_eq!(outcome(&allowed), "connected");
    for (id, url) in [
        (
            2,
            format!("ws://127.0.0.1:{}/api/socket/x", bystander.port()),
        ),
        (3, format!("ws://localhost:{port}/api/socket/x")),
        (4, format!("wss://127.0.0.1:{port}/api/socket/x")),
    ] {
        let refused = outcome(&probe(&mut server, id, "websocket", json!({ "url": url })));
        assert!(
            refused.starts_with("refused: egress denied"),
            "{url}: {refused}"
        );
        // The refusal crosses the contract as a kind the component can match.
        assert!(
            refused.ends_with("(kind ErrorKind::Refused)"),
            "{url}: {refused}"
        );
    }
    assert!(!bystander.was_contacted());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_component_sees_no_files_and_only_its_configuration() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    let mut server = start_probe(&rustpad, &[("RUSTPAD_READ_ONLY", "true")]);
    for (id, path) in [(1, "/etc/passwd"), (2, "Cargo.toml"), (3, ".")] {
        let read = outcome(&probe(
            &mut server,
            id,
            "read-file",
            json!({ "path": path }),
        ));
        assert!(read.starts_with("refused"), "{path}: {read}");
    }
    let env = outcome(&probe(&mut server, 4, "env", json!({})));
    let mut names: Vec<&str> = env
        .trim_matches(['[', ']'])
        .split(", ")
        .map(|n| n.trim_matches('"'))
        .collect();
    names.sort_unstable();
    // The host's own RUSTPAD_MCP_CACHE_DIR, XDG_STATE_HOME (set by the driver) and PATH stay outside.
    assert_eq!(
        names,
        [
            "RUSTPAD_READ_ONLY",
            "RUSTPAD_SEAL_KEY",
            "RUSTPAD_SEAL_KEY_SCOPE",
            "RUSTPAD_URL"
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_spinning_component_is_stopped_and_the_server_keeps_serving() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    let mut server = start_probe(&rustpad, &[]);
    let spun = probe(&mut server, 1, "spin", json!({}));
    assert!(
        spun["error"]["message"]
            .as_str()
            .unwrap()
            .contains("CPU budget"),
        "{spun}"
    );
    let after = probe(
        &mut server,
        2,
        "http",
        json!({"url": format!("{}/api/stats", rustpad.url())}),
    );
    assert_eq!(outcome(&after), "status 200");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hoarding_component_is_stopped_and_the_server_keeps_serving() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    let mut server = start_probe(&rustpad, &[]);
    let hoarded = probe(&mut server, 1, "alloc", json!({}));
    assert!(
        hoarded["error"]["message"]
            .as_str()
            .unwrap()
            .contains("MiB of memory"),
        "{hoarded}"
    );
    let after = probe(&mut server, 2, "env", json!({}));
    assert!(outcome(&after).contains("RUSTPAD_URL"));
}
