//! One pool at run time: its resolved backends in a load balancer (`balancer`), their active
//! checks (`health`) and passive ejection (`ejection`), and the peer of each attempt.

use super::balancer::Balancer;
use super::ca;
use super::ejection::{EjectRule, Ejection};
use super::health::{self, Probe, Target};
use super::settings::{Balance, PoolSettings};
use super::slot::{slot_of, Slot};
use super::UpstreamError;
use pingora::connectors::http::Connector;
use pingora::lb::{Backend as LbBackend, Extensions};
use pingora::prelude::HttpPeer;
use pingora::protocols::l4::socket::SocketAddr as PeerAddr;
use pingora::protocols::tls::CaType;
use pingora::protocols::ALPN;
use pingora::server::ShutdownWatch;
use std::collections::BTreeSet;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Concurrent streams on one HTTP/2 connection to a backend.
const H2_STREAMS: usize = 100;

/// The per-attempt timeouts, from `[upstream]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Timeouts {
    pub(super) connect: Duration,
    pub(super) read: Duration,
    pub(super) write: Duration,
}

/// Everything a pool is built from; a reload keeps a pool (its health and ejections) whose
/// spec is unchanged.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Spec {
    pub(super) settings: PoolSettings,
    pub(super) timeouts: Timeouts,
    /// Each distinct resolved address with the index of the configured backend it came from.
    pub(super) addresses: Vec<(usize, SocketAddr)>,
    /// The DER certificates of `settings.ca_file`, when an `https://` backend needs them.
    pub(super) ca: Option<Vec<Vec<u8>>>,
    /// Whether proxied requests need that CA on their peer (the shared connector has
    /// `upstream.ca_file`'s already).
    pub(super) own_ca: bool,
}

/// One resolved address of a configured backend.
struct Address {
    backend: LbBackend,
    member: usize,
    ejection: Ejection,
}

/// A pool of backends.
pub struct Pool {
    spec: Spec,
    balancer: Balancer,
    addresses: Vec<Address>,
    peer_ca: Option<Arc<CaType>>,
    rule: EjectRule,
    epoch: Instant,
    max_iterations: usize,
    /// The name, shared by the decisions kept of the requests sent here.
    name: Arc<str>,
}

impl Pool {
    /// Builds the pool `spec` describes; `connector` makes the probes of its active checks.
    pub(super) fn build(
        spec: Spec,
        connector: Option<Arc<Connector>>,
    ) -> Result<Self, UpstreamError> {
        let settings = &spec.settings;
        let error = |reason: String| UpstreamError::Pool {
            pool: settings.name.clone(),
            reason,
        };
        let ca_list = spec.ca.as_deref().map(ca::ca_list);
        let mut backends = BTreeSet::new();
        let mut addresses = Vec::with_capacity(spec.addresses.len());
        let mut targets = Vec::with_capacity(spec.addresses.len());
        for (slot, &(member, addr)) in spec.addresses.iter().enumerate() {
            let mut ext = Extensions::new();
            ext.insert(Slot(slot));
            let weight = settings.backends[member].weight;
            let backend = LbBackend {
                addr: PeerAddr::Inet(addr),
                weight,
                ext,
            };
            if let Some(check) = &settings.health.active {
                let configured = &settings.backends[member].address;
                let host = settings.host.as_deref().unwrap_or(configured);
                let mut peer = peer_of(settings, member, addr);
                peer.options.connection_timeout = Some(check.timeout);
                peer.options.ca = ca_list.clone();
                targets.push(Target {
                    peer,
                    request: health::request(&check.path, host)
                        .map_err(|e| error(e.to_string()))?,
                    label: format!("pool {} backend {configured} ({addr})", settings.name),
                });
            }
            backends.insert(backend.clone());
            addresses.push(Address {
                backend,
                member,
                ejection: Ejection::default(),
            });
        }
        let total_weight: usize = addresses.iter().map(|a| a.backend.weight).sum();
        let probe = settings
            .health
            .active
            .as_ref()
            .zip(connector)
            .map(|(check, c)| {
                let probe = Probe::new(check, targets, c);
                (probe, check.interval)
            });
        let balancer = Balancer::new(settings.balance, backends, probe).map_err(error)?;
        Ok(Self {
            rule: EjectRule {
                after: settings.health.eject_after,
                for_ms: settings.health.eject_for.as_millis() as u64,
            },
            peer_ca: ca_list.filter(|_| spec.own_ca),
            balancer,
            addresses,
            epoch: Instant::now(),
            // Ketama puts 160 points per weight on its ring: enough steps to meet every backend.
            max_iterations: 160 * total_weight + 16,
            name: Arc::from(settings.name.as_str()),
            spec,
        })
    }

    /// What the pool was built from.
    pub(super) fn spec(&self) -> &Spec {
        &self.spec
    }

    /// The pool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The pool's name, shared (each request's decision names it, [`crate::explain::Record`]).
    pub fn shared_name(&self) -> &Arc<str> {
        &self.name
    }

    /// How the pool spreads requests.
    pub fn balance(&self) -> Balance {
        self.spec.settings.balance
    }

    /// The `Host` sent upstream instead of the client's, if the pool sets one.
    pub fn host(&self) -> Option<&str> {
        self.spec.settings.host.as_deref()
    }

