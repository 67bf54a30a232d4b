//! A plain tokio-tungstenite client of the test Rustpad, embedded in the
//! test: connect, read and send the wire messages, and the HTTP routes.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use operational_transform::OperationSeq;
use rustpad_test_server::protocol::{ClientMsg, ServerMsg, UserInfo};
use rustpad_test_server::{ServerOptions, TestServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, connect_async};

pub const WAIT: Duration = Duration::from_secs(5);

pub struct Conn {
    pub ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl Conn {
    pub async fn open(server: &TestServer, pad: &str) -> Self {
        let (ws, _) = connect_async(server.socket_url(pad))
            .await
            .expect("connect");
        Self { ws }
    }

    pub async fn recv(&mut self) -> ServerMsg {
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

    pub async fn recv_raw(&mut self) -> Message {
        tokio::time::timeout(WAIT, self.ws.next())
            .await
            .expect("timed out waiting for a frame")
            .expect("connection ended")
            .expect("websocket error")
    }

    pub async fn send(&mut self, msg: &ClientMsg) {
        self.ws
            .send(Message::text(msg.to_json()))
            .await
            .expect("send");
    }

    pub async fn identity(&mut self) -> u64 {
        match self.recv().await {
            ServerMsg::Identity(id) => id,
            other => panic!("expected Identity, got {other:?}"),
        }
    }

    /// Sends ClientInfo and returns everything before its echo: the complete snapshot.
    pub async fn barrier(&mut self, me: u64, name: &str) -> Vec<ServerMsg> {
        self.send(&client_info(name)).await;
        let mut seen = Vec::new();
        loop {
            match self.recv().await {
                ServerMsg::UserInfo { id, info: Some(_) } if id == me => return seen,
                msg => seen.push(msg),
            }
        }
    }

    pub async fn edit(&mut self, revision: usize, operation: OperationSeq) {
        self.send(&ClientMsg::Edit {
            revision,
            operation,
        })
        .await;
    }

    /// Reads until the server drops the connection, asserting it never sent a close frame.
    pub async fn expect_dropped(mut self) {
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

pub fn client_info(name: &str) -> ClientMsg {
    ClientMsg::ClientInfo(UserInfo {
        name: name.into(),
        hue: 42,
    })
}

pub fn op(json: &str) -> OperationSeq {
    serde_json::from_str(json).expect("valid operation")
}

pub fn insert(s: &str) -> OperationSeq {
    let mut o = OperationSeq::default();
    o.insert(s);
    o
}

pub async fn start() -> TestServer {
    TestServer::start(ServerOptions::default())
        .await
        .expect("server starts")
}

/// A bare HTTP/1.1 request; returns status, head and body.
pub async fn http(addr: SocketAddr, method: &str, path: &str, body: &str) -> (u16, String, String) {
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
