//! The component runtime: one engine and one pre-instantiated component per
//! process, and a fresh store and instance for every message.
//!
//! A fresh instance per message costs tens of microseconds and buys a lot: a
//! call that waits minutes for a person blocks nothing else, a trapped or
//! cancelled call leaves nothing behind, and no state leaks between calls.
//! Each store gets a memory cap and a CPU budget in fuel, which counts only
//! guest execution (time spent waiting on the network or a person is free).

mod call_state;
mod engine;
mod imports;
mod pool;
mod reply;

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Engine, Store, Trap};
use wasmtime_wasi::WasiCtxBuilder;
use wasmtime_wasi_http::WasiHttpCtx;

use crate::egress::policy::Egress;
use crate::limits::call_places::CallPlaces;
use crate::limits::memory_budget::{MemoryBudget, Reservation};
use crate::settings::Limits;
use crate::state::held_writes::HeldWrites;
use crate::state::own_writes::OwnWrites;
use crate::state::recently_used::RecentlyUsed;
use crate::state::running_totals::RunningTotals;
use crate::state::watches::{Held, Resume, Round, Rounds, Watching};
use call_state::{EgressHooks, MemoryCap, Refused, Waited};

pub use bindings::{HttpHeaders, Reply, Startup, Watched};
pub use call_state::{CallState, Elicitor};

mod bindings {
    wasmtime::component::bindgen!({
        path: "wit",
        world: "server",
        imports: { default: async | trappable },
        exports: { default: async },
        with: {
            "wasi:io": wasmtime_wasi::p2::bindings::io,
            "wasi:clocks": wasmtime_wasi::p2::bindings::clocks,
            "wasi:http": wasmtime_wasi_http::p2::bindings::http,
            "rustpad:mcp/websocket.connection": crate::egress::websocket::Connection,
            "rustpad:mcp/tally.turn": crate::state::running_totals::Turn,
        },
    });
}
use bindings::{Server, ServerPre};

/// What a call may use beyond what every call gets.
#[derive(Default, Clone)]
pub struct Grants {
    /// Who asks the client when the call needs a person.
    pub elicitor: Option<Arc<dyn Elicitor>>,
    /// Where a tool call gets its place; none: no bound.
    pub places: Option<Arc<CallPlaces>>,
    /// Where its watches go, and whether its request may be held open.
    pub watching: Watching,
    /// What its session used lately; none: the transport keeps no session.
    pub recent: Option<Arc<RecentlyUsed>>,
}

/// The component, built and compiled by build.rs for this binary's target,
/// and embedded in it: the only compiled code this binary ever loads.
const GUEST_IMAGE: &[u8] = include_bytes!(env!("GUEST_CWASM"));
/// The SHA-256 of the component the image was compiled from.
pub const GUEST_SHA256: &str = env!("GUEST_SHA256");

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

/// The component's answer to one message, and what it cost.
pub struct Replied {
    pub reply: Reply,
    pub cost: Cost,
    /// The component held the request open (`watches.hold`).
    pub held: Option<Held>,
}

/// Which component a runtime runs.
pub enum Source {
    /// The one this binary carries, compiled when it was built.
    BuiltIn,
    /// Another component (`--component FILE`), compiled now.
    #[cfg(feature = "compiler")]
    Wasm(Vec<u8>),
}

/// Why a runtime did not start.
pub enum NotStarted {
    /// The component could not be loaded or linked.
    Load(anyhow::Error),
    /// The component refused its configuration: a message for the operator.
    Configuration(String),
    /// Configuring failed inside the component.
    Failed(Failure),
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

/// The component linked and ready to instantiate under one engine.
struct Ready {
    engine: Engine,
    pre: ServerPre<CallState>,
}

/// The component ready in a pool of instances, shared by all calls.
pub struct Runtime {
    pooled: Ready,
    /// Past the pool: fresh instances ([`pool`]), made ready when first needed.
    overflow: std::sync::OnceLock<Result<Ready, String>>,
    source: Source,
    env: Vec<(String, String)>,
    egress: Arc<Egress>,
    tallies: Arc<RunningTotals>,
    writers: Arc<OwnWrites>,
    held_writes: Arc<HeldWrites>,
    budget: Arc<MemoryBudget>,
}

impl Runtime {
    /// Loads the component, asks it to validate its configuration, and
    /// grants it the egress that configuration names. `env` is all the
    /// environment it sees; `limits` bound what running calls hold together
    /// and what the tally keeps.
    pub async fn start(
        source: Source,
        env: Vec<(String, String)>,
        limits: &Limits,
    ) -> Result<(Runtime, Startup), NotStarted> {
        let mut config = engine::config();
        pool::configure(&mut config, pool::SLOTS, limits.memory_mib);
        let pooled = source.ready(config).map_err(NotStarted::Load)?;
        let mut runtime = Runtime::new(source, pooled, env, limits);
        let startup = runtime
            .with_instance(Grants::default(), async |server, store| {
                server.call_configure(store).await
            })
            .await
            .map_err(NotStarted::Failed)?
            .map_err(|problem| NotStarted::Configuration(problem.message))?;
        runtime.egress = Egress::new(startup.origin.as_deref(), startup.insecure_tls);
        Ok((runtime, startup))
    }

