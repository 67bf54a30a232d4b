//! WIT `elicitation`: a question to the client, through the elicitor the
//! transport granted ([`crate::transport::questions`]); none, none asked.

use crate::runtime::CallState;
use crate::runtime::bindings::rustpad;

impl rustpad::mcp::elicitation::Host for CallState {
    async fn ask(&mut self, params_json: String) -> wasmtime::Result<Result<String, String>> {
        match &self.elicitor {
            Some(elicitor) => Ok(elicitor.ask(params_json).await),
            None => Ok(Err("this transport cannot ask the client".into())),
        }
    }
}
