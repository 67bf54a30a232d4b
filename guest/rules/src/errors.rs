//! How an import of the `server` world fails, by kind: the twin of the
//! WIT's `errors` interface for code on either side that has no bindings of
//! it (the host's sockets before a failure crosses the contract, and the
//! component's own socket in WebAssembly hosts), so that both say the same
//! kind for the same failure.

use std::fmt;

/// What a caller can do about a failure (each kind is documented on the
/// WIT's `error-kind`, which this mirrors name for name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    Refused,
    Unsupported,
    Busy,
    TooLarge,
    Unreachable,
    NotWebsocket,
    Closed,
    TimedOut,
    Cancelled,
    Rejected,
    Invalid,
}

/// A failure: its kind, and what happened in words for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
