//! Where instances run: a pool of slots that wasmtime's pooling allocator
//! maps once and hands to one message after another, and past it, fresh
//! instances as before.
//!
//! Why: on a long pad most of a call's CPU went to the kernel, mapping a
//! fresh reservation and the component's memory image for every message and
//! unmapping them after ([reliability](../../../docs/reliability.md#where-a-long-pads-time-goes)).
//! A slot's memory is still reset when its call ends (wasmtime's own reset:
//! the image restored, the rest zeroed), and so is its fiber stack, so a call
//! starts from the same memory as a fresh instance and nothing of one call's
//! text is left for the next.
//!
//! How the reset is done decides what a long pad costs, since a write there
//! carries the text in and out of its instance. Pages handed back to the
//! kernel must be faulted in and cleared again by the next call, about 3 µs
//! each on the machine we measured: most of what grew with the text. So the
//! pages a call wrote stay in the slot: wasmtime asks the kernel which ones
//! were written (`PAGEMAP_SCAN`, Linux 6.7 and later) and resets those in
//! place, up to [`RESIDENT_BYTES`] of memory and [`STACK_RESIDENT_BYTES`] at
//! the top of the stack; the rest goes back to the kernel, sixteen slots at
//! a time (one at a time cost most of the gain). On an older kernel all of a
//! slot's memory goes back to the kernel, as it did before. The cost is
//! memory that stays resident between calls, outside the memory budget of
//! running calls: at most those bytes for each slot ever used at once, and
//! never more than a sixteenth of that budget in all.
//!
//! How many: setting the pool up costs about 3 µs per slot at startup
//! (measured: 2,048 slots added 6 ms to a start of 8), so it has
//! [`SLOTS`], enough for every call of a busy client at once. When they are
//! all taken, a message runs in a fresh instance of a second engine, made
//! ready the first time it is needed: the memory budget stays the only limit
//! on how many run at once.

use wasmtime::{
    Config, Enabled, InstanceAllocationStrategy, PoolConcurrencyLimitError, PoolingAllocationConfig,
};

use super::{MAX_INSTANCES, MAX_TABLE_ELEMENTS};

/// Slots in the pool: four times the tool calls stdio serves at once by default.
pub const SLOTS: u32 = 64;
/// Slots whose memory and stack go back to the kernel in one batch.
const DECOMMITS_AT_ONCE: usize = 16;
/// A slot's memory reset in place rather than handed back: what an append
/// writes on a pad of one-byte characters near Rustpad's size limit (its text
/// in, as a rope, and out). Measured at 250,000 characters: 5 page faults a
/// call with 1 MiB, 76 with 512 KiB, 199 with none.
pub const RESIDENT_BYTES: usize = 1 << 20;
/// The top of a slot's fiber stack, zeroed in place: what a call uses.
pub const STACK_RESIDENT_BYTES: usize = 128 << 10;
/// Linear memories and tables one component may have; the built-in one has
/// fewer. A component with more (`--component FILE`) fails to load, saying why.
const MEMORIES_PER_INSTANCE: u32 = 2;
const TABLES_PER_INSTANCE: u32 = 8;

/// The pool keeps at most this share of the memory budget resident between
/// calls: a slot keeps less than [`RESIDENT_BYTES`] when the budget is small.
const BUDGET_SHARE: usize = 16;

/// Sets `config` to take instances from a pool of `slots` slots, for a
/// process whose running calls may hold `memory_mib` MiB together.
pub fn configure(config: &mut Config, slots: u32, memory_mib: usize) {
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(slots)
        .total_core_instances(slots.saturating_mul(MAX_INSTANCES as u32))
        .total_memories(slots.saturating_mul(MEMORIES_PER_INSTANCE))
        .total_tables(slots.saturating_mul(TABLES_PER_INSTANCE))
        .total_stacks(slots)
        .max_memories_per_component(MEMORIES_PER_INSTANCE)
        .max_tables_per_component(TABLES_PER_INSTANCE)
        .max_core_instances_per_component(MAX_INSTANCES as u32)
        .table_elements(MAX_TABLE_ELEMENTS)
        // A slot that ran before is taken before a fresh one, so the stacks
        // ever touched are those of the most instances that ran at once.
        .max_unused_warm_slots(0)
        .decommit_batch_size(DECOMMITS_AT_ONCE)
        .async_stack_keep_resident(STACK_RESIDENT_BYTES);
    // Without the scan, wasmtime would reset all of those bytes at every
    // call, written or not: slower than handing them back.
    let resident = resident_bytes(slots, memory_mib);
    if resident > 0 && PoolingAllocationConfig::is_pagemap_scan_available() {
        pool.pagemap_scan(Enabled::Yes)
            .linear_memory_keep_resident(resident);
    }
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    config.async_stack_zeroing(true);
}

/// What each of `slots` slots may keep resident of its memory, with a budget
/// of `memory_mib` MiB for running calls.
fn resident_bytes(slots: u32, memory_mib: usize) -> usize {
    let share = memory_mib.saturating_mul(1 << 20) / BUDGET_SHARE;
    (share / slots.max(1) as usize).min(RESIDENT_BYTES)
}

/// Whether `error` says the pool had no slot for the instance.
pub fn full(error: &wasmtime::Error) -> bool {
    error.downcast_ref::<PoolConcurrencyLimitError>().is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_slots_keep_resident_stays_within_a_share_of_the_budget() {
        // The default budget (2,048 MiB) lets each of 64 slots keep its 1 MiB.
        assert_eq!(resident_bytes(SLOTS, 2048), RESIDENT_BYTES);
        // The smallest (64 MiB) keeps 4 MiB in all.
        assert_eq!(resident_bytes(SLOTS, 64), 64 << 10);
        for memory_mib in [64, 100, 300, 2048, 1 << 20] {
            let pool = resident_bytes(SLOTS, memory_mib) * SLOTS as usize;
            assert!(
                pool <= (memory_mib << 20) / BUDGET_SHARE,
                "{memory_mib} MiB"
            );
        }
    }
}
