//! The test Rustpad's wire protocol as upstream speaks it, driven by a plain
//! tokio-tungstenite client: the initial sequence, echoes and broadcasts,
//! transforming stale edits, the size limit in code points, the HTTP routes.
//! The modes that bend it on purpose are tested in `modes.rs`.

mod common;

use common::*;
use futures_util::SinkExt;
use operational_transform::OperationSeq;
use rustpad_test_server::protocol::{ClientMsg, CursorData, ServerMsg, UserInfo, UserOperation};
use rustpad_test_server::{MAX_DOCUMENT_CHARS, Seed};
use tokio_tungstenite::tungstenite::Message;

#[tokio::test]
async fn initial_sequence_comes_in_upstream_order() {
    let server = start().await;
    server
        .seed(
            "pad",
            &Seed {
                text: Some("hello".into()),
                language: Some("rust".into()),
                ..Seed::default()
            },
        )
        .unwrap();

    let mut alice = Conn::open(&server, "pad").await;
    let alice_id = alice.identity().await;
    assert_eq!(alice_id, 0);
    let snapshot = alice.barrier(alice_id, "alice").await;
    let history = ServerMsg::History {
        start: 0,
        operations: vec![UserOperation {
            id: u64::MAX,
            operation: insert("hello"),
        }],
    };
    assert_eq!(
        snapshot,
        vec![history.clone(), ServerMsg::Language("rust".into())]
    );
    let cursors = CursorData {
        cursors: vec![2],
        selections: vec![(1, 3)],
    };
    alice.send(&ClientMsg::CursorData(cursors.clone())).await;
    assert_eq!(
        alice.recv().await,
        ServerMsg::UserCursor {
            id: alice_id,
            data: cursors.clone()
        }
    );

    // Sending before reading anything: the reply still starts with the full initial send.
    let mut carol = Conn::open(&server, "pad").await;
    carol.send(&client_info("carol")).await;
    let expected = vec![
        ServerMsg::Identity(1),
        history,
        ServerMsg::Language("rust".into()),
        ServerMsg::UserInfo {
            id: alice_id,
            info: Some(UserInfo {
                name: "alice".into(),
                hue: 42,
            }),
        },
        ServerMsg::UserCursor {
            id: alice_id,
            data: cursors,
        },
        ServerMsg::UserInfo {
            id: 1,
            info: Some(UserInfo {
                name: "carol".into(),
                hue: 42,
            }),
        },
    ];
    for want in expected {
        assert_eq!(carol.recv().await, want);
    }

    // An empty pad sends no History at all.
    let mut fresh = Conn::open(&server, "empty").await;
    let id = fresh.identity().await;
    assert_eq!(fresh.barrier(id, "f").await, vec![]);
}

