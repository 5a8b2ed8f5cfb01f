//! A request's class for overload protection: the priority and `on_overload` of the
//! policies it matches, found with the decision ([`Gate::decide_classified`]).

use super::bound::BoundPolicy;
use super::{Gate, Notes, Outcome};
use crate::identity::Request;
use crate::policy::{Class, RouteFacts};

impl Gate {
    /// What happens to `req`, and its class when the backend is overloaded: the priority and
    /// `on_overload` of the policies it matches (the default class for a request refused or
    /// let through before any policy is looked at: a ban, the blocklist, the deny-list).
    pub async fn decide_classified<'g>(
        &'g self,
        req: &Request<'_>,
        route: &RouteFacts<'_>,
    ) -> (Outcome<'g>, Class) {
        let (outcome, notes) = self.decide_noted(req, route).await;
        (outcome, notes.class)
    }

    /// What happens to `req`, with its class and the trail of the policies its buckets were
    /// checked against (what explains the decision).
    pub async fn decide_noted<'g>(
        &'g self,
        req: &Request<'_>,
        route: &RouteFacts<'_>,
    ) -> (Outcome<'g>, Notes<'g>) {
        let mut notes = Notes::default();
        let outcome = self.decide_into(req, route, &mut notes).await;
        (outcome, notes)
    }

    /// The class of a request matching `matched` (the default when no policy names a priority
    /// or `on_overload`, found without looking).
    pub(super) fn class_of(&self, matched: &[&BoundPolicy]) -> Class {
        match self.classifies {
            true => Class::of(
                matched
                    .iter()
                    .map(|b| (b.policy.name(), b.policy.key.id(), &b.policy.overload)),
            ),
            false => Class::default(),
        }
    }

    /// Whether any policy names a priority or `on_overload`.
    pub fn classifies(&self) -> bool {
        self.classifies
    }
}
