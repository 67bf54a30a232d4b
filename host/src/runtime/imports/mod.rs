//! The component's imports beyond WASI, as this host grants them: one file
//! per interface of the `server` world (wit/world.wit) that the host
//! implements for every instance ([`super::CallState`]), each named after its
//! interface: [`websocket`] through the egress policy, questions to the
//! client ([`elicitation`]), running totals and turns ([`tally`]), places for
//! tool calls ([`calls`]), the record of this process's [`writers`], the
//! write connections kept between calls ([`held_writes`]), the
//! session's subscriptions and held listens ([`watches`]), and what a session
//! used lately ([`recent`]). The `errors` interface holds only the record
//! every other one fails with; a failure of the host's own code crosses
//! into it here ([`crossing`]).

mod calls;
mod elicitation;
mod held_writes;
mod recent;
mod tally;
mod watches;
mod websocket;
mod writers;

use rustpad_mcp_rules::errors::Error as ImportError;
use wasmtime::component::{HasSelf, Linker};

use crate::runtime::CallState;
use crate::runtime::bindings::rustpad;
use crate::runtime::bindings::rustpad::mcp::errors::{Error, ErrorKind};

impl rustpad::mcp::errors::Host for CallState {}

/// Grants every instance the interfaces of this module.
pub(super) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    rustpad::mcp::errors::add_to_linker::<_, HasSelf<CallState>>(linker, |s| s)?;
    rustpad::mcp::websocket::add_to_linker::<_, HasSelf<CallState>>(linker, |s| s)?;
    rustpad::mcp::elicitation::add_to_linker::<_, HasSelf<CallState>>(linker, |s| s)?;
    rustpad::mcp::tally::add_to_linker::<_, HasSelf<CallState>>(linker, |s| s)?;
    rustpad::mcp::calls::add_to_linker::<_, HasSelf<CallState>>(linker, |s| s)?;
    rustpad::mcp::writers::add_to_linker::<_, HasSelf<CallState>>(linker, |s| s)?;
    rustpad::mcp::held_writes::add_to_linker::<_, HasSelf<CallState>>(linker, |s| s)?;
    rustpad::mcp::watches::add_to_linker::<_, HasSelf<CallState>>(linker, |s| s)?;
    rustpad::mcp::recent::add_to_linker::<_, HasSelf<CallState>>(linker, |s| s)?;
    Ok(())
}

fn error(kind: ErrorKind, message: impl Into<String>) -> Error {
    Error {
        kind,
        message: message.into(),
    }
}

/// A failure of the host's own code as it crosses the contract: the same
/// kind under the WIT's name.
fn crossing(failure: ImportError) -> Error {
    use rustpad_mcp_rules::errors::ErrorKind as Own;
    let kind = match failure.kind {
        Own::Refused => ErrorKind::Refused,
        Own::Unsupported => ErrorKind::Unsupported,
        Own::Busy => ErrorKind::Busy,
        Own::TooLarge => ErrorKind::TooLarge,
        Own::Unreachable => ErrorKind::Unreachable,
        Own::NotWebsocket => ErrorKind::NotWebsocket,
        Own::Closed => ErrorKind::Closed,
        Own::TimedOut => ErrorKind::TimedOut,
        Own::Cancelled => ErrorKind::Cancelled,
        Own::Rejected => ErrorKind::Rejected,
        Own::Invalid => ErrorKind::Invalid,
    };
    error(kind, failure.message)
}
