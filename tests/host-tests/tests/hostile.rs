//! A hostile Rustpad and a hostile client, from the wire: what a client
//! library cannot measure or cannot send. The server's peak memory (VmHWM)
//! stays bounded when Rustpad announces or sends too much, and JSON strings
//! holding unpaired UTF-16 surrogates (`"\ud800"`, which no Rust string can
//! hold) get a well-formed answer, never a crash, a hang or a write.
//!
//! Deadlines here only stop a hung test; nothing asserts on time.
//!
//! Why this file is long: each attack needs its own measured setup (a seeded
//! history, a flood, a raw frame), and they share the memory probe and the
//! raw driver that only this file uses.

mod common;

use std::time::Duration;

use common::{Server, seed};
use rustpad_test_server::{ServerOptions, TestServer};
use serde_json::{Value, json};

/// Half of the 64 MiB the `oversized-frame` mode announces: far below it, and
/// still twice what the server holds once warm (about 16 MiB).
const PEAK_RSS_LIMIT_KIB: u64 = 32 << 10;

/// How long one reply may take before the test calls it a hang. The server's
/// own deadlines are 20 s at most.
const HANG_GUARD: Duration = Duration::from_secs(90);

/// The process's peak resident set (VmHWM) in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("/proc/PID/status has VmHWM")
}

/// The frames a client sent on `pad` that are edits changing the text (each
/// write of rustpad-mcp first sends its mark, an edit that keeps it all).
fn edits(rustpad: &TestServer, pad: &str) -> Vec<String> {
    rustpad
        .received(pad)
        .into_iter()
        .filter(|frame| {
            let frame: Value = serde_json::from_str(frame).unwrap_or_default();
            let keeps_all = |parts: &Vec<Value>| parts.iter().all(Value::is_u64);
            frame["Edit"]["operation"]
                .as_array()
                .is_some_and(|parts| !keeps_all(parts))
        })
        .collect()
}

struct Session {
    server: Server,
    next_id: u64,
}

impl Session {
    fn start(rustpad: &TestServer, extra: &[(&str, &str)]) -> Session {
        let url = rustpad.url();
        let mut env = vec![("RUSTPAD_URL", url.as_str())];
        env.extend_from_slice(extra);
        let mut server = Server::start(&env, &[]);
        server.initialize(json!({}));
        Session { server, next_id: 0 }
    }

    /// The JSON-RPC reply to the next request, with a hang guard of its own
    /// (the driver's `request` gives up after 30 s).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        self.server
            .request_within(self.next_id, method, params, HANG_GUARD)
    }

    /// A tools/call result.
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let reply = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert!(reply.get("error").is_none(), "{tool}: {reply}");
        reply["result"].clone()
    }

    fn peak_rss_kib(&self) -> u64 {
        peak_rss_kib(self.server.pid())
    }

    fn still_serves(&mut self) {
        assert_eq!(self.request("ping", json!({}))["result"], json!({}));
        let stats = self.call("get_stats", json!({}));
        assert!(stats.get("isError").is_none(), "{stats}");
    }
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn failed(result: &Value) -> String {
    assert_eq!(result["isError"], true, "expected an error: {result}");
    text(result)
}

fn succeeded(result: &Value) -> &Value {
    assert!(result.get("isError").is_none(), "{}", text(result));
    &result["structuredContent"]
}

/// One ordinary read and write first, then the peak is reset: what is
/// measured afterwards is the hostile call, not start-up (which compiles the
/// component with Cranelift when the cache is cold, about 50 MiB).
fn warm_up(session: &mut Session, rustpad: &TestServer) {
    seed(rustpad, "warm", "warm-up text");
    succeeded(&session.call("get_document_info", json!({"id": "warm"})));
    succeeded(&session.call("append_to_document", json!({"id": "warm", "text": "!"})));
    succeeded(&session.call("get_document", json!({"id": "warm"})));
    // "5" resets VmHWM to the current RSS (proc(5), /proc/PID/clear_refs).
    let pid = session.server.pid();
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").expect("VmHWM can be reset");
}

