//! WIT `recent`: what the call's session used lately
//! ([`crate::state::recently_used`]); a transport without sessions keeps
//! nothing.

use crate::runtime::CallState;
use crate::runtime::bindings::rustpad;

impl rustpad::mcp::recent::Host for CallState {
    async fn note(&mut self, item: String, changed: Option<String>) -> wasmtime::Result<()> {
        if let Some(recent) = &self.recent {
            recent.note(item, changed);
        }
        Ok(())
    }

    async fn items(&mut self) -> wasmtime::Result<Vec<String>> {
        Ok(self
            .recent
            .as_ref()
            .map(|recent| recent.list())
            .unwrap_or_default())
    }
}
