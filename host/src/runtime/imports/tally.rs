//! WIT `tally`: running totals and turns shared by every instance in the
//! process ([`crate::state::running_totals`]).

use std::time::Duration;

use wasmtime::component::Resource;

use crate::runtime::CallState;
use crate::runtime::bindings::rustpad;
use crate::runtime::bindings::rustpad::mcp::tally::Amount;
use crate::state::running_totals::{self as tally, Turn};

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
