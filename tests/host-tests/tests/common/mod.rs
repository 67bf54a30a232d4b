//! A raw JSON-RPC driver for the built binary, for what client libraries
//! cannot do on purpose: cancel mid-dialog, send garbage, load the probe
//! component, watch exit codes.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The repository's root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where cargo builds: CARGO_TARGET_DIR when set (as .ci/run does), else target/.
pub fn build_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| repo().join("target"), |dir| repo().join(dir))
}

/// The binary with the `compiler` feature (for `--component`), which `make test-rust` builds
/// before it runs these tests and names in RUSTPAD_MCP_WITH_COMPILER.
pub fn binary() -> PathBuf {
    std::env::var_os("RUSTPAD_MCP_WITH_COMPILER").map_or_else(
        || build_dir().join("release/rustpad-mcp-with-compiler"),
        PathBuf::from,
    )
}

/// The component host/build.rs built and embedded in the binary.
pub fn built_component() -> PathBuf {
    build_dir().join("guest/wasm32-wasip2/wasm/guest.wasm")
}

/// The test-only probe component (built by `make build`).
pub fn probe_component() -> PathBuf {
    repo().join("target/wasm/probe.wasm")
}

/// The compile cache every spawned server shares.
pub fn cache_dir() -> PathBuf {
    repo().join("target/component-cache")
}

/// Where spawned stdio servers keep the user's seal key.
pub fn state_dir() -> PathBuf {
    repo().join("target/rustpad-mcp-test-state")
}

pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    errors: Receiver<String>,
}

fn pipe_lines(reader: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (sender, receiver) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(reader).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    receiver
}

impl Server {
    pub fn start(env: &[(&str, &str)], args: &[&str]) -> Server {
        let mut command = Command::new(binary());
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("RUSTPAD_MCP_CACHE_DIR", cache_dir())
            .env("XDG_STATE_HOME", state_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("the binary starts");
        let lines = pipe_lines(child.stdout.take().unwrap());
        let errors = pipe_lines(child.stderr.take().unwrap());
        Server {
            stdin: child.stdin.take(),
            child,
            lines,
            errors,
        }
    }

    pub fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, message: Value) {
        self.send_line(&message.to_string());
    }

    /// The next message on stdout, or None after `wait`.
    pub fn next(&self, wait: Duration) -> Option<Value> {
        let line = self.next_raw(wait)?;
        Some(serde_json::from_str(&line).expect("stdout carries only JSON-RPC"))
    }

    /// The next raw line on stdout (not parsed), or None after `wait`.
    /// `notifications/resources/list_changed` is passed over: it follows the
    /// first call that uses a pad, at a moment of its own, and these tests
    /// are about other things (tests/python/test_recent_pads.py has it).
    pub fn next_raw(&self, wait: Duration) -> Option<String> {
        let until = Instant::now() + wait;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return None,
            };
            let listed = serde_json::from_str::<Value>(&line)
                .is_ok_and(|message| message["method"] == "notifications/resources/list_changed");
            if !listed {
                return Some(line);
            }
        }
    }

    pub fn expect(&self) -> Value {
        self.next(Duration::from_secs(30))
            .expect("an answer within 30 s")
    }

    pub fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.request_within(id, method, params, Duration::from_secs(30))
    }

    /// The reply to a request, skipping whatever else the server writes
    /// first; panics if `wait` passes without a message.
    pub fn request_within(
        &mut self,
        id: u64,
        method: &str,
        params: Value,
        wait: Duration,
    ) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self
                .next(wait)
                .unwrap_or_else(|| panic!("no reply to {method} within {wait:?}"));
            if message["id"] == json!(id) && message.get("method").is_none() {
                return message;
            }
        }
    }

    pub fn initialize(&mut self, capabilities: Value) -> Value {
        let reply = self.request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "raw", "version": "1"}}),
        );
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        reply
    }

    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    pub fn wait(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = std::time::Instant::now() + limit;
        while std::time::Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Everything written to stderr so far.
    pub fn stderr(&self) -> Vec<String> {
        std::thread::sleep(Duration::from_millis(50));
        self.errors.try_iter().collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Gives `pad` exactly `text`, as one history entry (like a pad loaded from disk).
pub fn seed(rustpad: &rustpad_test_server::TestServer, pad: &str, text: &str) {
    let seed = rustpad_test_server::Seed {
        text: Some(text.into()),
        ..rustpad_test_server::Seed::default()
    };
    rustpad.seed(pad, &seed).unwrap();
}

/// Makes `pad`'s text `text` in one edit, as a person who then leaves would:
/// the pad's history keeps what it held before (unlike [`seed`]).
pub async fn set_by_person(rustpad: &rustpad_test_server::TestServer, pad: &str, text: &str) {
    use operational_transform::OperationSeq;
    let mut person = rustpad_test_server::person::Person::join(&rustpad.socket_url(pad), "person")
        .await
        .unwrap();
    let mut operation = OperationSeq::default();
    operation.delete(person.text().chars().count() as u64);
    operation.insert(text);
    person.edit(operation).await.unwrap();
    person.leave().await;
}

/// The outcome text of a probe request.
pub fn probe(server: &mut Server, id: u64, what: &str, params: Value) -> Value {
    server.request(id, &format!("probe/{what}"), params)
}
