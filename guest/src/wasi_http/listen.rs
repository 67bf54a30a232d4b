//! A 2026-07-28 `subscriptions/listen` in a WebAssembly host: one response
//! held open and streamed by the component itself, since nothing outlives
//! the request there. The acknowledgement goes first, then an update
//! whenever someone else changes a named pad, then, before the host's own
//! timeout could cut it, the listen's result: a clean end the client can
//! listen again from.
//!
//! One look per pad, all waited on in one `wasi:io` poll, so an edit to any
//! of them is heard of as soon as it settles; the pace (at most one update
//! per pad per coalescing interval, a keepalive comment) is the one
//! rustpad-mcp's host keeps ([`rustpad_mcp_rules::watching`]). Nothing here
//! knows this process's own writes (no host keeps them), so they count as
//! anyone's.

use std::time::{Duration, Instant};

use rustpad_mcp_rules::watching::{self, KEEPALIVE, KEEPALIVE_COMMENT};
use wasip2::io::poll::Pollable;
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

/// One pad of the listen.
struct ListenedPad {
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
    let mut pads: Vec<ListenedPad> = held
        .watches
        .into_iter()
        .map(|watch| {
            let look = url.and_then(|url| Look::open(url, &watch.subject, None).ok());
            ListenedPad {
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
        // What every pad that may be heard of again has sent already: a
        // change is waited out (quiet, within limits), anything else read
        // and let go, so that the poll below waits only for what is to come.
        for pad in &mut pads {
            let now = Instant::now();
            let Some(look) = &mut pad.look else { continue };
            if watching::next_update(pad.told, now) > now {
                continue;
            }
            let tell = match look.what_came() {
                Ok(Seen::Changed) => true,
                Ok(Seen::Quiet) => false,
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
            if write(stream, KEEPALIVE_COMMENT).is_err() {
                return close(pads);
            }
            next_keepalive = Instant::now() + KEEPALIVE;
        }
        // Then one wait for them all: until any of those pads sends more,
        // a pad told of lately may be heard of again, or a keepalive or the
        // end is due. A pad told of lately keeps what comes meanwhile.
        let now = Instant::now();
        let mut due = end.min(next_keepalive);
        let mut sockets = Vec::new();
        for pad in &pads {
            let Some(look) = &pad.look else { continue };
            let may_tell = watching::next_update(pad.told, now);
            if may_tell > now {
                due = due.min(may_tell);
            } else if let Some(readable) = look.readable() {
                sockets.push(readable);
            }
        }
        wait_for_any(&sockets, due);
    }
    let _ = write(stream, &event(&held.closing));
    close(pads);
}

fn close(pads: Vec<ListenedPad>) {
    for look in pads.into_iter().filter_map(|pad| pad.look) {
        look.close();
    }
}

/// Waits until one of `sockets` is readable or `until` comes.
fn wait_for_any(sockets: &[Pollable], until: Instant) {
    let sockets: Vec<&Pollable> = sockets.iter().collect();
    crate::grants::tcp::wait_for(&sockets, until);
}

/// One server-sent event carrying `message`.
fn event(message: &str) -> Vec<u8> {
    format!("event: message\ndata: {message}\n\n").into_bytes()
}
