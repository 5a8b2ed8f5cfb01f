//! Whether a request the gate forwards goes to its pool now: while the pool is overloaded (or
//! the switch says so), a request whose policies set `on_overload = "challenge"` and whose
//! pass does not answer that challenge gets the challenge page (a page load) or a 503 (any
//! other request); verified crawlers are never challenged. A pass that answers it raises the
//! request to `high` (the challenge let a person in). Under the `shed` switch `low` requests
//! get a 503 at once. Every other request waits for a slot by its priority.

use super::level::Level;
use super::pool::Permit;
use super::registry::Pools;
use super::slots::Refusal;
use crate::identity::{Challenge, Pass};
use crate::policy::{Class, Priority};
use std::sync::Arc;

/// What is known of a request when it asks for a slot.
pub struct Asking<'a> {
    /// Its class (priority, `on_overload`).
    pub class: &'a Class,
    /// Whether it loads a page (a challenge page can answer it).
    pub page: bool,
    /// The good pass it carries.
    pub pass: Option<&'a Pass>,
    /// Whether it comes from a crawler whose claim was verified.
    pub verified_crawler: bool,
}

/// The answer.
pub enum Admission {
    /// Forward: the request holds a slot until it ends.
    Admitted(Permit),
    /// Not overloaded, or `[overload]` is off for the pool: forward.
    Unwatched,
    /// Answer with the challenge of `policy` (its id and challenge).
    Challenge(Arc<str>, u64, Challenge),
    /// Answer 503.
    Shed(Shed),
}

/// A request shed: 503 with `Retry-After`, naming its priority.
#[derive(Debug, Clone)]
pub struct Shed {
    /// The request's priority.
    pub priority: Priority,
    /// `Retry-After`, whole seconds.
    pub retry_after_s: u64,
    /// Why: the switch, the challenge it could not take, or the slots.
    pub reason: &'static str,
}

impl Pools {
    /// Whether the request in `asking` goes to pool `pool` (an index of the snapshot's
    /// pools), waiting for a slot if it must.
    pub async fn admit(&self, pool: usize, asking: Asking<'_>) -> Admission {
        let Some(guard) = self.pool(pool) else {
            return Admission::Unwatched;
        };
        let level = self.overload().level();
        let mut priority = asking.class.priority;
        let count = |priority: Priority, action: &str| {
            self.overload().count_shed(guard.name(), priority, action);
        };
        // Whether the pool is overloaded is asked only of a request it changes something for.
        let challenging = asking
            .class
            .on_overload
            .as_ref()
            .filter(|_| level >= Level::Challenge || guard.overloaded());
        if let Some((policy, id, challenge)) = challenging {
            let answered = asking.pass.is_some_and(|p| p.satisfies(challenge));
            match (answered, asking.verified_crawler, asking.page) {
                (true, _, _) => priority = priority.max(Priority::High),
                (false, true, _) => {}
                (false, false, true) => {
                    count(priority, "challenge");
                    return Admission::Challenge(policy.clone(), *id, *challenge);
                }
                (false, false, false) => {
                    count(priority, "shed");
                    return Admission::Shed(Shed {
                        priority,
                        retry_after_s: guard.retry_after_s(),
                        reason: "the backend is overloaded and this request cannot take the challenge that lets requests in",
                    });
                }
            }
        }
        if level == Level::Shed && priority == Priority::Low {
            count(priority, "shed");
            return Admission::Shed(Shed {
                priority,
                retry_after_s: guard.retry_after_s(),
                reason: "an operator sheds low-priority requests",
            });
        }
        match guard.acquire(priority).await {
            Ok(permit) => Admission::Admitted(permit),
            Err(refusal) => {
                count(priority, "shed");
                Admission::Shed(Shed {
                    priority,
                    retry_after_s: guard.retry_after_s(),
                    reason: match refusal {
                        Refusal::Full | Refusal::Displaced => {
                            "the backend is overloaded and requests of higher priority come first"
                        }
                        Refusal::Waited => "the backend is overloaded: no slot freed in time",
                    },
                })
            }
        }
    }
}
