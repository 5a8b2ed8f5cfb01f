//! What each policy said of a request, and what overload protection made of it, as the
//! decision record names them: typed, their words written only into the JSON.

use crate::policy::Priority;
use crate::telemetry::PolicyOutcome;
use std::sync::Arc;

/// One policy checked, and what it said.
#[derive(Debug, Clone)]
pub struct Step {
    /// The policy's name.
    pub policy: Arc<str>,
    /// What it came to.
    pub said: Said,
    /// Tokens its bucket had left after the request, where a bucket answered.
    pub remaining: Option<f64>,
}

/// What one policy said of the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Said {
    /// What it was counted as (`floodgate_requests_total`'s `decision` label).
    Counted(PolicyOutcome),
    /// Its `max_in_flight` slots were all taken.
    Busy,
    /// Its bucket can never hold what the request costs.
    Unpayable,
}

impl Said {
    /// The word the record shows (`outcome`).
    pub fn word(self) -> &'static str {
        match self {
            Said::Counted(outcome) => outcome.label(),
            Said::Busy => "busy",
            Said::Unpayable => "unpayable",
        }
    }
}

/// What overload protection made of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overloaded {
    /// The request's priority.
    pub priority: Priority,
    /// What became of it.
    pub admission: Admittance,
}

/// What overload protection did with a request of a watched pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admittance {
    /// It got a slot at the pool's backends.
    Admitted,
    /// It got the challenge page instead.
    Challenged,
    /// It was refused (503).
    Shed,
}

impl Admittance {
    /// The word the record shows (`overload.admission`).
    pub fn word(self) -> &'static str {
        match self {
            Admittance::Admitted => "admitted",
            Admittance::Challenged => "challenged",
            Admittance::Shed => "shed",
        }
    }
}
