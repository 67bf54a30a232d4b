//! What one instance may use, and nothing more: its WASI context without
//! files or sockets, the egress hook under its HTTP requests, its memory cap
//! (drawn from the process's budget), and the time it spent waiting.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::OwnedSemaphorePermit;
use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpHooks, WasiHttpView};

use super::{MAX_INSTANCES, MAX_TABLE_ELEMENTS, MEMORY_LIMIT_BYTES};
use crate::egress::policy::Egress;
use crate::limits::call_places::CallPlaces;
use crate::limits::memory_budget::{MemoryBudget, Reservation};
use crate::state::held_writes::HeldWrites;
use crate::state::own_writes::OwnWrites;
use crate::state::recently_used::RecentlyUsed;
use crate::state::running_totals::RunningTotals;
use crate::state::watches::{Held, Watching};

/// Who the component asks when it needs a person (MCP elicitation).
pub trait Elicitor: Send + Sync {
    /// The client's answer (its `ElicitResult` as JSON), or why there is none.
    fn ask(
        &self,
        params: String,
    ) -> Pin<Box<dyn Future<Output = Result<String, rustpad_mcp_rules::errors::Error>> + Send>>;
}

/// Everything one instance may use, and nothing more.
pub struct CallState {
    pub(super) wasi: WasiCtx,
    pub(super) table: ResourceTable,
    pub(super) http: WasiHttpCtx,
    pub(super) hooks: EgressHooks,
    pub(super) limits: MemoryCap,
    pub(super) egress: Arc<Egress>,
    pub(super) tallies: Arc<RunningTotals>,
    pub(super) writers: Arc<OwnWrites>,
    pub(super) held_writes: Arc<HeldWrites>,
    pub(super) elicitor: Option<Arc<dyn Elicitor>>,
    /// Where tool calls get their place; none: no bound.
    pub(super) places: Option<Arc<CallPlaces>>,
    pub(super) watching: Watching,
    /// What this instance's session used lately, if it has a session.
    pub(super) recent: Option<Arc<RecentlyUsed>>,
    /// The request this instance held open, for the call to keep.
    pub(super) held: Option<Held>,
    /// The place this instance's tool call holds, once it took one.
    pub(super) place: Option<OwnedSemaphorePermit>,
    pub(super) waited: Waited,
}

/// Time a call spent waiting on Rustpad (sockets and HTTP), in nanoseconds.
#[derive(Clone, Default)]
pub(super) struct Waited(Arc<AtomicU64>);

impl Waited {
    pub(super) async fn around<T>(&self, work: impl Future<Output = T>) -> T {
        let started = Instant::now();
        let outcome = work.await;
        let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.0.fetch_add(nanos, Ordering::Relaxed);
        outcome
    }

    pub(super) fn total(&self) -> Duration {
        Duration::from_nanos(self.0.load(Ordering::Relaxed))
    }
}

/// The memory cap of one instance, whose memory also comes out of the
/// process's budget; it remembers why it refused, to say so.
pub(super) struct MemoryCap {
    pub(super) budget: Arc<MemoryBudget>,
    /// What this instance's memories took from the budget.
    pub(super) taken: Vec<Reservation>,
    pub(super) refused: Option<Refused>,
    /// The most linear memory the instance asked for, in bytes.
    pub(super) peak: usize,
}

/// Why a memory could not grow.
#[derive(Clone, Copy)]
pub(super) enum Refused {
    /// Past this instance's own cap.
    Cap,
    /// Past what the process's running calls may hold together.
    Budget,
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > MEMORY_LIMIT_BYTES {
            self.refused = Some(Refused::Cap);
            return Ok(false);
        }
        match self.budget.reserve(desired.saturating_sub(current)) {
            Ok(reservation) => self.taken.push(reservation),
            Err(_) => {
                self.refused = Some(Refused::Budget);
                return Ok(false);
            }
        }
        self.peak = self.peak.max(desired);
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }

    fn instances(&self) -> usize {
        MAX_INSTANCES
    }
}

/// wasi:http's hook: every request goes through the egress policy.
pub(super) struct EgressHooks(pub(super) Arc<Egress>, pub(super) Waited);

type HttpOutcome = wasmtime_wasi_http::Result<(
    http::Response<wasmtime_wasi_http::WasiBody>,
    Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
)>;

impl WasiHttpHooks for EgressHooks {
    fn send_request(
        &mut self,
        request: http::Request<wasmtime_wasi_http::WasiBody>,
        options: Option<wasmtime_wasi_http::RequestOptions>,
        _io: Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
    ) -> Box<dyn Future<Output = HttpOutcome> + Send> {
        let (egress, waited) = (self.0.clone(), self.1.clone());
        Box::new(async move {
            let response = waited.around(egress.send_http(request, options)).await?;
            let done: Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send> =
                Box::new(async { Ok(()) });
            Ok((response, done))
        })
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for CallState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.hooks,
        }
    }
}
