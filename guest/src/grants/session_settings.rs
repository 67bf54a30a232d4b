//! Where the ACT plugin's settings are kept: the args of the one session its
//! host opened (`crate::act::settings` reads and checks them), for as long as
//! the instance lives. Nothing else in the instance may change them.

use std::cell::RefCell;
use std::collections::BTreeMap;

/// The session this instance opened, and the settings it fixed.
struct Opened {
    id: String,
    values: BTreeMap<String, String>,
}

thread_local! {
    static OPENED: RefCell<Option<Opened>> = const { RefCell::new(None) };
}

/// Keeps `values` as the settings of session `id`, unless one is open already.
pub fn open(id: String, values: BTreeMap<String, String>) -> Result<(), String> {
    OPENED.with_borrow_mut(|opened| {
        if opened.is_some() {
            return Err("rustpad-mcp: this plugin serves one session, opened when its host started (`act run --session-args`); it takes no other".to_string());
        }
        *opened = Some(Opened { id, values });
        Ok(())
    })
}

/// Ends the session `id`, if it is the open one.
pub fn close(id: &str) {
    OPENED.with_borrow_mut(|opened| {
        if opened.as_ref().is_some_and(|o| o.id == id) {
            *opened = None;
        }
    });
}

/// The open session's id.
pub fn opened_id() -> Option<String> {
    OPENED.with_borrow(|opened| opened.as_ref().map(|o| o.id.clone()))
}

/// The value of setting `name` in the open session.
pub fn setting(name: &str) -> Option<String> {
    OPENED.with_borrow(|opened| opened.as_ref()?.values.get(name).cloned())
}

/// The names of the settings the open session gave.
pub fn setting_names() -> Vec<String> {
    OPENED.with_borrow(|opened| {
        opened
            .as_ref()
            .map(|o| o.values.keys().cloned().collect())
            .unwrap_or_default()
    })
}
