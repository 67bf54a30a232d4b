//! The `server` world's exports, for rustpad-mcp's own host: `configure`
//! once at startup, `handle` for each JSON-RPC message, `watch` for each
//! round of a subscription, `check` for the operator's `--check`. Each hands over to [`crate::config`] or
//! [`crate::mcp`] and turns the answer into the world's types; the bindings
//! themselves are generated at the crate root.

use crate::bindings::rustpad::mcp::errors::{Error, ErrorKind};
use crate::bindings::{
    CheckReport, Guest, HttpHeaders, Reply, ReplyError, Resume, Startup, Watched,
};

struct Component;

impl Guest for Component {
    fn configure() -> Result<Startup, Error> {
        let startup = crate::config::Config::from_settings()
            .map_err(|problem| Error {
                kind: ErrorKind::Invalid,
                message: problem,
            })?
            .startup();
        Ok(Startup {
            origin: startup.origin,
            insecure_tls: startup.insecure_tls,
            notices: startup.notices,
            session_openers: crate::mcp::session_openers(),
        })
    }

    fn handle(message: String, headers: Option<HttpHeaders>, session: Option<String>) -> Reply {
        let headers = headers.map(|h| rustpad_mcp_rules::headers::StandardHeaders {
            protocol_version: h.protocol_version,
            method: h.method,
            name: h.name,
        });
        let reply =
            crate::mcp::handle(&message, headers.as_ref(), session.as_deref()).held_by_host();
        Reply {
            response: reply.response,
            session: reply.session,
            error: reply.error.map(|error| match error {
                crate::mcp::ReplyError::Code(code) => ReplyError::Code(code),
                crate::mcp::ReplyError::Busy => ReplyError::Busy,
            }),
        }
    }

    fn check() -> CheckReport {
        let (ok, lines) = match crate::config::Config::from_settings() {
            Ok(config) => crate::rustpad::check::run(config.rustpad.as_ref(), config.insecure_tls),
            Err(problem) => (false, vec![problem]),
        };
        CheckReport { ok, lines }
    }

    fn watch(subject: String, last: Option<Resume>) -> Watched {
        let from = last.map(|last| (last.cursor, last.look));
        let resume = |resume: crate::mcp::Resume| Resume {
            cursor: resume.cursor,
            look: resume.look,
            wake: resume.wake,
        };
        match crate::mcp::watch_round(&subject, from) {
            crate::mcp::Round::Changed(next) => Watched::Changed(resume(next)),
            crate::mcp::Round::Quiet(next) => Watched::Quiet(resume(next)),
            crate::mcp::Round::Lost(reason) => Watched::Lost(reason),
        }
    }
}

// The generated export functions: `unsafe` for the canonical ABI.
#[allow(unsafe_code)]
mod export {
    use super::Component;

    crate::bindings::export!(Component with_types_in crate::bindings);
}
