//! The one pipeline a request's buckets go through, whichever front door planned them (the
//! proxy's gate, the decision endpoint through it, the rate limit service): a bucket that can
//! never pay refuses before the store; one all-or-nothing store call (`store_call.rs`, with
//! `on_error` when it cannot decide); the judgement (`judge.rs`). Every way out is counted
//! once and noted on the request's [`Trail`]; a store that cannot decide refuses only when an
//! enforcing bucket was drawn on (shadow never blocks, at any front door).
//!
//! Front doors state their buckets ([`Draw`]) and their takes, and read a typed [`Drawn`]:
//! they never count, judge or apply `on_error` themselves.

use super::judge::{count_refusal, count_undecided, judge, Draw};
use super::store_call::StoreCall;
use super::trail::Trail;
use super::{Few, Standing};
use crate::limiter::{Assessments, Fallback, Limiter, Take, Undecided};
use crate::telemetry::Metrics;
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

    /// One request drawing on `draws` (in order), on its way through the pipeline.
    pub fn draws<'p, 'g>(&'p self, draws: Few<Draw<'g>>) -> Draws<'p, 'g> {
        Draws {
            store: &self.store,
            draws,
            trail: Trail::default(),
        }
    }
}

/// One request's buckets in the pipeline, and its trail so far.
pub struct Draws<'p, 'g> {
    store: &'p StoreCall,
    draws: Few<Draw<'g>>,
    trail: Trail<'g>,
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

impl<'g> Draws<'_, 'g> {
    /// The buckets, in order.
    pub fn draws(&self) -> &[Draw<'g>] {
        &self.draws
    }

    /// The first enforcing bucket that can never hold the request's cost, counted as the
    /// refusal (before the store, so nothing else is asked).
    pub fn refuse_unpayable(&mut self) -> Option<usize> {
        let index = self.draws.iter().position(Draw::unpayable)?;
        self.refused_by(index);
        Some(index)
    }

    /// A refusal by the bucket at `index` before any store call (its policy's slots are all
    /// taken): it counts throttled, the other enforcing buckets throttled by another.
    pub fn refused_by(&mut self, index: usize) {
        count_refusal(&self.draws, index, &mut self.trail);
    }

    /// The store could not decide before the take (the concurrency slots' store): counted;
    /// `what` applies unless only shadow buckets were drawn on.
    pub fn undecided(&mut self, what: Undecided) -> Drawn<'g> {
        match count_undecided(&self.draws, &mut self.trail) {
            true => Drawn::Undecided(what),
            false => Drawn::Spared,
        }
    }

    /// Decides the request: refuses an unpayable bucket, else takes `takes` (one per bucket,
    /// in order) in one store call and judges the answers. `refused_before`: something else
    /// refused the request already (the rate limit service's `requests_per_unit: 0`).
    pub async fn decide_draws(&mut self, takes: &[Take<'_>], refused_before: bool) -> Drawn<'g> {
        if let Some(index) = self.refuse_unpayable() {
            return Drawn::Unpayable(index);
        }
        let assessments = match self.store.ask(takes).await {
            Ok(assessments) => assessments,
            Err(what) => return self.undecided(what),
        };
        let judgement = judge(&self.draws, &assessments, refused_before, &mut self.trail);
        Drawn::Judged(Judged {
            passed: judgement.passed,
            deciding: judgement.deciding,
            assessments,
        })
    }

    /// The trail of the request's buckets.
    pub fn into_trail(self) -> Trail<'g> {
        self.trail
    }
}
