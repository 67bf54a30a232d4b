//! WIT `elicitation`: a question to the client, through the elicitor the
//! transport granted ([`crate::transport::questions`]); none, none asked.

use crate::runtime::CallState;
use crate::runtime::bindings::rustpad;
use crate::runtime::bindings::rustpad::mcp::errors::{Error, ErrorKind};

use super::{crossing, error};

impl rustpad::mcp::elicitation::Host for CallState {
    async fn ask(&mut self, params_json: String) -> wasmtime::Result<Result<String, Error>> {
        Ok(match &self.elicitor {
            Some(elicitor) => elicitor.ask(params_json).await.map_err(crossing),
            None => Err(error(
                ErrorKind::Unsupported,
                "this transport cannot ask the client",
            )),
        })
    }
}