fn assert_bounded(session: &Session, what: &str) {
    let peak = session.peak_rss_kib();
    assert!(
        peak < PEAK_RSS_LIMIT_KIB,
        "{what}: peak RSS {peak} KiB, over {PEAK_RSS_LIMIT_KIB} KiB"
    );
    eprintln!("{what}: peak RSS {peak} KiB");
}

// -- a hostile Rustpad ---------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn a_frame_announcing_64_mib_is_refused_before_it_is_buffered() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    let mut session = Session::start(&rustpad, &[]);
    warm_up(&mut session, &rustpad);
    seed(&rustpad, "oversized", "original");
    rustpad.set_mode("oversized", "oversized-frame").unwrap();

    let read = failed(&session.call("get_document_info", json!({"id": "oversized"})));
    // Only the frame header carries this number: the refusal came from it.
    assert!(read.contains("67108864"), "{read}");
    let write = failed(&session.call(
        "append_to_document",
        json!({"id": "oversized", "text": "X"}),
    ));
    assert!(write.contains("67108864"), "{write}");
    assert_eq!(edits(&rustpad, "oversized"), Vec::<String>::new());
    assert_eq!(rustpad.text("oversized"), "original");
    assert_bounded(&session, "oversized-frame");
    session.still_serves();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_flood_that_never_goes_idle_costs_bounded_memory() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    let mut session = Session::start(&rustpad, &[]);
    warm_up(&mut session, &rustpad);
    seed(&rustpad, "flooded", "base");
    rustpad.set_mode("flooded", "flood").unwrap();
    for round in 0..3 {
        let info = session.call("get_document_info", json!({"id": "flooded"}));
        assert_eq!(succeeded(&info)["length_characters"], 4 + round);
        session.call("append_to_document", json!({"id": "flooded", "text": "+"}));
    }
    assert_eq!(rustpad.text("flooded"), "base+++");
    assert_eq!(edits(&rustpad, "flooded").len(), 3);
    assert_bounded(&session, "flood");
    session.still_serves();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_20_mib_http_body_is_refused_with_bounded_memory() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    let mut session = Session::start(&rustpad, &[]);
    warm_up(&mut session, &rustpad);
    rustpad.set_mode("huge", "http-huge-body:20").unwrap();
    let message = failed(&session.call("get_document", json!({"id": "huge"})));
    assert!(
        message.contains("20971520") && message.contains("8388608"),
        "{message}"
    );
    assert_bounded(&session, "http-huge-body:20");
    session.still_serves();
}

#[tokio::test(flavor = "multi_thread")]
async fn five_thousand_users_are_capped_with_bounded_memory() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    let mut session = Session::start(&rustpad, &[]);
    warm_up(&mut session, &rustpad);
    seed(&rustpad, "crowded", "text");
    rustpad.set_mode("crowded", "many-users:5000").unwrap();
    let info = session.call("get_document_info", json!({"id": "crowded"}));
    let users = succeeded(&info)["active_users"].as_array().unwrap().len();
    assert!(0 < users && users <= 200, "{users} users listed");
    assert!(text(&info).len() < 64 << 10, "{} bytes", text(&info).len());
    let appended = session.call("append_to_document", json!({"id": "crowded", "text": "!"}));
    succeeded(&appended);
    assert_eq!(rustpad.text("crowded"), "text!");
    assert_bounded(&session, "many-users:5000");
    session.still_serves();
}

// -- unpaired surrogates from the client ---------------------------------------------------

/// Checks that `line` is JSON a strict parser accepts (no unpaired surrogate
/// escapes either) and a JSON-RPC error or an isError tool result.
fn well_formed_refusal(line: &str) -> Value {
    let reply: Value = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("the reply is not well-formed JSON ({e}): {line}"));
    assert_eq!(reply["jsonrpc"], "2.0", "{line}");
    let refused = reply["error"]["code"].is_i64() && reply["error"]["message"].is_string()
        || reply["result"]["isError"] == true;
    assert!(
        refused,
        "neither a JSON-RPC error nor an isError result: {line}"
    );
    reply
}

