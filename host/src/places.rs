//! Places for tool calls: how many may run at once, and what a call past
//! them is told. The component decides what is a tool call (it asks for a
//! place through `calls.enter`); the transport decides how many there are.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub struct CallPlaces {
    places: Arc<Semaphore>,
    refusal: String,
}

impl CallPlaces {
    /// `count` places; the refusal names `setting`, which changes it.
    pub fn new(count: usize, setting: &str) -> CallPlaces {
        CallPlaces {
            places: Arc::new(Semaphore::new(count)),
            refusal: format!(
                "{count} tool calls are already running, as many as this server runs at once ({setting}); retry when one has finished"
            ),
        }
    }

    /// A place, held until dropped, or the refusal.
    pub fn take(&self) -> Result<OwnedSemaphorePermit, String> {
        self.places
            .clone()
            .try_acquire_owned()
            .map_err(|_| self.refusal.clone())
    }
}
