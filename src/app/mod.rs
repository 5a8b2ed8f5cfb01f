//! The application: builds the pingora server from a validated config (the proxy, the admin
//! listener, the config reloader and the backends' health checks) and keeps the stores that
//! outlive reloads.

mod certificates;
mod connections;
mod digest_key;
mod drain;
mod fleet;
mod health;
mod listener;
mod optional;
mod pid_file;
mod preflight;
mod reload;
mod rlimit;
mod robots;
mod running;
mod served;
mod steering;
mod stores;
mod sweeper;
mod tls_files;
mod tokens;

pub use digest_key::FLEET_KEY_WAIT;
pub use health::HealthChecks;
pub use pid_file::{PidFile, PidFileError};
pub use preflight::{preflight, StateFileCheck};
pub use reload::Reloader;
pub use running::App;
pub use stores::{BuildError, Stores};

use crate::admin::{AdminApp, ControlApi, Tokens};
use crate::check::{CheckApp, CheckSettings};
use crate::config::Config;
use crate::console::{Console, FleetShare};
use crate::limiter::StoreSettings;
use crate::proxy::{ConnectionLimits, Floodgate, HeadWatches};
use crate::telemetry::{Metrics, Offenders};
use arc_swap::ArcSwap;
use drain::{Drain, InService};
use listener::{Listener, OnRefused};
use pingora::listeners::{L4BufferSettings, ListenerConfig, DEFAULT_L4_WRITE_BUFFER_SIZE};
use pingora::server::configuration::{Opt, ServerConf};
use pingora::server::Server;
use pingora::services::background::background_service;
use pingora::services::listening::Service;
use served::Served;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// How the process was started.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    /// Take the listening sockets over from a running instance (zero-downtime upgrade).
    pub upgrade: bool,
    /// Raised by the SIGHUP handler, which `main` installs before anything else.
    pub hangup: Arc<AtomicBool>,
}

/// The pingora settings Floodgate's config decides; no pingora YAML is read.
fn server_conf(config: &Config) -> ServerConf {
    ServerConf {
        threads: config.server.threads,
        grace_period_seconds: Some(whole_seconds(config.server.grace_period)),
        graceful_shutdown_timeout_seconds: Some(whole_seconds(config.server.shutdown_timeout)),
        pid_file: config.server.pid_file.display().to_string(),
        upgrade_sock: config.server.upgrade_sock.clone(),
        ca_file: config.upstream.ca_file.clone(),
        ..ServerConf::default()
    }
}

/// The decision endpoint's listener, deciding with the gate of `snapshot`, its connections'
/// deadlines kept by sweeping `watches`.
fn check_service(
    config: &Config,
    settings: &CheckSettings,
    snapshot: Arc<ArcSwap<crate::proxy::Snapshot>>,
    watches: Arc<HeadWatches>,
    in_service: Arc<InService>,
) -> Service<Listener<Served<CheckApp>>> {
    let after = config.policies.iter().filter(|p| {
        p.limit()
            .is_some_and(|l| l.rules.max_in_flight.is_some() || l.rules.settle.is_some())
    });
    for policy in after {
        log::warn!(
            "policy `{}` counts responses or requests under way, which [check] never sees: \
             decisions keep the reservation charged and give the slot back at once",
            policy.name()
        );
    }
    let limits = &config.server.limits;
    let app = Served::new(
        CheckApp::new(snapshot, settings.clone()),
        limits.keeps_alive(),
    );
    let mut service = Service::new(
        "floodgate check".to_owned(),
        Listener::new(app, limits, watches, in_service),
    );
    add_endpoint(&mut service, &settings.listen.to_string());
    service
}

/// The read buffer of an endpoint's connection: its requests are small, and pingora's 64 KiB
/// default would be most of what an idle connection holds (a larger read bypasses it).
const ENDPOINT_READ_BUFFER: usize = 4096;

/// Adds the plain listener `addr` to an endpoint's `service`, with a small read buffer.
fn add_endpoint<A>(service: &mut Service<A>, addr: &str) {
    let buffers = L4BufferSettings::new(ENDPOINT_READ_BUFFER, DEFAULT_L4_WRITE_BUFFER_SIZE);
    service.add_listener(ListenerConfig::tcp(addr).l4_buffer(buffers));
}

/// Writes a head the proxy refused to the access log of the snapshot in force.
fn log_refused(snapshot: Arc<ArcSwap<crate::proxy::Snapshot>>) -> OnRefused {
    Arc::new(move |refused, peer| {
        if let Some(log) = &snapshot.load().access_log {
            log.write_refused(refused, peer);
        }
    })
}

