//! What one address's reverse DNS said, independent of which crawler asks: the PTR names
//! that resolve forward to the address, and the ones that could not be settled. A crawler's
//! suffixes turn it into a [`Verification`]; how long it is kept follows from its kind.

use super::suffix::under_suffix;
use crate::identity::{Proof, Verification};
use std::sync::Arc;
use std::time::Duration;

/// The shortest and longest time a confirmed name is kept, whatever its DNS TTL.
pub const POSITIVE_LIFETIME: (Duration, Duration) =
    (Duration::from_secs(60), Duration::from_secs(3600));
/// The shortest and longest time an address nothing confirms is kept.
pub const NEGATIVE_LIFETIME: (Duration, Duration) =
    (Duration::from_secs(60), Duration::from_secs(600));
/// How long a failed lookup (SERVFAIL, timeout) is kept, so a dead server is not asked again
/// for every request.
pub const FAILURE_LIFETIME: Duration = Duration::from_secs(10);

/// The reverse DNS of one address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// The lookup did not finish: the server failed or did not answer.
    Failed,
    /// The PTR names found (at most a few), normalised (lower case, no root dot).
    Names {
        /// Names whose forward lookup contains the address.
        confirmed: Vec<Arc<str>>,
        /// Names whose forward lookup failed: neither confirmed nor refuted.
        unsettled: Vec<Arc<str>>,
    },
}

impl Answer {
    /// An address with no PTR name, or none that confirms.
    pub(crate) fn nothing() -> Self {
        Self::Names {
            confirmed: Vec::new(),
            unsettled: Vec::new(),
        }
    }

    /// Verified when a confirmed name is under a suffix; Unfinished when only an unsettled
    /// one is (or the lookup failed); Failed otherwise.
    pub(crate) fn verdict(&self, suffixes: &[Arc<str>]) -> Verification {
        let Self::Names {
            confirmed,
            unsettled,
        } = self
        else {
            return Verification::Unfinished;
        };
        let any_under = |names: &[Arc<str>]| {
            names
                .iter()
                .any(|name| suffixes.iter().any(|s| under_suffix(name, s)))
        };
        if any_under(confirmed) {
            Verification::Verified(Proof::ReverseDns)
        } else if any_under(unsettled) {
            Verification::Unfinished
        } else {
            Verification::Failed
        }
    }

    /// How long to keep this answer, given the DNS TTL of what it rests on (`None`: the
    /// answer carried none).
    pub(crate) fn lifetime(&self, ttl: Option<Duration>) -> Duration {
        let clamp = |(low, high): (Duration, Duration)| ttl.unwrap_or(low).clamp(low, high);
        match self {
            Self::Failed => FAILURE_LIFETIME,
            Self::Names { unsettled, .. } if !unsettled.is_empty() => FAILURE_LIFETIME,
            Self::Names { confirmed, .. } if !confirmed.is_empty() => clamp(POSITIVE_LIFETIME),
            Self::Names { .. } => clamp(NEGATIVE_LIFETIME),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(confirmed: &[&str], unsettled: &[&str]) -> Answer {
        let arcs = |list: &[&str]| list.iter().map(|n| Arc::from(*n)).collect();
        Answer::Names {
            confirmed: arcs(confirmed),
            unsettled: arcs(unsettled),
        }
    }

    fn suffixes(list: &[&str]) -> Vec<Arc<str>> {
        list.iter().map(|s| Arc::from(*s)).collect()
    }

    #[test]
    fn a_confirmed_name_under_a_suffix_verifies() {
        let google = suffixes(&["googlebot.com", "google.com"]);
        let answer = names(&["crawl-5.googlebot.com"], &[]);
        assert_eq!(
            answer.verdict(&google),
            Verification::Verified(Proof::ReverseDns)
        );
        assert_eq!(
            answer.verdict(&suffixes(&["search.msn.com"])),
            Verification::Failed
        );
        assert_eq!(
            names(&["evilgooglebot.com"], &[]).verdict(&google),
            Verification::Failed
        );
        assert_eq!(Answer::nothing().verdict(&google), Verification::Failed);
    }

    #[test]
    fn what_could_not_be_settled_is_unfinished_never_failed() {
        let google = suffixes(&["googlebot.com"]);
        assert_eq!(Answer::Failed.verdict(&google), Verification::Unfinished);
        assert_eq!(
            names(&["x.example.net"], &["crawl.googlebot.com"]).verdict(&google),
            Verification::Unfinished
        );
        assert_eq!(
            names(&[], &["x.example.net"]).verdict(&google),
            Verification::Failed,
            "an unsettled name under no suffix cannot verify"
        );
        assert_eq!(
            names(&["crawl.googlebot.com"], &["x.googlebot.com"]).verdict(&google),
            Verification::Verified(Proof::ReverseDns)
        );
    }

    #[test]
    fn lifetimes_follow_the_ttl_within_bounds() {
        let secs = Duration::from_secs;
        let positive = names(&["crawl.googlebot.com"], &[]);
        assert_eq!(positive.lifetime(Some(secs(300))), secs(300));
        assert_eq!(positive.lifetime(Some(secs(5))), secs(60));
        assert_eq!(positive.lifetime(Some(secs(86_400))), secs(3600));
        assert_eq!(positive.lifetime(None), secs(60));
        let negative = Answer::nothing();
        assert_eq!(negative.lifetime(Some(secs(300))), secs(300));
        assert_eq!(negative.lifetime(Some(secs(0))), secs(60));
        assert_eq!(negative.lifetime(Some(secs(86_400))), secs(600));
        assert_eq!(negative.lifetime(None), secs(60));
        assert_eq!(Answer::Failed.lifetime(Some(secs(3600))), FAILURE_LIFETIME);
        assert_eq!(
            names(&["a.googlebot.com"], &["b.googlebot.com"]).lifetime(Some(secs(3600))),
            FAILURE_LIFETIME
        );
    }
}
