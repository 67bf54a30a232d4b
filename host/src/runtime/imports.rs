//! The component's imports beyond WASI, as this host grants them: the
//! WebSocket through the egress policy, questions to the client, running
//! totals and turns, places for tool calls, the record of this process's
//! writers, and what a session used lately.

use std::time::Duration;

use wasmtime::component::Resource;

use super::bindings::rustpad;
use super::bindings::rustpad::mcp::tally::Amount;
use super::bindings::rustpad::mcp::watches::Watch;
use super::state::CallState;
use crate::egress::websocket::Connection;
use crate::limits::places::CallPlaces;
use crate::state::tally::{self, Turn};
use crate::state::watches;

impl rustpad::mcp::websocket::Host for CallState {}

impl rustpad::mcp::websocket::HostConnection for CallState {
    async fn connect(
        &mut self,
        url: String,
    ) -> wasmtime::Result<Result<Resource<Connection>, String>> {
        match self
            .waited
            .clone()
            .around(Connection::open(&self.egress, &self.limits.budget, &url))
            .await
        {
            Ok(connection) => Ok(Ok(self.table.push(connection)?)),
            Err(reason) => Ok(Err(reason)),
        }
    }

    async fn send(
        &mut self,
        connection: Resource<Connection>,
        text: String,
    ) -> wasmtime::Result<Result<(), String>> {
        let waited = self.waited.clone();
        Ok(waited
            .around(self.table.get_mut(&connection)?.send(text))
            .await)
    }

    async fn recv(
        &mut self,
        connection: Resource<Connection>,
        timeout_ms: u32,
    ) -> wasmtime::Result<Result<Option<String>, String>> {
        let timeout = Duration::from_millis(u64::from(timeout_ms));
        let waited = self.waited.clone();
        Ok(waited
            .around(self.table.get_mut(&connection)?.recv(timeout))
            .await)
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

impl rustpad::mcp::elicitation::Host for CallState {
    async fn ask(&mut self, params_json: String) -> wasmtime::Result<Result<String, String>> {
        match &self.elicitor {
            Some(elicitor) => Ok(elicitor.ask(params_json).await),
            None => Ok(Err("this transport cannot ask the client".into())),
        }
    }
}

impl rustpad::mcp::tally::Host for CallState {
    async fn add(
        &mut self,
        key: String,
        amount: Amount,
        window_seconds: u32,
    ) -> wasmtime::Result<Option<Vec<Amount>>> {
        let amount = tally::Amount {
            value: amount.value,
            made_at: amount.made_at,
        };
        let window = Duration::from_secs(u64::from(window_seconds));
        Ok(self.tallies.add(key, amount, window).map(|amounts| {
            amounts
                .into_iter()
                .map(|amount| Amount {
                    value: amount.value,
                    made_at: amount.made_at,
                })
                .collect()
        }))
    }

    async fn take_turn(
        &mut self,
        key: String,
        wait_ms: u32,
    ) -> wasmtime::Result<Option<Resource<Turn>>> {
        let wait = Duration::from_millis(u64::from(wait_ms));
        let tallies = self.tallies.clone();
        // Waiting for another call's turn is waiting, not work.
        match self
            .waited
            .clone()
            .around(tallies.take_turn(key, wait))
            .await
        {
            Some(turn) => Ok(Some(self.table.push(turn)?)),
            None => Ok(None),
        }
    }
}

impl rustpad::mcp::tally::HostTurn for CallState {
    async fn drop(&mut self, turn: Resource<Turn>) -> wasmtime::Result<()> {
        self.table.delete(turn)?;
        Ok(())
    }
}

impl rustpad::mcp::calls::Host for CallState {
    async fn enter(&mut self) -> wasmtime::Result<Result<(), String>> {
        Ok(self.take_place(CallPlaces::take))
    }

    async fn enter_wait(&mut self) -> wasmtime::Result<Result<(), String>> {
        Ok(self.take_place(CallPlaces::take_for_waiting))
    }
}

impl CallState {
    /// One place per instance, held until it ends; no bound without places.
    fn take_place(
        &mut self,
        take: impl Fn(&CallPlaces) -> Result<tokio::sync::OwnedSemaphorePermit, String>,
    ) -> Result<(), String> {
        if self.place.is_some() {
            return Ok(());
        }
        let Some(places) = &self.places else {
            return Ok(());
        };
        take(places).map(|place| {
            self.place = Some(place);
        })
    }
}

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

impl rustpad::mcp::watches::Host for CallState {
    async fn start(&mut self, watch: Watch) -> wasmtime::Result<Result<(), String>> {
        Ok(match &self.watching.session {
            Some(scope) => scope.watch_all(vec![watches::Watch {
                subject: watch.subject,
                update: watch.update,
                cursor: watch.cursor,
            }]),
            None => Err("this transport keeps no session to keep a subscription in".into()),
        })
    }

    async fn stop(&mut self, subject: String) -> wasmtime::Result<bool> {
        Ok(self
            .watching
            .session
            .as_ref()
            .is_some_and(|scope| scope.stop(&subject)))
    }

    async fn hold(
        &mut self,
        opening: String,
        closing: String,
        asked: Vec<Watch>,
    ) -> wasmtime::Result<Result<(), String>> {
        let Some(holds) = &self.watching.holds else {
            return Ok(Err("this transport cannot hold a request open".into()));
        };
        if self.held.is_some() {
            return Ok(Err("the request is held already".into()));
        }
        let asked = asked
            .into_iter()
            .map(|watch| watches::Watch {
                subject: watch.subject,
                update: watch.update,
                cursor: watch.cursor,
            })
            .collect();
        Ok(holds.hold(opening, closing, asked).await.map(|held| {
            self.held = Some(held);
        }))
    }
}
