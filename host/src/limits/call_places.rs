//! Places for tool calls: how many may run at once, and what a call past
//! them is told. The component decides what is a tool call (it asks for a
//! place through `calls.enter`); the transport decides how many there are.
//!
//! Behind the WIT interface `calls` (runtime::imports::calls).

use rustpad_mcp_rules::errors::{Error as ImportError, ErrorKind};
use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub struct CallPlaces {
    places: Arc<Semaphore>,
    refusal: String,
    /// Places for calls that wait for people, apart from the others.
    waits: Arc<Semaphore>,
    wait_refusal: String,
}

/// Calls that wait for people get this share of the other calls' places
/// (one in four, at least one), as places of their own.
pub const WAITS_PER_CALL: usize = 4;

impl CallPlaces {
    /// `count` places (and a quarter as many for waits); the refusals name
    /// `setting`, which changes them.
    pub fn new(count: usize, setting: &str) -> CallPlaces {
        let waits = (count / WAITS_PER_CALL).max(1);
        CallPlaces {
            places: Arc::new(Semaphore::new(count)),
            refusal: format!(
                "{count} tool calls are already running, as many as this server runs at once ({setting}); retry when one has finished"
            ),
            waits: Arc::new(Semaphore::new(waits)),
            wait_refusal: format!(
                "{waits} calls are already waiting for changes, as many as this server lets wait at once (a quarter of {setting}); retry when one has finished"
            ),
        }
    }

    /// A place, held until dropped, or the refusal.
    pub fn take(&self) -> Result<OwnedSemaphorePermit, ImportError> {
        self.places
            .clone()
            .try_acquire_owned()
            .map_err(|_| ImportError::new(ErrorKind::Busy, self.refusal.clone()))
    }

    /// A place for a call that waits, held until dropped, or the refusal.
    pub fn take_for_waiting(&self) -> Result<OwnedSemaphorePermit, ImportError> {
        self.waits
            .clone()
            .try_acquire_owned()
            .map_err(|_| ImportError::new(ErrorKind::Busy, self.wait_refusal.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_have_places_of_their_own() {
        let places = CallPlaces::new(8, "SETTING");
        let waits: Vec<_> = (0..2).map(|_| places.take_for_waiting().unwrap()).collect();
        let refused = places.take_for_waiting().unwrap_err();
        assert!(refused.message.contains("a quarter of SETTING"));
        assert_eq!(refused.kind, ErrorKind::Busy);
        // Every other place is still free.
        let calls: Vec<_> = (0..8).map(|_| places.take().unwrap()).collect();
        assert!(places.take().is_err());
        drop((waits, calls));
        assert!(CallPlaces::new(1, "S").take_for_waiting().is_ok());
    }
}
