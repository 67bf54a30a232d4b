//! The component's imports beyond WASI, as this host grants them: one file
//! per interface of the `server` world (wit/world.wit) that the host
//! implements for every instance ([`super::CallState`]), each named after its
//! interface: [`websocket`] through the egress policy, questions to the
//! client ([`elicitation`]), running totals and turns ([`tally`]), places for
//! tool calls ([`calls`]), the record of this process's [`writers`], the
//! session's subscriptions and held listens ([`watches`]), and what a session
//! used lately ([`recent`]).

mod calls;
mod elicitation;
mod recent;
mod tally;
mod watches;
mod websocket;
mod writers;