/// Whether the config in force (`snapshot`'s) asks for HTTP/2 fingerprints.
fn wants_h2fp(snapshot: Arc<ArcSwap<crate::proxy::Snapshot>>) -> listener::WantsH2fp {
    Arc::new(move || snapshot.load().h2fp)
}

/// The proxy's service on `server.listen` (and `server.tls_listen`, served as TCP: the
/// listener does the handshake, see `listener`) serving `listener`; none when there is no
/// `[upstream]` to proxy to.
fn proxy_service<A>(
    config: &Config,
    mut listener: Listener<A>,
    certificates: &certificates::Certificates,
) -> Result<Option<Service<Listener<A>>>, BuildError> {
    let Some(listen) = config.server.listen else {
        return Ok(None);
    };
    let tls = config.server.tls.as_ref();
    if let (Some(tls), Some(front)) = (tls, certificates.front(config)?) {
        listener = listener.with_tls(tls.listen, front);
    }
    let mut proxy = Service::new("floodgate proxy".to_owned(), listener);
    add_proxy_listener(&mut proxy, &listen.to_string());
    if let Some(tls) = tls {
        add_proxy_listener(&mut proxy, &tls.listen.to_string());
    }
    Ok(Some(proxy))
}

/// The write buffer of a proxy connection: an answer Floodgate writes itself (a challenge
/// page, 5 KB; a problem body) leaves in one send with its head, where pingora's 1,460-byte
/// default sent the head alone first (a challenge flood ran at 0.69 × a throttled one, 0.89 ×
/// with this). Streamed bodies are flushed at every write whatever its size; a body of known
/// length leaves as it fills 16 KiB or ends, as nginx's output buffers do.
const PROXY_WRITE_BUFFER: usize = 16 * 1024;

/// Adds the plain (or TLS-as-TCP) listener `addr` to the proxy's `service`.
fn add_proxy_listener<A>(service: &mut Service<A>, addr: &str) {
    let buffers = L4BufferSettings::default().write(PROXY_WRITE_BUFFER);
    service.add_listener(ListenerConfig::tcp(addr).l4_buffer(buffers));
}

/// How the console names the store: its kind, never its credentials.
fn describe_store(store: &StoreSettings) -> String {
    match store {
        StoreSettings::Memory { .. } => "memory".to_owned(),
        StoreSettings::Redis(settings) => match &settings.sentinel {
            Some(_) => "redis (sentinel)".to_owned(),
            None => "redis".to_owned(),
        },
    }
}

