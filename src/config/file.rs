//! The config file as written: serde structs that refuse unknown keys and keep the location of
//! every value that is checked after parsing. Nothing outside `config` sees these types.

use serde::Deserialize;
use toml::Spanned;

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileConfig {
    #[serde(default)]
    pub(crate) server: ServerFile,
    #[serde(default)]
    pub(crate) admin: AdminFile,
    pub(crate) upstream: Option<UpstreamFile>,
    #[serde(default)]
    pub(crate) store: StoreFile,
    #[serde(default)]
    pub(crate) identity: IdentityFile,
    #[serde(default, rename = "policy")]
    pub(crate) policies: Vec<PolicyFile>,
    #[serde(default)]
    pub(crate) response: ResponseFile,
    #[serde(default)]
    pub(crate) access: AccessFile,
    #[serde(default, rename = "route")]
    pub(crate) routes: Vec<RouteFile>,
    pub(crate) check: Option<CheckFile>,
    pub(crate) crowdsec: Option<CrowdSecFile>,
    pub(crate) rls: Option<RlsFile>,
    #[serde(default)]
    pub(crate) bots: BotsFile,
    pub(crate) geo: Option<GeoFile>,
    pub(crate) challenge: Option<ChallengeFile>,
    pub(crate) tls: Option<TlsFile>,
}

/// `[tls]`: what the TLS listener's certificates come from besides files.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TlsFile {
    pub(crate) acme: Option<Spanned<AcmeFile>>,
}

/// `[tls.acme]`: certificates ordered from an ACME CA.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AcmeFile {
    pub(crate) directory: Option<Spanned<String>>,
    pub(crate) email: Option<Spanned<String>>,
    pub(crate) domains: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) challenge: Option<Spanned<String>>,
    pub(crate) ca_file: Option<Spanned<String>>,
    pub(crate) renew_before: Option<Spanned<String>>,
    pub(crate) eab_kid: Option<Spanned<String>>,
    pub(crate) eab_hmac_key_file: Option<Spanned<String>>,
    pub(crate) state_dir: Option<Spanned<String>>,
}

/// `[bots]`: the crawler catalogue's additions and how claims are verified.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BotsFile {
    pub(crate) dns_timeout: Option<Spanned<String>>,
    pub(crate) resolver: Option<Spanned<String>>,
    pub(crate) ranges_dir: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) crawler: Vec<CrawlerFile>,
    pub(crate) signed: Option<SignedFile>,
}

/// `[bots.signed]`: signed agents (Web Bot Auth).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SignedFile {
    #[serde(default)]
    pub(crate) agents: Vec<Spanned<String>>,
    pub(crate) ca_file: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) key: Vec<SignedKeyFile>,
}

/// `[[bots.signed.key]]`: a key written in the config for an agent.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SignedKeyFile {
    pub(crate) agent: Spanned<String>,
    pub(crate) jwk: Spanned<JwkFile>,
}

/// A public key as a JWK (members other than these, like `kid` or `use`, are passed over).
#[derive(Debug, Deserialize)]
pub(crate) struct JwkFile {
    pub(crate) kty: String,
    pub(crate) crv: String,
    pub(crate) x: String,
}

/// `[[bots.crawler]]`: a crawler added to the catalogue, or replacing one of the same name.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CrawlerFile {
    pub(crate) name: Spanned<String>,
    pub(crate) operator: Option<Spanned<String>>,
    pub(crate) category: Spanned<String>,
    pub(crate) user_agent: Spanned<String>,
    pub(crate) ranges_file: Option<Spanned<String>>,
    pub(crate) ranges_url: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) rdns: Vec<String>,
}

/// `[geo]`: the ASN and country databases (MaxMind DB files).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GeoFile {
    pub(crate) asn_db: Option<Spanned<String>>,
    pub(crate) country_db: Option<Spanned<String>>,
}

