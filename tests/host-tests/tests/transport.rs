//! The stdio transport: framing, cancellation, shutdown.

mod common;

use std::time::Duration;

use common::Server;
use rustpad_test_server::{ServerOptions, TestServer};
use serde_json::json;

#[test]
fn answers_pending_requests_then_exits_on_stdin_eof() {
    let mut server = Server::start(&[], &[]);
    server.send(json!({"jsonrpc":"2.0","id":1,"method":"ping"}));
    server.close_stdin();
    assert_eq!(server.expect()["id"], 1);
    let status = server
        .wait(Duration::from_secs(10))
        .expect("exits after stdin closes");
    assert!(status.success());
}

#[test]
fn exits_zero_on_sigterm() {
    let mut server = Server::start(&[], &[]);
    server.initialize(json!({}));
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = server
        .wait(Duration::from_secs(10))
        .expect("exits on SIGTERM");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn garbage_gets_a_parse_error_and_the_server_goes_on() {
    let mut server = Server::start(&[], &[]);
    server.send_line("{this is not json");
    let reply = server.expect();
    assert_eq!(reply["error"]["code"], -32700);
    assert_eq!(reply["id"], serde_json::Value::Null);
    server.send_line(&"x".repeat(17 << 20));
    assert_eq!(server.expect()["error"]["code"], -32600);
    let ping = server.request(2, "ping", json!({}));
    assert_eq!(ping["result"], json!({}));
}

#[test]
fn stdout_carries_only_protocol_and_notices_go_to_stderr() {
    let mut server = Server::start(&[("ELICITATION", "false")], &[]);
    server.initialize(json!({}));
    let notices = server.stderr();
    let off: Vec<_> = notices
        .iter()
        .filter(|l| l.starts_with("rustpad-mcp: ELICITATION"))
        .collect();
    assert_eq!(
        off,
        ["rustpad-mcp: ELICITATION=false — guarded tools fall back to the two-call token"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_request_gets_no_answer_and_others_proceed() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    rustpad.set_mode("silent", "never-answer").unwrap();
    let url = rustpad.url();
    let mut server = Server::start(&[("RUSTPAD_URL", url.as_str())], &[]);
    server.initialize(json!({}));
    server.send(json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_document_info","arguments":{"id":"silent"}}}));
    std::thread::sleep(Duration::from_millis(300));
    server.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"test"}}));
    let ping = server.request(8, "ping", json!({}));
    assert_eq!(ping["result"], json!({}));
    // The socket session would give up after 20 s; nothing may arrive for id 7 meanwhile.
    assert_eq!(server.next(Duration::from_secs(25)), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redirect_is_never_followed() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    let elsewhere = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    elsewhere.set_nonblocking(true).unwrap();
    let target = format!(
        "http://127.0.0.1:{}/api/text/x",
        elsewhere.local_addr().unwrap().port()
    );
    rustpad
        .set_mode("moved", &format!("http-redirect:{target}"))
        .unwrap();
    let url = rustpad.url();
    let mut server = Server::start(&[("RUSTPAD_URL", url.as_str())], &[]);
    server.initialize(json!({}));
    let reply = server.request(
        1,
        "tools/call",
        json!({"name":"get_document","arguments":{"id":"moved"}}),
    );
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(reply["result"]["isError"], true);
    assert!(
        text.contains("redirect") && text.contains("not followed"),
        "{text}"
    );
    assert!(
        elsewhere.accept().is_err(),
        "the redirect target was contacted"
    );
}

fn run_cli(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut command = std::process::Command::new(common::binary());
    command
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

#[test]
fn help_lists_every_setting_and_version_names_the_release() {
    let help = String::from_utf8(run_cli(&["--help"], &[]).stdout).unwrap();
    for setting in [
        "RUSTPAD_URL",
        "RUSTPAD_READ_ONLY",
        "RUSTPAD_INSECURE_TLS",
        "RUSTPAD_ALLOW_TOOLS",
        "RUSTPAD_DENY_TOOLS",
        "ELICITATION",
        "RUSTPAD_SEAL_KEY",
        "RUSTPAD_MCP_MAX_MEMORY",
        "RUSTPAD_MCP_MAX_CALLS",
        "--check",
    ] {
        assert!(help.contains(setting), "--help lacks {setting}");
    }
    let version = String::from_utf8(run_cli(&["--version"], &[]).stdout).unwrap();
    assert!(
        version.starts_with(&format!(
            "rustpad-mcp {} (component sha256 ",
            env!("CARGO_PKG_VERSION")
        )),
        "{version}"
    );
    assert_eq!(run_cli(&["--frobnicate"], &[]).status.code(), Some(2));
}

/// The component this binary carries, compiled, is the one built from guest/
/// in the same build: the SHA-256 it reports is that of the component on disk.
#[test]
fn the_embedded_component_is_the_one_this_build_made() {
    use sha2::{Digest, Sha256};
    let built = common::built_component();
    let bytes = std::fs::read(&built).expect("the build made the component");
    let digest: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let version = String::from_utf8(run_cli(&["--version"], &[]).stdout).unwrap();
    assert!(
        version
            .trim()
            .ends_with(&format!("(component sha256 {digest})")),
        "the binary carries another component than {}: {version}",
        built.display()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn check_reports_what_works_in_plain_words() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    let url = rustpad.url();
    let works = run_cli(&["--check"], &[("RUSTPAD_URL", url.as_str())]);
    let report = String::from_utf8(works.stdout).unwrap();
    assert!(works.status.success(), "{report}");
    assert!(
        report.contains("HTTP API: works") && report.contains("Collaboration socket: works"),
        "{report}"
    );
    assert!(report.contains("TLS: not used"), "{report}");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nowhere = format!("http://127.0.0.1:{}", closed.local_addr().unwrap().port());
    drop(closed);
    let fails = run_cli(&["--check"], &[("RUSTPAD_URL", nowhere.as_str())]);
    let report = String::from_utf8(fails.stdout).unwrap();
    assert_eq!(fails.status.code(), Some(1), "{report}");
    assert!(
        report.contains("HTTP API: FAILED") && report.contains("connection refused"),
        "{report}"
    );
}

/// The check is the operator's (the component's `check` export): a client
/// that asks for it by a method name of its own gets "Method not found", and
/// Rustpad sees no connection for it.
#[tokio::test(flavor = "multi_thread")]
async fn no_client_can_run_the_check() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    let url = rustpad.url();
    let mut server = Server::start(&[("RUSTPAD_URL", url.as_str())], &[]);
    server.initialize(json!({}));
    let reply = server.request(2, "rustpad-mcp/check", json!({}));
    assert_eq!(reply["error"]["code"], -32601, "{reply}");
    assert!(reply.get("result").is_none(), "{reply}");
    assert_eq!(
        rustpad.revision("rustpad-mcp-check"),
        None,
        "the check's look reached Rustpad"
    );
}

/// The address of a server that reads each request and answers `reply`,
/// whatever was asked, then closes the connection.
fn answering_with(reply: &'static [u8]) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut request = [0u8; 4096];
            let _ = std::io::Read::read(&mut stream, &mut request);
            let _ = std::io::Write::write_all(&mut stream, reply);
        }
    });
    url
}

