//! WIT `websocket`: the component's WebSocket connections, opened through
//! the egress policy ([`crate::egress::websocket`]); time spent in them is
//! waiting, not work.

use std::time::Duration;

use wasmtime::component::Resource;

use crate::egress::websocket::Connection;
use crate::runtime::CallState;
use crate::runtime::bindings::rustpad;
use crate::runtime::bindings::rustpad::mcp::errors::Error;

use super::crossing;

impl rustpad::mcp::websocket::Host for CallState {}

impl rustpad::mcp::websocket::HostConnection for CallState {
    async fn connect(
        &mut self,
        url: String,
    ) -> wasmtime::Result<Result<Resource<Connection>, Error>> {
        match self
            .waited
            .clone()
            .around(Connection::open(&self.egress, &self.limits.budget, &url))
            .await
        {
            Ok(connection) => Ok(Ok(self.table.push(connection)?)),
            Err(failure) => Ok(Err(crossing(failure))),
        }
    }

    async fn send(
        &mut self,
        connection: Resource<Connection>,
        text: String,
    ) -> wasmtime::Result<Result<(), Error>> {
        let waited = self.waited.clone();
        Ok(waited
            .around(self.table.get_mut(&connection)?.send(text))
            .await
            .map_err(crossing))
    }

    async fn recv(
        &mut self,
        connection: Resource<Connection>,
        timeout_ms: u32,
    ) -> wasmtime::Result<Result<Option<String>, Error>> {
        let timeout = Duration::from_millis(u64::from(timeout_ms));
        let waited = self.waited.clone();
        Ok(waited
            .around(self.table.get_mut(&connection)?.recv(timeout))
            .await
            .map_err(crossing))
    }

    async fn close(&mut self, connection: Resource<Connection>) -> wasmtime::Result<()> {
        self.table.get_mut(&connection)?.close().await;
        Ok(())
    }

    async fn drop(&mut self, connection: Resource<Connection>) -> wasmtime::Result<()> {
        self.table.delete(connection)?;
        Ok(())
    }
}
