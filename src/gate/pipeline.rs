//! The one pipeline a request's buckets go through, whichever front door planned them (the
//! proxy's gate, the decision endpoint through it, the rate limit service): a bucket that can
//! never pay refuses before the store; one all-or-nothing store call (`store_call.rs`, with
//! `on_error` when it cannot decide); the judgement (`judge.rs`). Every way out is counted
//! once and noted on the request's [`Trail`]; a store that cannot decide refuses only when an
//! enforcing bucket was drawn on (shadow never blocks, at any front door).
//!
//! Front doors state their buckets ([`Draw`]) and their takes, and read a typed [`Drawn`]:
//! they never count, judge or apply `on_error` themselves, and cannot run the steps in
//! another order: [`Pipeline::decide`] is the one entry (the gate's, `admitting`, lets it
//! take its concurrency slots between the unpayable scan and the store call), and each check
//! runs once per request.

use super::judge::{count_refusal, count_undecided, judge, Draw};
use super::store_call::StoreCall;
use super::trail::Trail;
use super::{Few, Standing};
use crate::limiter::{Assessments, Fallback, Limiter, Take, Undecided};
use crate::telemetry::Metrics;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

/// The store a front door's decisions draw on, and what decides when it cannot.
pub struct Pipeline {
    store: StoreCall,
}

impl Pipeline {
    /// Decisions drawing on `limiter`, `fallback` deciding when it cannot, counted in
    /// `metrics`.
    pub fn new(limiter: Arc<dyn Limiter>, fallback: Fallback, metrics: &Metrics) -> Self {
        Self {
            store: StoreCall::new(limiter, fallback, metrics),
        }
    }

    /// The same, `fallback` deciding once the store has taken `budget` (a front door with
    /// its own deadline).
    pub fn within(self, budget: Duration) -> Self {
        Self {
            store: self.store.within(budget),
        }
    }

    /// The store.
    pub(super) fn limiter(&self) -> &Arc<dyn Limiter> {
        self.store.limiter()
    }

    /// The store call, for what asks the store beside the buckets (concurrency slots).
    pub(super) fn store(&self) -> &StoreCall {
        &self.store
    }

    /// The one way through for a front door that only takes (the rate limit service): the
    /// request drawing on `draws` (in order) and taking `takes` (one per bucket), each
    /// bucket's decision noted on `trail`. `refused_before`: something else refused the
    /// request already (the rate limit service's `requests_per_unit: 0`).
    pub async fn decide<'g>(
        &self,
        draws: Few<Draw<'g>>,
        takes: &[Take<'_>],
        refused_before: bool,
        trail: &mut Trail<'g>,
    ) -> Drawn<'g> {
        let admission = Taking {
            takes,
            refused_before,
        };
        match self.admitting(draws, admission, trail).await {
            Passage::Unpayable(index) => Drawn::Unpayable(index),
            Passage::Judged(judged, ()) => Drawn::Judged(judged),
            Passage::Undecided(what) => Drawn::Undecided(what),
            Passage::Spared => Drawn::Spared,
        }
    }

    /// The one way through, with what a front door does between the checks (the gate's
    /// concurrency slots and hold places, `admission`), in the one order: a bucket that can
    /// never pay refuses first (nothing taken, nothing held); then the request is admitted;
    /// then one store call takes from every bucket and the answers are judged. Each way out
    /// is counted once, on `trail`.
    pub(super) async fn admitting<'g, A: Admission>(
        &self,
        draws: Few<Draw<'g>>,
        mut admission: A,
        trail: &mut Trail<'g>,
    ) -> Passage<'g, A::Held, A::Refusal> {
        if let Some(index) = draws.iter().position(Draw::unpayable) {
            count_refusal(&draws, index, trail);
            return Passage::Unpayable(index);
        }
        let held = match admission.admit().await {
            Ok(held) => held,
            Err(Unadmitted::Refused { index, why }) => {
                count_refusal(&draws, index, trail);
                return Passage::Refused { index, why };
            }
            Err(Unadmitted::Undecided(what)) => return undecided(&draws, what, trail),
        };
        let assessments = match self.store.ask(&admission.takes(&held)).await {
            Ok(assessments) => assessments,
            // Failing open (or closed) drops what was held: nothing is limited or forwarded.
            Err(what) => return undecided(&draws, what, trail),
        };
        let judgement = judge(&draws, &assessments, admission.refused_before(), trail);
        let judged = Judged {
            passed: judgement.passed,
            deciding: judgement.deciding,
            assessments,
        };
        Passage::Judged(judged, held)
    }
}

