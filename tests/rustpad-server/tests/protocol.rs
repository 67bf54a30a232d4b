//! Wire-protocol tests against an embedded server, using a plain tokio-tungstenite client.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use operational_transform::OperationSeq;
use rustpad_test_server::protocol::{ClientMsg, CursorData, ServerMsg, UserInfo, UserOperation};
use rustpad_test_server::typist::{Typist, TypistOptions};
use rustpad_test_server::{MAX_DOCUMENT_CHARS, Seed, ServerOptions, TestServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, connect_async};

const WAIT: Duration = Duration::from_secs(5);

struct Conn {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl Conn {
    async fn open(server: &TestServer, pad: &str) -> Self {
        let (ws, _) = connect_async(server.socket_url(pad))
            .await
            .expect("connect");
        Self { ws }
    }

    async fn recv(&mut self) -> ServerMsg {
        loop {
            let frame = tokio::time::timeout(WAIT, self.ws.next())
                .await
                .expect("timed out waiting for a message")
                .expect("connection ended")
                .expect("websocket error");
            if let Message::Text(text) = frame {
                return serde_json::from_str(&text)
                    .unwrap_or_else(|e| panic!("bad server message {text}: {e}"));
            }
        }
    }

    async fn recv_raw(&mut self) -> Message {
        tokio::time::timeout(WAIT, self.ws.next())
            .await
            .expect("timed out waiting for a frame")
            .expect("connection ended")
            .expect("websocket error")
    }

    async fn send(&mut self, msg: &ClientMsg) {
        self.ws
            .send(Message::text(msg.to_json()))
            .await
            .expect("send");
    }

    async fn identity(&mut self) -> u64 {
        match self.recv().await {
            ServerMsg::Identity(id) => id,
            other => panic!("expected Identity, got {other:?}"),
        }
    }

    /// Sends ClientInfo and returns everything before its echo: the complete snapshot.
    async fn barrier(&mut self, me: u64, name: &str) -> Vec<ServerMsg> {
        self.send(&client_info(name)).await;
        let mut seen = Vec::new();
        loop {
            match self.recv().await {
                ServerMsg::UserInfo { id, info: Some(_) } if id == me => return seen,
                msg => seen.push(msg),
            }
        }
    }

    async fn edit(&mut self, revision: usize, operation: OperationSeq) {
        self.send(&ClientMsg::Edit {
            revision,
            operation,
        })
        .await;
    }

    /// Reads until the server drops the connection, asserting it never sent a close frame.
    async fn expect_dropped(mut self) {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.ws.next()).await {
                Err(_) => panic!("the connection was not dropped"),
                Ok(None | Some(Err(_))) => return,
                Ok(Some(Ok(Message::Close(frame)))) => {
                    panic!("expected a drop without a close frame, got {frame:?}")
                }
                Ok(Some(Ok(_))) => {}
            }
        }
    }
}

fn client_info(name: &str) -> ClientMsg {
    ClientMsg::ClientInfo(UserInfo {
        name: name.into(),
        hue: 42,
    })
}

fn op(json: &str) -> OperationSeq {
    serde_json::from_str(json).expect("valid operation")
}

fn insert(s: &str) -> OperationSeq {
    let mut o = OperationSeq::default();
    o.insert(s);
    o
}

async fn start() -> TestServer {
    TestServer::start(ServerOptions::default())
        .await
        .expect("server starts")
}

/// A bare HTTP/1.1 request; returns status, head and body.
async fn http(addr: SocketAddr, method: &str, path: &str, body: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).await.expect("tcp connect");
    let request = format!(
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let response = String::from_utf8(response).expect("utf-8 response");
    let (head, body) = response.split_once("\r\n\r\n").expect("a full response");
    let status = head[9..12].parse().expect("a status code");
    (status, head.to_owned(), body.to_owned())
}

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

