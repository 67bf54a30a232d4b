//! The component runtime: one engine and one pre-instantiated component per
//! process, and a fresh store and instance for every message.
//!
//! A fresh instance per message costs tens of microseconds and buys a lot: a
//! call that waits minutes for a person blocks nothing else, a trapped or
//! cancelled call leaves nothing behind, and no state leaks between calls.
//! Each store gets a memory cap and a CPU budget in fuel, which counts only
//! guest execution (time spent waiting on the network or a person is free).

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use wasmtime::component::{Component, HasSelf, Linker, Resource, ResourceTable};
use wasmtime::{Cache, CacheConfig, Config, Engine, ResourceLimiter, Store, Trap};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpHooks, WasiHttpView};

use crate::budget::{MemoryBudget, Reservation};
use crate::egress::Egress;
use crate::single_use::SpentIds;
use crate::tally::Tallies;
use crate::websocket::Connection;

mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "server",
        imports: { default: async | trappable },
        exports: { default: async },
        with: {
            "wasi:io": wasmtime_wasi::p2::bindings::io,
            "wasi:clocks": wasmtime_wasi::p2::bindings::clocks,
            "wasi:http": wasmtime_wasi_http::p2::bindings::http,
            "rustpad:mcp/websocket.connection": crate::websocket::Connection,
        },
    });
}
use bindings::{Server, ServerPre, rustpad};

/// The component, built by build.rs and embedded in the binary.
const GUEST: &[u8] = include_bytes!(env!("GUEST_WASM"));

/// Linear memory one instance may grow to: room for a full pad with a long
/// edit history (see docs/performance.md for the figures).
pub const MEMORY_LIMIT_BYTES: usize = 256 << 20;
/// Component instances (core modules) one call may create.
const MAX_INSTANCES: usize = 16;
const MAX_TABLE_ELEMENTS: usize = 100_000;
/// Guest instructions one message may execute (about two seconds of CPU).
pub const FUEL_PER_MESSAGE: u64 = 20_000_000_000;
/// A busy guest hands the thread back this often, so other calls and
/// cancellations are not held up.
const FUEL_YIELD_INTERVAL: u64 = 10_000_000;

/// Who the component asks when it needs a person (MCP elicitation).
pub trait Elicitor: Send + Sync {
    fn ask(&self, params: String) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send>>;
}

/// Everything one instance may use, and nothing more.
pub struct CallState {
    wasi: WasiCtx,
    table: ResourceTable,
    http: WasiHttpCtx,
    hooks: EgressHooks,
    limits: MemoryCap,
    egress: Arc<Egress>,
    spent: Arc<SpentIds>,
    tallies: Arc<Tallies>,
    elicitor: Option<Arc<dyn Elicitor>>,
    waited: Waited,
}

/// Time a call spent waiting on Rustpad (sockets and HTTP), in nanoseconds.
#[derive(Clone, Default)]
struct Waited(Arc<AtomicU64>);

impl Waited {
    async fn around<T>(&self, work: impl Future<Output = T>) -> T {
        let started = Instant::now();
        let outcome = work.await;
        let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.0.fetch_add(nanos, Ordering::Relaxed);
        outcome
    }

    fn total(&self) -> Duration {
        Duration::from_nanos(self.0.load(Ordering::Relaxed))
    }
}

/// The memory cap of one instance, whose memory also comes out of the
/// process's budget; it remembers why it refused, to say so.
struct MemoryCap {
    budget: Arc<MemoryBudget>,
    /// What this instance's memories took from the budget.
    taken: Vec<Reservation>,
    refused: Option<Refused>,
    /// The most linear memory the instance asked for, in bytes.
    peak: usize,
}

/// Why a memory could not grow.
#[derive(Clone, Copy)]
enum Refused {
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
struct EgressHooks(Arc<Egress>, Waited);

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

impl rustpad::mcp::websocket::Host for CallState {}

impl rustpad::mcp::websocket::HostConnection for CallState {
    async fn connect(
        &mut self,
        url: String,
    ) -> wasmtime::Result<Result<Resource<Connection>, String>> {
        match self
            .waited
            .clone()
            .around(Connection::open(&self.egress, &self.limits.budget, &url))
            .await
        {
            Ok(connection) => Ok(Ok(self.table.push(connection)?)),
            Err(reason) => Ok(Err(reason)),
        }
    }

    async fn send(
        &mut self,
        connection: Resource<Connection>,
        text: String,
    ) -> wasmtime::Result<Result<(), String>> {
        let waited = self.waited.clone();
        Ok(waited
            .around(self.table.get_mut(&connection)?.send(text))
            .await)
    }

    async fn recv(
        &mut self,
        connection: Resource<Connection>,
        timeout_ms: u32,
    ) -> wasmtime::Result<Result<Option<String>, String>> {
        let timeout = Duration::from_millis(u64::from(timeout_ms));
        let waited = self.waited.clone();
        Ok(waited
            .around(self.table.get_mut(&connection)?.recv(timeout))
            .await)
    }