    /// How many backend addresses there are (each is tried at most once per request).
    pub fn address_count(&self) -> usize {
        self.addresses.len()
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    fn is_up(&self, address: &Address, now_ms: u64) -> bool {
        self.balancer.healthy(&address.backend) && !address.ejection.is_ejected(now_ms)
    }

    /// The slot of the backend for `key`, skipping the slots in `tried`: a healthy one that is
    /// not ejected if there is one, else any (when all are down, requests still go somewhere,
    /// as with Envoy's panic threshold and nginx).
    pub(super) fn pick(&self, key: &[u8], tried: &[usize]) -> Option<usize> {
        // One address: whether up or not, it is the one picked (when all are down, any),
        // unless tried already; the balancer's walk would find just that.
        if self.addresses.len() == 1 {
            return (!tried.contains(&0)).then_some(0);
        }
        let now = self.now_ms();
        let untried = |b: &LbBackend| slot_of(b).is_some_and(|s| !tried.contains(&s));
        let up = |b: &LbBackend, healthy: bool| {
            healthy
                && untried(b)
                && slot_of(b)
                    .and_then(|s| self.addresses.get(s))
                    .is_some_and(|a| !a.ejection.is_ejected(now))
        };
        let chosen = self
            .balancer
            .select_with(key, self.max_iterations, up)
            .or_else(|| {
                log::debug!("pool {}: no backend up, trying any", self.name());
                self.balancer
                    .select_with(key, self.max_iterations, |b, _| untried(b))
            })?;
        slot_of(&chosen)
    }

    /// The peer of `slot`, with the configured timeouts and the pool's TLS settings.
    pub(super) fn peer(&self, slot: usize) -> Option<HttpPeer> {
        let address = self.addresses.get(slot)?;
        let addr = address.backend.addr.as_inet().copied()?;
        let mut peer = peer_of(&self.spec.settings, address.member, addr);
        let timeouts = self.spec.timeouts;
        peer.options.connection_timeout = Some(timeouts.connect);
        peer.options.read_timeout = Some(timeouts.read);
        peer.options.write_timeout = Some(timeouts.write);
        peer.options.ca = self.peer_ca.clone();
        Some(peer)
    }

    /// Counts a failed request to `slot` (connect failure, timeout or 5xx).
    pub(super) fn failed(&self, slot: usize) {
        let Some(address) = self.addresses.get(slot) else {
            return;
        };
        if address.ejection.failed(self.rule, self.now_ms()) {
            let settings = &self.spec.settings;
            log::warn!(
                "pool {} backend {} ({:?}) ejected for {:?} after {} failed requests in a row",
                settings.name,
                settings.backends[address.member].address,
                address.backend.addr,
                settings.health.eject_for,
                self.rule.after
            );
        }
    }

    /// Counts a good answer from `slot`.
    pub(super) fn succeeded(&self, slot: usize) {
        if let Some(address) = self.addresses.get(slot) {
            address.ejection.succeeded();
        }
    }

    /// Each configured backend and whether it is up (one of its addresses passes its active
    /// check and is not ejected).
    pub fn backends_up(&self) -> Vec<(&str, bool)> {
        let now = self.now_ms();
        let configured = &self.spec.settings.backends;
        let mut up = vec![false; configured.len()];
        for address in &self.addresses {
            up[address.member] |= self.is_up(address, now);
        }
        configured
            .iter()
            .zip(up)
            .map(|(b, up)| (b.address.as_str(), up))
            .collect()
    }

    /// Whether no backend is up.
    pub fn is_down(&self) -> bool {
        let now = self.now_ms();
        !self.addresses.iter().any(|a| self.is_up(a, now))
    }

    /// The pool's active checks, run until `stop` turns true; `None` when it has none.
    pub fn checks(&self, stop: ShutdownWatch) -> Option<impl Future<Output = ()> + Send + 'static> {
        self.spec.settings.health.active.as_ref()?;
        Some(self.balancer.clone().run(stop))
    }
}

/// A peer for `addr`, a resolved address of configured backend `member`: over TLS for
/// `https://` backends, named (SNI, verified) by the pool's `host` or the backend's own host,
/// offering HTTP/2 and HTTP/1.1 by ALPN; HTTP/2 with prior knowledge for `h2c://` backends.
fn peer_of(settings: &PoolSettings, member: usize, addr: SocketAddr) -> HttpPeer {
    let backend = &settings.backends[member];
    let (mut peer, alpn) = match &backend.tls_name {
        Some(name) => {
            let sni = settings.host.as_deref().map_or(name.as_str(), host_name);
            (HttpPeer::new(addr, true, sni.to_owned()), ALPN::H2H1)
        }
        None if backend.h2c => (HttpPeer::new(addr, false, String::new()), ALPN::H2),
        None => return HttpPeer::new(addr, false, String::new()),
    };
    peer.options.alpn = alpn;
    peer.options.max_h2_streams = H2_STREAMS;
    peer
}

/// `host` without a `:port`.
fn host_name(host: &str) -> &str {
    match host.rsplit_once(':') {
        Some((name, port)) if !name.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => {
            name.trim_start_matches('[').trim_end_matches(']')
        }
        _ => host,
    }
}