#[tokio::test]
async fn seeding_builds_long_histories_quickly() {
    let server = start().await;
    let addr = server.addr();
    let started = Instant::now();
    let (status, _, body) = http(
        addr,
        "POST",
        "/_test/seed/long",
        r#"{"text": "ab🎉", "ops": 100000, "char": "x", "language": "go"}"#,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let reply: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        reply,
        serde_json::json!({"revision": 100001, "length": 100003})
    );

    let mut a = Conn::open(&server, "long").await;
    // New ids start past the seeded ones, so no entry looks like this connection's own.
    assert_eq!(a.identity().await, 100000);
    let ServerMsg::History { start, operations } = a.recv().await else {
        panic!("expected History")
    };
    assert_eq!((start, operations.len()), (0, 100001));
    assert_eq!(operations[0].id, u64::MAX);
    assert_eq!(operations[1].id, 0);
    assert_eq!(
        serde_json::to_string(&operations[100000].operation).unwrap(),
        r#"[100002,"x"]"#
    );
    assert_eq!(a.recv().await, ServerMsg::Language("go".into()));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );

    let (status, _, _) = http(addr, "POST", "/_test/seed/long", r#"{"txt": "typo"}"#).await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn delay_snapshot_keeps_the_order_and_the_barrier() {
    let server = start().await;
    server
        .seed(
            "slow",
            &Seed {
                text: Some("abc".into()),
                language: Some("c".into()),
                ..Seed::default()
            },
        )
        .unwrap();
    let (status, _, body) = http(
        server.addr(),
        "PUT",
        "/_test/mode/slow",
        "delay-snapshot:300\n",
    )
    .await;
    assert_eq!((status, body.as_str()), (200, "delay-snapshot:300"));

    let started = Instant::now();
    let mut a = Conn::open(&server, "slow").await;
    a.send(&client_info("eager")).await;
    let ServerMsg::Identity(me) = a.recv().await else {
        panic!("Identity must come first")
    };
    assert!(started.elapsed() >= Duration::from_millis(290));
    assert!(matches!(
        a.recv().await,
        ServerMsg::History { start: 0, .. }
    ));
    assert_eq!(a.recv().await, ServerMsg::Language("c".into()));
    assert!(matches!(a.recv().await, ServerMsg::UserInfo { id, .. } if id == me));

    let (_, _, log) = http(server.addr(), "GET", "/_test/log/slow", "").await;
    let log: Vec<String> = serde_json::from_str(&log).unwrap();
    assert_eq!(log, vec![client_info("eager").to_json()]);
}

