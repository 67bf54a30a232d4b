//! What the process may hold at once, whatever the transport: the memory all
//! running calls share ([`memory_budget`]), the places for tool calls
//! ([`call_places`]) and the open files its sockets need ([`open_files`]).

pub mod call_places;
pub mod memory_budget;
pub mod open_files;