/// The component acts on the kind of a failed connection (the contract's
/// typed error), not on the host's words: an HTTP answer to the upgrade gets
/// the proxy hint, and nothing listening gets the is-it-running hint.
#[test]
fn a_failed_socket_says_what_to_check_by_its_kind() {
    let proxy_url =
        answering_with(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nowhere = format!("http://127.0.0.1:{}", closed.local_addr().unwrap().port());
    drop(closed);
    // Takes the connection and never answers: the handshake gives up after
    // 10 s; it is tried once more, as a third try would end past 30 s.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("http://127.0.0.1:{}", silent.local_addr().unwrap().port());
    std::thread::spawn(move || {
        let held: Vec<_> = silent.incoming().flatten().collect();
        drop(held);
    });
    let handshake_hint = "timed out during the WebSocket handshake. If reads work but this fails, a proxy in front of Rustpad may not forward WebSocket upgrades";
    // An answer that is not an upgrade will not change on a new try.
    for (url, hint, ending) in [
        (
            proxy_url.as_str(),
            "may not forward WebSocket upgrades",
            "/api/socket/.",
        ),
        (
            silent_url.as_str(),
            handshake_hint,
            "Tried 2 times; nothing was written.",
        ),
        (
            nowhere.as_str(),
            "Check RUSTPAD_URL and that the instance is running",
            "Tried 3 times; nothing was written.",
        ),
    ] {
        let mut server = Server::start(&[("RUSTPAD_URL", url)], &[]);
        server.initialize(json!({}));
        let reply = server.request(
            2,
            "tools/call",
            json!({"name": "append_to_document", "arguments": {"id": "a", "text": "x"}}),
        );
        let text = reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert_eq!(reply["result"]["isError"], true, "{reply}");
        assert!(text.contains(hint), "{url}: {text}");
        assert!(text.ends_with(ending), "{url}: {text}");
    }
}

/// Rustpad dying in the middle of an answer is said as the docs say it,
/// not as the host's error code.
#[test]
fn a_read_cut_short_says_the_connection_broke() {
    // Half an answer, then gone.
    let url = answering_with(b"HTTP/1.1 200 OK\r\ncontent-le");
    let mut server = Server::start(&[("RUSTPAD_URL", url.as_str())], &[]);
    server.initialize(json!({}));
    let reply = server.request(
        2,
        "tools/call",
        json!({"name": "get_stats", "arguments": {}}),
    );
    let text = reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert!(
        text.starts_with("the connection to Rustpad broke while reading its answer"),
        "{text}"
    );
}

#[test]
fn a_misspelled_setting_is_named_at_startup() {
    let mut server = Server::start(&[("RUSTPAD_READONLY", "true")], &[]);
    server.initialize(json!({}));
    let notices = server.stderr().join("\n");
    assert!(
        notices.contains("RUSTPAD_READONLY is not a setting of this server and is ignored"),
        "{notices}"
    );
    assert!(notices.contains("RUSTPAD_READ_ONLY"), "{notices}");
}
