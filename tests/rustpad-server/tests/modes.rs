//! The test Rustpad's modes that bend the protocol on purpose, as the
//! hostile-upstream tests use them: seeded long histories, a delayed
//! snapshot, dropped, withheld or cut acknowledgements, malformed and raw
//! frames, silence, and typists that edit beside a client.

mod common;

use std::time::{Duration, Instant};

use common::*;
use futures_util::StreamExt;
use rustpad_test_server::protocol::ServerMsg;
use rustpad_test_server::typist::{Typist, TypistOptions};
use rustpad_test_server::{MAX_DOCUMENT_CHARS, Seed};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

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