/// The store could not decide (before the take, or in it): counted on `trail`; `what`
/// applies unless only shadow buckets were drawn on.
fn undecided<'g, H, R>(
    draws: &[Draw<'g>],
    what: Undecided,
    trail: &mut Trail<'g>,
) -> Passage<'g, H, R> {
    match count_undecided(draws, trail) {
        true => Passage::Undecided(what),
        false => Passage::Spared,
    }
}

/// What a front door does for a request between the pipeline's checks: once no bucket is
/// unpayable, it admits the request (the gate takes its concurrency slots and hold places)
/// and says what it takes from each bucket, given what it holds.
pub(super) trait Admission {
    /// What an admitted request holds until it is answered.
    type Held;
    /// Why the front door refused a request before the store call.
    type Refusal;
    /// Admits the request, or says which bucket refused it (or that the store could not
    /// say).
    fn admit(
        &mut self,
    ) -> impl std::future::Future<Output = Result<Self::Held, Unadmitted<Self::Refusal>>> + Send;
    /// The takes, one per bucket in order, of a request holding `held`.
    fn takes(&self, held: &Self::Held) -> Few<Take<'_>>;
    /// Whether something else refused the request already (so no enforcing bucket lets it
    /// pass).
    fn refused_before(&self) -> bool;
}

/// Why a front door did not admit a payable request.
pub(super) enum Unadmitted<R> {
    /// The bucket at `index` refused it, for `why` (counted throttled, the other enforcing
    /// buckets throttled by another).
    Refused {
        /// The bucket's position among the draws.
        index: usize,
        /// The front door's reason.
        why: R,
    },
    /// The store could not say, and this is what `on_error` says.
    Undecided(Undecided),
}

/// The admission of a front door that only takes.
struct Taking<'a> {
    takes: &'a [Take<'a>],
    refused_before: bool,
}

impl Admission for Taking<'_> {
    type Held = ();
    type Refusal = Infallible;

    async fn admit(&mut self) -> Result<(), Unadmitted<Infallible>> {
        Ok(())
    }

    fn takes(&self, (): &()) -> Few<Take<'_>> {
        Few::from_slice(self.takes)
    }

    fn refused_before(&self) -> bool {
        self.refused_before
    }
}

/// What the pipeline made of a request's buckets.
// The store's answers stay inline (a few, without allocating): boxing them would allocate
// on every request to save a move of the rarer ways out.
#[allow(clippy::large_enum_variant)]
pub enum Drawn<'g> {
    /// The enforcing bucket at this index can never hold the request's cost: refused
    /// before any store call, no token taken.
    Unpayable(usize),
    /// The store answered (or `on_error` decided in its place, one answer per bucket).
    Judged(Judged<'g>),
    /// The store could not decide and `on_error` refuses or lets through, as it says.
    Undecided(Undecided),
    /// The store could not decide, but only shadow buckets were drawn on: they never block.
    Spared,
}

/// What the pipeline made of a request's buckets, with what its front door held (`H`) or
/// why it refused (`R`).
#[allow(clippy::large_enum_variant)]
pub(super) enum Passage<'g, H, R> {
    /// The enforcing bucket at this index can never hold the request's cost.
    Unpayable(usize),
    /// The front door refused the request at the bucket at `index`, for `why`.
    Refused {
        /// The bucket's position among the draws.
        index: usize,
        /// The front door's reason.
        why: R,
    },
    /// The store answered, and the request holds what it was admitted with.
    Judged(Judged<'g>, H),
    /// The store could not decide and `on_error` refuses or lets through, as it says.
    Undecided(Undecided),
    /// The store could not decide, but only shadow buckets were drawn on.
    Spared,
}

/// The store's answers, judged.
pub struct Judged<'g> {
    /// Every enforcing bucket paid (and nothing refused the request before).
    pub passed: bool,
    /// The enforcing bucket that describes the request (its index among the draws) and its
    /// standing; none when only shadow buckets were drawn on.
    pub deciding: Option<(usize, Standing<'g>)>,
    /// One answer per bucket, in order.
    pub assessments: Assessments,
}
