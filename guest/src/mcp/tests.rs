//! The dispatch, both eras, driven with messages as a client sends them.

use serde_json::{Value, json};

use super::*;
use rustpad_mcp_rules::codes::{
    HEADER_MISMATCH, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, UNSUPPORTED_VERSION,
};
use rustpad_mcp_rules::era::META_CLIENT_INFO;
use rustpad_mcp_rules::headers::StandardHeaders;

fn config() -> Config {
    Config::from_lookup(|name| (name == "RUSTPAD_SEAL_KEY").then(|| "k".repeat(32))).unwrap()
}

fn handle(message: &str, session: Option<&str>) -> Reply {
    handle_with(&config(), message, None, session)
}

fn reply(message: Value, session: Option<&str>) -> (Value, Option<String>) {
    let reply = handle(&message.to_string(), session);
    let response = reply
        .response
        .map(|r| serde_json::from_str(&r).unwrap())
        .unwrap_or(Value::Null);
    (response, reply.session)
}

fn modern_meta() -> Value {
    json!({ META_VERSION: MODERN, META_CAPABILITIES: {} })
}

#[test]
fn initialize_negotiates_and_hands_over_a_session() {
    let (response, session) = reply(
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}}}}),
        None,
    );
    assert_eq!(response["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(response["result"]["serverInfo"]["name"], "rustpad-mcp");
    assert!(response["result"].get("resultType").is_none());
    let session: Session = serde_json::from_str(&session.unwrap()).unwrap();
    assert!(session.capabilities.get("elicitation").is_some());
    // Only what the server consults is kept, however much the client declared.
    let (_, session) = reply(
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"x":"y".repeat(1000)},"elicitation":{"url":{}}}}}),
        None,
    );
    assert_eq!(
        session.unwrap(),
        r#"{"protocolVersion":"2025-11-25","capabilities":{}}"#
    );
    let (response, _) = reply(
        json!({"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"1999-01-01"}}),
        None,
    );
    assert_eq!(response["result"]["protocolVersion"], "2025-11-25");
}

#[test]
fn prompts_are_empty_and_pads_are_a_resource_template_in_both_eras() {
    let (_, session) = reply(
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}),
        None,
    );
    let session = session.unwrap();
    for meta in [None, Some(modern_meta())] {
        let request = |method: &str, params: Value| {
            let mut params = params;
            if let Some(meta) = &meta {
                params["_meta"] = meta.clone();
            }
            reply(
                json!({"jsonrpc":"2.0","id":1,"method":method,"params":params}),
                Some(&session),
            )
            .0
        };
        let modern = meta.is_some();
        // (resources/list asks the host what the session used: the suites
        // test it, tests/python/test_resources.py.)
        for (method, key, listed) in [
            ("prompts/list", "prompts", 0),
            ("resources/templates/list", "resourceTemplates", 1),
        ] {
            let result = &request(method, json!({}))["result"];
            assert_eq!(
                result[key].as_array().map(Vec::len),
                Some(listed),
                "{method}"
            );
            assert_eq!(result.get("ttlMs").is_some(), modern, "{method}");
            let paged = request(method, json!({"cursor": "x"}));
            assert_eq!(paged["error"]["code"], INVALID_PARAMS, "{method}");
        }
        let templates = request("resources/templates/list", json!({}));
        assert_eq!(
            templates["result"]["resourceTemplates"][0]["uriTemplate"],
            "rustpad://{id}"
        );
        // No such resource: -32002 in 2025-11-25, invalid params in 2026-07-28, with the URI.
        let not_found = if modern { INVALID_PARAMS } else { -32002 };
        for uri in ["rustpad://..", "file:///etc/passwd", "rustpad://a/b"] {
            let read = request("resources/read", json!({ "uri": uri }));
            assert_eq!(read["error"]["code"], not_found, "{uri}");
            assert_eq!(read["error"]["data"]["uri"], uri);
        }
        let read = request("resources/read", json!({}));
        assert_eq!(read["error"]["code"], INVALID_PARAMS);
        let prompt = request("prompts/get", json!({"name": "nope"}));
        assert_eq!(prompt["error"]["code"], INVALID_PARAMS);
    }
    // Logging: any level is accepted in 2025-11-25 (and nothing is ever logged).
    let set = |level: &str| {
        reply(
            json!({"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":level}}),
            Some(&session),
        )
        .0
    };
    assert_eq!(set("debug")["result"], json!({}));
    assert_eq!(set("loud")["error"]["code"], INVALID_PARAMS);
}

