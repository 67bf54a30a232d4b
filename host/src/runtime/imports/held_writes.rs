//! WIT `held-writes`: write connections kept between calls
//! ([`crate::state::held_writes`]). A connection crosses out of the
//! instance's table when given and into the taker's when taken, so it
//! outlives the instance that opened it.

use wasmtime::component::Resource;

use crate::egress::websocket::Connection;
use crate::runtime::CallState;
use crate::runtime::bindings::rustpad;
use crate::runtime::bindings::rustpad::mcp::held_writes::Held;

impl rustpad::mcp::held_writes::Host for CallState {
    async fn take(&mut self, key: String) -> wasmtime::Result<Option<Held>> {
        let Some(taken) = self.held_writes.take(&key).await else {
            return Ok(None);
        };
        Ok(Some(Held {
            connection: self.table.push(taken.connection)?,
            cursor: taken.cursor,
        }))
    }

    async fn give(
        &mut self,
        key: String,
        connection: Resource<Connection>,
        cursor: String,
    ) -> wasmtime::Result<()> {
        let connection = self.table.delete(connection)?;
        self.held_writes
            .give(key, connection, cursor, &self.limits.budget);
        Ok(())
    }
}
