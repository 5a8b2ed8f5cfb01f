//! What lives as long as the process, across reloads: the bucket stores, the fallback's local
//! buckets and the metrics; and how a config plus those becomes a [`Snapshot`].

use super::digest_key::digest_key;
use crate::bots::Profiler;
use crate::challenge::Challenges;
use crate::clock::Clock;
use crate::config::{AdminSettings, Config};
use crate::control::Remedy;
use crate::control::{Control, MemoryLedger, RedisLedger, StateFileError};
use crate::explain::Decisions;
use crate::gate::{Callers, Decider, Deciders, Gate};
use crate::identity::Provenance;
use crate::identity::{IdentityKey, IdentityKeyError};
use crate::limiter::{
    Fallback, FleetSize, InFlight, Limiter, LimiterError, MemoryNonces, MemorySlots, MemoryStore,
    NonceLedger, RedisDriver, RedisNonces, RedisSlots, RedisStore, StoreSettings,
};
use crate::overload::{Overload, RedisSwitch, SharedSwitch};
use crate::proof::{Fleet, Keeper, Proofs};
use crate::proxy::{AccessLog, Snapshot, Upstream, UpstreamError};
use crate::robots::trap::{TrapSettings, Traps};
use crate::robots::RobotsKeeper;
use crate::telemetry::Metrics;
use crate::trace::{TraceCounters, Tracer};
use std::sync::Arc;

