use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::protocol::Message;

use super::*;
use crate::egress::websocket::tests::held;

fn budget() -> MemoryBudget {
    MemoryBudget::new(64)
}

/// A connection whose server sends `messages`, then reads until the end,
/// and says when it saw the connection close.
async fn sending(messages: Vec<String>) -> (Connection, oneshot::Receiver<()>) {
    let (closed, seen) = oneshot::channel();
    let connection = held(move |mut socket| async move {
        for message in messages {
            if socket.send(Message::text(message)).await.is_err() {
                break;
            }
        }
        while let Some(Ok(message)) = socket.next().await {
            if message.is_close() {
                break;
            }
        }
        let _ = closed.send(());
    })
    .await;
    (connection, seen)
}

/// Waits for the server of a connection given under `key` to see it closed
/// (`why`), and checks the pool no longer hands it out.
async fn let_go(pool: &HeldWrites, key: &str, seen: oneshot::Receiver<()>, within: u64, why: &str) {
    tokio::time::timeout(Duration::from_secs(within), seen)
        .await
        .expect(why)
        .unwrap();
    assert!(pool.take(key).await.is_none());
}

#[tokio::test]
async fn a_kept_connection_comes_back_with_what_came_meanwhile_first() {
    let pool = Arc::new(HeldWrites::default());
    let (connection, _) = sending(vec!["one".into(), "two".into()]).await;
    pool.give("pad".into(), connection, "cursor".into(), &budget());
    // Given time to read both while kept.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut taken = pool.take("pad").await.expect("kept");
    assert_eq!(taken.cursor, "cursor");
    for expected in ["one", "two"] {
        let got = taken.connection.recv(Duration::from_secs(5)).await.unwrap();
        assert_eq!(got.as_deref(), Some(expected));
    }
    assert!(
        pool.take("pad").await.is_none(),
        "taken, it is no longer kept"
    );
    assert!(pool.take("other").await.is_none());
}

#[tokio::test]
async fn no_more_than_the_cap_per_key_is_kept_and_the_rest_are_closed() {
    let pool = Arc::new(HeldWrites::default());
    let mut closed = Vec::new();
    for _ in 0..=PER_KEY {
        let (connection, seen) = sending(Vec::new()).await;
        pool.give("pad".into(), connection, String::new(), &budget());
        closed.push(seen);
    }
    let last = closed.pop().unwrap();
    tokio::time::timeout(Duration::from_secs(5), last)
        .await
        .expect("the one past the cap is closed")
        .unwrap();
    for _ in 0..PER_KEY {
        assert!(pool.take("pad").await.is_some());
    }
    assert!(pool.take("pad").await.is_none());
}

#[tokio::test]
async fn a_connection_is_let_go_after_its_quiet_time_or_when_too_much_comes() {
    let pool = Arc::new(HeldWrites::quiet_for(Duration::from_millis(100)));
    let (connection, seen) = sending(Vec::new()).await;
    pool.give("quiet".into(), connection, String::new(), &budget());
    let_go(&pool, "quiet", seen, 5, "closed once quiet").await;

    let pool = Arc::new(HeldWrites::default());
    let big = "x".repeat(200 << 10);
    let (connection, seen) = sending(vec![big; KEPT_BYTES / (200 << 10) + 1]).await;
    pool.give("busy".into(), connection, String::new(), &budget());
    let_go(
        &pool,
        "busy",
        seen,
        5,
        "closed once it brought more than is kept",
    )
    .await;
}

#[tokio::test]
async fn a_cursor_the_budget_cannot_hold_closes_the_connection() {
    let pool = Arc::new(HeldWrites::default());
    let (connection, seen) = sending(Vec::new()).await;
    let cursor = "x".repeat(2 << 20);
    pool.give("pad".into(), connection, cursor, &MemoryBudget::new(1));
    let_go(&pool, "pad", seen, 5, "closed").await;
}

#[tokio::test]
async fn a_connection_that_ended_is_not_handed_out() {
    let pool = Arc::new(HeldWrites::default());
    let connection = held(|socket| async move { drop(socket) }).await;
    pool.give("pad".into(), connection, String::new(), &budget());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(pool.take("pad").await.is_none());
}

#[tokio::test]
async fn many_empty_messages_add_up_and_let_the_connection_go() {
    let pool = Arc::new(HeldWrites::default());
    let (connection, seen) = sending(vec![String::new(); KEPT_FRAMES + 1]).await;
    pool.give("pad".into(), connection, String::new(), &budget());
    let_go(
        &pool,
        "pad",
        seen,
        10,
        "closed once it brought more than is kept",
    )
    .await;
}