fn raw_call(id: u64, tool: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn unpaired_surrogates_get_a_well_formed_answer_and_never_a_write() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    seed(&rustpad, "target", "original");
    let mut session = Session::start(&rustpad, &[]);
    let cases = [
        raw_call(101, "get_document", r#"{"id":"\ud800"}"#),
        raw_call(102, "get_document_info", r#"{"id":"target\udfff"}"#),
        raw_call(
            103,
            "append_to_document",
            r#"{"id":"target","text":"abc\ud800"}"#,
        ),
        raw_call(
            104,
            "append_to_document",
            r#"{"id":"target","text":"\udc00\ud800"}"#,
        ),
        raw_call(
            105,
            "append_to_document",
            r#"{"id":"target","text":"\ud800\ud800"}"#,
        ),
        raw_call(
            106,
            "replace_in_document",
            r#"{"id":"target","search":"original","replace":"\ud83d"}"#,
        ),
        raw_call(
            107,
            "set_language",
            r#"{"id":"target","language":"rust\udbff"}"#,
        ),
        raw_call(108, "append_to_document", r#"{"id":"target","\ud800":"x"}"#),
        raw_call(109, r"get_document\ud800", r#"{"id":"target"}"#),
        r#"{"jsonrpc":"2.0","id":110,"method":"tools/call\ud800","params":{}}"#.to_string(),
    ];
    let mut unanswered = Vec::new();
    for (line, id) in cases.iter().zip(101u64..) {
        session.server.send_line(line);
        let reply = session
            .server
            .next_raw(HANG_GUARD)
            .unwrap_or_else(|| panic!("no reply within {HANG_GUARD:?} to {line}"));
        let reply = well_formed_refusal(&reply);
        // A reply the client cannot match to its request leaves that request open forever.
        if reply["id"] != json!(id) {
            unanswered.push(format!("{line}\n  -> {reply}"));
        }
    }
    // The request id itself holds one: a reply that does not crash anything.
    session.server.send_line(
        &raw_call(0, "get_document", r#"{"id":"target"}"#)
            .replace("\"id\":0", "\"id\":\"\\ud800\""),
    );
    let reply = session
        .server
        .next_raw(HANG_GUARD)
        .expect("a reply to a request whose id holds an unpaired surrogate");
    serde_json::from_str::<Value>(&reply)
        .unwrap_or_else(|e| panic!("the reply is not well-formed JSON ({e}): {reply}"));
    // So does a notification: no reply, and nothing breaks.
    session.server.send_line(
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"message":"\ud800"}}"#,
    );

    assert_eq!(edits(&rustpad, "target"), Vec::<String>::new());
    assert_eq!(rustpad.text("target"), "original");
    session.still_serves();
    // A well-formed pair still means its character.
    session.server.send_line(&raw_call(
        120,
        "append_to_document",
        r#"{"id":"target","text":"\ud83d\ude00"}"#,
    ));
    let reply: Value = serde_json::from_str(&session.server.next_raw(HANG_GUARD).unwrap()).unwrap();
    assert_eq!(reply["id"], 120, "{reply}");
    succeeded(&reply["result"]);
    assert_eq!(rustpad.text("target"), "original😀");
    assert!(
        unanswered.is_empty(),
        "replies that do not carry their request's id (the request stays unanswered):\n{}",
        unanswered.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_initialize_holding_an_unpaired_surrogate_leaves_a_usable_server() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    seed(&rustpad, "pad", "text");
    let url = rustpad.url();
    let mut server = Server::start(&[("RUSTPAD_URL", url.as_str())], &[]);
    server.send_line(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"client\ud800","version":"1"}}}"#,
    );
    let reply = server.next_raw(HANG_GUARD).expect("a reply to initialize");
    let reply: Value = serde_json::from_str(&reply)
        .unwrap_or_else(|e| panic!("the reply is not well-formed JSON ({e}): {reply}"));
    if reply.get("result").is_some() {
        // Accepted: then the session it opened must work.
        server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let listed = server.request(1, "tools/list", json!({}));
        assert!(
            listed["result"]["tools"].is_array(),
            "initialize succeeded, but the session it announced does not work: {listed}"
        );
    } else {
        // Refused: a clean initialize afterwards must work.
        assert!(reply["error"]["code"].is_i64(), "{reply}");
        server.initialize(json!({}));
        let listed = server.request(1, "tools/list", json!({}));
        assert!(listed["result"]["tools"].is_array(), "{listed}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_elicitation_answer_holding_an_unpaired_surrogate_does_not_hang_the_call() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    seed(&rustpad, "guarded", "keep me");
    let url = rustpad.url();
    let mut server = Server::start(&[("RUSTPAD_URL", url.as_str())], &[]);
    server.initialize(json!({"elicitation": {}}));
    server.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "set_document", "arguments": {"id": "guarded", "text": "replaced"}}}));
    let question = server.expect();
    assert_eq!(question["method"], "elicitation/create", "{question}");
    let question_id = question["id"].to_string();
    server.send_line(&format!(
        r#"{{"jsonrpc":"2.0","id":{question_id},"result":{{"action":"decline","content":{{"note":"\ud800"}}}}}}"#
    ));
    // The server's own wait for a person is 15 minutes; a lost answer would sit there.
    let reply = server
        .next_raw(HANG_GUARD)
        .expect("the call still waits for an answer the client already sent");
    let reply: Value = serde_json::from_str(&reply)
        .unwrap_or_else(|e| panic!("the reply is not well-formed JSON ({e}): {reply}"));
    assert_eq!(reply["id"], 1, "{reply}");
    assert_eq!(edits(&rustpad, "guarded"), Vec::<String>::new());
    assert_eq!(rustpad.text("guarded"), "keep me");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancellation_holding_an_unpaired_surrogate_still_cancels() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    rustpad.set_mode("silent", "never-answer").unwrap();
    let url = rustpad.url();
    let mut server = Server::start(&[("RUSTPAD_URL", url.as_str())], &[]);
    server.initialize(json!({}));
    server.send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "get_document_info", "arguments": {"id": "silent"}}}));
    std::thread::sleep(Duration::from_millis(300));
    server.send_line(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"gave up \ud800"}}"#,
    );
    let ping = server.request(8, "ping", json!({}));
    assert_eq!(ping["result"], json!({}));
    // The socket session gives up after 20 s: a cancelled request must get no answer at all.
    let mut after = Vec::new();
    while let Some(line) = server.next_raw(Duration::from_secs(25)) {
        after.push(line);
    }
    assert_eq!(
        after,
        Vec::<String>::new(),
        "answers after the cancellation"
    );
}

