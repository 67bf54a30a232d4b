//! `rustpad-mcp --check`: one pass over the connection to RUSTPAD_URL,
//! reported in plain words.

use std::time::Instant;

use super::socket::{PadSocket, Track};
use super::url::RustpadUrl;
use super::{Error, http};

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
    let http_ok = step(
        &mut lines,
        "HTTP API",
        || http::get(url, "/api/stats"),
        |ms| format!("/api/stats answered in {ms} ms"),
    );
    let socket_ok = step(
        &mut lines,
        "Collaboration socket",
        || PadSocket::look(url, CHECK_PAD, Track::LENGTH).map(PadSocket::close),
        |ms| format!("snapshot of pad \"{CHECK_PAD}\" in {ms} ms"),
    );
    let ok = http_ok && socket_ok;
    lines.push(if ok {
        "Everything this server needs works.".into()
    } else {
        "Some of what this server needs does not work; see above.".into()
    });
    (ok, lines)
}

/// Tries one thing, timed: a line that `what` works (`how`, given the
/// milliseconds it took) or how it failed; whether it worked.
fn step<T>(
    lines: &mut Vec<String>,
    what: &str,
    attempt: impl FnOnce() -> Result<T, Error>,
    how: impl FnOnce(u128) -> String,
) -> bool {
    let started = Instant::now();
    match attempt() {
        Ok(_) => {
            let how = how(started.elapsed().as_millis());
            lines.push(format!("{what}: works ({how})"));
            true
        }
        Err(error) => {
            lines.push(format!("{what}: FAILED: {}", error.message()));
            false
        }
    }
}
