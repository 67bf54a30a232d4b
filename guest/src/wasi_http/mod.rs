//! The component for WebAssembly hosts: MCP Streamable HTTP at `/mcp`,
//! exported as `wasi:http/incoming-handler`, importing nothing but WASI.
//!
//! Each request runs in a fresh instance that shares nothing with the next,
//! so the configuration is read (and refused, naming the variable) on every
//! request, and the host's protections that need memory across requests —
//! sessions, the stranger budget, the tally of recent removals — do not
//! exist here.
//! Everything a request must pass comes from `rustpad_mcp_rules`, as for
//! `rustpad-mcp --http`: the [`Gate`] (token, `Host`, `Origin`), what a POST
//! must be, and the status each reply travels with. A 2026-07-28 request is
//! served completely; a 2025-11-25 request stands alone, without a session
//! ([`crate::mcp::Session::standalone`]).

use std::time::{Duration, Instant};

use http::header::{
    ALLOW, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, HOST, RETRY_AFTER, WWW_AUTHENTICATE,
    X_CONTENT_TYPE_OPTIONS,
};
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Uri};
use rustpad_mcp_rules::codes::PARSE_ERROR;
use rustpad_mcp_rules::gate::{self, Admitted, Gate, Refusal};
use rustpad_mcp_rules::post::{self, MAX_MESSAGE_BYTES};
use rustpad_mcp_rules::status::{self, ReplyError};
use wasip2::http::types::{
    Fields, IncomingBody, IncomingRequest, Method, OutgoingBody, OutgoingResponse, ResponseOutparam,
};
use wasip2::io::streams::{OutputStream, StreamError};

use crate::config::{self, Config};
use crate::grants::tcp;

use crate::mcp::{self, Held, Session};
use crate::rustpad::url::RustpadUrl;

mod listen;

/// How long a request's body may take to arrive.
const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// The settings this build reads besides the component's own.
const HTTP_SETTINGS: [&str; 5] = [
    gate::TOKEN_VARIABLE,
    gate::HOSTS_VARIABLE,
    gate::ORIGINS_VARIABLE,
    tcp::SOCKET_ADDRESS_VARIABLE,
    listen::LISTEN_SECONDS_VARIABLE,
];

struct Handler;

impl wasip2::exports::http::incoming_handler::Guest for Handler {
    fn handle(request: IncomingRequest, out: ResponseOutparam) {
        let answer = serve(&request);
        drop(request);
        answer.send(out);
    }
}

wasip2::http::proxy::export!(Handler);

/// An HTTP answer, before it is handed to the host.
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Vec<u8>,
    /// A listen to stream after the body, on Rustpad at this URL.
    listen: Option<Box<(Held, Option<RustpadUrl>)>>,
}

impl Answer {
    fn plain(status: StatusCode, text: &str) -> Answer {
        let mut headers = HeaderMap::new();
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
        Answer {
            status,
            headers,
            body: text.as_bytes().to_vec(),
            listen: None,
        }
    }

    fn json(status: StatusCode, body: String) -> Answer {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        Answer {
            status,
            headers,
            body: body.into_bytes(),
            listen: None,
        }
    }

    fn empty(status: StatusCode) -> Answer {
        Answer {
            status,
            headers: HeaderMap::new(),
            body: Vec::new(),
            listen: None,
        }
    }

    /// A held listen: an event stream the component writes itself.
    fn listen(held: Held, url: Option<RustpadUrl>) -> Answer {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        Answer {
            status: StatusCode::OK,
            headers,
            body: Vec::new(),
            listen: Some(Box::new((held, url))),
        }
    }

    fn refused(refusal: Refusal) -> Answer {
        let (status, text, ask_for_token) = refusal.answer();
        let mut answer = Answer::plain(status, &text);
        if ask_for_token {
            answer.headers.insert(
                WWW_AUTHENTICATE,
                HeaderValue::from_static(gate::BEARER_CHALLENGE),
            );
        }
        answer
    }