// -- bounded sockets, calls and memory -----------------------------------------------------

/// What 8 calls on a flooding peer may cost the whole process, at its peak.
const FLOOD_PEAK_RSS_LIMIT_KIB: u64 = 128 << 10;

/// Sends every request first, then collects the replies by id, in any order.
fn concurrently(session: &mut Session, calls: &[(u64, &str, Value)]) -> Vec<Value> {
    for (id, tool, arguments) in calls {
        session
            .server
            .send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}));
    }
    let mut replies: Vec<Option<Value>> = vec![None; calls.len()];
    while replies.iter().any(Option::is_none) {
        let reply = session
            .server
            .next(HANG_GUARD)
            .expect("every call is answered within the hang guard");
        if let Some(at) = calls.iter().position(|(id, ..)| reply["id"] == json!(id)) {
            replies[at] = Some(reply);
        }
    }
    replies.into_iter().flatten().collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_ping_flood_from_a_peer_that_never_reads_is_cut_off_with_bounded_memory() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    let mut session = Session::start(&rustpad, &[]);
    warm_up(&mut session, &rustpad);
    rustpad.set_mode("pinged", "ping-flood").unwrap();
    // Reads and writes alike: four of each.
    let calls: Vec<(u64, &str, Value)> = (0..8)
        .map(|n| match n % 2 {
            0 => (1000 + n, "get_document_info", json!({"id": "pinged"})),
            _ => (
                1000 + n,
                "append_to_document",
                json!({"id": "pinged", "text": "x"}),
            ),
        })
        .collect();
    for reply in concurrently(&mut session, &calls) {
        let message = failed(&reply["result"]);
        assert!(message.contains("Rustpad stopped reading"), "{message}");
    }
    let peak = session.peak_rss_kib();
    eprintln!("ping-flood, 8 calls: peak RSS {peak} KiB");
    assert!(
        peak < FLOOD_PEAK_RSS_LIMIT_KIB,
        "peak RSS {peak} KiB, over {FLOOD_PEAK_RSS_LIMIT_KIB} KiB"
    );
    session.still_serves();
}

