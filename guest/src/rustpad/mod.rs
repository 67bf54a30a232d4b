//! The Rustpad client: its HTTP API for reads, its collaboration socket for
//! everything that needs a revision, and the OT arithmetic in between.

pub mod authorship;
pub mod base;
mod caret;
pub mod change;
pub mod check;
mod error;
pub mod fold;
pub mod heard;
pub mod http;
mod kept;
pub mod marks;
pub mod order;
pub mod ot;
pub mod positions;
mod protocol;
pub mod rebase;
mod settle;
pub mod since;
pub mod socket;
pub mod state;
pub mod stats;
pub mod track;
pub mod undo;
pub mod url;
pub mod watch;

pub use error::{Error, wire_problem};