#[tokio::test]
async fn close_on_edit_drops_without_applying() {
    let server = start().await;
    server.set_mode("closing", "close-on-edit").unwrap();
    let mut a = Conn::open(&server, "closing").await;
    let me = a.identity().await;
    a.barrier(me, "a").await;
    a.edit(0, insert("lost")).await;
    a.expect_dropped().await;
    assert_eq!(server.text("closing"), "");
    let log = server.received("closing");
    assert_eq!(log.len(), 2);
    assert!(log[1].starts_with(r#"{"Edit""#), "{log:?}");

    // Clearing the mode makes the pad faithful again.
    server.set_mode("closing", "").unwrap();
    let mut b = Conn::open(&server, "closing").await;
    let me = b.identity().await;
    b.edit(0, insert("kept")).await;
    assert!(
        matches!(b.recv().await, ServerMsg::History { operations, .. } if operations[0].id == me)
    );
}

#[tokio::test]
async fn malformed_and_raw_modes_send_what_they_promise() {
    let server = start().await;

    server.set_mode("float", "malformed-float").unwrap();
    let mut a = Conn::open(&server, "float").await;
    a.identity().await;
    let frame = a.recv_raw().await;
    assert_eq!(
        frame.to_text().unwrap(),
        format!(
            r#"{{"History":{{"start":0,"operations":[{{"id":{},"operation":[1.0]}}]}}}}"#,
            u64::MAX
        )
    );

    server.set_mode("ids", "huge-ids").unwrap();
    let mut b = Conn::open(&server, "ids").await;
    let me = b.identity().await;
    assert_eq!(me, u64::MAX - 1);
    b.edit(0, insert("x")).await;
    assert!(
        matches!(b.recv().await, ServerMsg::History { operations, .. } if operations[0].id == me)
    );

    // The raw header claims 64 MiB with the 8-byte length form.
    server.set_mode("huge", "oversized-frame").unwrap();
    let mut raw = TcpStream::connect(server.addr()).await.unwrap();
    raw.write_all(
        b"GET /api/socket/huge HTTP/1.1\r\nhost: x\r\nconnection: Upgrade\r\nupgrade: websocket\r\n\
          sec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
    )
    .await
    .unwrap();
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        let n = raw.read(&mut buf).await.unwrap();
        assert!(n > 0);
        received.extend_from_slice(&buf[..n]);
        if let Some(i) = received.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&received[..head_end]).to_string();
    assert!(head.contains("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), "{head}");
    while received.len() < head_end + 2 + 14 + 10 {
        let n = raw.read(&mut buf).await.unwrap();
        received.extend_from_slice(&buf[..n]);
    }
    let frames = &received[head_end..];
    assert_eq!(&frames[..2], &[0x81, 14]);
    assert_eq!(&frames[2..16], br#"{"Identity":0}"#);
    assert_eq!(&frames[16..26], &[0x81, 127, 0, 0, 0, 0, 4, 0, 0, 0]);
}

#[tokio::test]
async fn typists_converge_with_each_other() {
    let server = start().await;
    server
        .seed(
            "typing",
            &Seed {
                text: Some("start".into()),
                ..Seed::default()
            },
        )
        .unwrap();
    let options = |seed| TypistOptions {
        seed,
        count: 40,
        delay: Duration::from_millis(2),
        // Generous, so a busy machine pausing a typist cannot end it before the other is done.
        settle: Duration::from_millis(600),
        ..TypistOptions::new(server.socket_url("typing"))
    };
    let (one, two) = tokio::join!(Typist::new(options(1)).run(), Typist::new(options(2)).run());
    let (one, two) = (one.expect("typist 1"), two.expect("typist 2"));
    assert_eq!(one.typed.len(), 40);
    assert_eq!(two.typed.len(), 40);
    let text = server.text("typing");
    assert_eq!(one.final_text, text);
    assert_eq!(two.final_text, text);
    let typed_chars: usize = one
        .typed
        .iter()
        .chain(&two.typed)
        .map(|s| s.chars().count())
        .sum();
    assert_eq!(text.chars().count(), 5 + typed_chars);
    assert_eq!(one.revision, 81);

    // Typing only at the start leaves the pieces in reverse order before the old text.
    let front = Typist::new(TypistOptions {
        count: 10,
        ..options(3)
    })
    .only_where(|_, position| position == 0)
    .run()
    .await
    .expect("typist 3");
    let expected: String = front
        .typed
        .iter()
        .rev()
        .map(String::as_str)
        .collect::<String>()
        + &text;
    assert_eq!(front.final_text, expected);
}

#[tokio::test]
async fn edit_modes_withhold_or_cut_the_acknowledgement() {
    let server = start().await;

    // no-ack: the edit lands and others see it, the sender never hears back.
    server.set_mode("quiet", "no-ack").unwrap();
    let mut a = Conn::open(&server, "quiet").await;
    let a_id = a.identity().await;
    a.barrier(a_id, "a").await;
    // A connection keeps the mode it found when it connected.
    server.set_mode("quiet", "").unwrap();
    let mut b = Conn::open(&server, "quiet").await;
    let b_id = b.identity().await;
    b.barrier(b_id, "b").await;
    a.recv().await; // b's UserInfo
    a.edit(0, insert("x")).await;
    assert!(
        matches!(b.recv().await, ServerMsg::History { operations, .. } if operations[0].id == a_id)
    );
    b.edit(1, op(r#"[1,"y"]"#)).await;
    b.recv().await;
    let nothing = tokio::time::timeout(Duration::from_millis(150), a.ws.next()).await;
    assert!(nothing.is_err(), "no-ack sent {nothing:?}");
    assert_eq!(server.text("quiet"), "xy");

    // apply-then-close: applied, but the sender is gone before any echo.
    server.set_mode("cut", "apply-then-close").unwrap();
    let mut c = Conn::open(&server, "cut").await;
    let c_id = c.identity().await;
    c.barrier(c_id, "c").await;
    c.edit(0, insert("kept")).await;
    let mut echoed = false;
    loop {
        match tokio::time::timeout(WAIT, c.ws.next()).await.expect("drop") {
            Some(Ok(Message::Text(t))) => echoed |= t.contains("History"),
            Some(Ok(Message::Close(_))) => panic!("close frame"),
            Some(Ok(_)) => {}
            None | Some(Err(_)) => break,
        }
    }
    assert!(!echoed);
    assert_eq!(server.text("cut"), "kept");
}

#[tokio::test]
async fn snapshot_modes_bend_the_initial_send() {
    let server = start().await;
    server
        .seed(
            "snap",
            &Seed {
                text: Some("0123456789".into()),
                ..Seed::default()
            },
        )
        .unwrap();

    server.set_mode("snap", "delay-history:200").unwrap();
    let started = Instant::now();
    let mut a = Conn::open(&server, "snap").await;
    a.identity().await;
    assert!(started.elapsed() < Duration::from_millis(150));
    assert!(matches!(a.recv().await, ServerMsg::History { .. }));
    assert!(started.elapsed() >= Duration::from_millis(190));

    for (mode, frame) in [
        ("null-frame", Message::text("null")),
        ("array-frame", Message::text("[1,2]")),
        ("binary-frame", Message::binary(vec![0u8, 1, 2, 0xff])),
    ] {
        server.set_mode("snap", mode).unwrap();
        let mut c = Conn::open(&server, "snap").await;
        c.identity().await;
        assert_eq!(c.recv_raw().await, frame, "{mode}");
        assert!(
            matches!(c.recv().await, ServerMsg::History { .. }),
            "{mode}"
        );
    }

    server.set_mode("snap", "many-users:50").unwrap();
    let mut c = Conn::open(&server, "snap").await;
    let me = c.identity().await;
    let users = c
        .barrier(me, "c")
        .await
        .into_iter()
        .filter(|m| matches!(m, ServerMsg::UserInfo { .. }))
        .count();
    assert_eq!(users, 50);

    server.set_mode("snap", "hostile-names").unwrap();
    let mut c = Conn::open(&server, "snap").await;
    let me = c.identity().await;
    let seen = c.barrier(me, "c").await;
    assert!(seen.iter().any(
        |m| matches!(m, ServerMsg::Language(l) if l.contains('\u{1b}') && l.contains('\u{202e}'))
    ));
    assert!(seen.iter().any(|m| matches!(m, ServerMsg::UserInfo { info: Some(i), .. } if i.name.chars().count() > 10_000)));

    for (mode, history) in [
        ("history-gap", r#"{"start":3,"#),
        ("malformed-zero", r#"["a",0]"#),
        ("malformed-retain-past-end", r#""operation":[5]"#),
        ("malformed-not-covering", r#"["ab"]},{"#),
        ("non-integer-id", r#"{"id":1.5,"#),
    ] {
        server.set_mode("snap", mode).unwrap();
        let mut c = Conn::open(&server, "snap").await;
        c.identity().await;
        let frame = c.recv_raw().await;
        let text = frame.to_text().unwrap();
        assert!(
            text.starts_with(r#"{"History":"#) && text.contains(history),
            "{mode}: {text}"
        );
    }

    server.set_mode("snap", "huge-history").unwrap();
    let mut c = Conn::open(&server, "snap").await;
    c.identity().await;
    let ServerMsg::History { operations, .. } = c.recv().await else {
        panic!("expected History")
    };
    assert_eq!(operations[0].operation.target_len(), MAX_DOCUMENT_CHARS + 1);
}

#[tokio::test]
async fn silent_and_broken_modes() {
    let server = start().await;

    server.set_mode("mute", "never-answer").unwrap();
    let mut a = Conn::open(&server, "mute").await;
    let nothing = tokio::time::timeout(Duration::from_millis(150), a.ws.next()).await;
    assert!(nothing.is_err());

    server.set_mode("mute", "silent-after-identity").unwrap();
    let mut b = Conn::open(&server, "mute").await;
    let me = b.identity().await;
    b.send(&client_info("b")).await;
    let nothing = tokio::time::timeout(Duration::from_millis(150), b.ws.next()).await;
    assert!(nothing.is_err());
    assert_eq!(me, 1);
    assert_eq!(server.received("mute"), vec![client_info("b").to_json()]);

    server.set_mode("mute", "flood").unwrap();
    let mut c = Conn::open(&server, "mute").await;
    let me = c.identity().await;
    c.send(&client_info("c")).await;
    let (mut cursors, mut own_info) = (0, false);
    while cursors < 1000 || !own_info {
        match c.recv().await {
            ServerMsg::UserCursor { .. } => cursors += 1,
            ServerMsg::UserInfo { id, .. } => own_info |= id == me,
            _ => {}
        }
    }

    server
        .seed(
            "half",
            &Seed {
                text: Some("a snapshot cut in half".into()),
                ..Seed::default()
            },
        )
        .unwrap();
    server.set_mode("half", "close-mid-snapshot").unwrap();
    let mut d = Conn::open(&server, "half").await;
    d.identity().await;
    d.expect_dropped().await;
}