    /// Names the browser origin the gate allowed, so its page may read the answer.
    fn with_cors(mut self, admitted: &Admitted) -> Answer {
        if let Some(origin) = &admitted.origin {
            post::add_cors(&mut self.headers, origin);
        }
        self
    }

    fn send(self, out: ResponseOutparam) {
        let fields: Vec<(String, Vec<u8>)> = self
            .headers
            .iter()
            .map(|(name, value)| (name.as_str().to_string(), value.as_bytes().to_vec()))
            .collect();
        let Ok(fields) = Fields::from_list(&fields) else {
            // Never an empty success in place of what could not be said.
            let failed = OutgoingResponse::new(Fields::new());
            let _ = failed.set_status_code(500);
            return ResponseOutparam::set(out, Ok(failed));
        };
        let response = OutgoingResponse::new(fields);
        let _ = response.set_status_code(self.status.as_u16());
        let Ok(body) = response.body() else {
            return ResponseOutparam::set(out, Ok(response));
        };
        ResponseOutparam::set(out, Ok(response));
        if let Ok(stream) = body.write() {
            let written = write_all(&stream, &self.body);
            if let (Ok(()), Some(listening)) = (written, self.listen) {
                let (held, url) = *listening;
                listen::stream(held, url.as_ref(), &stream);
            }
            drop(stream);
        }
        let _ = OutgoingBody::finish(body, None);
    }
}

/// Writes all of `bytes` to a response body, in the pieces a host takes.
fn write_all(stream: &OutputStream, bytes: &[u8]) -> Result<(), StreamError> {
    // The host takes at most 4096 bytes per blocking write.
    for chunk in bytes.chunks(4096) {
        stream.blocking_write_and_flush(chunk)?;
    }
    Ok(())
}

/// The answer to one request.
fn serve(request: &IncomingRequest) -> Answer {
    let headers = header_map(request);
    let path = request.path_with_query().unwrap_or_default();
    // The host hands over the request target in origin form; its authority is in Host.
    let target: Uri = path.parse().unwrap_or_else(|_| Uri::from_static("/"));
    let (gate, config) = match settings() {
        Ok(settings) => settings,
        Err(problem) => {
            return Answer::plain(StatusCode::INTERNAL_SERVER_ERROR, &format!("{problem}\n"));
        }
    };
    let method = request.method();
    if matches!(method, Method::Options) {
        return match gate.preflight(&target, &headers) {
            Ok(admitted) => preflight_answer().with_cors(&admitted),
            Err(refusal) => Answer::refused(refusal),
        };
    }
    let admitted = match gate.admit(&target, &headers) {
        Ok(admitted) => admitted,
        // A page at a listed origin must be able to read the 401 to know it needs a token.
        Err(Refusal::Unauthorized) => {
            let refusal = Answer::refused(Refusal::Unauthorized);
            return match gate.preflight(&target, &headers) {
                Ok(admitted) => refusal.with_cors(&admitted),
                Err(_) => refusal,
            };
        }
        Err(refusal) => return Answer::refused(refusal),
    };
    let answer = if target.path() != post::ENDPOINT {
        Answer::plain(StatusCode::NOT_FOUND, post::NOT_FOUND)
    } else if matches!(method, Method::Post) {
        answer_post(request, &headers, &config)
    } else {
        let mut answer = Answer::plain(StatusCode::METHOD_NOT_ALLOWED, NOT_ALLOWED);
        answer
            .headers
            .insert(ALLOW, HeaderValue::from_static("POST"));
        answer
    };
    answer.with_cors(&admitted)
}

const NOT_ALLOWED: &str = "Method not allowed: send MCP messages with POST (this server opens no GET stream and keeps no sessions to DELETE)\n";

/// The settings, read afresh for this request: a problem names the variable.
fn settings() -> Result<(Gate, Config), String> {
    if let Some(unknown) = config::unknown_variables(&HTTP_SETTINGS).first() {
        return Err(format!(
            "rustpad-mcp: {unknown} is not a setting of this server; the settings are {}, {}. Remove or rename it (a typo must not change what the server does silently).",
            config::settings(),
            HTTP_SETTINGS.join(", ")
        ));
    }
    let gate = Gate::for_wasm_host(|name| std::env::var(name).ok())
        .map_err(|problem| format!("rustpad-mcp: {problem}"))?;
    tcp::socket_address()?;
    listen::seconds()?;
    let config = Config::from_settings()?;
    Ok((gate, config))
}

