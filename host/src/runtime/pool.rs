//! Where instances run: a pool of slots that wasmtime's pooling allocator
//! maps once and hands to one message after another, and past it, fresh
//! instances as before.
//!
//! Why: on a long pad most of a call's CPU went to the kernel, mapping a
//! fresh reservation and the component's memory image for every message and
//! unmapping them after ([reliability](../../../docs/reliability.md#where-a-long-pads-time-goes)).
//! A slot's memory is still reset when its call ends (wasmtime's own reset:
//! the image restored, the rest handed back to the kernel), and so is its
//! fiber stack (zeroed), so a call starts from the same memory as a fresh
//! instance and nothing of one call's text is left for the next. Those resets
//! go to the kernel sixteen at a time: one at a time, zeroing stacks cost
//! most of the gain.
//!
//! How many: setting the pool up costs about 3 µs per slot at startup
//! (measured: 2,048 slots added 6 ms to a start of 8), so it has
//! [`SLOTS`], enough for every call of a busy client at once. When they are
//! all taken, a message runs in a fresh instance of a second engine, made
//! ready the first time it is needed: the memory budget stays the only limit
//! on how many run at once.

use wasmtime::{
    Config, InstanceAllocationStrategy, PoolConcurrencyLimitError, PoolingAllocationConfig,
};

use super::{MAX_INSTANCES, MAX_TABLE_ELEMENTS};

/// Slots in the pool: four times the tool calls stdio serves at once by default.
pub const SLOTS: u32 = 64;
/// Slots whose memory and stack go back to the kernel in one batch.
const DECOMMITS_AT_ONCE: usize = 16;
/// Linear memories and tables one component may have; the built-in one has
/// fewer. A component with more (`--component FILE`) fails to load, saying why.
const MEMORIES_PER_INSTANCE: u32 = 2;
const TABLES_PER_INSTANCE: u32 = 8;

/// Sets `config` to take instances from a pool of `slots` slots.
pub fn configure(config: &mut Config, slots: u32) {
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
        .decommit_batch_size(DECOMMITS_AT_ONCE);
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    config.async_stack_zeroing(true);
}

/// Whether `error` says the pool had no slot for the instance.
pub fn full(error: &wasmtime::Error) -> bool {
    error.downcast_ref::<PoolConcurrencyLimitError>().is_some()
}
