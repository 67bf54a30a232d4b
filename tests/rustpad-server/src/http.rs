//! HTTP plumbing shared by the routes: the response body type, small response builders, and the
//! WebSocket handshake checks that warp's `ws()` filter performs upstream.

use std::convert::Infallible;

use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Bytes;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

/// Every response body this server produces.
pub(crate) type Body = BoxBody<Bytes, Infallible>;

/// A response with a fixed body and, when given, a content type.
pub(crate) fn respond(
    status: StatusCode,
    content_type: Option<&'static str>,
    body: impl Into<Bytes>,
) -> Response<Body> {
    let mut response = Response::new(Full::new(body.into()).boxed());
    *response.status_mut() = status;
    if let Some(content_type) = content_type {
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    }
    response
}

/// Upstream answers unknown paths with an empty 404.
pub(crate) fn not_found() -> Response<Body> {
    respond(StatusCode::NOT_FOUND, None, Bytes::new())
}

pub(crate) fn text(status: StatusCode, body: impl Into<Bytes>) -> Response<Body> {
    respond(status, Some("text/plain; charset=utf-8"), body)
}

pub(crate) fn json(status: StatusCode, body: impl Into<Bytes>) -> Response<Body> {
    respond(status, Some("application/json"), body)
}

/// Checks a request the way warp's `ws()` filter does: a valid upgrade gets the
/// `101 Switching Protocols` reply, anything else the rejection warp would give.
pub(crate) fn websocket_handshake<B>(req: &Request<B>) -> Response<Body> {
    let accept = match accept_key(req) {
        Ok(accept) => accept,
        Err((status, message)) => return text(status, message),
    };
    let mut response = respond(StatusCode::SWITCHING_PROTOCOLS, None, Bytes::new());
    let out = response.headers_mut();
    out.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    out.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    out.insert(
        header::SEC_WEBSOCKET_ACCEPT,
        HeaderValue::from_str(&accept).expect("an accept key is base64"),
    );
    response
}

/// The `Sec-WebSocket-Accept` value for a valid upgrade request, or warp's rejection.
fn accept_key<B>(req: &Request<B>) -> Result<String, (StatusCode, String)> {
    let bad = |kind: &str, name: &str| {
        (
            StatusCode::BAD_REQUEST,
            format!("{kind} request header \"{name}\""),
        )
    };
    if req.method() != Method::GET {
        return Err((
            StatusCode::METHOD_NOT_ALLOWED,
            "HTTP method not allowed".into(),
        ));
    }
    let headers = req.headers();
    if !has_token(headers, header::CONNECTION, "upgrade") {
        return Err(bad("Invalid", "connection"));
    }
    if !header_is(headers, header::UPGRADE, "websocket", true) {
        return Err(bad("Invalid", "upgrade"));
    }
    if !header_is(headers, header::SEC_WEBSOCKET_VERSION, "13", false) {
        return Err(bad("Invalid", "sec-websocket-version"));
    }
    match headers.get(header::SEC_WEBSOCKET_KEY) {
        Some(key) => Ok(derive_accept_key(key.as_bytes())),
        None => Err(bad("Missing", "sec-websocket-key")),
    }
}

fn has_token(headers: &HeaderMap, name: header::HeaderName, token: &str) -> bool {
    headers.get_all(name).iter().any(|value| {
        value.to_str().is_ok_and(|v| {
            v.split(',')
                .any(|part| part.trim().eq_ignore_ascii_case(token))
        })
    })
}

fn header_is(headers: &HeaderMap, name: header::HeaderName, want: &str, ignore_case: bool) -> bool {
    headers.get(name).is_some_and(|value| {
        let value = value.as_bytes();
        if ignore_case {
            value.eq_ignore_ascii_case(want.as_bytes())
        } else {
            value == want.as_bytes()
        }
    })
}
