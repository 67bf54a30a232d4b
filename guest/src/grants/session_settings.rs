//! Where the ACT plugin's settings are kept: the args of the one session its
//! host opened (`crate::act::settings` reads and checks them), for as long as
//! the instance lives. Nothing else in the instance may change them.

use std::cell::RefCell;
use std::collections::BTreeMap;

/// The instance's one session: never opened yet, open with its id and
/// settings, or closed for good. Closed is not never: a session closed by a
/// client (act offers `close_session` when it was started without
/// `--session-args`) must not make room for one the client opens with
/// other settings.
enum Session {
    NeverOpened,
    Open {
        id: String,
        values: BTreeMap<String, String>,
    },
    Closed,
}

thread_local! {
    static SESSION: RefCell<Session> = const { RefCell::new(Session::NeverOpened) };
}

/// Keeps `values` as the settings of session `id`, if no session was ever opened.
pub fn open(id: String, values: BTreeMap<String, String>) -> Result<(), String> {
    SESSION.with_borrow_mut(|session| match session {
        Session::NeverOpened => {
            *session = Session::Open { id, values };
            Ok(())
        }
        _ => Err("rustpad-mcp: this plugin serves one session, opened when its host started (`act run --session-args`); it takes no other, even after that one is closed".to_string()),
    })
}

/// Ends the session `id`, if it is the open one; none opens after it.
pub fn close(id: &str) {
    SESSION.with_borrow_mut(|session| {
        if matches!(session, Session::Open { id: open, .. } if open == id) {
            *session = Session::Closed;
        }
    });
}

/// The open session's id.
pub fn opened_id() -> Option<String> {
    SESSION.with_borrow(|session| match session {
        Session::Open { id, .. } => Some(id.clone()),
        _ => None,
    })
}

/// The value of setting `name` in the open session.
pub fn setting(name: &str) -> Option<String> {
    SESSION.with_borrow(|session| match session {
        Session::Open { values, .. } => values.get(name).cloned(),
        _ => None,
    })
}

/// The names of the settings the open session gave.
pub fn setting_names() -> Vec<String> {
    SESSION.with_borrow(|session| match session {
        Session::Open { values, .. } => values.keys().cloned().collect(),
        _ => Vec::new(),
    })
}
