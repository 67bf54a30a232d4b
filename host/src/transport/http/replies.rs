//! The answers the HTTP transport writes itself: refusals, JSON-RPC errors,
//! plain-text explanations, CORS, and empty acknowledgements.

use bytes::Bytes;
use http::header::{CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE, X_CONTENT_TYPE_OPTIONS};
use http::{HeaderValue, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use rustpad_mcp_rules::codes::INTERNAL_ERROR;
use serde_json::Value;

use super::Body;
use crate::transport::jsonrpc::error_response;
use rustpad_mcp_rules::gate::{Admitted, Refusal};

use rustpad_mcp_rules::gate::BEARER_CHALLENGE;
use rustpad_mcp_rules::post;

pub(super) fn refused(refusal: Refusal) -> Response<Body> {
    let (status, text, ask_for_token) = refusal.answer();
    let mut response = plain(status, &text);
    if ask_for_token {
        response
            .headers_mut()
            .insert(WWW_AUTHENTICATE, HeaderValue::from_static(BEARER_CHALLENGE));
    }
    response
}

/// The answer to a CORS preflight the gate let through.
pub(super) fn preflight_answer() -> Response<Body> {
    let mut response = empty(StatusCode::NO_CONTENT);
    post::add_preflight(response.headers_mut(), "POST, DELETE");
    response
}

/// Names the browser origin the gate allowed, so its page may read the answer.
pub(super) fn with_cors(mut response: Response<Body>, admitted: &Admitted) -> Response<Body> {
    if let Some(origin) = &admitted.origin {
        post::add_cors(response.headers_mut(), origin);
    }
    response
}

pub(super) fn busy(id: &Value, message: &str) -> Response<Body> {
    let mut response = rpc_error(StatusCode::SERVICE_UNAVAILABLE, id, INTERNAL_ERROR, message);
    busy_headers(&mut response);
    response
}

/// Tells the client to come back shortly.
pub(super) fn busy_headers(response: &mut Response<Body>) {
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
}

pub(super) fn too_large() -> Response<Body> {
    let (status, explanation) = rustpad_mcp_rules::post::too_large();
    plain(status, &explanation)
}

pub(super) fn unknown_session() -> Response<Body> {
    plain(
        StatusCode::NOT_FOUND,
        "Not found: no such session (it ended or expired); send initialize again\n",
    )
}

pub(super) fn rpc_error(
    status: StatusCode,
    id: &Value,
    code: i64,
    message: &str,
) -> Response<Body> {
    json_response(status, error_response(id, code, message))
}

pub(super) fn json_response(status: StatusCode, body: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed_unsync());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A plain-text refusal. Some echo what the client sent, so browsers are told
/// not to guess another type.
pub(super) fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text.to_string())).boxed_unsync());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

pub(super) fn empty(status: StatusCode) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::new()).boxed_unsync());
    *response.status_mut() = status;
    response
}