fn preflight_answer() -> Answer {
    let mut answer = Answer::empty(StatusCode::NO_CONTENT);
    post::add_preflight(&mut answer.headers, "POST");
    answer
}

/// A POST to `/mcp`: one JSON-RPC message, answered by the same dispatch the
/// component for rustpad-mcp's host uses.
fn answer_post(request: &IncomingRequest, headers: &HeaderMap, config: &Config) -> Answer {
    if let Some((status, explanation)) = post::unacceptable(headers) {
        return Answer::plain(status, explanation);
    }
    let standard = match post::standard_headers(headers) {
        Ok(standard) => standard,
        Err(repeated) => {
            let (status, explanation) = post::repeated_header(repeated);
            return Answer::plain(status, &explanation);
        }
    };
    let message = match read_body(request, headers) {
        Ok(message) => message,
        Err(answer) => return answer,
    };
    let session = Session::standalone(&standard);
    let reply = mcp::handle_with(config, &message, Some(&standard), session.as_deref());
    if let Some(held) = reply.held {
        return Answer::listen(*held, config.rustpad.clone());
    }
    let Some(body) = reply.response else {
        return Answer::empty(StatusCode::ACCEPTED);
    };
    let code = status::of_reply(reply.error, false);
    let mut answer = Answer::json(
        StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        body,
    );
    if reply.error == Some(ReplyError::Busy) {
        answer
            .headers
            .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    }
    answer
}

/// Reads the body within the size and time limits.
fn read_body(request: &IncomingRequest, headers: &HeaderMap) -> Result<String, Answer> {
    let too_large = || {
        let (status, explanation) = post::too_large();
        Answer::plain(status, &explanation)
    };
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|length| length > MAX_MESSAGE_BYTES as u64) {
        return Err(too_large());
    }
    let cut_short = || {
        Answer::plain(
            StatusCode::BAD_REQUEST,
            "Bad request: the body was cut short\n",
        )
    };
    let body = request.consume().map_err(|()| cut_short())?;
    let stream = body.stream().map_err(|()| cut_short())?;
    let deadline = Instant::now() + BODY_TIMEOUT;
    let mut received = Vec::new();
    loop {
        match stream.read(64 * 1024) {
            Ok(bytes) if bytes.is_empty() => {
                if !tcp::wait_for(&[&stream.subscribe()], deadline) {
                    return Err(Answer::plain(
                        StatusCode::REQUEST_TIMEOUT,
                        "Request timeout: the body did not arrive within 30 seconds\n",
                    ));
                }
            }
            Ok(bytes) => {
                if received.len() + bytes.len() > MAX_MESSAGE_BYTES {
                    return Err(too_large());
                }
                received.extend_from_slice(&bytes);
            }
            Err(StreamError::Closed) => break,
            Err(StreamError::LastOperationFailed(_)) => return Err(cut_short()),
        }
    }
    drop(stream);
    let _ = IncomingBody::finish(body);
    String::from_utf8(received).map_err(|_| {
        Answer::json(
            StatusCode::BAD_REQUEST,
            serde_json::json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": { "code": PARSE_ERROR, "message": "Parse error: the message is not UTF-8" },
            })
            .to_string(),
        )
    })
}

/// The request's headers as an `http` map; a header that is not one is left
/// out. Hosts such as `wasmtime serve` move `Host` into the request's
/// authority, so that is where it is read from when the header is absent.
fn header_map(request: &IncomingRequest) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in request.headers().entries() {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_bytes(&value),
        ) {
            headers.append(name, value);
        }
    }
    if !headers.contains_key(HOST)
        && let Some(authority) = request.authority()
        && let Ok(value) = HeaderValue::from_str(&authority)
    {
        headers.insert(HOST, value);
    }
    headers
}
