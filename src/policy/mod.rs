//! Policies: which requests they apply to (`route`), whose bucket (their identity chain), how
//! big and how fast it refills (`tier`), and what a request costs.

mod action;
mod calendar;
mod conditions;
mod enforcement;
mod index;
mod limit;
mod limits;
mod path;
mod priority;
mod quota;
mod rate;
mod route;
mod rules;
mod sender;
mod tier;
mod unless;
mod user_agents;

pub use action::Action;
pub use calendar::{Calendar, CalendarError, Period};
pub use conditions::{Conditions, HeaderRule, UserAgent};
pub use enforcement::Enforcement;
pub use index::{Matches, RouteIndex, INDEX_FROM};
pub use limit::{Limit, LimitsBy};
pub use limits::{Limits, Size};
pub use path::{normalize_path, PathError};
pub use priority::{Class, OverloadClass, Priority};
pub use quota::QuotaCalendar;
pub use rate::{Rate, RateError};
pub use route::{request_host, Route, RouteFacts};
pub use rules::{Rules, Settle, Shaping};
pub use sender::SenderConditions;
pub use tier::Tiers;
pub use unless::Unless;
pub use user_agents::{SeenUserAgent, UserAgentIndex};

use crate::limiter::PolicyKey;
use std::fmt;
use std::sync::Arc;

/// One named policy: the requests it applies to and what it does to them (its [`Action`],
/// which for `limit` holds its bucket's terms).
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// The policy's name, and how the stores name its buckets.
    pub key: PolicyKey,
    /// Whether it acts, or only counts what it would do (`shadow`).
    pub enforcement: Enforcement,
    /// The requests this policy applies to.
    pub route: Route,
    /// What those requests must also show (headers, User-Agent, client network).
    pub conditions: Conditions,
    /// What exempts a request all the same (`unless`), if anything.
    pub unless: Option<Unless>,
    /// What the policy does to the requests it matches.
    pub action: Action,
    /// `priority` and `on_overload`: what the policy's requests count for when the backend is
    /// overloaded.
    pub overload: OverloadClass,
}

impl Policy {
    /// The name shown in headers, problem bodies and metric labels.
    pub fn name(&self) -> &Arc<str> {
        self.key.name()
    }

    /// The bucket and its terms, if this is a `limit` policy.
    pub fn limit(&self) -> Option<&Limit> {
        self.action.limit()
    }

    /// Whether a request on `facts`, showing `req`, is exempt from this policy (`unless`).
    pub fn exempts(&self, facts: &RouteFacts<'_>, req: &crate::identity::Request<'_>) -> bool {
        self.unless.as_ref().is_some_and(|u| u.holds(facts, req))
    }

    /// `; when …` for the conditions and `; unless …` for the exemption, if any.
    fn fmt_conditions(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.conditions.is_empty() {
            write!(f, "; when{}", self.conditions)?;
        }
        match &self.unless {
            Some(unless) => write!(f, "; {unless}"),
            None => Ok(()),
        }
    }

    /// `; priority …` (every policy's, `normal` when it names none) and `; on overload …`.
    fn fmt_overload(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.overload.priority {
            Some(priority) => write!(f, "; priority {priority}")?,
            None => write!(f, "; priority normal (none named)")?,
        }
        match &self.overload.on_overload {
            Some(challenge) => write!(f, "; on overload: challenge ({challenge})"),
            None => Ok(()),
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shadow = if self.enforcement.is_shadow() {
            ", shadow"
        } else {
            ""
        };
        write!(f, "{}: ", self.name())?;
        match &self.action {
            Action::Limit(limit) => {
                limit.fmt_size(f)?;
                write!(
                    f,
                    ", cost {}{shadow}; applies to {}",
                    limit.cost, self.route
                )?;
                self.fmt_conditions(f)?;
                limit.fmt_terms(f)?;
            }
            action => {
                write!(f, "{action}{shadow}; applies to {}", self.route)?;
                self.fmt_conditions(f)?;
            }
        }
        self.fmt_overload(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bucket_key_depends_on_the_name_only() {
        let policy = |capacity| Policy {
            key: PolicyKey::new("p"),
            enforcement: Enforcement::Enforce,
            route: Route::default(),
            conditions: Conditions::default(),
            unless: None,
            action: Action::Limit(Box::new(Limit::of(
                Limits::new(capacity, "1/s".parse().unwrap()).unwrap(),
            ))),
            overload: OverloadClass::default(),
        };
        assert_eq!(policy(10).key, policy(20).key);
        assert_ne!(PolicyKey::new("p").id(), PolicyKey::new("q").id());
    }
}