/// `[rls]`: Envoy's rate limit service.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RlsFile {
    pub(crate) listen: Option<Spanned<String>>,
    pub(crate) config_dir: Spanned<String>,
    pub(crate) tls: Option<Spanned<bool>>,
    pub(crate) timeout: Option<Spanned<String>>,
    pub(crate) max_concurrent_streams: Option<Spanned<i64>>,
}

/// `[crowdsec]`: the CrowdSec bouncer.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CrowdSecFile {
    pub(crate) url: Spanned<String>,
    pub(crate) api_key_file: Spanned<String>,
    pub(crate) poll_interval: Option<Spanned<String>>,
    pub(crate) scopes: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    pub(crate) origins: Vec<String>,
    #[serde(default)]
    pub(crate) scenarios_containing: Vec<String>,
    #[serde(default)]
    pub(crate) scenarios_not_containing: Vec<String>,
    pub(crate) on_captcha: Option<Spanned<String>>,
    pub(crate) max_answer_bytes: Option<Spanned<i64>>,
}

/// `[check]`: the decision endpoint.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CheckFile {
    pub(crate) listen: Spanned<String>,
    pub(crate) trusted: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) dedupe_header: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServerFile {
    pub(crate) listen: Option<Spanned<String>>,
    pub(crate) threads: Option<Spanned<i64>>,
    pub(crate) grace_period: Option<Spanned<String>>,
    pub(crate) shutdown_timeout: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) shadow: bool,
    #[serde(default)]
    pub(crate) access_log: bool,
    pub(crate) access_log_format: Option<Spanned<String>>,
    pub(crate) access_log_file: Option<String>,
    #[serde(default)]
    pub(crate) watch_config: bool,
    pub(crate) pid_file: Option<Spanned<String>>,
    pub(crate) upgrade_sock: Option<String>,
    pub(crate) tls_listen: Option<Spanned<String>>,
    pub(crate) tls_cert_file: Option<Spanned<String>>,
    pub(crate) tls_key_file: Option<Spanned<String>>,
    pub(crate) tls_ja4: Option<bool>,
    pub(crate) header_timeout: Option<Spanned<String>>,
    pub(crate) keepalive_timeout: Option<Spanned<String>>,
    pub(crate) max_header_bytes: Option<Spanned<i64>>,
    pub(crate) max_connections: Option<Spanned<i64>>,
    pub(crate) max_connections_per_ip: Option<Spanned<i64>>,
    #[serde(default)]
    pub(crate) h2c: bool,
    pub(crate) h2: Option<bool>,
    #[serde(default)]
    pub(crate) via: bool,
    #[serde(default)]
    pub(crate) preserve_header_case: bool,
    pub(crate) request_id_header: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AdminFile {
    pub(crate) listen: Option<Spanned<String>>,
    pub(crate) offenders_window: Option<Spanned<String>>,
    pub(crate) offenders_top: Option<Spanned<i64>>,
    pub(crate) token_file: Option<Spanned<String>>,
    pub(crate) state_file: Option<Spanned<String>>,
    pub(crate) protect_metrics: Option<Spanned<bool>>,
    pub(crate) max_bans: Option<Spanned<i64>>,
    pub(crate) max_overrides: Option<Spanned<i64>>,
    pub(crate) max_connections: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpstreamFile {
    pub(crate) backends: Spanned<Vec<Spanned<String>>>,
    pub(crate) connect_timeout: Option<Spanned<String>>,
    pub(crate) read_timeout: Option<Spanned<String>>,
    pub(crate) write_timeout: Option<Spanned<String>>,
    pub(crate) idle_timeout: Option<Spanned<String>>,
    pub(crate) ca_file: Option<Spanned<String>>,
    pub(crate) balance: Option<BalanceFile>,
    pub(crate) host: Option<Spanned<String>>,
    pub(crate) health: Option<HealthFile>,
    #[serde(default)]
    pub(crate) pools: std::collections::BTreeMap<Spanned<String>, PoolFile>,
    pub(crate) ja4_header: Option<Spanned<String>>,
}

/// `[upstream.pools.NAME]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PoolFile {
    pub(crate) backends: Spanned<Vec<Spanned<String>>>,
    pub(crate) balance: Option<BalanceFile>,
    pub(crate) host: Option<Spanned<String>>,
    pub(crate) ca_file: Option<Spanned<String>>,
    pub(crate) health: Option<HealthFile>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum BalanceFile {
    #[default]
    RoundRobin,
    Hash,
}

/// `[upstream.health]` or a pool's `health` table; a pool's keys override the upstream's.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HealthFile {
    pub(crate) active: Option<bool>,
    pub(crate) path: Option<Spanned<String>>,
    pub(crate) interval: Option<Spanned<String>>,
    pub(crate) timeout: Option<Spanned<String>>,
    pub(crate) unhealthy_after: Option<Spanned<i64>>,
    pub(crate) healthy_after: Option<Spanned<i64>>,
    pub(crate) eject_after: Option<Spanned<i64>>,
    pub(crate) eject_for: Option<Spanned<String>>,
}