#[tokio::test]
async fn edits_are_echoed_to_the_sender_and_broadcast() {
    let server = start().await;
    let mut a = Conn::open(&server, "echo").await;
    let a_id = a.identity().await;
    a.barrier(a_id, "a").await;
    let mut b = Conn::open(&server, "echo").await;
    let b_id = b.identity().await;
    b.barrier(b_id, "b").await;
    assert_eq!(
        a.recv().await,
        ServerMsg::UserInfo {
            id: b_id,
            info: Some(UserInfo {
                name: "b".into(),
                hue: 42
            })
        }
    );

    a.edit(0, insert("hello")).await;
    let echo = ServerMsg::History {
        start: 0,
        operations: vec![UserOperation {
            id: a_id,
            operation: insert("hello"),
        }],
    };
    assert_eq!(a.recv().await, echo);
    assert_eq!(b.recv().await, echo);
    // Delete-then-insert comes back normalised to insert-then-delete.
    a.send(&ClientMsg::Edit {
        revision: 1,
        operation: op(r#"[1,-1,"X",3]"#),
    })
    .await;
    let ServerMsg::History { start, operations } = a.recv().await else {
        panic!("expected History")
    };
    assert_eq!(start, 1);
    assert_eq!(
        serde_json::to_string(&operations[0].operation).unwrap(),
        r#"[1,"X",-1,3]"#
    );
    assert_eq!(server.text("echo"), "hXllo");

    // An edit that changes nothing still takes a revision.
    a.edit(2, op("[5]")).await;
    let ServerMsg::History { start, operations } = a.recv().await else {
        panic!("expected History")
    };
    assert_eq!((start, operations[0].operation.clone()), (2, op("[5]")));

    // Leaving is announced to the others.
    drop(b);
    assert_eq!(
        a.recv().await,
        ServerMsg::UserInfo {
            id: b_id,
            info: None
        }
    );
}

#[tokio::test]
async fn a_stale_edit_is_transformed_and_the_later_insert_goes_first() {
    let server = start().await;
    server
        .seed(
            "tie",
            &Seed {
                text: Some("hello".into()),
                ..Seed::default()
            },
        )
        .unwrap();
    let mut a = Conn::open(&server, "tie").await;
    let a_id = a.identity().await;
    a.barrier(a_id, "a").await;
    let mut b = Conn::open(&server, "tie").await;
    let b_id = b.identity().await;
    b.barrier(b_id, "b").await;

    a.edit(1, op(r#"["[A]",5]"#)).await;
    a.recv().await;
    // B has not seen A's edit yet and sends against the same revision.
    b.edit(1, op(r#"["[B]",5]"#)).await;
    let ServerMsg::History { start, operations } = b.recv().await else {
        panic!("expected History")
    };
    let mut operations = operations;
    if operations.len() == 1 {
        // The two edits may arrive in separate History messages.
        assert_eq!(start, 1);
        let ServerMsg::History {
            operations: more, ..
        } = b.recv().await
        else {
            panic!("expected History")
        };
        operations.extend(more);
    }
    assert_eq!(operations[0].id, a_id);
    assert_eq!(operations[1].id, b_id);
    assert_eq!(
        serde_json::to_string(&operations[1].operation).unwrap(),
        r#"["[B]",8]"#
    );
    assert_eq!(server.text("tie"), "[B][A]hello");
}

#[tokio::test]
async fn a_revision_from_the_future_drops_the_connection_without_a_close_frame() {
    let server = start().await;
    let mut a = Conn::open(&server, "ahead").await;
    let a_id = a.identity().await;
    a.barrier(a_id, "a").await;
    let mut b = Conn::open(&server, "ahead").await;
    let b_id = b.identity().await;
    b.barrier(b_id, "b").await;

    b.edit(5, insert("x")).await;
    b.expect_dropped().await;
    loop {
        match a.recv().await {
            ServerMsg::UserInfo { id, info: None } if id == b_id => break,
            ServerMsg::UserInfo { .. } => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(server.revision("ahead"), Some(0));

    // Undecodable frames end the connection the same way, even for users without ClientInfo.
    let mut c = Conn::open(&server, "ahead").await;
    let c_id = c.identity().await;
    c.ws.send(Message::text(r#"{"SetLanguage": 3}"#))
        .await
        .unwrap();
    c.expect_dropped().await;
    assert_eq!(
        a.recv().await,
        ServerMsg::UserInfo {
            id: c_id,
            info: None
        }
    );
}

#[tokio::test]
async fn the_size_limit_is_counted_in_code_points() {
    let server = start().await;
    let mut a = Conn::open(&server, "big").await;
    let a_id = a.identity().await;
    a.barrier(a_id, "a").await;
    // Two-byte characters: the limit is about code points, not bytes.
    a.edit(0, insert(&"é".repeat(MAX_DOCUMENT_CHARS))).await;
    assert!(matches!(
        a.recv().await,
        ServerMsg::History { start: 0, .. }
    ));

    let mut over = OperationSeq::default();
    over.retain(MAX_DOCUMENT_CHARS as u64);
    over.insert("b");
    a.edit(1, over).await;
    a.expect_dropped().await;
    assert_eq!(server.revision("big"), Some(1));
}

#[tokio::test]
async fn unicode_lengths_are_code_points() {
    let server = start().await;
    let mut a = Conn::open(&server, "uni").await;
    let a_id = a.identity().await;
    a.barrier(a_id, "a").await;
    let text = "h🎉e🎉l👨‍👨‍👦‍👦lo";
    a.edit(0, insert(text)).await;
    a.recv().await;
    assert_eq!(insert(text).target_len(), 14);
    a.edit(1, op("[-14]")).await;
    assert!(matches!(
        a.recv().await,
        ServerMsg::History { start: 1, .. }
    ));
    assert_eq!(server.text("uni"), "");
}

#[tokio::test]
async fn http_routes_behave_like_upstream() {
    let server = start().await;
    let addr = server.addr();

    let (status, head, body) = http(addr, "GET", "/api/text/nobody", "").await;
    assert_eq!((status, body.as_str()), (200, ""));
    assert!(head.contains("content-length: 0"), "{head}");
    assert_eq!(http(addr, "GET", "/api/text/", "").await.0, 404);
    assert_eq!(http(addr, "GET", "/api/text/a/b", "").await.0, 404);
    let (status, _, body) = http(addr, "GET", "/api/socket/x", "").await;
    assert_eq!(
        (status, body.as_str()),
        (400, "Invalid request header \"connection\"")
    );

    let stats = |body: String| -> serde_json::Value { serde_json::from_str(&body).unwrap() };
    let (_, _, body) = http(addr, "GET", "/api/stats/", "").await;
    assert_eq!(stats(body)["num_documents"], 0);
    let mut a = Conn::open(&server, "pct%20id").await;
    a.identity().await;
    a.edit(0, insert("spaced")).await;
    a.recv().await;
    let (_, _, body) = http(addr, "POST", "/api/stats", "").await;
    assert_eq!(stats(body)["num_documents"], 1);
    // The id is the raw segment, never percent-decoded; the query string is ignored.
    let (_, _, body) = http(addr, "DELETE", "/api/text/pct%20id?x=1", "").await;
    assert_eq!(body, "spaced");
    assert_eq!(http(addr, "GET", "/api/text/pct id", "").await.0, 400);
}
