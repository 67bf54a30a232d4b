//! A test-only component that tries what the product component must never
//! manage — reach other origins, read files and environment it was not given,
//! spin forever, allocate without end — so that a test can see what the host
//! running it refuses, whatever the component would allow.
//!
//! Built two ways, like the product:
//! - for rustpad-mcp's host, implementing the `server` world: the host loads
//!   it through its ordinary loading path (`rustpad-mcp --component FILE`);
//!   requests are `{"id":1,"method":"probe/<what>","params":{...}}`, and the
//!   reply's `result` says what happened, as plainly as possible;
//! - with the `wasi-http` feature, as a `wasi:http/proxy` component for other
//!   WebAssembly hosts ([`http_probe`]): `GET /<what>?<arguments>` answers
//!   with what happened in plain text.

#[cfg(feature = "wasi-http")]
mod http_probe;

// Generated glue: `unsafe` for the canonical ABI, and as many arguments as the
// WIT signatures flatten to.
#[cfg(not(feature = "wasi-http"))]
#[allow(unsafe_code, clippy::too_many_arguments)]
mod bindings {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "server",
        with: {
            "wasi:http/outgoing-handler@0.2.12": wasip2::http::outgoing_handler,
            "wasi:http/types@0.2.12": wasip2::http::types,
            "wasi:io/error@0.2.12": wasip2::io::error,
            "wasi:io/poll@0.2.12": wasip2::io::poll,
            "wasi:io/streams@0.2.12": wasip2::io::streams,
            "wasi:clocks/monotonic-clock@0.2.12": wasip2::clocks::monotonic_clock,
        },
    });

    struct Probe;

    impl Guest for Probe {
        fn configure() -> Result<Startup, rustpad::mcp::errors::Error> {
            Ok(Startup {
                origin: std::env::var("RUSTPAD_URL").ok(),
                insecure_tls: false,
                notices: vec!["probe component loaded".into()],
                session_openers: Vec::new(),
            })
        }

        fn handle(
            message: String,
            _headers: Option<HttpHeaders>,
            _session: Option<String>,
        ) -> Reply {
            let request: serde_json::Value = serde_json::from_str(&message).unwrap_or_default();
            let params = &request["params"];
            let text = |name: &str| params[name].as_str().unwrap_or_default().to_string();
            let outcome = match request["method"].as_str().unwrap_or_default() {
                "probe/http" => super::http_get(&text("url")),
                "probe/websocket" => {
                    match rustpad::mcp::websocket::Connection::connect(&text("url")) {
                        Ok(connection) => {
                            connection.close();
                            "connected".to_string()
                        }
                        Err(reason) => {
                            format!("refused: {} (kind {:?})", reason.message, reason.kind)
                        }
                    }
                }
                "probe/env" => {
                    format!("{:?}", std::env::vars().map(|(k, _)| k).collect::<Vec<_>>())
                }
                "probe/read-file" => match std::fs::read_to_string(text("path")) {
                    Ok(contents) => format!("read {} bytes", contents.len()),
                    Err(error) => format!("refused: {error}"),
                },
                "probe/spin" => {
                    let mut n: u64 = 0;
                    loop {
                        n = std::hint::black_box(n.wrapping_add(1));
                    }
                }
                "probe/alloc" => {
                    let mut hoard: Vec<Vec<u8>> = Vec::new();
                    loop {
                        hoard.push(vec![1u8; 1 << 20]);
                        std::hint::black_box(&hoard);
                    }
                }
                other => format!("unknown probe {other}"),
            };
            let response = serde_json::json!({ "jsonrpc": "2.0", "id": request["id"], "result": { "outcome": outcome } });
            Reply {
                response: Some(response.to_string()),
                session: None,
                error: None,
            }
        }

        /// The probe checks nothing.
        fn check() -> CheckReport {
            CheckReport {
                ok: false,
                lines: vec!["the probe component checks nothing".into()],
            }
        }

        /// The probe watches nothing: every round is lost at once.
        fn watch(_subject: String, _last: Option<Resume>) -> Watched {
            Watched::Lost("the probe component watches nothing".into())
        }
    }

    export!(Probe);
}

/// One GET through wasi:http; reports the status or the refusal.
fn http_get(url: &str) -> String {
    use wasip2::http::types::{Fields, Method, OutgoingRequest, Scheme};
    let Some((scheme, rest)) = url.split_once("://") else {
        return "not a URL".into();
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let request = OutgoingRequest::new(Fields::new());
    let scheme = match scheme {
        "https" => Scheme::Https,
        "http" => Scheme::Http,
        other => Scheme::Other(other.to_string()),
    };
    let _ = request.set_method(&Method::Get);
    let _ = request.set_scheme(Some(&scheme));
    let _ = request.set_authority(Some(authority));
    let _ = request.set_path_with_query(Some(if path.is_empty() { "/" } else { path }));
    match wasip2::http::outgoing_handler::handle(request, None) {
        Err(code) => format!("refused: {code:?}"),
        Ok(pending) => {
            pending.subscribe().block();
            match pending.get() {
                Some(Ok(Ok(response))) => format!("status {}", response.status()),
                Some(Ok(Err(code))) => format!("refused: {code:?}"),
                _ => "failed".into(),
            }
        }
    }
}