/// `[[route]]`: requests its `match` fits go to `pool`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RouteFile {
    #[serde(rename = "match")]
    pub(crate) route: Option<MatchFile>,
    pub(crate) pool: Spanned<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum StoreKind {
    Memory,
    Redis,
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum OnErrorFile {
    Allow,
    Deny,
    #[default]
    Local,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StoreFile {
    pub(crate) kind: Option<Spanned<StoreKind>>,
    pub(crate) max_entries: Option<Spanned<i64>>,
    pub(crate) url: Option<Spanned<String>>,
    pub(crate) nodes: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) sentinels: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) sentinel_master: Option<Spanned<String>>,
    pub(crate) sentinel_username: Option<Spanned<String>>,
    pub(crate) sentinel_password: Option<Spanned<String>>,
    pub(crate) username: Option<Spanned<String>>,
    pub(crate) password: Option<Spanned<String>>,
    pub(crate) prefix: Option<Spanned<String>>,
    pub(crate) timeout: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) on_error: OnErrorFile,
    pub(crate) breaker_window: Option<Spanned<String>>,
    pub(crate) breaker_min_calls: Option<Spanned<i64>>,
    pub(crate) breaker_failure_ratio: Option<Spanned<f64>>,
    pub(crate) breaker_consecutive_failures: Option<Spanned<i64>>,
    pub(crate) breaker_probe_interval: Option<Spanned<String>>,
    pub(crate) fleet_size: Option<Spanned<i64>>,
    pub(crate) startup_wait: Option<Spanned<String>>,
    pub(crate) lease_for: Option<Spanned<String>>,
    pub(crate) deny_cache_entries: Option<Spanned<i64>>,
    pub(crate) ttl_margin: Option<Spanned<String>>,
    pub(crate) in_flight_lease: Option<Spanned<String>>,
}

/// A list of source strings, each located.
pub(crate) type SourceList = Spanned<Vec<Spanned<String>>>;