    /// A runtime whose component may reach nothing (while it configures).
    fn new(source: Source, pooled: Ready, env: Vec<(String, String)>, limits: &Limits) -> Runtime {
        Runtime {
            pooled,
            overflow: std::sync::OnceLock::new(),
            source,
            env,
            egress: Egress::new(None, false),
            tallies: Arc::new(RunningTotals::new(
                limits.tally_pads,
                Duration::from_secs(limits.tally_seconds as u64),
            )),
            writers: Arc::default(),
            held_writes: Arc::default(),
            budget: Arc::new(MemoryBudget::new(limits.memory_mib)),
        }
    }

    /// Takes `bytes` from the memory budget of running calls.
    pub fn reserve(&self, bytes: usize) -> Result<Reservation, String> {
        self.budget.reserve(bytes)
    }

    fn store(&self, engine: &Engine, grants: Grants) -> Result<Store<CallState>, Failure> {
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
            tallies: self.tallies.clone(),
            writers: self.writers.clone(),
            held_writes: self.held_writes.clone(),
            elicitor: grants.elicitor,
            places: grants.places,
            watching: grants.watching,
            recent: grants.recent,
            held: None,
            place: None,
            waited,
        };
        let mut store = Store::new(engine, state);
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
        grants: Grants,
        call: impl AsyncFnOnce(Server, &mut Store<CallState>) -> wasmtime::Result<T>,
    ) -> Result<T, Failure> {
        self.measured(grants, call)
            .await
            .map(|(outcome, _)| outcome)
    }

