//! The one wasmtime configuration for the component: build.rs uses it to
//! precompile the built-in component, the runtime to load it. Code compiled
//! under one configuration only loads under the same one (wasmtime refuses
//! anything else), so both sides call this function rather than keep copies.
//!
//! This file is also compiled into build.rs (`#[path]`), so it uses nothing
//! but wasmtime.

/// Guest stack one instance may use.
pub const MAX_WASM_STACK: usize = 1 << 20;

/// Fuel metering for the CPU budget, and the stack limit.
pub fn config() -> wasmtime::Config {
    let mut config = wasmtime::Config::new();
    config.consume_fuel(true);
    config.max_wasm_stack(MAX_WASM_STACK);
    config
}
