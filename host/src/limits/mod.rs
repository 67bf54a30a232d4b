//! What the process may hold at once, whatever the transport: the memory all
//! running calls share ([`budget`]), the places for tool calls ([`places`])
//! and the open files its sockets need ([`open_files`]).

pub mod budget;
pub mod open_files;
pub mod places;