    /// Like [`Runtime::with_instance`], also saying where the time went.
    async fn measured<T>(
        &self,
        grants: Grants,
        call: impl AsyncFnOnce(Server, &mut Store<CallState>) -> wasmtime::Result<T>,
    ) -> Result<(T, Cost), Failure> {
        let started = Instant::now();
        let mut store = self.store(&self.pooled.engine, grants.clone())?;
        let mut instance = self.pooled.pre.instantiate_async(&mut store).await;
        if instance.as_ref().is_err_and(pool::full) {
            let overflow = self.overflow()?;
            store = self.store(&overflow.engine, grants)?;
            instance = overflow.pre.instantiate_async(&mut store).await;
        }
        let outcome = match instance {
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

    /// Where messages run once every slot of the pool is taken: fresh
    /// instances, as before the pool.
    fn overflow(&self) -> Result<&Ready, Failure> {
        self.overflow
            .get_or_init(|| {
                self.source
                    .ready(engine::config())
                    .map_err(|error| error.to_string())
            })
            .as_ref()
            .map_err(internal)
    }

    /// Hands one message to a fresh instance; `headers` are its standard
    /// HTTP headers when it came over HTTP.
    pub async fn handle(
        &self,
        message: &str,
        headers: Option<&HttpHeaders>,
        session: Option<&str>,
        grants: Grants,
    ) -> Result<Replied, Failure> {
        let ((reply, held), cost) = self
            .measured(grants, async |server, store| {
                let reply = server
                    .call_handle(&mut *store, message, headers, session)
                    .await?;
                Ok((reply, store.data_mut().held.take()))
            })
            .await?;
        Ok(Replied { reply, cost, held })
    }

    /// Runs the component's connection check (`--check`) in a fresh
    /// instance: whether everything worked, and its report's lines.
    pub async fn check(&self) -> Result<(bool, Vec<String>), Failure> {
        let report = self
            .with_instance(Grants::default(), async |server, store| {
                server.call_check(store).await
            })
            .await?;
        Ok((report.ok, report.lines))
    }

    /// Runs one round of the component's watch of `subject` from `last`,
    /// in a fresh instance; the connection it hands back is taken out of the
    /// instance's table, to outlive it.
    async fn watch(&self, subject: &str, last: Option<Resume>) -> Result<Round, Failure> {
        self.with_instance(Grants::default(), async |server, store| {
            let last = match last {
                Some(Resume { cursor, look, wake }) => Some(bindings::Resume {
                    cursor,
                    look: look
                        .map(|look| store.data_mut().table.push(look))
                        .transpose()?,
                    wake,
                }),
                None => None,
            };
            let watched = server
                .call_watch(&mut *store, subject, last.as_ref())
                .await?;
            let table = &mut store.data_mut().table;
            let mut keep = |resume: bindings::Resume| -> wasmtime::Result<Resume> {
                Ok(Resume {
                    cursor: resume.cursor,
                    look: resume.look.map(|look| table.delete(look)).transpose()?,
                    wake: resume.wake,
                })
            };
            Ok(match watched {
                Watched::Changed(next) => Round::Changed(keep(next)?),
                Watched::Quiet(next) => Round::Quiet(keep(next)?),
                Watched::Lost(reason) => Round::Lost(reason),
            })
        })
        .await
    }
}

impl Rounds for Runtime {
    fn round<'a>(
        &'a self,
        subject: &'a str,
        last: Option<Resume>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Round> + Send + 'a>> {
        Box::pin(async move {
            self.watch(subject, last)
                .await
                .unwrap_or_else(|Failure(reason)| Round::Lost(reason))
        })
    }
}

impl Source {
    /// The component, loaded and linked under an engine of `config`.
    fn ready(&self, config: wasmtime::Config) -> anyhow::Result<Ready> {
        let (engine, component) = self.load(config)?;
        let mut linker = Linker::<CallState>::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
        imports::add_to_linker(&mut linker)?;
        let pre = ServerPre::new(linker.instantiate_pre(&component)?)?;
        Ok(Ready { engine, pre })
    }

    fn load(&self, config: wasmtime::Config) -> anyhow::Result<(Engine, Component)> {
        match self {
            Source::BuiltIn => {
                let engine = Engine::new(&config)?;
                let component = built_in(&engine, GUEST_IMAGE)?;
                Ok((engine, component))
            }
            #[cfg(feature = "compiler")]
            Source::Wasm(wasm) => {
                let mut config = config;
                config.cache(compile_cache());
                let engine = Engine::new(&config)?;
                let component = Component::new(&engine, wasm)
                    .map_err(|error| anyhow::anyhow!("loading the component: {error}"))?;
                Ok((engine, component))
            }
        }
    }
}

/// The built-in component from `image`, which build.rs compiled with this
/// very wasmtime under [`engine::config`]. A mismatch is refused by wasmtime's
/// own checks and reported as a broken build; it is never run.
#[allow(unsafe_code)]
fn built_in(engine: &Engine, image: &[u8]) -> anyhow::Result<Component> {
    // SAFETY: `Component::deserialize` trusts its bytes to be wasmtime's own
    // output. `image` is only ever `GUEST_IMAGE`, embedded in this binary by
    // its build script from `Engine::precompile_component` (tests pass other
    // bytes to see them refused): it is exactly as trustworthy as the binary
    // itself, and nothing loads compiled code from anywhere else.
    unsafe { Component::deserialize(engine, image) }.map_err(|error| {
        anyhow::anyhow!(
            "the built-in component does not fit this build of wasmtime or its settings ({error}); this binary is broken: rebuild it"
        )
    })
}

/// Where compiled components are cached, so `--component FILE` compiles a
/// file only once.
#[cfg(feature = "compiler")]
fn compile_cache() -> Option<wasmtime::Cache> {
    use std::path::PathBuf;
    let set = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    let directory = set("RUSTPAD_MCP_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| set("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("rustpad-mcp")))
        .or_else(|| set("HOME").map(|d| PathBuf::from(d).join(".cache/rustpad-mcp")))?;
    let mut config = wasmtime::CacheConfig::new();
    config.with_directory(directory);
    wasmtime::Cache::new(config).ok()
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

#[cfg(test)]
mod tests;
