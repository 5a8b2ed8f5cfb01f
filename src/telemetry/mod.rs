//! What Floodgate reports: Prometheus series with bounded labels, the top offenders, and
//! errors with their causes for the log.

mod backends;
mod bots;
mod causes;
mod certificates;
mod challenges;
mod complaints;
mod counters;
mod crowdsec;
pub mod logger;
mod metrics;
mod offenders;
mod overload;
mod policy;
mod privacy_pass;
mod proofs;
mod robots;
mod signed;
mod vocab;
pub mod writer;

pub use backends::BackendGauge;
pub use bots::BotMetrics;
pub use causes::Causes;
pub use certificates::{CertificateMetrics, OrderResult};
pub use challenges::{ChallengeMetrics, ChallengeResult};
pub use complaints::{Complaints, Moment, Say, LOG_EVERY};
pub use counters::ByLabel;
pub use crowdsec::CrowdSecMetrics;
pub use floodgate_limiter::StoreMetrics;
pub use metrics::{Metrics, BLOCK_REMEDIES};
pub use offenders::{Offender, Offenders};
pub use overload::OverloadMetrics;
pub use policy::PolicyCounters;
pub use privacy_pass::{PrivacyPassCounters, UNKNOWN_ISSUER};
pub use proofs::{ProofCounters, SourceProofCounters};
pub use robots::{RobotsCounters, TrapResult};
pub use signed::SignedMetrics;
pub use vocab::{
    AccessList, ConnectionRefusal, FetchResult, HeldResult, PenaltyEvent, PolicyOutcome,
    PullResult, ReloadResult, RequestDecision, SettleResult, SignedResult, StoreErrorKind,
    UpstreamErrorKind, Vocabulary,
};
