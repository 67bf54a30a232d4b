//! WIT `watches`: a session's subscriptions, or a request held open as a
//! listen ([`crate::state::watches`]), where the transport allows them.

use crate::runtime::CallState;
use crate::runtime::bindings::rustpad;
use crate::runtime::bindings::rustpad::mcp::errors::{Error, ErrorKind};
use crate::runtime::bindings::rustpad::mcp::watches::Watch;
use crate::state::watches;

use super::{crossing, error};

impl rustpad::mcp::watches::Host for CallState {
    async fn start(&mut self, watch: Watch) -> wasmtime::Result<Result<(), Error>> {
        Ok(match &self.watching.session {
            Some(scope) => scope
                .watch_all(vec![watches::Watch {
                    subject: watch.subject,
                    update: watch.update,
                    cursor: watch.cursor,
                }])
                .map_err(crossing),
            None => Err(error(
                ErrorKind::Unsupported,
                "this transport keeps no session to keep a subscription in",
            )),
        })
    }

    async fn stop(&mut self, subject: String) -> wasmtime::Result<bool> {
        Ok(self
            .watching
            .session
            .as_ref()
            .is_some_and(|scope| scope.stop(&subject)))
    }

    async fn hold(
        &mut self,
        opening: String,
        closing: String,
        asked: Vec<Watch>,
    ) -> wasmtime::Result<Result<(), Error>> {
        let Some(holds) = &self.watching.holds else {
            return Ok(Err(error(
                ErrorKind::Unsupported,
                "this transport cannot hold a request open",
            )));
        };
        if self.held.is_some() {
            return Ok(Err(error(
                ErrorKind::Unsupported,
                "the request is held already",
            )));
        }
        let asked = asked
            .into_iter()
            .map(|watch| watches::Watch {
                subject: watch.subject,
                update: watch.update,
                cursor: watch.cursor,
            })
            .collect();
        Ok(holds
            .hold(opening, closing, asked)
            .await
            .map(|held| {
                self.held = Some(held);
            })
            .map_err(crossing))
    }
}