/// Pingora counts these in whole seconds: round up.
fn whole_seconds(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// A ready-to-run server for `config`.
pub fn build(config: &Config, launch: &Launch) -> Result<App, BuildError> {
    let opt = Opt {
        upgrade: launch.upgrade,
        ..Opt::default()
    };
    preflight(config)?;
    PidFile::check(&config.server.pid_file)?;
    if !launch.upgrade {
        PidFile::check_free(&config.server.pid_file)?;
    }
    let mut server = Server::new_with_opt_and_conf(opt, server_conf(config));
    server.bootstrap();

    let metrics = Arc::new(Metrics::new());
    let id = fleet::instance_id();
    let stores = Stores::new(
        &config.store,
        config.hash_key.as_ref(),
        &config.admin,
        metrics.clone(),
        &id,
    )?;
    if let Some(writer) = stores.decisions.take_writer() {
        server.add_service(background_service("decisions to redis", writer));
    }
    if let (Some(redis), StoreSettings::Redis(settings)) = (&stores.redis, &config.store) {
        fleet::prepare(redis, &stores.fleet, &id, settings.startup_wait);
        if !stores.fleet.is_pinned() {
            let announcer =
                fleet::FleetAnnouncer::new(redis.clone(), stores.fleet.clone(), id.clone());
            server.add_service(background_service("redis fleet", announcer));
        }
    }
    let snapshot = Arc::new(ArcSwap::from_pointee(stores.snapshot(config, None)?));
    let tokens = Arc::new(
        Tokens::load(config.admin.token_file.as_deref())
            .map_err(|e| BuildError::Tokens(e.to_string()))?,
    );
    // Bans and overrides known before the first request: read now when the ledger is in
    // this process; a Redis ledger is read by `steering` as soon as the server runs.
    if stores.redis.is_none() {
        let _ = futures::executor::block_on(stores.control.refresh());
    }

    let admin_settings = &config.admin;
    // Enough counters per window that the listed top is exact for any realistic flood.
    let capacity = (admin_settings.offenders_top * 50).max(1000);
    let offenders = Arc::new(Offenders::new(admin_settings.offenders_window, capacity));
    let limits = &config.server.limits;
    let certificates = certificates::Certificates::new(config, &stores, &id)?;
    let mut floodgate =
        Floodgate::new(snapshot.clone(), metrics.clone(), offenders.clone(), limits);
    if let Some(acme) = certificates.manager() {
        floodgate = floodgate.with_acme(acme.answers());
    }
    let mut http = pingora::proxy::http_proxy(&server.configuration, floodgate);
    http.server_options = Some(listener::http_options(config));
    let watches = HeadWatches::new(limits.header_timeout, limits.keepalive_timeout);
    let in_service = Arc::new(InService::default());
    let listener = Listener::new(http, limits, watches.clone(), in_service.clone())
        .counted(&metrics, limits)
        .with_h2c(config.server.h2c)
        .on_refused(log_refused(snapshot.clone()))
        .fingerprinting(wants_h2fp(snapshot.clone()));
    let proxy = proxy_service(config, listener, &certificates)?;

    let ready_needs_store = stores.fallback.needs_store();
    let live = snapshot.clone();
    let pools_down = Arc::new(move || {
        let snapshot = live.load();
        let down = snapshot.upstream.pools_down();
        down.into_iter().map(str::to_owned).collect()
    });
    let console = Arc::new(Console::new(
        metrics.clone(),
        tokens.clone(),
        describe_store(&config.store),
    ));
    let console_share = match (&stores.redis, &config.store) {
        (Some(redis), StoreSettings::Redis(settings)) => Some(FleetShare {
            redis: redis.clone(),
            key: format!("{}:console:rates", settings.prefix),
            id: id.clone(),
        }),
        _ => None,
    };
    let sampler = console.sampler(console_share, stores.clock.clone());
    let admin_app = AdminApp::new(metrics.clone(), stores.limiter.clone(), ready_needs_store)
        .with_pages(console)
        .with_offenders(offenders, admin_settings.offenders_top)
        .with_pools(pools_down)
        .with_protected_views(admin_settings.protect_metrics)
        .with_control(ControlApi {
            tokens: tokens.clone(),
            in_force: snapshot.clone(),
            control: stores.control.clone(),
            limiter: stores.limiter.clone(),
            in_flight: stores.in_flight.clone(),
            metrics: metrics.clone(),
            overload: stores.overload.clone(),
            decisions: stores.decisions.clone(),
            proofs: stores.proofs.clone(),
            clock: stores.clock.clone(),
        });
    let admin_app = Served::new(admin_app, limits.keeps_alive());
    let admin_limits = ConnectionLimits {
        max_connections: admin_settings.max_connections,
        ..limits.clone()
    };
    let mut admin = Service::new(
        "floodgate admin".to_owned(),
        Listener::new(
            admin_app,
            &admin_limits,
            watches.clone(),
            in_service.clone(),
        ),
    );
    // Two threads: a bulk of control changes (100,000 bans through the API) is not held to
    // one core, and a scrape is answered while a change is made.
    admin.threads = Some(2);
    add_endpoint(&mut admin, &config.admin.listen.to_string());

    optional::crowdsec(&mut server, config, &stores, &metrics, &id, &in_service)?;
    let rls_rules = optional::rls(&mut server, config, &stores, &metrics, &in_service)?;
    if let Some(settings) = &config.check {
        let (watches, in_service) = (watches.clone(), in_service.clone());
        let check = check_service(config, settings, snapshot.clone(), watches, in_service);
        server.add_service(check);
    }
    if let Some(acme) = certificates.acme.clone() {
        // In service until it returns: told to stop, it gives its fleet lease up.
        let acme = drain::UntilDone::new(acme, in_service.clone());
        server.add_service(background_service("acme", acme));
    }
    let grace = Duration::from_secs(whole_seconds(config.server.grace_period));
    let drain = Drain::new(in_service, grace, snapshot.clone());
    let health = HealthChecks::new(snapshot.clone(), metrics);
    let steering = steering::Steering::new(
        stores.control.clone(),
        stores.overload.clone(),
        stores.proofs.clone(),
        stores.robots.traps().clone(),
    );
    let reloader = Reloader::new(config.clone(), snapshot, stores, launch.hangup.clone())
        .with_tokens(tokens)
        .with_rls(rls_rules)
        .with_certificates(certificates.served.clone(), certificates.manager());
    if let Some(proxy) = proxy {
        server.add_service(proxy);
    }
    server.add_service(admin);
    server.add_service(background_service("config reload", reloader));
    server.add_service(background_service("console rates", sampler));
    server.add_service(background_service("health checks", health));
    server.add_service(background_service("bans and overrides", steering));
    server.add_service(background_service(
        "connection deadlines",
        sweeper::Sweeper::new(watches),
    ));
    Ok(App::new(server, drain))
}