#[test]
fn legacy_requests_need_initialize_but_ping_does_not() {
    let (response, _) = reply(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}), None);
    assert_eq!(response["error"]["code"], INVALID_REQUEST);
    let (response, _) = reply(json!({"jsonrpc":"2.0","id":"p","method":"ping"}), None);
    assert_eq!(response, json!({"jsonrpc":"2.0","id":"p","result":{}}));
}

#[test]
fn modern_discover_and_list_carry_cache_fields() {
    let (response, _) = reply(
        json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta": modern_meta()}}),
        None,
    );
    let result = &response["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["supportedVersions"][0], MODERN);
    assert!(result["ttlMs"].is_u64() && result["cacheScope"] == "public");
    let (response, _) = reply(
        json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta": modern_meta()}}),
        None,
    );
    assert!(response["result"]["tools"].as_array().unwrap().len() >= 3);
    assert_eq!(
        response["result"]["_meta"][META_SERVER_INFO]["name"],
        "rustpad-mcp"
    );
}

#[test]
fn modern_errors() {
    let (response, _) = reply(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{META_VERSION:"2030-01-01",META_CAPABILITIES:{}}}}),
        None,
    );
    assert_eq!(response["error"]["code"], UNSUPPORTED_VERSION);
    assert_eq!(response["error"]["data"]["requested"], "2030-01-01");
    let (response, _) = reply(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{META_VERSION:MODERN}}}),
        None,
    );
    assert_eq!(response["error"]["code"], INVALID_PARAMS);
    // Missing fields are named before the version is judged.
    for params in [
        json!({}),
        json!({"_meta": {META_CAPABILITIES: {}}}),
        json!({"_meta": {META_VERSION: 2026, META_CAPABILITIES: {}}}),
        json!({"_meta": {META_VERSION: MODERN, META_CLIENT_INFO: {"name": "c", "version": "1"}}}),
    ] {
        let (response, _) = reply(
            json!({"jsonrpc":"2.0","id":7,"method":"server/discover","params":params}),
            None,
        );
        assert_eq!(response["error"]["code"], INVALID_PARAMS, "{params}");
        assert_eq!(response["id"], 7);
    }
    // A mark whose value is null still says 2026-07-28 (the era's one rule,
    // which the host's router follows too): the request is told what it
    // lacks, not served in a session it never opened.
    for meta in [
        json!({META_VERSION: null, META_CAPABILITIES: {}}),
        json!({META_VERSION: MODERN, META_CAPABILITIES: null}),
    ] {
        let session = r#"{"protocolVersion":"2025-11-25","capabilities":{}}"#;
        let (response, _) = reply(
            json!({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta": meta}}),
            Some(session),
        );
        assert_eq!(response["error"]["code"], INVALID_PARAMS, "{meta}");
        assert!(
            response["error"]["message"]
                .as_str()
                .unwrap()
                .contains("_meta must carry"),
            "{response}"
        );
    }
    // A mark given twice is refused, as the router joins it to no session.
    let twice = format!(
        r#"{{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{{"_meta":{{"{META_VERSION}":null,"{META_VERSION}":"{MODERN}","{META_CAPABILITIES}":{{}}}}}}}}"#
    );
    let response: Value = serde_json::from_str(&handle(&twice, None).response.unwrap()).unwrap();
    assert_eq!(response["error"]["code"], INVALID_REQUEST);
    // Methods of the legacy era do not exist in 2026-07-28.
    for method in [
        "ping",
        "initialize",
        "logging/setLevel",
        "resources/subscribe",
    ] {
        let (response, session) = reply(
            json!({"jsonrpc":"2.0","id":1,"method":method,"params":{"_meta": modern_meta(), "protocolVersion": LEGACY[0], "capabilities": {}}}),
            None,
        );
        assert_eq!(response["error"]["code"], METHOD_NOT_FOUND, "{method}");
        assert_eq!(session, None);
    }
    let (response, _) = reply(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","_meta": modern_meta()}}),
        None,
    );
    assert_eq!(response["error"]["code"], INVALID_PARAMS);
}

#[test]
fn lone_surrogates_are_input_errors_not_parse_failures() {
    let (response, _) = reply(
        serde_json::from_str::<Value>(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#).unwrap(),
        None,
    );
    assert!(response["result"].is_object());
    let message = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_stats","arguments":{"x":"\ud800"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let response: Value = serde_json::from_str(&handle(message, None).response.unwrap()).unwrap();
    assert_eq!(response["id"], 5);
    assert_eq!(response["result"]["isError"], true);
    assert!(
        response["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("unpaired surrogate")
    );
}

#[test]
fn malformed_messages() {
    let reply_to = |text: &str| -> Value {
        serde_json::from_str(&handle(text, None).response.unwrap()).unwrap()
    };
    assert_eq!(reply_to("{not json")["error"]["code"], PARSE_ERROR);
    assert_eq!(reply_to("[]")["error"]["code"], INVALID_REQUEST);
    assert_eq!(
        reply_to(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#)["error"]["code"],
        INVALID_REQUEST
    );
    assert!(
        handle(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            None
        )
        .response
        .is_none()
    );
    assert!(
        handle(r#"{"jsonrpc":"2.0","id":"x","result":{}}"#, None)
            .response
            .is_none()
    );
}

#[test]
fn a_request_without_an_id_is_never_carried_out() {
    for message in [
        r#"{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#,
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"get_stats","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        r#"{"jsonrpc":"2.0","method":"tools/list"}"#,
    ] {
        assert!(handle(message, None).is_silent(), "{message}");
    }
    // A notification is still a notification: nothing to answer, nothing refused.
    let note = handle(
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        None,
    );
    assert!(note.is_silent());
}

#[test]
fn over_http_the_headers_must_agree_with_the_body() {
    let http = |message: Value, headers: StandardHeaders, session: Option<&str>| {
        let reply = handle_with(&config(), &message.to_string(), Some(&headers), session);
        let response: Value = serde_json::from_str(&reply.response.unwrap()).unwrap();
        (response, reply.error.map(ReplyError::code))
    };
    let headers = |version: &str, method: &str| StandardHeaders {
        protocol_version: Some(version.into()),
        method: Some(method.into()),
        name: None,
    };
    let discover = json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta": modern_meta()}});
    let (response, code) = http(discover.clone(), headers(MODERN, "server/discover"), None);
    assert!(
        response["result"]["supportedVersions"].is_array(),
        "{response}"
    );
    assert_eq!(code, None);
    let (response, code) = http(discover, headers(MODERN, "tools/list"), None);
    assert_eq!(code, Some(HEADER_MISMATCH), "{response}");
    assert_eq!(response["id"], 1);
    // In a session, the version header must be the agreed one.
    let session = r#"{"protocolVersion":"2025-11-25","capabilities":{}}"#;
    let list = json!({"jsonrpc":"2.0","id":2,"method":"tools/list"});
    let agreed = StandardHeaders {
        protocol_version: Some("2025-11-25".into()),
        ..StandardHeaders::default()
    };
    assert_eq!(http(list.clone(), agreed, Some(session)).1, None);
    let other = StandardHeaders {
        protocol_version: Some("2025-06-18".into()),
        ..StandardHeaders::default()
    };
    assert_eq!(http(list, other, Some(session)).1, Some(HEADER_MISMATCH));
    // A routed key given twice could be routed one way and served another.
    let doubled = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","method":"tools/call"}"#;
    let reply = handle_with(&config(), doubled, Some(&StandardHeaders::default()), None);
    assert_eq!(reply.error, Some(ReplyError::Code(INVALID_REQUEST)));
    // On stdio there are no headers to check, but the one rule for repeated keys holds.
    let reply = handle_with(&config(), doubled, None, None);
    assert_eq!(reply.error, Some(ReplyError::Code(INVALID_REQUEST)));
}

#[test]
fn a_key_given_twice_anywhere_is_refused_and_in_an_answer_is_not_understood() {
    let call = |arguments: &str, extra: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"get_document","arguments":{arguments}{extra}}}}}"#
        )
    };
    let reply = handle(&call(r#"{"id":"a","id":"b"}"#, ""), None);
    assert_eq!(reply.error, Some(ReplyError::Code(INVALID_REQUEST)));
    assert!(
        reply
            .response
            .unwrap()
            .contains(r#"params.arguments gives \"id\" twice"#)
    );
    // The same key in two objects is no repetition.
    let twice_apart = call(
        r#"{"id":"a"}"#,
        r#","_meta":{"id":"b"},"inputResponses":{"confirm":{"action":"accept"}}"#,
    );
    let apart = handle(&twice_apart, None).response.unwrap_or_default();
    assert!(!apart.contains("twice"), "{apart}");
    // Inside an answer it is read as an answer nobody understood, not refused.
    let ambiguous = call(
        r#"{"id":"a"}"#,
        r#","inputResponses":{"confirm":{"action":"decline","action":"accept"}}"#,
    );
    let request = request::parse(&ambiguous).ok().flatten().unwrap();
    assert!(request.ambiguous_answers);
}
