//! A policy's `unless`: the requests its `match` takes that it leaves alone all the same (the
//! same keys as `match`; every one given must hold for a request to be let off).

use super::{Conditions, Route, RouteFacts};
use crate::identity::Request;
use std::fmt;

/// What exempts a request from a policy: a route and conditions, all of which must hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Unless {
    /// `unless`'s host, path and method keys.
    pub route: Route,
    /// `unless`'s headers, User-Agent, networks and sender keys.
    pub conditions: Conditions,
}

impl Unless {
    /// Whether a request on `facts`, showing `req`, is exempt.
    pub fn holds(&self, facts: &RouteFacts<'_>, req: &Request<'_>) -> bool {
        self.route.matches(facts) && self.conditions.hold(req)
    }

    /// Whether no key is given (it would exempt every request).
    pub fn is_empty(&self) -> bool {
        self.route.is_everything() && self.conditions.is_empty()
    }
}

impl fmt::Display for Unless {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unless")?;
        if !self.route.is_everything() {
            write!(f, " {}", self.route)?;
        }
        self.conditions.fmt(f)
    }
}
