//! What later phases owe a request's policies: reservations the response settles
//! (`count_status`: a status not in the list refunds; `settle_header`: the usage the backend
//! reports replaces the reservation) and concurrency slots, released when the request ends
//! however it ends. Each settlement is one atomic `Mode::Settle` take, so concurrent requests
//! can never have been over-admitted: they were refused up front when the bucket could not
//! pay what they reserved.

use super::concurrency::{release_all, HeldSlot};
use super::Few;
use crate::identity::Identity;
use crate::limiter::bucket::MAX_CAPACITY;
use crate::limiter::{BucketKey, BucketSpec, Limiter, Mode, PolicyKey, Take, Terms};
use crate::policy::Settle;
use crate::telemetry::{PolicyCounters, SettleResult};
use http::{HeaderMap, HeaderValue};
use std::fmt;
use std::sync::Arc;

/// The reservations and slots of one request. Most requests owe nothing: then it holds no
/// allocation and is a pointer wide, which keeps every request's context small.
#[derive(Default)]
pub struct Aftercare(Option<Box<Owed>>);

/// What a request owes, when it owes anything.
struct Owed {
    settlements: Few<Settlement>,
    slots: Few<HeldSlot>,
    limiter: Arc<dyn Limiter>,
}

/// A reservation the response settles.
pub(crate) struct Settlement {
    pub(crate) policy: PolicyKey,
    pub(crate) identity: Identity,
    pub(crate) spec: BucketSpec,
    /// Tokens taken up front.
    pub(crate) reserved: f64,
    pub(crate) rule: Settle,
    pub(crate) counters: Arc<PolicyCounters>,
}

impl fmt::Debug for Aftercare {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (settlements, slots) = self
            .0
            .as_ref()
            .map_or((0, 0), |o| (o.settlements.len(), o.slots.len()));
        f.debug_struct("Aftercare")
            .field("settlements", &settlements)
            .field("slots", &slots)
            .finish()
    }
}

impl Aftercare {
    /// Settlements against `limiter`, and slots to release.
    pub(crate) fn new(
        limiter: &Arc<dyn Limiter>,
        settlements: Few<Settlement>,
        slots: Few<HeldSlot>,
    ) -> Self {
        if settlements.is_empty() && slots.is_empty() {
            return Self::default();
        }
        Self(Some(Box::new(Owed {
            settlements,
            slots,
            limiter: limiter.clone(),
        })))
    }

    /// Whether nothing is owed.
    pub fn is_empty(&self) -> bool {
        self.0
            .as_ref()
            .is_none_or(|o| o.settlements.is_empty() && o.slots.is_empty())
    }

    /// The response header arrived: settles what its status and headers decide.
    /// (The settling futures are boxed, here and below: only a request that owes something
    /// waits on them, and the proxy's every response phase would otherwise carry their room.)
    pub async fn on_response(&mut self, status: u16, headers: &HeaderMap) {
        let Some(owed) = self.0.as_deref_mut() else {
            return;
        };
        let due = owed.due(|rule, reserved| match rule {
            Settle::CountStatus(counted) => Some(counted_or_refund(counted, status, reserved)),
            Settle::Header(name) => usage(headers.get(name)).map(|used| used - reserved),
        });
        Box::pin(owed.settle(due)).await;
    }

    /// Response trailers arrived: settles reservations whose usage header is among them.
    pub async fn on_trailers(&mut self, trailers: &HeaderMap) {
        let Some(owed) = self.0.as_deref_mut() else {
            return;
        };
        let due = owed.due(|rule, reserved| match rule {
            Settle::Header(name) => usage(trailers.get(name)).map(|used| used - reserved),
            Settle::CountStatus(_) => None,
        });
        Box::pin(owed.settle(due)).await;
    }

    /// The request ended with `status` (none if no response was sent): reservations still
    /// open settle by that status (a usage that never came leaves the reservation standing),
    /// and every slot is given back.
    pub async fn finish(&mut self, status: Option<u16>) {
        let Some(owed) = self.0.as_deref_mut() else {
            return;
        };
        let due = owed.due(|rule, reserved| match rule {
            Settle::CountStatus(counted) => Some(match status {
                Some(status) => counted_or_refund(counted, status, reserved),
                None => -reserved,
            }),
            Settle::Header(_) => Some(0.0),
        });
        Box::pin(owed.settle(due)).await;
        Box::pin(release_all(std::mem::take(&mut owed.slots))).await;
    }
}

impl Owed {
    /// Takes out the settlements `delta` decides now, each with its change in tokens.
    fn due(&mut self, delta: impl Fn(&Settle, f64) -> Option<f64>) -> Few<(Settlement, f64)> {
        let mut due = Few::new();
        let mut open = Few::new();
        for s in self.settlements.drain(..) {
            match delta(&s.rule, s.reserved) {
                Some(d) => due.push((s, d)),
                None => open.push(s),
            }
        }
        self.settlements = open;
        due
    }

    /// Applies `due` in one store call (settlements that change nothing are only counted).
    async fn settle(&self, due: Few<(Settlement, f64)>) {
        let (changes, kept): (Few<_>, Few<_>) = due.into_iter().partition(|(_, d)| *d != 0.0);
        for (s, _) in &kept {
            s.counters.settled(SettleResult::Kept);
        }
        if changes.is_empty() {
            return;
        }
        let limiter = &self.limiter;
        let takes: Few<Take<'_>> = changes
            .iter()
            .map(|(s, delta)| Take {
                key: BucketKey {
                    policy: &s.policy,
                    identity: s.identity,
                },
                spec: s.spec,
                cost: *delta,
                mode: Mode::Settle,
                terms: Terms::default(),
            })
            .collect();
        let answer = limiter.acquire(&takes).await;
        for (s, delta) in &changes {
            s.counters.settled(match (&answer, *delta < 0.0) {
                (Err(_), _) => SettleResult::Failed,
                (Ok(_), true) => SettleResult::Refunded,
                (Ok(_), false) => SettleResult::Charged,
            });
        }
        if let Err(e) = answer {
            log::debug!("a settlement failed ({e}); the reservation stands");
        }
    }
}

/// No change when `status` is counted, else the whole reservation back.
fn counted_or_refund(counted: &[u16], status: u16, reserved: f64) -> f64 {
    match counted.contains(&status) {
        true => 0.0,
        false => -reserved,
    }
}

/// The usage a header states: a finite number of tokens, at least 0 (capped at the largest
/// capacity). Anything else states nothing, and the reservation stands.
fn usage(value: Option<&HeaderValue>) -> Option<f64> {
    let text = value?.to_str().ok()?.trim();
    let used: f64 = text.parse().ok()?;
    (used.is_finite() && used >= 0.0 && !text.starts_with('+')).then(|| used.min(MAX_CAPACITY))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_usage_is_a_number_of_tokens() {
        let usage_of = |text: &'static str| usage(Some(&HeaderValue::from_static(text)));
        assert_eq!(usage_of("10"), Some(10.0));
        assert_eq!(usage_of(" 2.5 "), Some(2.5));
        assert_eq!(usage_of("0"), Some(0.0));
        assert_eq!(usage_of("1e99"), Some(MAX_CAPACITY));
        for bad in ["", "-1", "+1", "ten", "NaN", "inf"] {
            assert_eq!(usage_of(bad), None, "{bad:?}");
        }
        assert_eq!(usage(None), None);
    }

    #[test]
    fn only_counted_statuses_keep_their_tokens() {
        assert_eq!(counted_or_refund(&[401, 403], 401, 1.0), 0.0);
        assert_eq!(counted_or_refund(&[401, 403], 200, 1.0), -1.0);
    }
}
