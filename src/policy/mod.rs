//! Policies: which requests they apply to (`route`), whose bucket (their identity chain), how
//! big and how fast it refills (`tier`), and what a request costs.

mod action;
mod calendar;
mod conditions;
mod enforcement;
mod index;
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
pub use limits::Limits;
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

use crate::identity::IdentityChain;
use crate::limiter::PolicyKey;
use std::fmt;
use std::sync::Arc;

/// One named limit: a bucket per caller, refilled continuously.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// The policy's name, and how the stores name its buckets.
    pub key: PolicyKey,
    /// Capacity and rate when no tier applies.
    pub limits: Limits,
    /// Tokens one request takes.
    pub cost: u64,
    /// Count what would be throttled but never block.
    pub shadow: bool,
    /// The requests this policy applies to.
    pub route: Route,
    /// What those requests must also show (headers, User-Agent, client network).
    pub conditions: Conditions,
    /// What exempts a request all the same (`unless`), if anything.
    pub unless: Option<Unless>,
    /// What the policy does to the requests it matches.
    pub action: Action,
    /// This policy's own identity chain, instead of the global one.
    pub sources: Option<IdentityChain>,
    /// Limits chosen by a value of the request.
    pub tiers: Option<Tiers>,
    /// A quota policy's calendar (its limits, tiers and overrides are quotas per period).
    pub calendar: Option<Arc<QuotaCalendar>>,
    /// Cost from a header, settling by the response, concurrency, shaping and penalties.
    pub rules: Rules,
    /// `priority` and `on_overload`: what the policy's requests count for when the backend is
    /// overloaded.
    pub overload: OverloadClass,
}

impl Policy {
    /// The name shown in headers, problem bodies and metric labels.
    pub fn name(&self) -> &Arc<str> {
        self.key.name()
    }
}

impl Policy {
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

    /// Whether a request on `facts`, showing `req`, is exempt from this policy (`unless`).
    pub fn exempts(&self, facts: &RouteFacts<'_>, req: &crate::identity::Request<'_>) -> bool {
        self.unless.as_ref().is_some_and(|u| u.holds(facts, req))
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
        if self.action != Action::Limit {
            let shadow = if self.shadow { ", shadow" } else { "" };
            write!(
                f,
                "{}: {}{shadow}; applies to {}",
                self.name(),
                self.action,
                self.route
            )?;
            self.fmt_conditions(f)?;
            return self.fmt_overload(f);
        }
        write!(
            f,
            "{}: {}, cost {}{}; applies to {}",
            self.name(),
            match (self.limits.rate(), &self.calendar) {
                (Some(rate), _) =>
                    format!("capacity {} refilled at {rate}", self.limits.capacity()),
                (None, Some(calendar)) =>
                    format!("quota {} per {calendar:?}", self.limits.capacity()),
                (None, None) => format!("quota {}", self.limits.capacity()),
            },
            self.cost,
            if self.shadow { ", shadow" } else { "" },
            self.route
        )?;
        self.fmt_conditions(f)?;
        if let Some(chain) = &self.sources {
            write!(f, "; callers by {chain}")?;
        }
        if let Some(tiers) = &self.tiers {
            let levels: Vec<String> = tiers
                .levels
                .iter()
                .map(|(name, l)| match l.rate() {
                    Some(rate) => format!("{name} = {} at {rate}", l.capacity()),
                    None => format!("{name} = {}", l.capacity()),
                })
                .collect();
            write!(f, "; tiers by {}: {}", tiers.source, levels.join(", "))?;
        }
        self.rules.fmt(f)?;
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
            limits: Limits::new(capacity, "1/s".parse().unwrap()).unwrap(),
            cost: 1,
            shadow: false,
            route: Route::default(),
            conditions: Conditions::default(),
            unless: None,
            action: Action::Limit,
            sources: None,
            tiers: None,
            calendar: None,
            rules: Rules::default(),
            overload: OverloadClass::default(),
        };
        assert_eq!(policy(10).key, policy(20).key);
        assert_ne!(PolicyKey::new("p").id(), PolicyKey::new("q").id());
    }
}