#[tokio::test(flavor = "multi_thread")]
async fn calls_past_the_memory_budget_are_refused_and_the_server_keeps_serving() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    // A frame announced at 15 MiB that never ends: a socket takes twice that as its header
    // comes, and holds it. Two such sockets and their instances fit in 80 MiB; a third does not.
    rustpad.set_mode("held", "stalled-frame:15").unwrap();
    seed(&rustpad, "fine", "fine");
    let mut session = Session::start(&rustpad, &[("RUSTPAD_MCP_MAX_MEMORY", "80")]);
    for id in [101, 102] {
        session
            .server
            .send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "get_document_info", "arguments": {"id": "held"}}}));
    }
    std::thread::sleep(Duration::from_millis(500));
    // A small pad still fits: what a socket counts is what it holds.
    succeeded(&session.call("get_document_info", json!({"id": "fine"})));
    let refused = session.call("get_document_info", json!({"id": "held"}));
    let message = failed(&refused);
    assert!(
        message.contains("80 MiB, RUSTPAD_MCP_MAX_MEMORY") && message.contains("all in use"),
        "{message}"
    );
    // Calls that need no socket still run, and the memory comes back when the held calls end.
    session.still_serves();
    for id in [101, 102] {
        session.server.send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id}}),
        );
    }
    std::thread::sleep(Duration::from_millis(200));
    let info = session.call("get_document_info", json!({"id": "fine"}));
    assert_eq!(succeeded(&info)["length_characters"], 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_calls_past_the_stdio_limit_are_refused_at_once() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    rustpad.set_mode("held", "never-answer").unwrap();
    let mut session = Session::start(&rustpad, &[("RUSTPAD_MCP_MAX_CALLS", "2")]);
    for id in [101, 102] {
        session
            .server
            .send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "get_document_info", "arguments": {"id": "held"}}}));
    }
    std::thread::sleep(Duration::from_millis(300));
    let refused = session.request("tools/call", json!({"name": "get_stats", "arguments": {}}));
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("2 tool calls are already running")
            && message.contains("RUSTPAD_MCP_MAX_CALLS"),
        "{refused}"
    );
    // Other requests are not tool calls and still answer.
    assert_eq!(session.request("ping", json!({}))["result"], json!({}));
    session.server.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 101}}),
    );
    std::thread::sleep(Duration::from_millis(200));
    let stats = session.call("get_stats", json!({}));
    succeeded(&stats);
}

#[test]
fn a_client_that_stops_reading_stdout_cannot_grow_the_writer() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};

    const REQUESTS: u64 = 30_000;
    // Unbounded, 30,000 tools/list answers would be about 300 MB. The limit is
    // what the server held before its pool kept pages (80 MiB), and what the
    // pool may keep resident besides: the pages the last call wrote, 1 MiB for
    // each of 64 slots, and the top 128 KiB of each stack (host/src/runtime/pool.rs).
    const LIMIT_KIB: u64 = (80 << 10) + 64 * ((1 << 10) + 128);
    let mut child = Command::new(common::binary())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("RUSTPAD_MCP_CACHE_DIR", common::cache_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
        writeln!(stdin, "{initialize}").unwrap();
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )
        .unwrap();
        for id in 1..=REQUESTS {
            writeln!(
                stdin,
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#
            )
            .unwrap();
        }
        stdin
    });
    // Nobody reads stdout for a while; the server must stop taking work, not pile answers up.
    std::thread::sleep(Duration::from_secs(4));
    let peak = peak_rss_kib(pid);
    eprintln!("a client not reading stdout: peak RSS {peak} KiB");
    assert!(
        !writer.is_finished(),
        "the server read every request without anyone reading its answers"
    );
    // Reading again, every answer arrives: the server was waiting, not stuck.
    let mut answers = 0;
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    while answers <= REQUESTS {
        let line = lines
            .next()
            .expect("the server answers every request")
            .unwrap();
        assert!(line.contains("\"result\""), "{line}");
        answers += 1;
    }
    drop(writer.join().unwrap());
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        peak < LIMIT_KIB,
        "peak RSS {peak} KiB, over {LIMIT_KIB} KiB"
    );
}
