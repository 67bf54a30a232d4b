//! The confirmation guard from the wire, where a client library cannot
//! misbehave on purpose: tampered, expired, replayed and foreign
//! `requestState`s, pads that change between question and answer, tokens
//! used twice, swapped or moved to another pad, and expired.
//!
//! Expiry is tested without any clock switch: the operator's seal key is
//! known here, so the test re-seals a real state (or token) with a past
//! expiry, which the server must refuse although the seal verifies.

mod common;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::{Server, seed, set_by_person};
use hmac::{Hmac, Mac};
use rustpad_test_server::{ServerOptions, TestServer};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const KEY: &str = "test-seal-key-0123456789abcdef-0123456789";

fn meta(elicitation: bool) -> Value {
    let capabilities = if elicitation {
        json!({"elicitation": {}})
    } else {
        json!({})
    };
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

struct Session {
    server: Server,
    next_id: u64,
}

impl Session {
    fn start(rustpad: &TestServer, extra: &[(&str, &str)]) -> Session {
        let url = rustpad.url();
        let mut env = vec![("RUSTPAD_URL", url.as_str()), ("RUSTPAD_SEAL_KEY", KEY)];
        env.extend_from_slice(extra);
        Session {
            server: Server::start(&env, &[]),
            next_id: 0,
        }
    }

    /// A 2026-07-28 tools/call; returns the result object.
    fn call(&mut self, tool: &str, arguments: Value, extra: Value) -> Value {
        self.next_id += 1;
        let mut params = json!({"name": tool, "arguments": arguments, "_meta": meta(true)});
        if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
            params.extend(extra.clone());
        }
        let reply = self.server.request(self.next_id, "tools/call", params);
        reply["result"].clone()
    }
}

fn accept() -> Value {
    json!({"confirm": {"action": "accept", "content": {"confirm": true}}})
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn replace_all(pad: &str, search: &str, replace: &str) -> Value {
    json!({"id": pad, "search": search, "replace": replace, "replace_all": true})
}

#[tokio::test(flavor = "multi_thread")]
async fn an_accepted_answer_executes_once_and_its_state_cannot_be_replayed() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    seed(&rustpad, "replay", "a b a b a");
    let mut session = Session::start(&rustpad, &[]);
    let asked = session.call(
        "replace_in_document",
        replace_all("replay", "a", "x"),
        json!({}),
    );
    assert_eq!(asked["resultType"], "input_required");
    let state = asked["requestState"].clone();
    let done = session.call(
        "replace_in_document",
        replace_all("replay", "a", "x"),
        json!({"requestState": state, "inputResponses": accept()}),
    );
    assert_eq!(
        text(&done).lines().next().unwrap(),
        "Replaced 3 occurrences in pad \"replay\"."
    );
    seed(&rustpad, "replay", "a b a b a");
    let replayed = session.call(
        "replace_in_document",
        replace_all("replay", "a", "x"),
        json!({"requestState": state, "inputResponses": accept()}),
    );
    assert_eq!(
        replayed["resultType"], "input_required",
        "a used state must ask afresh"
    );
    assert_eq!(rustpad.text("replay"), "a b a b a");
}

#[tokio::test(flavor = "multi_thread")]
async fn tampered_and_foreign_states_ask_afresh() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    seed(&rustpad, "tamper", "a a a");
    seed(&rustpad, "other", "b b b");
    let mut session = Session::start(&rustpad, &[]);
    let asked = session.call(
        "replace_in_document",
        replace_all("tamper", "a", "x"),
        json!({}),
    );
    let state = asked["requestState"].as_str().unwrap().to_string();
    let mut tampered = state.clone();
    tampered.replace_range(10..11, if &state[10..11] == "A" { "B" } else { "A" });
    let foreign = session.call(
        "replace_in_document",
        replace_all("other", "b", "y"),
        json!({}),
    );
    let foreign = foreign["requestState"].as_str().unwrap().to_string();
    for bad in [tampered, foreign, "garbage".to_string(), String::new()] {
        let result = session.call(
            "replace_in_document",
            replace_all("tamper", "a", "x"),
            json!({"requestState": bad, "inputResponses": accept()}),
        );
        assert_eq!(result["resultType"], "input_required", "{bad:?}");
    }
    assert_eq!(rustpad.text("tamper"), "a a a");
}

