//! The config file as written: the top-level table, whose sections are serde structs beside
//! their validation (`server::ServerFile`, `store::StoreFile`, …) that refuse unknown keys and
//! keep the location of every value that is checked after parsing. Nothing outside `config`
//! sees these types.

use super::acme::TlsFile;
use super::admin::AdminFile;
use super::bots::BotsFile;
use super::challenge::ChallengeFile;
use super::crowdsec::CrowdSecFile;
use super::decisions::CheckFile;
use super::explain::DecisionsFile;
use super::geo::GeoFile;
use super::identity::{AccessFile, IdentityFile};
use super::overload::OverloadFile;
use super::policy_table::PolicyFile;
use super::response::ResponseFile;
use super::rls::RlsFile;
use super::robots::RobotsFile;
use super::server::ServerFile;
use super::store::StoreFile;
use super::telemetry::TelemetryFile;
use super::upstream::{RouteFile, UpstreamFile};
use serde::Deserialize;

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
    pub(crate) overload: Option<OverloadFile>,
    pub(crate) telemetry: Option<TelemetryFile>,
    pub(crate) decisions: Option<DecisionsFile>,
    pub(crate) robots: Option<toml::Spanned<RobotsFile>>,
}
