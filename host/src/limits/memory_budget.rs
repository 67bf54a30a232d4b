//! The memory all running calls may hold together: every instance's linear
//! memory and the buffers of every Rustpad socket come out of one budget
//! (`RUSTPAD_MCP_MAX_MEMORY`). A call that would go past it is refused with a
//! message saying so, at once: never a slowdown, never a wait.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// What the budget is counted in.
const UNIT_BYTES: usize = 1024;

pub struct MemoryBudget {
    units: Arc<Semaphore>,
    limit_mib: usize,
}

/// Memory taken from the budget, given back when dropped.
pub struct Reservation {
    _units: Option<OwnedSemaphorePermit>,
}

impl MemoryBudget {
    pub fn new(limit_mib: usize) -> MemoryBudget {
        let units = (limit_mib << 20) / UNIT_BYTES;
        MemoryBudget {
            units: Arc::new(Semaphore::new(units.min(Semaphore::MAX_PERMITS))),
            limit_mib,
        }
    }

    /// Takes `bytes` from the budget, or says why it cannot.
    pub fn reserve(&self, bytes: usize) -> Result<Reservation, String> {
        if bytes == 0 {
            return Ok(Reservation { _units: None });
        }
        let units = u32::try_from(bytes.div_ceil(UNIT_BYTES)).map_err(|_| self.exhausted())?;
        self.units
            .clone()
            .try_acquire_many_owned(units)
            .map(|permit| Reservation {
                _units: Some(permit),
            })
            .map_err(|_| self.exhausted())
    }

    /// Makes `reservation` hold `bytes` in all, taking or giving back the
    /// difference; on refusal it holds what it held.
    pub fn resize(&self, reservation: &mut Reservation, bytes: usize) -> Result<(), String> {
        let wanted = u32::try_from(bytes.div_ceil(UNIT_BYTES)).map_err(|_| self.exhausted())?;
        let held = reservation._units.as_ref().map_or(0, |p| p.num_permits());
        let wanted = wanted as usize;
        if wanted > held {
            let more = self.reserve((wanted - held) * UNIT_BYTES)?;
            match (&mut reservation._units, more._units) {
                (Some(units), Some(more)) => units.merge(more),
                (units, more) => *units = more,
            }
        } else if let Some(units) = &mut reservation._units {
            drop(units.split(held - wanted));
        }
        Ok(())
    }

    /// The refusal every caller shows.
    pub fn exhausted(&self) -> String {
        format!(
            "the memory this server gives running calls ({} MiB, RUSTPAD_MCP_MAX_MEMORY) is all in use by other calls; try again when some have finished",
            self.limit_mib
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_are_given_back_when_dropped() {
        let budget = MemoryBudget::new(1);
        let half = budget.reserve(512 << 10).unwrap();
        let rest = budget.reserve(512 << 10).unwrap();
        let refusal = budget.reserve(1).err().unwrap();
        assert!(
            refusal.contains("1 MiB, RUSTPAD_MCP_MAX_MEMORY"),
            "{refusal}"
        );
        drop(half);
        assert!(budget.reserve(1).is_ok());
        drop(rest);
        assert!(budget.reserve(usize::MAX).is_err());
        // Resized up and down, within what is free.
        let mut grown = budget.reserve(1).unwrap();
        budget.resize(&mut grown, 1 << 20).unwrap();
        assert!(budget.reserve(1).is_err());
        assert!(budget.resize(&mut grown, 2 << 20).is_err());
        budget.resize(&mut grown, 256 << 10).unwrap();
        let _rest = budget.reserve(768 << 10).unwrap();
        assert!(budget.reserve(1).is_err());
        assert!(budget.reserve(0).is_ok());
    }
}