#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum OnInvalidTokenFile {
    #[default]
    Reject,
    Next,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct IdentityFile {
    pub(crate) sources: Option<SourceList>,
    #[serde(default)]
    pub(crate) on_invalid_token: OnInvalidTokenFile,
    #[serde(default)]
    pub(crate) ip: IpFile,
    pub(crate) jwt: Option<JwtFile>,
    pub(crate) hash_key: Option<Spanned<String>>,
    pub(crate) ja4_header: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct IpFile {
    pub(crate) ipv4_prefix: Option<Spanned<i64>>,
    pub(crate) ipv6_prefix: Option<Spanned<i64>>,
    #[serde(default)]
    pub(crate) trusted_proxies: Vec<Spanned<String>>,
    pub(crate) header: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct JwtFile {
    pub(crate) algorithms: Spanned<Vec<Spanned<String>>>,
    pub(crate) secret: Option<Spanned<String>>,
    pub(crate) public_key_file: Option<Spanned<String>>,
    pub(crate) jwks_file: Option<Spanned<String>>,
    pub(crate) issuer: Option<String>,
    pub(crate) audience: Option<String>,
    pub(crate) leeway: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AccessFile {
    #[serde(default)]
    pub(crate) allow: Vec<Spanned<String>>,
    #[serde(default)]
    pub(crate) deny: Vec<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PolicyFile {
    pub(crate) name: Spanned<String>,
    pub(crate) capacity: Option<Spanned<i64>>,
    pub(crate) rate: Option<Spanned<String>>,
    pub(crate) quota: Option<Spanned<i64>>,
    pub(crate) period: Option<Spanned<String>>,
    pub(crate) timezone: Option<Spanned<String>>,
    pub(crate) week_start: Option<Spanned<String>>,
    pub(crate) cost: Option<Spanned<i64>>,
    #[serde(default)]
    pub(crate) shadow: bool,
    pub(crate) sources: Option<SourceList>,
    #[serde(rename = "match")]
    pub(crate) route: Option<PolicyMatchFile>,
    pub(crate) tier: Option<Spanned<String>>,
    pub(crate) tiers: Option<std::collections::BTreeMap<String, TierFile>>,
    pub(crate) cost_header: Option<Spanned<String>>,
    pub(crate) count_status: Option<Spanned<Vec<Spanned<i64>>>>,
    pub(crate) settle_header: Option<Spanned<String>>,
    pub(crate) max_in_flight: Option<Spanned<i64>>,
    pub(crate) max_delay: Option<Spanned<String>>,
    pub(crate) max_held: Option<Spanned<i64>>,
    pub(crate) block_for: Option<Spanned<String>>,
    pub(crate) action: Option<Spanned<String>>,
    pub(crate) challenge: Option<Spanned<String>>,
    pub(crate) difficulty: Option<Spanned<i64>>,
    pub(crate) bind: Option<Spanned<String>>,
    pub(crate) on_limit: Option<Spanned<String>>,
}

/// `[challenge]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ChallengeFile {
    pub(crate) status: Option<Spanned<i64>>,
    pub(crate) pass_ttl: Option<Spanned<String>>,
    pub(crate) nonce_ttl: Option<Spanned<String>>,
    pub(crate) refresh_wait: Option<Spanned<String>>,
    pub(crate) path: Option<Spanned<String>>,
    pub(crate) cookie: Option<Spanned<String>>,
    pub(crate) never_paths: Option<Spanned<Vec<String>>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MatchFile {
    pub(crate) host: Option<String>,
    pub(crate) path_prefix: Option<String>,
    pub(crate) path_regex: Option<Spanned<String>>,
    pub(crate) methods: Option<Vec<Spanned<String>>>,
}

/// A policy's `match`: a route's keys and what the request must show.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PolicyMatchFile {
    pub(crate) host: Option<String>,
    pub(crate) path_prefix: Option<String>,
    pub(crate) path_regex: Option<Spanned<String>>,
    pub(crate) methods: Option<Vec<Spanned<String>>>,
    pub(crate) headers: Option<Spanned<std::collections::BTreeMap<String, Spanned<toml::Value>>>>,
    pub(crate) user_agent: Option<Spanned<String>>,
    pub(crate) networks: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) asn: Option<Spanned<Vec<Spanned<toml::Value>>>>,
    pub(crate) country: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) bot: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) verified: Option<Spanned<bool>>,
    pub(crate) ja4: Option<Spanned<Vec<Spanned<String>>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TierFile {
    pub(crate) capacity: Option<Spanned<i64>>,
    pub(crate) rate: Option<Spanned<String>>,
    pub(crate) quota: Option<Spanned<i64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResponseFile {
    pub(crate) status: Option<Spanned<i64>>,
}

impl PolicyMatchFile {
    /// The route's part of it.
    pub(crate) fn route(&self) -> MatchFile {
        MatchFile {
            host: self.host.clone(),
            path_prefix: self.path_prefix.clone(),
            path_regex: self.path_regex.clone(),
            methods: self.methods.clone(),
        }
    }
}
