//! A 2026-07-28 `subscriptions/listen` in a WebAssembly host: one response
//! held open and streamed by the component itself, since nothing outlives
//! the request there. The acknowledgement goes first, then an update
//! whenever someone else changes a named pad, then, before the host's own
//! timeout could cut it, the listen's result: a clean end the client can
//! listen again from.
//!
//! One look per pad, watched in turn; a pad is heard of at most once per
//! [`COALESCE`], as in rustpad-mcp's host. Nothing here knows this
//! process's own writes (no host keeps them), so they count as anyone's.

use std::time::{Duration, Instant};

use wasip2::io::streams::OutputStream;

use super::write_all as write;
use crate::mcp::Held;
use crate::rustpad::url::RustpadUrl;
use crate::rustpad::watch::{Look, Seen};

/// How long a listen lasts here unless [`LISTEN_SECONDS_VARIABLE`] says:
/// under the 60 seconds the documented `wasmtime serve` command allows a
/// request, so the end is the listen's own.
pub const DEFAULT_LISTEN_SECONDS: u64 = 45;
/// The setting for a host whose own timeout is another.
pub const LISTEN_SECONDS_VARIABLE: &str = "RUSTPAD_MCP_LISTEN_SECONDS";
const MAX_LISTEN_SECONDS: u64 = 3_600;

/// How long a listen lasts, from its setting.
pub fn seconds() -> Result<u64, String> {
    let Ok(text) = std::env::var(LISTEN_SECONDS_VARIABLE) else {
        return Ok(DEFAULT_LISTEN_SECONDS);
    };
    match text.trim().parse::<u64>() {
        Ok(seconds) if (1..=MAX_LISTEN_SECONDS).contains(&seconds) => Ok(seconds),
        _ => Err(format!(
            "rustpad-mcp: {LISTEN_SECONDS_VARIABLE} must be a whole number of seconds from 1 to {MAX_LISTEN_SECONDS}, not {:?}",
            text.chars().take(40).collect::<String>()
        )),
    }
}
/// At most one update per pad in this interval.
pub const COALESCE: Duration = Duration::from_secs(1);
/// A comment this often keeps proxies from closing an idle stream, and
/// finds a client that went away.
const KEEPALIVE: Duration = Duration::from_secs(15);
/// How long each pad is watched in its turn when a listen names several.
const TURN: Duration = Duration::from_millis(100);

/// One pad of the listen.
struct Watched {
    update: String,
    look: Option<Look>,
    /// When its last update went out.
    told: Option<Instant>,
}

/// Streams the listen on `stream` until its time is up or the client goes.
pub fn stream(held: Held, url: Option<&RustpadUrl>, stream: &OutputStream) {
    let end = Instant::now() + Duration::from_secs(seconds().unwrap_or(DEFAULT_LISTEN_SECONDS));
    // The looks first: each records from when it joined, so nothing after
    // the acknowledgement is missed.
    let mut pads: Vec<Watched> = held
        .watches
        .into_iter()
        .map(|watch| {
            let look = url.and_then(|url| Look::open(url, &watch.subject, None).ok());
            Watched {
                update: watch.update,
                look,
                told: None,
            }
        })
        .collect();
    if write(stream, &event(&held.opening)).is_err() {
        return close(pads);
    }
    // A pad that cannot be watched is told of once: read it to see why.
    let mut gone = false;
    for pad in pads.iter_mut().filter(|pad| pad.look.is_none()) {
        gone = gone || write(stream, &event(&pad.update)).is_err();
        pad.told = Some(Instant::now());
    }
    if gone {
        return close(pads);
    }
    let mut next_keepalive = Instant::now() + KEEPALIVE;
    while Instant::now() < end {
        let watching = pads.iter().filter(|pad| pad.look.is_some()).count();
        // Nothing to watch in this pass (no look, or each was told of within
        // the interval): sleep until one may be watched again.
        let now = Instant::now();
        let ready = pads
            .iter()
            .filter(|pad| pad.look.is_some())
            .map(|pad| pad.told.map_or(now, |told| told + COALESCE))
            .min();
        match ready {
            Some(ready) if ready <= now => {}
            ready => wait_until(ready.unwrap_or(end).min(next_keepalive).min(end)),
        }
        for pad in &mut pads {
            let now = Instant::now();
            if pad.told.is_some_and(|told| now < told + COALESCE) {
                continue;
            }
            let Some(look) = &mut pad.look else { continue };
            let turn = if watching > 1 {
                now + TURN
            } else {
                next_keepalive
            };
            let seen = look.next_change(turn.min(end));
            let tell = match seen {
                Ok(Seen::Changed(_)) => true,
                Ok(Seen::Quiet(_)) => false,
                Err(_) => {
                    if let Some(look) = pad.look.take() {
                        look.close();
                    }
                    true
                }
            };
            if tell {
                if write(stream, &event(&pad.update)).is_err() {
                    return close(pads);
                }
                pad.told = Some(Instant::now());
            }
        }
        if Instant::now() >= next_keepalive {
            if write(stream, b": keepalive\n\n").is_err() {
                return close(pads);
            }
            next_keepalive = Instant::now() + KEEPALIVE;
        }
    }
    let _ = write(stream, &event(&held.closing));
    close(pads);
}

fn close(pads: Vec<Watched>) {
    for look in pads.into_iter().filter_map(|pad| pad.look) {
        look.close();
    }
}

fn wait_until(until: Instant) {
    let left = until.saturating_duration_since(Instant::now());
    wasip2::clocks::monotonic_clock::subscribe_duration(left.as_nanos() as u64).block();
}

/// One server-sent event carrying `message`.
fn event(message: &str) -> Vec<u8> {
    format!("event: message\ndata: {message}\n\n").into_bytes()
}
