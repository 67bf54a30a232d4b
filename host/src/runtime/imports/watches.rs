//! WIT `watches`: a session's subscriptions, or a request held open as a
//! listen ([`crate::state::watches`]), where the transport allows them.

use crate::runtime::CallState;
use crate::runtime::bindings::rustpad;
use crate::runtime::bindings::rustpad::mcp::watches::Watch;
use crate::state::watches;

impl rustpad::mcp::watches::Host for CallState {
    async fn start(&mut self, watch: Watch) -> wasmtime::Result<Result<(), String>> {
        Ok(match &self.watching.session {
            Some(scope) => scope.watch_all(vec![watches::Watch {
                subject: watch.subject,
                update: watch.update,
                cursor: watch.cursor,
            }]),
            None => Err("this transport keeps no session to keep a subscription in".into()),
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
    ) -> wasmtime::Result<Result<(), String>> {
        let Some(holds) = &self.watching.holds else {
            return Ok(Err("this transport cannot hold a request open".into()));
        };
        if self.held.is_some() {
            return Ok(Err("the request is held already".into()));
        }
        let asked = asked
            .into_iter()
            .map(|watch| watches::Watch {
                subject: watch.subject,
                update: watch.update,
                cursor: watch.cursor,
            })
            .collect();
        Ok(holds.hold(opening, closing, asked).await.map(|held| {
            self.held = Some(held);
        }))
    }
}
