//! The validated runtime config: what the proxy runs on. Serde never sees these types.

pub use super::admin::AdminSettings;
pub use super::response::ResponseSettings;
pub use super::server::{ServerSettings, TlsFiles, TlsListener};
use crate::bots::BotsSettings;
use crate::bots::Geo;
use crate::check::CheckSettings;
use crate::crowdsec::CrowdSecSettings;
use crate::identity::{AccessRules, ClientIpResolver, IdentityChain, IdentityKey, JwtVerifier};
use crate::limiter::StoreSettings;
use crate::policy::Policy;
use crate::proxy::UpstreamSettings;
use crate::rls::RlsSettings;
use std::path::PathBuf;
use std::sync::Arc;

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
    /// The sources proven before they name a caller (`[identity.verify]`).
    pub verify: crate::proof::VerifySettings,
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
    /// `[telemetry]`: OpenTelemetry traces, when `otlp_endpoint` is set.
    pub traces: Option<crate::trace::TraceSettings>,
    /// `[decisions]`: how many decisions each instance keeps to explain, and how long.
    pub decisions: crate::explain::DecisionSettings,
    /// `[robots]`: the robots.txt served and enforced, when configured.
    pub robots: Option<crate::robots::RobotsSettings>,
}