/// Why the proxy's parts could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A pool could not be built (a name that does not resolve, an unusable CA bundle).
    #[error("{0}")]
    Backends(#[from] UpstreamError),
    /// The store could not be set up.
    #[error("cannot set up the store: {0}")]
    Store(#[from] LimiterError),
    /// The TLS listener's certificate or key could not be loaded.
    #[error("cannot set up the TLS listener: {0}")]
    Tls(String),
    /// No key for identity digests.
    #[error("{0}")]
    DigestKey(#[from] IdentityKeyError),
    /// The control API's token file cannot be used.
    #[error("{0}")]
    Tokens(String),
    /// The control state file could not be loaded.
    #[error("{0}")]
    StateFile(#[from] StateFileError),
    /// The control state file may not be used (its directory, its mode).
    #[error("{0}")]
    StateFileCheck(#[from] super::preflight::StateFileCheck),
    /// The access log's file cannot be opened.
    #[error("cannot open the access log: {0}")]
    AccessLog(std::io::Error),
    /// The pid file cannot be written where `server.pid_file` says.
    #[error("{0}")]
    PidFile(#[from] super::pid_file::PidFileError),
    /// Envoy's rate limit service could not be set up.
    #[error("cannot set up the rate limit service: {0}")]
    Rls(String),
    /// A `challenge.never_paths` pattern is not one.
    #[error("cannot set up the challenge: {0}")]
    Challenge(String),
    /// The CrowdSec bouncer could not be set up.
    #[error("cannot set up the CrowdSec bouncer: {0}")]
    CrowdSec(String),
    /// The trace export thread could not be started.
    #[error("cannot start the trace export: {0}")]
    Tracer(std::io::Error),
    /// robots.txt could not be set up.
    #[error("cannot set up robots.txt: {0}")]
    Robots(#[from] crate::robots::RobotsError),
    /// The config asks for a part this build was made without.
    #[error("this build has no `{0}` feature, which the config's [{0}] table needs: build with the default features (cargo build --release, scripts/build-release); scripts/run's quick build leaves it out")]
    Feature(&'static str),
}

/// The parts that live as long as the process.
#[derive(Clone)]
pub struct Stores {
    /// Where buckets live.
    pub limiter: Arc<dyn Limiter>,
    /// Where concurrency slots are counted (beside the buckets).
    pub in_flight: Arc<dyn InFlight>,
    /// The Redis driver, when buckets live there (for startup checks, fleet announcements,
    /// CrowdSec's shared decisions and the console's fleet rates).
    pub redis: Option<Arc<RedisDriver>>,
    /// How many instances share the store.
    pub fleet: Arc<FleetSize>,
    /// What decides when the store cannot (its local buckets, if any, are kept too).
    pub fallback: Fallback,
    /// Every series.
    pub metrics: Arc<Metrics>,
    /// The operators' bans and overrides.
    pub control: Arc<Control>,
    /// Where redeemed challenge nonces are remembered (beside the buckets).
    pub nonces: Arc<dyn NonceLedger>,
    /// The key of identity digests, chosen when the server is built (a reload keeps it: a new
    /// key would be new buckets for everyone).
    pub digest_key: IdentityKey,
    /// Overload protection: each pool's watch (kept across reloads) and the switch.
    pub overload: Arc<Overload>,
    /// The decisions kept to be explained (kept across reloads; `[decisions]` resizes them).
    pub decisions: Arc<Decisions>,
    /// The proven and revoked credentials (kept across reloads; the fleet's on Redis).
    pub proofs: Arc<Keeper>,
    /// robots.txt's trap tables and the backend's copies (kept across reloads; the trap's
    /// tables are the fleet's on Redis).
    pub robots: Arc<RobotsKeeper>,
    /// The clock every part that decides, expires or records by time reads (the system's:
    /// the one place the process names it).
    pub clock: Clock,
}

impl Stores {
    /// The stores `settings` ask for, reporting into `metrics`, with identity digests keyed
    /// by `hash_key` when one is configured (else by a key chosen here: see `digest_key.rs`),
    /// keeping `instance`'s decisions.
    pub fn new(
        settings: &StoreSettings,
        hash_key: Option<&IdentityKey>,
        admin: &AdminSettings,
        metrics: Arc<Metrics>,
        instance: &str,
    ) -> Result<Self, BuildError> {
        let mut digest_key = digest_key(hash_key, settings)?;
        let gauge = metrics.store.fleet_size.clone();
        let clock = Clock::System;
        Ok(match settings {
            StoreSettings::Memory { max_entries } => {
                let limiter: Arc<dyn Limiter> = Arc::new(MemoryStore::new(*max_entries));
                let ledger =
                    MemoryLedger::open(admin.state_file.as_deref())?.with_clock(clock.clone());
                // Callers named in the state file must be the same callers after a restart.
                if hash_key.is_none() {
                    if let Some(secret) = ledger.digest_secret(IdentityKey::random_secret()?)? {
                        digest_key = IdentityKey::from_secret(&secret)?;
                    }
                }
                let fleet = Arc::new(FleetSize::new(Some(1), gauge));
                let decisions = Decisions::new(instance, &Default::default(), None);
                let traps = Traps::in_memory(
                    digest_key.clone(),
                    TrapSettings::default(),
                    admin.state_file.as_deref().map(super::robots::trap_file),
                )
                .with_clock(clock.clone());
                Stores {
                    robots: super::robots::keeper(traps, &metrics, &clock),
                    decisions: Arc::new(decisions),
                    proofs: Arc::new(Keeper::new(None, clock.clone())),
                    overload: Arc::new(
                        Overload::new(fleet.clone(), metrics.overload.clone(), None)
                            .with_clock(clock.clone()),
                    ),
                    control: Arc::new(Control::new(
                        Box::new(ledger),
                        limiter.clone(),
                        admin.bounds,
                    )),
                    limiter,
                    in_flight: Arc::new(MemorySlots::new()),
                    redis: None,
                    nonces: Arc::new(MemoryNonces::default()),
                    fleet,
                    // The memory store always decides; its fallback is never asked.
                    fallback: Fallback::Allow,
                    metrics,
                    digest_key,
                    clock,
                }
            }
            StoreSettings::Redis(settings) => {
                let fleet = Arc::new(FleetSize::new(settings.fleet_size, gauge));
                let fallback = Fallback::new(
                    settings.on_error,
                    settings.fallback_max_entries,
                    fleet.clone(),
                );
                let mirror = fallback.mirror();
                let driver = Arc::new(RedisDriver::new(settings)?);
                let store = Arc::new(RedisStore::new(
                    driver.clone(),
                    settings,
                    metrics.store.clone(),
                    mirror,
                    fleet.clone(),
                ));
                let ledger = RedisLedger::new(driver.clone());
                let switch: Arc<dyn SharedSwitch> = Arc::new(RedisSwitch::new(driver.clone()));
                let decisions = Decisions::new(instance, &Default::default(), Some(driver.clone()));
                let traps =
                    Traps::on_redis(digest_key.clone(), TrapSettings::default(), driver.clone())
                        .with_clock(clock.clone());
                Stores {
                    robots: super::robots::keeper(traps, &metrics, &clock),
                    decisions: Arc::new(decisions),
                    proofs: Arc::new(Keeper::new(Some(Fleet::new(driver.clone())), clock.clone())),
                    overload: Arc::new(
                        Overload::new(fleet.clone(), metrics.overload.clone(), Some(switch))
                            .with_clock(clock.clone()),
                    ),
                    control: Arc::new(Control::new(Box::new(ledger), store.clone(), admin.bounds)),
                    limiter: store,
                    in_flight: Arc::new(RedisSlots::new(&driver, settings.in_flight_lease)),
                    nonces: Arc::new(RedisNonces::new(driver.clone())),
                    redis: Some(driver),
                    fleet,
                    fallback,
                    metrics,
                    digest_key,
                    clock,
                }
            }
        })
    }

    /// The snapshot `config` describes, drawing on these stores. Backends are resolved here;
    /// the pools of `previous` that are unchanged are kept, with their health.
    pub fn snapshot(
        &self,
        config: &Config,
        previous: Option<&Snapshot>,
    ) -> Result<Snapshot, BuildError> {
        let gate = Gate::new(
            config.access.clone(),
            &config.policies,
            config.identity.clone(),
            self.digest_key.clone(),
            Deciders {
                limiter: self.limiter.clone(),
                in_flight: self.in_flight.clone(),
                fallback: self.fallback.clone(),
                control: self.control.clone(),
                clock: self.clock.clone(),
            },
            &self.metrics,
        );
        let challenges = self.challenges(config, &gate, previous)?;
        let proofs = (!config.verify.is_empty()).then(|| {
            let counters = self.metrics.proofs.clone();
            let key = self.digest_key.clone();
            Arc::new(Proofs::new(
                &config.verify,
                self.proofs.clone(),
                key,
                counters,
            ))
        });
        let callers = Callers {
            client_ip: config.client_ip.clone(),
            jwt: (config.jwt.as_deref())
                .map(|jwt| Arc::new(jwt.clone().with_clock(self.clock.clone()))),
            provenance: proofs.clone().map(|p| p as Arc<dyn Provenance>),
        };
        let upstream = Upstream::resolve(&config.upstream, previous.map(|p| &p.upstream))?;
        self.overload.set_configured(config.overload.is_some());
        let overload = config.overload.as_ref().map(|settings| {
            let names = upstream.pools().iter().map(|pool| pool.name());
            self.overload.pools(&Arc::new(settings.clone()), names)
        });
        let access_log = access_log(config, &self.clock)?;
        self.decisions.configure(&config.decisions);
        let decisions = (config.decisions.keep > 0).then(|| self.decisions.clone());
        let profiler = Profiler::new(
            &config.bots,
            previous.and_then(|p| p.decider.profiler()),
            config.geo.clone(),
            self.metrics.bots.clone(),
            self.metrics.signed.clone(),
            self.nonces.clone(),
        )
        .with_clock(self.clock.clone());
        let decider = Decider::new(callers, gate, config.response.throttle_status)
            .with_profiler(Arc::new(profiler));
        Ok(Snapshot::new(decider, upstream, access_log)
            .with_front(config.server.front.clone())
            .with_challenges(challenges)
            .with_overload(overload)
            .with_h2fp(config.wants_h2fp())
            .with_header_guard(config.header_guard())
            .with_tracer(self.tracer(config, previous)?)
            .with_decisions(decisions)
            .with_proofs(proofs)
            .with_robots(super::robots::site(&self.robots, config)?))
    }

    /// The tracer `[telemetry]` asks for: the previous snapshot's when its settings are the
    /// same (its queue and thread go on), a new one otherwise.
    fn tracer(
        &self,
        config: &Config,
        previous: Option<&Snapshot>,
    ) -> Result<Option<Arc<Tracer>>, BuildError> {
        let Some(settings) = &config.traces else {
            return Ok(None);
        };
        let kept = previous.and_then(|p| p.tracer.as_ref());
        if let Some(tracer) = kept.filter(|t| t.settings() == settings) {
            return Ok(Some(tracer.clone()));
        }
        let counters = TraceCounters {
            dropped: self.metrics.trace_spans_dropped.clone(),
            exported: self.metrics.trace_spans_exported.clone(),
        };
        let tracer = Tracer::start(settings.clone(), counters).map_err(BuildError::Tracer)?;
        Ok(Some(Arc::new(tracer)))
    }

    /// The challenge room, when a policy challenges or CrowdSec `captcha` decisions do (its
    /// issuers keeping the keys `previous`'s had from their directories).
    fn challenges(
        &self,
        config: &Config,
        gate: &Gate,
        previous: Option<&Snapshot>,
    ) -> Result<Option<Arc<Challenges>>, BuildError> {
        let captcha = config
            .crowdsec
            .as_ref()
            .is_some_and(|c| c.on_captcha == Remedy::Challenge);
        if !gate.challenges() && !captcha {
            return Ok(None);
        }
        let mut names: std::collections::HashMap<u64, Arc<str>> = gate
            .policies()
            .filter(|p| crate::gate::challenges(p))
            .map(|p| (p.key.id(), p.name().clone()))
            .collect();
        names.insert(crate::gate::CROWDSEC_ID, Arc::from(crate::gate::CROWDSEC));
        let room = Challenges::new(
            config.challenge.clone(),
            &self.digest_key,
            self.nonces.clone(),
            names,
            self.metrics.challenges.clone(),
        )
        .map_err(|e| BuildError::Challenge(e.to_string()))?
        .with_clock(self.clock.clone())
        .with_tokens(
            super::tokens::tokens(
                config,
                gate,
                &self.digest_key,
                self.nonces.clone(),
                &self.metrics,
                previous
                    .and_then(|p| p.challenges.as_deref())
                    .and_then(Challenges::tokens),
            )
            .map_err(|e| BuildError::Challenge(e.to_string()))?,
        );
        Ok(Some(Arc::new(room)))
    }
}

/// The access log `config` asks for, its file opened (again, on a reload: for logrotate), its
/// lines' times read from `clock`.
fn access_log(config: &Config, clock: &Clock) -> Result<Option<Arc<AccessLog>>, BuildError> {
    match &config.server.access_log {
        Some(settings) => Ok(Some(Arc::new(
            AccessLog::open(settings, clock.clone()).map_err(BuildError::AccessLog)?,
        ))),
        None => Ok(None),
    }
}