    async fn close(&mut self, connection: Resource<Connection>) -> wasmtime::Result<()> {
        self.table.get_mut(&connection)?.close().await;
        Ok(())
    }

    async fn drop(&mut self, connection: Resource<Connection>) -> wasmtime::Result<()> {
        self.table.delete(connection)?;
        Ok(())
    }
}

impl rustpad::mcp::elicitation::Host for CallState {
    async fn ask(&mut self, params_json: String) -> wasmtime::Result<Result<String, String>> {
        match &self.elicitor {
            Some(elicitor) => Ok(elicitor.ask(params_json).await),
            None => Ok(Err("this transport cannot ask the client".into())),
        }
    }
}

impl rustpad::mcp::single_use::Host for CallState {
    async fn spend(&mut self, id: String, ttl_seconds: u32) -> wasmtime::Result<bool> {
        Ok(self
            .spent
            .spend(id, Duration::from_secs(u64::from(ttl_seconds))))
    }
}

impl rustpad::mcp::tally::Host for CallState {
    async fn add(
        &mut self,
        key: String,
        amount: u64,
        window_seconds: u32,
    ) -> wasmtime::Result<Option<u64>> {
        Ok(self
            .tallies
            .add(key, amount, Duration::from_secs(u64::from(window_seconds))))
    }
}

/// What the component said about its configuration.
pub struct Startup {
    pub origin: Option<String>,
    pub insecure_tls: bool,
    pub notices: Vec<String>,
}

/// The component's answer to one message.
pub struct Reply {
    pub response: Option<String>,
    pub session: Option<String>,
    pub cost: Cost,
}

/// Where one message's time went.
#[derive(Debug, Clone, Copy)]
pub struct Cost {
    /// From creating the store to the component's return.
    pub total: Duration,
    /// Creating the store and instance.
    pub instantiate: Duration,
    /// Waiting on Rustpad: connecting, sending, receiving.
    pub waiting: Duration,
    /// Guest instructions executed (wasmtime fuel).
    pub fuel: u64,
    /// The guest's largest linear memory, in bytes.
    pub memory: usize,
}

impl Cost {
    /// One JSON line on stderr: where a call's time went (never any content).
    pub fn trace(&self, method: &str, id: Option<&serde_json::Value>) {
        let micros = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        eprintln!(
            "{}",
            serde_json::json!({
                "event": "call",
                "method": method,
                "id": id,
                "total_us": micros(self.total),
                "instantiate_us": micros(self.instantiate),
                "waiting_us": micros(self.waiting),
                "fuel": self.fuel,
                "memory_bytes": self.memory,
            })
        );
    }
}

/// A message the component could not finish, in words for the client.
#[derive(Debug)]
pub struct Failure(pub String);

/// One engine, one pre-instantiated component, shared by all calls.
pub struct Runtime {
    engine: Engine,
    pre: ServerPre<CallState>,
    env: Vec<(String, String)>,
    egress: Arc<Egress>,
    spent: Arc<SpentIds>,
    tallies: Arc<Tallies>,
    budget: Arc<MemoryBudget>,
}

impl Runtime {
    /// Loads the embedded component. `env` is all the environment it sees;
    /// all running calls together may hold `memory_mib`.
    /// Spent ids are kept in `spent`.
    pub fn load(
        env: Vec<(String, String)>,
        spent: SpentIds,
        memory_mib: usize,
    ) -> anyhow::Result<Runtime> {
        Runtime::load_bytes(GUEST, env, spent, memory_mib)
    }

    pub fn load_bytes(
        wasm: &[u8],
        env: Vec<(String, String)>,
        spent: SpentIds,
        memory_mib: usize,
    ) -> anyhow::Result<Runtime> {
        let mut config = Config::new();
        config.consume_fuel(true);
        config.max_wasm_stack(1 << 20);
        config.cache(compile_cache());
        let engine = Engine::new(&config)?;
        let component = Component::new(&engine, wasm)
            .map_err(|error| anyhow::anyhow!("loading the component: {error}"))?;
        let mut linker = Linker::<CallState>::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
        rustpad::mcp::websocket::add_to_linker::<_, HasSelf<CallState>>(&mut linker, |s| s)?;
        rustpad::mcp::elicitation::add_to_linker::<_, HasSelf<CallState>>(&mut linker, |s| s)?;
        rustpad::mcp::single_use::add_to_linker::<_, HasSelf<CallState>>(&mut linker, |s| s)?;
        rustpad::mcp::tally::add_to_linker::<_, HasSelf<CallState>>(&mut linker, |s| s)?;
        let pre = ServerPre::new(linker.instantiate_pre(&component)?)?;
        Ok(Runtime {
            engine,
            pre,
            env,
            egress: Egress::new(None, false),
            spent: Arc::new(spent),
            tallies: Arc::new(Tallies::default()),
            budget: Arc::new(MemoryBudget::new(memory_mib)),
        })
    }

