//! A `limit` policy's bucket and its terms: how big and how fast it refills, what a request
//! costs, whose bucket it is, the tiers that change its size, and its rules. A quota's
//! calendar is its limits' refill ([`Limits::calendar`]).

use super::{Limits, QuotaCalendar, Rules, Tiers};
use crate::identity::IdentityChain;
use std::fmt;

/// What a `limit` policy takes from, and on what terms.
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    /// Capacity and rate (or a quota and its calendar) when no tier applies.
    pub limits: Limits,
    /// Tokens one request takes.
    pub cost: u64,
    /// This policy's own identity chain, instead of the global one.
    pub sources: Option<IdentityChain>,
    /// Limits chosen by a value of the request.
    pub tiers: Option<Tiers>,
    /// Cost from a header, settling by the response, concurrency, shaping and penalties.
    pub rules: Rules,
    /// Where each request's limits come from: the policy, or the crawl delay the site's
    /// robots.txt asks of the crawler (Floodgate's own `robots-crawl-delay` policy).
    pub limits_by: LimitsBy,
}

/// Where a `limit` policy's limits come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LimitsBy {
    /// The policy's own limits and tiers.
    #[default]
    Policy,
    /// One request per crawl delay, read from the request's robots.txt verdict; the policy
    /// applies only to requests with a crawl delay.
    CrawlDelay,
}

impl Limit {
    /// A bucket (or quota) of `limits` at cost 1, by the global chain, with no tiers or rules.
    pub fn of(limits: Limits) -> Self {
        Self {
            limits,
            cost: 1,
            sources: None,
            tiers: None,
            rules: Rules::default(),
            limits_by: LimitsBy::Policy,
        }
    }

    /// `capacity 10 refilled at 1/s` or `quota 1000 per Day`.
    pub(super) fn fmt_size(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.limits_by == LimitsBy::CrawlDelay {
            return f.write_str("one request per the crawl delay robots.txt asks of the crawler");
        }
        let capacity = self.limits.capacity();
        match (self.limits.rate(), self.limits.calendar()) {
            (Some(rate), _) => write!(f, "capacity {capacity} refilled at {rate}"),
            (None, Some(calendar)) => write!(f, "quota {capacity} per {calendar:?}"),
            (None, None) => write!(f, "quota {capacity}"),
        }
    }

    /// A quota policy's calendar (its limits, tiers and overrides are quotas per period).
    pub fn calendar(&self) -> Option<&QuotaCalendar> {
        self.limits.calendar()
    }

    /// `; callers by …`, `; tiers by …` and the rules, each when given.
    pub(super) fn fmt_terms(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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
        write!(f, "{}", self.rules)
    }
}
