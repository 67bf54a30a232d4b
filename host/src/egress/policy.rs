//! Egress: the one origin the component may reach, and the connector that
//! reaches it.
//!
//! Every outbound HTTP request (wasi:http) and WebSocket connection passes
//! [`Egress::admit`] first; anything but the configured origin (scheme, host
//! and port) is refused there and logged. The connector holds the TLS
//! configuration, so `RUSTPAD_INSECURE_TLS` relaxes certificate checks for
//! this connection alone, never process-wide. Nothing follows redirects: a
//! redirect reaches the guest as a response, and any request it then makes
//! comes through here again.

use rustpad_mcp_rules::errors::{Error as ImportError, ErrorKind};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::BodyExt;
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use rustpad_mcp_rules::tls;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_tungstenite::MaybeTlsStream;
use wasmtime_wasi_http::{Error as HttpError, RequestOptions, WasiBody};

pub use rustpad_mcp_rules::egress::Origin;
pub use rustpad_mcp_rules::websocket::CONNECT_TIMEOUT;

/// The egress policy and connector shared by every call in the process.
pub struct Egress {
    allowed: Option<Origin>,
    tls: TlsConnector,
}

impl Egress {
    /// `allowed`: the origin of RUSTPAD_URL, or none (nothing may be reached).
    pub fn new(allowed: Option<&str>, insecure_tls: bool) -> Arc<Egress> {
        Arc::new(Egress {
            allowed: allowed.and_then(Origin::of),
            tls: TlsConnector::from(tls::client_config(insecure_tls)),
        })
    }

    /// The policy: admits `url` only when it is on the allowed origin.
    pub fn admit(&self, url: &str) -> Result<Origin, ImportError> {
        rustpad_mcp_rules::egress::admit(self.allowed.as_ref(), url).inspect_err(|reason| {
            if self.allowed.is_some() && Origin::of(url).is_some() {
                eprintln!("rustpad-mcp: {reason}");
            }
        })
    }

    /// Opens TCP (and TLS for https/wss) to an admitted origin.
    pub async fn connect(&self, origin: &Origin) -> Result<Stream, ConnectError> {
        let tcp = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(origin.authority()))
            .await
            .map_err(|_| ConnectError::Timeout)?
            .map_err(ConnectError::Io)?;
        let _ = tcp.set_nodelay(true);
        if !origin.secure {
            return Ok(MaybeTlsStream::Plain(tcp));
        }
        let host = origin.host.trim_start_matches('[').trim_end_matches(']');
        let name = ServerName::try_from(host.to_string()).map_err(|_| ConnectError::Name)?;
        let tls = tokio::time::timeout(CONNECT_TIMEOUT, self.tls.connect(name, tcp))
            .await
            .map_err(|_| ConnectError::Timeout)?
            .map_err(ConnectError::Tls)?;
        Ok(MaybeTlsStream::Rustls(tls))
    }

    /// Sends one HTTP request for the component (the wasi:http hook).
    pub async fn send_http(
        &self,
        mut request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
    ) -> Result<http::Response<WasiBody>, HttpError> {
        let origin = self
            .admit(&request.uri().to_string())
            .map_err(|_| HttpError::HttpRequestDenied)?;
        let stream = self.connect(&origin).await.map_err(ConnectError::code)?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|_| HttpError::HttpProtocolError)?;
        tokio::spawn(connection);
        // The request line carries only the path; the Host header names the origin.
        let path = request
            .uri()
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .parse()
            .map_err(|_| HttpError::HttpRequestUriInvalid)?;
        *request.uri_mut() = path;
        let first_byte = options
            .and_then(|o| o.first_byte_timeout)
            .unwrap_or(Duration::from_secs(30));
        let response = tokio::time::timeout(first_byte, sender.send_request(request))
            .await
            .map_err(|_| HttpError::ConnectionReadTimeout)?
            .map_err(|error| {
                // Rustpad went away mid-answer, as against an answer that is not HTTP.
                if error.is_incomplete_message() || error.is_closed() || error.is_canceled() {
                    HttpError::ConnectionTerminated
                } else {
                    HttpError::HttpProtocolError
                }
            })?;
        Ok(response.map(|body| body.map_err(HttpError::from).boxed_unsync()))
    }
}

pub enum ConnectError {
    Timeout,
    Io(std::io::Error),
    Name,
    Tls(std::io::Error),
}

impl ConnectError {
    fn code(self) -> HttpError {
        match self {
            ConnectError::Timeout => HttpError::ConnectionTimeout,
            ConnectError::Io(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                HttpError::ConnectionRefused
            }
            ConnectError::Io(_) => HttpError::DestinationUnavailable,
            ConnectError::Name => HttpError::DnsError {
                rcode: None,
                info_code: None,
            },
            ConnectError::Tls(e) if is_certificate_error(&e) => HttpError::TlsCertificateError,
            ConnectError::Tls(_) => HttpError::TlsProtocolError,
        }
    }
}

use tls::is_certificate_error;

/// What a failed connect says of its destination: nothing there (refused,
/// no route, no such name), no room here (out of file descriptors or
/// memory), or anything else, a connection that broke.
fn io_kind(error: &std::io::Error) -> ErrorKind {
    use std::io::ErrorKind as Io;
    // EMFILE, ENFILE, ENOBUFS, ENOMEM: this process is out of room, not Rustpad.
    if matches!(error.raw_os_error(), Some(23 | 24 | 105 | 12)) {
        return ErrorKind::Busy;
    }
    match error.kind() {
        Io::ConnectionRefused
        | Io::HostUnreachable
        | Io::NetworkUnreachable
        | Io::AddrNotAvailable
        | Io::NotFound => ErrorKind::Unreachable,
        Io::TimedOut => ErrorKind::TimedOut,
        _ => ErrorKind::Closed,
    }
}

impl ConnectError {
    /// The same failure, by kind, for the component's `websocket.connect`.
    pub fn failure(self) -> ImportError {
        let kind = match &self {
            ConnectError::Timeout => ErrorKind::TimedOut,
            ConnectError::Io(e) => io_kind(e),
            ConnectError::Name => ErrorKind::Invalid,
            ConnectError::Tls(e) if is_certificate_error(e) => ErrorKind::Refused,
            ConnectError::Tls(_) => ErrorKind::Closed,
        };
        ImportError::new(kind, self.to_string())
    }
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectError::Timeout => write!(f, "timed out connecting"),
            ConnectError::Io(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                write!(f, "connection refused")
            }
            ConnectError::Io(e) => write!(f, "could not connect ({e})"),
            ConnectError::Name => write!(f, "the host name is not valid for TLS"),
            ConnectError::Tls(e) if is_certificate_error(e) => {
                f.write_str(&tls::certificate_refused(e))
            }
            ConnectError::Tls(e) => write!(f, "the TLS handshake failed ({e})"),
        }
    }
}

/// A plain or TLS stream to the allowed origin.
pub type Stream = MaybeTlsStream<TcpStream>;

#[cfg(test)]
mod tests {
    use super::*;

    // The rule itself is tested in rustpad_mcp_rules::egress; here, that the host applies it.
    #[test]
    fn the_host_applies_the_shared_rule() {
        let egress = Egress::new(Some("http://127.0.0.1:3030"), false);
        assert!(egress.admit("ws://127.0.0.1:3030/api/socket/a").is_ok());
        assert!(egress.admit("http://localhost:3030/").is_err());
        assert!(
            Egress::new(None, false)
                .admit("http://127.0.0.1:3030/")
                .is_err()
        );
    }
}
