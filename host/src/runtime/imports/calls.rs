//! WIT `calls`: a place for a tool call, and one for a call that waits for
//! people, from the places the transport granted
//! ([`crate::limits::call_places`]); none granted, no bound.

use crate::limits::call_places::CallPlaces;
use crate::runtime::CallState;
use crate::runtime::bindings::rustpad;
use crate::runtime::bindings::rustpad::mcp::errors::Error;

use rustpad_mcp_rules::errors::Error as ImportError;

use super::crossing;

impl rustpad::mcp::calls::Host for CallState {
    async fn enter(&mut self) -> wasmtime::Result<Result<(), Error>> {
        Ok(self.take_place(CallPlaces::take))
    }

    async fn enter_wait(&mut self) -> wasmtime::Result<Result<(), Error>> {
        Ok(self.take_place(CallPlaces::take_for_waiting))
    }
}

impl CallState {
    /// One place per instance, held until it ends; no bound without places.
    fn take_place(
        &mut self,
        take: impl Fn(&CallPlaces) -> Result<tokio::sync::OwnedSemaphorePermit, ImportError>,
    ) -> Result<(), Error> {
        if self.place.is_some() {
            return Ok(());
        }
        let Some(places) = &self.places else {
            return Ok(());
        };
        take(places)
            .map(|place| {
                self.place = Some(place);
            })
            .map_err(crossing)
    }
}
