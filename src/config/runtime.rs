//! The validated runtime config: what the proxy runs on. Serde never sees these types.

use crate::bots::BotsSettings;
use crate::bots::Geo;
use crate::check::CheckSettings;
use crate::control::Bounds;
use crate::crowdsec::CrowdSecSettings;
use crate::identity::{AccessRules, ClientIpResolver, IdentityChain, IdentityKey, JwtVerifier};
use crate::limiter::StoreSettings;
use crate::policy::Policy;
use crate::proxy::{AccessLogSettings, ConnectionLimits, FrontSettings, UpstreamSettings};
use crate::rls::RlsSettings;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Everything the proxy needs, checked.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file this came from.
    pub path: PathBuf,
    /// The proxy listener and its workers.
    pub server: ServerSettings,
    /// The admin listener.
    pub admin: AdminSettings,
    /// Where allowed requests go.
    pub upstream: UpstreamSettings,
    /// Where buckets live.
    pub store: StoreSettings,
    /// How callers are identified (policies without sources of their own).
    pub identity: IdentityChain,
    /// The key of identity digests, when `identity.hash_key` is configured (else the stores
    /// choose one when the server is built).
    pub hash_key: Option<IdentityKey>,
    /// How the client address is found behind trusted proxies.
    pub client_ip: ClientIpResolver,
    /// Verifies bearer tokens, when `[identity.jwt]` is configured.
    pub jwt: Option<Arc<JwtVerifier>>,
    /// Allow- and deny-lists.
    pub access: AccessRules,
    /// The limits, in config order.
    pub policies: Vec<Policy>,
    /// How refusals are answered.
    pub response: ResponseSettings,
    /// The decision endpoint, when `[check]` is configured.
    pub check: Option<CheckSettings>,
    /// Envoy's rate limit service, when `[rls]` is configured.
    pub rls: Option<RlsSettings>,
    /// The CrowdSec bouncer, when `[crowdsec]` is configured.
    pub crowdsec: Option<CrowdSecSettings>,
    /// The crawlers known and how their claims are verified (`[bots]`).
    pub bots: BotsSettings,
    /// The ASN and country databases (`[geo]`), read whole; empty when not configured.
    pub geo: Arc<Geo>,
    /// `[challenge]`: the pages, passes and nonces every challenge shares.
    pub challenge: crate::challenge::ChallengeSettings,
    /// `[tls.acme]`: certificates ordered from an ACME CA, when configured.
    pub acme: Option<crate::acme::AcmeSettings>,
    /// `[overload]`: each pool's requests in flight held to a limit, shed by priority, when
    /// configured.
    pub overload: Option<crate::overload::OverloadSettings>,
    /// `[decisions]`: how many decisions each instance keeps to explain, and how long.
    pub decisions: crate::explain::DecisionSettings,
}

/// `[server]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSettings {
    /// Proxy listener address; `None` when there is no `[upstream]` to proxy to (an instance
    /// that only decides, for `[check]` or `[rls]`).
    pub listen: Option<SocketAddr>,
    /// Worker threads of the proxy service.
    pub threads: usize,
    /// On SIGTERM, listeners close and in-flight requests have this long to finish.
    pub grace_period: Duration,
    /// After the grace period, how long the final shutdown step may take.
    pub shutdown_timeout: Duration,
    /// Every policy counts but never blocks.
    pub shadow: bool,
    /// One access-log line per request, in this format, to this file (or stderr); `None`
    /// when the access log is off.
    pub access_log: Option<AccessLogSettings>,
    /// Reload when the config file changes, not only on SIGHUP.
    pub watch_config: bool,
    /// Where the process id is written once the listeners are this process's, and removed
    /// from at a clean exit (the upgrade steps read it).
    pub pid_file: PathBuf,
    /// The socket a new binary takes the listeners from during an upgrade.
    pub upgrade_sock: String,
    /// A TLS listener, besides the plain one.
    pub tls: Option<TlsListener>,
    /// Deadlines and caps of downstream connections.
    pub limits: ConnectionLimits,
    /// Whether the plain listener also accepts cleartext HTTP/2 with prior knowledge.
    pub h2c: bool,
    /// The request id header and `Via`.
    pub front: FrontSettings,
}

/// `server.tls_listen` with its certificate chain and key (PEM files).
#[derive(Debug, Clone, PartialEq)]
pub struct TlsListener {
    /// Address of the TLS listener.
    pub listen: SocketAddr,
    /// The certificate files, served for names ACME does not manage; `None` when the
    /// listener runs on ACME certificates alone.
    pub files: Option<TlsFiles>,
    /// Whether HTTP/2 is offered by ALPN besides HTTP/1.1.
    pub h2: bool,
    /// Whether each connection's ClientHello is read for its JA4 fingerprint
    /// (`server.tls_ja4`).
    pub ja4: bool,
}

/// `server.tls_cert_file` and `server.tls_key_file`, re-read on every reload.
#[derive(Debug, Clone, PartialEq)]
pub struct TlsFiles {
    /// Certificate chain, PEM.
    pub cert_file: String,
    /// Private key, PEM.
    pub key_file: String,
}

/// `[admin]`.
#[derive(Debug, Clone, PartialEq)]
pub struct AdminSettings {
    /// Admin listener address (metrics and health).
    pub listen: SocketAddr,
    /// The window the top-offenders view covers (between one and two of these).
    pub offenders_window: Duration,
    /// How many identities the top-offenders view lists.
    pub offenders_top: usize,
    /// The control API's tokens (`name:token` lines); without it the control API answers 403.
    pub token_file: Option<PathBuf>,
    /// Where the memory store keeps bans and overrides across restarts.
    pub state_file: Option<PathBuf>,
    /// Whether `/metrics` and `/offenders` need a control API token.
    pub protect_metrics: bool,
    /// How many bans and overrides may be held.
    pub bounds: Bounds,
    /// The most connections open at once on the admin listener.
    pub max_connections: usize,
}

/// `[response]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseSettings {
    /// Status of a throttled response.
    pub throttle_status: u16,
}
