//! How much a request matters when the backend is overloaded: a policy's `priority` and
//! `on_overload`, and the class a request gets from the policies it matches.

use crate::identity::Challenge;
use std::fmt;
use std::sync::Arc;

/// A policy's `priority`: who keeps the backend when it is overloaded. Ordered from the first
/// shed to the last.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    /// `"low"`: shed first, and at once while an operator sheds (`PUT /v1/overload`).
    Low,
    /// `"normal"`: every request no policy names a priority for.
    #[default]
    Normal,
    /// `"high"`: served before `normal` and `low` when slots free.
    High,
    /// `"critical"`: never shed to make room for anything; waits first in line.
    Critical,
}

impl Priority {
    /// Every priority, from the first shed to the last (metric label order).
    pub const ALL: [Priority; 4] = [
        Priority::Low,
        Priority::Normal,
        Priority::High,
        Priority::Critical,
    ];

    /// The priority `word` names, if any.
    pub fn from_word(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.word() == word)
    }

    /// The word in config files, problem bodies and metric labels.
    pub fn word(self) -> &'static str {
        match self {
            Priority::Low => "low",
            Priority::Normal => "normal",
            Priority::High => "high",
            Priority::Critical => "critical",
        }
    }

    /// Its place in [`Priority::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// What a policy says about overload: its `priority` (if it names one) and whether its page
/// loads get a challenge instead of a 503 while the backend is overloaded (`on_overload`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OverloadClass {
    /// `priority`, when given.
    pub priority: Option<Priority>,
    /// `on_overload = "challenge"`: the challenge page loads without a good pass get.
    pub on_overload: Option<Challenge>,
}

impl OverloadClass {
    /// Whether the policy says anything about overload.
    pub fn is_empty(&self) -> bool {
        self.priority.is_none() && self.on_overload.is_none()
    }
}

/// A request's class: its priority (the highest any matching policy names, `normal` when none
/// does) and the challenge of the first matching policy with `on_overload = "challenge"`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Class {
    /// The request's priority.
    pub priority: Priority,
    /// The policy whose `on_overload` challenges the request, and its challenge.
    pub on_overload: Option<(Arc<str>, u64, Challenge)>,
}

impl Class {
    /// The class of a request matching policies `(name, id, class)`, in config order.
    pub fn of<'p>(
        matched: impl IntoIterator<Item = (&'p Arc<str>, u64, &'p OverloadClass)>,
    ) -> Self {
        let mut class = Class::default();
        let mut named = None;
        for (name, id, policy) in matched {
            named = named.max(policy.priority);
            if let (None, Some(challenge)) = (&class.on_overload, policy.on_overload) {
                class.on_overload = Some((name.clone(), id, challenge));
            }
        }
        class.priority = named.unwrap_or_default();
        class
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::{Bind, ChallengeKind};

    fn class(priority: Option<&str>, challenge: bool) -> OverloadClass {
        OverloadClass {
            priority: priority.and_then(Priority::from_word),
            on_overload: challenge.then_some(Challenge {
                kind: ChallengeKind::Refresh,
                bind: Bind::default(),
            }),
        }
    }

    #[test]
    fn priorities_are_ordered_from_the_first_shed_to_the_last() {
        assert!(Priority::Low < Priority::Normal);
        assert!(Priority::Normal < Priority::High);
        assert!(Priority::High < Priority::Critical);
        for p in Priority::ALL {
            assert_eq!(Priority::from_word(p.word()), Some(p));
            assert_eq!(Priority::ALL[p.index()], p);
        }
        assert_eq!(Priority::from_word("urgent"), None);
    }

    #[test]
    fn a_request_takes_the_highest_priority_named_and_normal_when_none_is() {
        let (a, b, c): (Arc<str>, Arc<str>, Arc<str>) = ("a".into(), "b".into(), "c".into());
        let none = Class::of([]);
        assert_eq!(none.priority, Priority::Normal);
        assert!(none.on_overload.is_none());
        let low = class(Some("low"), false);
        let high = class(Some("high"), false);
        let silent = class(None, true);
        let mixed = Class::of([(&a, 1, &low), (&b, 2, &silent), (&c, 3, &high)]);
        assert_eq!(mixed.priority, Priority::High);
        assert_eq!(
            mixed.on_overload.map(|(name, id, _)| (name, id)),
            Some((b.clone(), 2))
        );
        // A `low` alone is low, not normal: naming a priority is not raising it.
        assert_eq!(Class::of([(&a, 1, &low)]).priority, Priority::Low);
    }
}
