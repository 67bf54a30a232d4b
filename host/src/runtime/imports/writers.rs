//! WIT `writers`: the record of which of Rustpad's connections this process
//! wrote over ([`crate::state::own_writes`]).

use crate::runtime::CallState;
use crate::runtime::bindings::rustpad;

impl rustpad::mcp::writers::Host for CallState {
    async fn note(
        &mut self,
        key: String,
        number: u64,
        last_revision: Option<u64>,
    ) -> wasmtime::Result<()> {
        self.writers.note(key, number, last_revision);
        Ok(())
    }

    async fn noted(&mut self, key: String) -> wasmtime::Result<Vec<(u64, Option<u64>)>> {
        Ok(self.writers.noted(&key))
    }
}
