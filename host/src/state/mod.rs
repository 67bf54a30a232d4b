//! What outlives a call, kept here for the component, opaque to the host:
//! - for the whole process, shared by every instance: running totals and
//!   turns ([`running_totals`], behind the WIT interface `tally`) and which
//!   of Rustpad's connections this process wrote over ([`own_writes`],
//!   behind `writers`), and the write connections kept between calls
//!   ([`held_writes`], behind `held-writes`);
//! - for one client's session (a stdio connection, a 2025-11-25 HTTP
//!   session): what it used lately ([`recently_used`], behind `recent`), its
//!   subscriptions and the watchers behind them ([`watches`], behind
//!   `watches`), the bounded queue its lines wait in for the client
//!   ([`client_queue`]) and the address its caps are counted by
//!   ([`client_address`]);
//! - for the user, on disk: the seal key a stdio server reuses
//!   ([`seal_key`]).

pub mod client_address;
pub mod client_queue;
pub mod held_writes;
pub mod own_writes;
pub mod recently_used;
pub mod running_totals;
pub mod seal_key;
pub mod watches;
