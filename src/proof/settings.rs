//! `[identity.verify]` checked: which sources must be proven before they name a caller, and how
//! each is proven (the backend's answers, or a key list).

use super::list::KeyList;
use crate::identity::Source;
use crate::policy::{Conditions, Route};
use std::sync::Arc;
use std::time::Duration;

/// How long a proof lasts without a proving answer, when `remember` is not given.
pub const DEFAULT_REMEMBER: Duration = Duration::from_secs(24 * 3600);

/// How many proven or revoked values each instance keeps of a source, when `keep` is not
/// given.
pub const DEFAULT_KEEP: usize = 100_000;

/// Every verified source, in the order written.
#[derive(Debug, Clone, Default)]
pub struct VerifySettings {
    /// The sources, each with how it is proven.
    pub sources: Vec<Verified>,
}

impl VerifySettings {
    /// Whether no source is verified.
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }
}

/// One verified source.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The source (`header:x-api-key`, `cookie:session`, `query:key`).
    pub source: Source,
    /// How its values are proven.
    pub by: By,
    /// What a revoked value gets.
    pub refused: OnRefused,
}

/// How a verified source's values are proven.
#[derive(Debug, Clone)]
pub enum By {
    /// Learned from the backend's answers.
    Backend(Box<BackendProof>),
    /// Listed in a file.
    List(Arc<KeyList>),
}

/// What a revoked value (proven, then refused) gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnRefused {
    /// It names no caller: the chain goes on (its address's bucket).
    #[default]
    Next,
    /// 403 at the edge; one request an hour still reaches the backend.
    Reject,
}

/// How the backend's answers prove and refuse values.
#[derive(Debug, Clone)]
pub struct BackendProof {
    /// The routes where the backend checks the value (all, when `None`).
    pub scope: Option<Scope>,
    /// A response header the backend sets to `valid` or `invalid`, which wins over the status
    /// and never reaches the client.
    pub proof_header: Option<http::HeaderName>,
    /// The statuses that prove a value.
    pub proven_status: StatusSet,
    /// The statuses that refuse it.
    pub refused_status: StatusSet,
    /// How long a proof lasts after its last proving answer.
    pub remember: Duration,
    /// How many proven or revoked values each instance keeps of this source.
    pub keep: usize,
}

/// `match`: the route and conditions of the requests whose answers count.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// The route part (host, path, methods).
    pub route: Route,
    /// What else the request must show.
    pub conditions: Conditions,
}

/// A set of HTTP statuses, written as numbers and ranges such as `200-299`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusSet(Vec<(u16, u16)>);

impl StatusSet {
    /// The statuses of these inclusive ranges.
    pub fn of(ranges: Vec<(u16, u16)>) -> Self {
        Self(ranges)
    }

    /// Whether `status` is one of them.
    pub fn contains(&self, status: u16) -> bool {
        self.0.iter().any(|&(lo, hi)| (lo..=hi).contains(&status))
    }

    /// Whether any status is in both sets.
    pub fn overlaps(&self, other: &StatusSet) -> bool {
        self.0
            .iter()
            .any(|&(lo, hi)| other.0.iter().any(|&(a, b)| lo <= b && a <= hi))
    }

    /// The default proving statuses: every 2xx.
    pub fn success() -> Self {
        Self(vec![(200, 299)])
    }

    /// The default refusing status: 401.
    pub fn unauthorized() -> Self {
        Self(vec![(401, 401)])
    }
}

impl std::fmt::Display for StatusSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|&(lo, hi)| match lo == hi {
                true => lo.to_string(),
                false => format!("{lo}-{hi}"),
            })
            .collect();
        f.write_str(&parts.join(", "))
    }
}
