//! `rustpad-mcp --check`: one pass over the connection to RUSTPAD_URL,
//! reported in plain words.

use std::time::Instant;

use super::http;
use super::socket::{PadSocket, Track};
use super::url::RustpadUrl;

/// The pad the check looks at (a look leaves no edit, only an empty pad that
/// Rustpad forgets after a day).
const CHECK_PAD: &str = "rustpad-mcp-check";

/// Whether everything worked, and one line per thing tried, for Rustpad at
/// `url` (whose certificates are not checked with `insecure_tls`).
pub fn run(url: Option<&RustpadUrl>, insecure_tls: bool) -> (bool, Vec<String>) {
    let Some(url) = url else {
        return (
            false,
            vec!["RUSTPAD_URL is not set: there is nothing to check.".into()],
        );
    };
    let mut lines = vec![format!("Rustpad at {}", url.base())];
    lines.push(match (url.is_secure(), insecure_tls) {
        (false, _) => "TLS: not used (plain http)".into(),
        (true, false) => "TLS: on, certificates are checked".into(),
        (true, true) => "TLS: on, certificates are NOT checked (RUSTPAD_INSECURE_TLS=true)".into(),
    });
    let started = Instant::now();
    let http_ok = match http::get(url, "/api/stats") {
        Ok(_) => {
            lines.push(format!(
                "HTTP API: works (/api/stats answered in {} ms)",
                started.elapsed().as_millis()
            ));
            true
        }
        Err(error) => {
            lines.push(format!("HTTP API: FAILED: {}", error.message()));
            false
        }
    };
    let started = Instant::now();
    let socket_ok = match PadSocket::look(url, CHECK_PAD, Track::LENGTH) {
        Ok(socket) => {
            socket.close();
            lines.push(format!(
                "Collaboration socket: works (snapshot of pad \"{CHECK_PAD}\" in {} ms)",
                started.elapsed().as_millis()
            ));
            true
        }
        Err(error) => {
            lines.push(format!("Collaboration socket: FAILED: {}", error.message()));
            false
        }
    };
    let ok = http_ok && socket_ok;
    lines.push(if ok {
        "Everything this server needs works.".into()
    } else {
        "Some of what this server needs does not work; see above.".into()
    });
    (ok, lines)
}
