//! A request's class for overload protection: the priority and `on_overload` of the
//! policies it matches, found with the decision ([`Gate::decide`]).

use super::bound::BoundPolicy;
use super::Gate;
use crate::policy::Class;

impl Gate {
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
