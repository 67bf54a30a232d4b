//! What outlives a call. For the whole process: the running totals and
//! turns ([`tally`]) and the record of its own writes ([`writers`]). For one
//! client's session: what it used lately ([`recent`]), its subscriptions and
//! the watchers behind them ([`watches`]), the bounded queue its lines wait
//! in ([`outbox`]) and the address its caps are counted by
//! ([`client_address`]). For the user: the seal key ([`user_state`]).

pub mod client_address;
pub mod outbox;
pub mod recent;
pub mod tally;
pub mod user_state;
pub mod watches;
pub mod writers;
