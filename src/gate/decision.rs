//! The gate's record of deciding one request ([`Gate::decide`](super::Gate::decide), the one
//! entry): what happens to it (its [`Outcome`]), its class when the backend is overloaded,
//! and the [`Trail`] that explains it.
//!
//! The words, one meaning each: an *outcome* is what happens to a request; a *decision* is
//! this record; what one policy made of the request is its
//! [`PolicyOutcome`](crate::telemetry::PolicyOutcome) (the metrics' `decision` label).

use super::trail::Trail;
use super::Outcome;
use crate::policy::Class;

/// What the gate made of one request.
#[derive(Debug)]
pub struct Decision<'g> {
    /// What happens to the request.
    pub outcome: Outcome<'g>,
    /// Its class when the backend is overloaded: the priority and `on_overload` of the
    /// policies it matches (the default for a request refused or let through before any
    /// policy is looked at: a ban, the blocklist, the deny-list).
    pub class: Class,
    /// The policies it met, in the order they were checked, and what each made of it.
    pub trail: Trail<'g>,
}