    /// Sets where the component may connect: learnt from `configure`.
    pub fn set_egress(&mut self, egress: Arc<Egress>) {
        self.egress = egress;
    }

    fn store(&self, elicitor: Option<Arc<dyn Elicitor>>) -> Result<Store<CallState>, Failure> {
        let mut wasi = WasiCtxBuilder::new();
        wasi.envs(&self.env)
            .inherit_stderr()
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        let waited = Waited::default();
        let state = CallState {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            http: WasiHttpCtx::new(),
            hooks: EgressHooks(self.egress.clone(), waited.clone()),
            limits: MemoryCap {
                budget: self.budget.clone(),
                taken: Vec::new(),
                refused: None,
                peak: 0,
            },
            egress: self.egress.clone(),
            spent: self.spent.clone(),
            tallies: self.tallies.clone(),
            elicitor,
            waited,
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.limits);
        store.set_fuel(FUEL_PER_MESSAGE).map_err(internal)?;
        store
            .fuel_async_yield_interval(Some(FUEL_YIELD_INTERVAL))
            .map_err(internal)?;
        Ok(store)
    }

    /// Runs `call` on a fresh instance in a fresh store, turning traps into
    /// a [`Failure`] that says what stopped the call.
    async fn with_instance<T>(
        &self,
        elicitor: Option<Arc<dyn Elicitor>>,
        call: impl AsyncFnOnce(Server, &mut Store<CallState>) -> wasmtime::Result<T>,
    ) -> Result<T, Failure> {
        self.measured(elicitor, call)
            .await
            .map(|(outcome, _)| outcome)
    }

    /// Like [`Runtime::with_instance`], also saying where the time went.
    async fn measured<T>(
        &self,
        elicitor: Option<Arc<dyn Elicitor>>,
        call: impl AsyncFnOnce(Server, &mut Store<CallState>) -> wasmtime::Result<T>,
    ) -> Result<(T, Cost), Failure> {
        let started = Instant::now();
        let mut store = self.store(elicitor)?;
        let outcome = match self.pre.instantiate_async(&mut store).await {
            Ok(server) => {
                let instantiated = started.elapsed();
                call(server, &mut store)
                    .await
                    .map(|value| (value, instantiated))
            }
            Err(error) => Err(error),
        };
        let (value, instantiate) = outcome.map_err(|error| trapped(error, &store))?;
        let cost = Cost {
            total: started.elapsed(),
            instantiate,
            waiting: store.data().waited.total(),
            fuel: FUEL_PER_MESSAGE.saturating_sub(store.get_fuel().unwrap_or(0)),
            memory: store.data().limits.peak,
        };
        Ok((value, cost))
    }

    /// Asks the component to validate its configuration.
    pub async fn configure(&self) -> Result<Result<Startup, String>, Failure> {
        let outcome = self
            .with_instance(None, async |server, store| {
                server.call_configure(store).await
            })
            .await?;
        Ok(outcome.map(|s| Startup {
            origin: s.origin,
            insecure_tls: s.insecure_tls,
            notices: s.notices,
        }))
    }

    /// Hands one message to a fresh instance.
    pub async fn handle(
        &self,
        message: &str,
        session: Option<&str>,
        elicitor: Option<Arc<dyn Elicitor>>,
    ) -> Result<Reply, Failure> {
        let (reply, cost) = self
            .measured(elicitor, async |server, store| {
                server.call_handle(store, message, session).await
            })
            .await?;
        Ok(Reply {
            response: reply.response,
            session: reply.session,
            cost,
        })
    }
}

/// Where compiled components are cached, so only the first start compiles.
fn compile_cache() -> Option<Cache> {
    let set = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    let directory = set("RUSTPAD_MCP_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| set("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("rustpad-mcp")))
        .or_else(|| set("HOME").map(|d| PathBuf::from(d).join(".cache/rustpad-mcp")))?;
    let mut config = CacheConfig::new();
    config.with_directory(directory);
    Cache::new(config).ok()
}

fn internal(error: impl std::fmt::Display) -> Failure {
    Failure(format!("internal error: {error}"))
}

fn trapped(error: wasmtime::Error, store: &Store<CallState>) -> Failure {
    match store.data().limits.refused {
        Some(Refused::Cap) => {
            return Failure(format!(
                "the request needed more than its {} MiB of memory and was stopped",
                MEMORY_LIMIT_BYTES >> 20
            ));
        }
        Some(Refused::Budget) => {
            return Failure(format!(
                "the request was stopped: {}",
                store.data().limits.budget.exhausted()
            ));
        }
        None => {}
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => {
            Failure("the request used up its CPU budget and was stopped".into())
        }
        Some(Trap::StackOverflow) => {
            Failure("the request overflowed its stack and was stopped".into())
        }
        Some(trap) => Failure(format!("the request failed inside the component ({trap})")),
        None => Failure(format!("the request failed inside the component ({error})")),
    }
}
