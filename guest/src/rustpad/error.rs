//! How talking to Rustpad can fail, in words for the model: the tools pass
//! these on as they are.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// It failed before anything was written (or the call only reads).
    Failed(String),
    /// An edit was sent and Rustpad never acknowledged it: whether it was
    /// made is unknown, and the message says how to find out.
    Unacknowledged(String),
}

impl Error {
    pub fn new(message: impl Into<String>) -> Error {
        Error::Failed(message.into())
    }

    pub fn message(&self) -> &str {
        match self {
            Error::Failed(message) | Error::Unacknowledged(message) => message,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.message())
    }
}
