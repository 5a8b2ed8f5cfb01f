//! The policies a request met, in the order the gate checked them, each with what it said,
//! and the deciding bucket: what the decision record shows of the gate's work.

use crate::explain::{Bucket, Said, Step};
use crate::gate::{Decided, Outcome, Standing, Trail};
use crate::telemetry::PolicyOutcome;
use smallvec::SmallVec;
use std::sync::Arc;

/// The policies checked and the deciding bucket.
#[derive(Debug, Default)]
pub(in crate::proxy) struct Steps {
    /// Each policy checked, and what it said.
    pub(in crate::proxy) steps: SmallVec<[Step; 1]>,
    /// The deciding bucket's state.
    pub(in crate::proxy) bucket: Option<Bucket>,
}

impl Steps {
    /// The policies on `trail`, and what `outcome` says: the deciding policy and what it
    /// said (unless the trail has it), and the bucket.
    pub(super) fn of(outcome: &Outcome<'_>, trail: &Trail<'_>) -> Self {
        let steps = trail
            .checked()
            .iter()
            .map(|c| Step {
                policy: c.policy.clone(),
                said: Said::Counted(c.outcome),
                remaining: c.remaining,
            })
            .collect();
        let mut this = Self {
            steps,
            bucket: None,
        };
        this.note(outcome);
        this
    }

    fn note(&mut self, outcome: &Outcome<'_>) {
        match outcome {
            Outcome::Allowed(decided, _) => self.decided(decided, PolicyOutcome::Allowed),
            Outcome::Throttled(decided) => self.decided(decided, PolicyOutcome::Throttled),
            Outcome::Busy(busy) => self.step(busy.policy, Said::Busy),
            Outcome::Unpayable(unpayable) => self.step(unpayable.policy, Said::Unpayable),
            Outcome::Denied(policy) => self.step(policy, Said::Counted(PolicyOutcome::Denied)),
            Outcome::AllowedByRule(policy) => {
                self.step(policy, Said::Counted(PolicyOutcome::AllowedByRule))
            }
            Outcome::Challenged(challenged, _) => {
                self.step(challenged.policy, Said::Counted(PolicyOutcome::Challenged))
            }
            Outcome::Unlimited(_)
            | Outcome::Banned(_)
            | Outcome::Trapped(_)
            | Outcome::Blocked(_)
            | Outcome::Listed(_)
            | Outcome::InvalidToken
            | Outcome::AmbiguousCredential(_)
            | Outcome::KeyRefused(_)
            | Outcome::BadCost(_)
            | Outcome::Undecided(_) => {}
        }
    }

    fn decided(&mut self, decided: &Decided<'_>, said: PolicyOutcome) {
        self.step(decided.standing.policy, Said::Counted(said));
        self.bucket = Some(bucket(&decided.standing));
    }

    /// Adds `policy`'s `said`, unless the trail noted it already.
    fn step(&mut self, policy: &Arc<str>, said: Said) {
        let noted = |s: &Step| *s.policy == **policy && s.said == said;
        if !self.steps.iter().any(noted) {
            self.steps.push(Step {
                policy: policy.clone(),
                said,
                remaining: None,
            });
        }
    }
}

/// The bucket as `standing` describes it: what the request took, if it was allowed.
fn bucket(standing: &Standing<'_>) -> Bucket {
    let after = standing.assessment.remaining();
    let allowed = standing.assessment.is_allowed();
    Bucket {
        capacity: standing.quota.capacity,
        cost: standing.cost,
        before: if allowed {
            after + standing.cost as f64
        } else {
            after
        },
        after,
        retry_after_s: (!allowed).then(|| standing.assessment.wait_us().div_ceil(1_000_000)),
    }
}