/// Re-seals a real state with another expiry, as a holder of the key could.
fn reseal_with_expiry(state: &str, expires: u64) -> String {
    let (payload, _) = state.strip_prefix("v3.").unwrap().split_once('.').unwrap();
    let mut fields: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
    fields["e"] = json!(expires);
    let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&fields).unwrap());
    let mut mac = Hmac::<Sha256>::new_from_slice(KEY.as_bytes()).unwrap();
    mac.update(b"state\0");
    mac.update(&(payload.len() as u64).to_be_bytes());
    mac.update(payload.as_bytes());
    format!(
        "v3.{payload}.{}",
        URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_state_asks_afresh_though_its_seal_verifies() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    seed(&rustpad, "late", "a a");
    let mut session = Session::start(&rustpad, &[]);
    let asked = session.call(
        "replace_in_document",
        replace_all("late", "a", "x"),
        json!({}),
    );
    let state = asked["requestState"].as_str().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let expired = session.call(
        "replace_in_document",
        replace_all("late", "a", "x"),
        json!({"requestState": reseal_with_expiry(state, now - 1), "inputResponses": accept()}),
    );
    assert_eq!(expired["resultType"], "input_required");
    // The same re-sealing with a future expiry is accepted: the seal is right.
    let fresh = session.call(
        "replace_in_document",
        replace_all("late", "a", "x"),
        json!({"requestState": reseal_with_expiry(state, now + 60), "inputResponses": accept()}),
    );
    assert!(
        text(&fresh).starts_with("Replaced 2 occurrences"),
        "{fresh}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_match_added_between_question_and_answer_is_asked_again() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    seed(&rustpad, "grows", "a a");
    let mut session = Session::start(&rustpad, &[]);
    let asked = session.call(
        "replace_in_document",
        replace_all("grows", "a", "x"),
        json!({}),
    );
    assert!(
        asked["inputRequests"]["confirm"]["params"]["message"]
            .as_str()
            .unwrap()
            .contains("replace 2 occurrences")
    );
    seed(&rustpad, "grows", "a a a");
    let again = session.call(
        "replace_in_document",
        replace_all("grows", "a", "x"),
        json!({"requestState": asked["requestState"], "inputResponses": accept()}),
    );
    assert_eq!(again["resultType"], "input_required");
    assert!(
        again["inputRequests"]["confirm"]["params"]["message"]
            .as_str()
            .unwrap()
            .contains("replace 3 occurrences")
    );
    assert_eq!(rustpad.text("grows"), "a a a");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pad_that_keeps_changing_gives_up_after_a_few_rounds() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    let mut content = "a a".to_string();
    seed(&rustpad, "busy", &content);
    let mut session = Session::start(&rustpad, &[]);
    let mut result = session.call(
        "replace_in_document",
        replace_all("busy", "a", "x"),
        json!({}),
    );
    for _ in 0..3 {
        content.push_str(" a");
        seed(&rustpad, "busy", &content);
        result = session.call(
            "replace_in_document",
            replace_all("busy", "a", "x"),
            json!({"requestState": result["requestState"], "inputResponses": accept()}),
        );
        if result["isError"] == true {
            break;
        }
    }
    assert_eq!(result["isError"], true);
    assert!(text(&result).contains("kept changing"), "{result}");
    assert_eq!(rustpad.text("busy"), content);
}

fn token_of(result: &Value) -> String {
    let text = text(result);
    let start = text.find("confirm_token=\"").expect("a token is offered") + 15;
    text[start..start + text[start..].find('"').unwrap()].to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn tokens_work_once_and_only_for_their_own_call() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    seed(&rustpad, "one", "a b a b");
    seed(&rustpad, "two", "a b a b");
    let mut session = Session::start(&rustpad, &[("ELICITATION", "false")]);
    let offered = session.call(
        "replace_in_document",
        replace_all("one", "a", "b"),
        json!({}),
    );
    assert_eq!(offered["isError"], true);
    let token = token_of(&offered);
    assert!(token.len() <= 64);
    for (arguments, why) in [
        (replace_all("one", "b", "a"), "does not match"),
        (replace_all("two", "a", "b"), "does not match"),
        (
            json!({"id":"one","search":"a","replace":"b","replace_all":true,"confirm_token":"nonsense"}),
            "not a confirmation token",
        ),
    ] {
        let mut arguments = arguments;
        if arguments.get("confirm_token").is_none() {
            arguments["confirm_token"] = json!(token);
        }
        let refused = session.call("replace_in_document", arguments, json!({}));
        assert!(text(&refused).contains(why), "{refused}");
    }
    let mut arguments = replace_all("one", "a", "b");
    arguments["confirm_token"] = json!(token);
    let done = session.call("replace_in_document", arguments.clone(), json!({}));
    assert!(text(&done).starts_with("Replaced 2 occurrences"), "{done}");
    set_by_person(&rustpad, "one", "a b a b").await;
    let reused = session.call("replace_in_document", arguments, json!({}));
    assert!(text(&reused).contains("already used"), "{reused}");
    assert_eq!(rustpad.text("two"), "a b a b");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_token_is_refused_with_the_reason() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    seed(&rustpad, "old", "content");
    let mut session = Session::start(&rustpad, &[("ELICITATION", "false")]);
    // Pins the token format: revision(4) ‖ connection(4) ‖ Rustpad's start time (4, its low
    // bits) ‖ expiry(4, Unix seconds) ‖ HMAC(16), hex, over the arguments, the pad's state at
    // that revision and the base naming its text, and those four fields.
    let digest = |parts: Value| -> String {
        Sha256::digest(parts.to_string().as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let fingerprint = |text: &str| -> String {
        Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()[..16]
            .to_string()
    };
    let arguments = digest(json!(["set_document", "old", fingerprint("new")]));
    let base = format!("r1.{}", fingerprint("content"));
    let binding = digest(json!([arguments, fingerprint("content"), base]));
    let (revision, connection) = (1u32.to_be_bytes(), 0u32.to_be_bytes());
    let started = (rustpad.start_time() as u32).to_be_bytes();
    let expiry = 1_000_000u32.to_be_bytes();
    let mut mac = Hmac::<Sha256>::new_from_slice(KEY.as_bytes()).unwrap();
    mac.update(b"token\0");
    for part in [
        binding.as_bytes(),
        &revision,
        &connection,
        &started,
        &expiry,
    ] {
        mac.update(&(part.len() as u64).to_be_bytes());
        mac.update(part);
    }
    let tag = mac.finalize().into_bytes();
    let token: String = revision
        .iter()
        .chain(&connection)
        .chain(&started)
        .chain(&expiry)
        .chain(&tag[..16])
        .map(|b| format!("{b:02x}"))
        .collect();
    let refused = session.call(
        "set_document",
        json!({"id": "old", "text": "new", "confirm_token": token}),
        json!({}),
    );
    assert!(text(&refused).contains("expired"), "{refused}");
    assert_eq!(rustpad.text("old"), "content");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_legacy_dialog_does_not_hold_up_other_requests() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    seed(&rustpad, "ask", "old text");
    let url = rustpad.url();
    let mut server = Server::start(&[("RUSTPAD_URL", url.as_str())], &[]);
    server.initialize(json!({"elicitation": {}}));
    server.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"set_document","arguments":{"id":"ask","text":"new"}}}));
    let question = server.expect();
    assert_eq!(question["method"], "elicitation/create");
    let message = question["params"]["message"].as_str().unwrap();
    assert!(
        !message.contains("old text"),
        "the dialog must not show pad content"
    );
    let read = server.request(
        2,
        "tools/call",
        json!({"name":"get_document","arguments":{"id":"ask"}}),
    );
    assert_eq!(read["result"]["structuredContent"]["text"], "old text");
    assert_eq!(server.request(3, "ping", json!({}))["result"], json!({}));
    server.send(json!({"jsonrpc":"2.0","id":question["id"],"result":{"action":"decline"}}));
    let declined = server.expect();
    assert_eq!(declined["id"], 1);
    assert!(text(&declined["result"]).contains("declined"));
    assert_eq!(rustpad.text("ask"), "old text");
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_a_request_with_an_open_dialog_changes_nothing() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    seed(&rustpad, "cancel", "keep me");
    let url = rustpad.url();
    let mut server = Server::start(&[("RUSTPAD_URL", url.as_str())], &[]);
    server.initialize(json!({"elicitation": {}}));
    server.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"set_document","arguments":{"id":"cancel","text":"gone"}}}));
    let question = server.expect();
    server
        .send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}));
    server.send(json!({"jsonrpc":"2.0","id":question["id"],"result":{"action":"accept","content":{"confirm":true}}}));
    assert_eq!(server.request(2, "ping", json!({}))["result"], json!({}));
    assert_eq!(server.next(std::time::Duration::from_millis(500)), None);
    assert_eq!(rustpad.text("cancel"), "keep me");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_decline_stands_even_when_the_pad_changed_meanwhile() {
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    seed(&rustpad, "no", "a a");
    let mut session = Session::start(&rustpad, &[]);
    let asked = session.call(
        "replace_in_document",
        replace_all("no", "a", "x"),
        json!({}),
    );
    seed(&rustpad, "no", "a a a");
    let declined = session.call(
        "replace_in_document",
        replace_all("no", "a", "x"),
        json!({"requestState": asked["requestState"], "inputResponses": {"confirm": {"action": "decline"}}}),
    );
    assert_eq!(declined["isError"], true, "{declined}");
    assert!(text(&declined).contains("declined"), "{declined}");
    assert_eq!(rustpad.text("no"), "a a a");
}
