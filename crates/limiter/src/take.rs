//! A take: how many tokens a request needs from one bucket, and whether it may be refused.

use crate::bucket::{Assessment, BucketSpec, Terms};
use crate::key::BucketKey;
use smallvec::SmallVec;

/// One assessment per take, in order; a few are kept inline, without allocating.
pub type Assessments = SmallVec<[Assessment; 4]>;

/// What a take does to its bucket.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode {
    /// Part of the request's all-or-nothing set: if any enforcing bucket is short, none pays.
    Enforce,
    /// Decided on its own, never refuses: pays when it can, reports when it cannot.
    Shadow,
    /// Changes the bucket by `cost` tokens, which may be negative (a refund): never refused;
    /// a charge may leave the bucket in debt (see `BucketSpec::settle`).
    Settle,
    /// Lends `cost` tokens to this instance if the bucket holds them (never refuses a request:
    /// a refused lease only means asking Redis as before); they stay counted against the
    /// bucket until returned (see `bucket::leased`).
    Lease,
    /// Returns a lease of `leased` tokens lent in lease window `window`; `cost` is minus the
    /// tokens it left unspent, which go back into the bucket. Never refused.
    Return {
        /// The lease's size.
        leased: f64,
        /// The lease window it was lent in.
        window: u64,
    },
}

/// A mode's number in the take script's arguments (`lua/take.lua` names them alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ModeCode {
    /// `ENFORCE`: [`Mode::Enforce`].
    Enforce = 0,
    /// `SHADOW`: [`Mode::Shadow`].
    Shadow = 1,
    /// `SETTLE`: [`Mode::Settle`].
    Settle = 2,
    /// `LEASE`: [`Mode::Lease`].
    Lease = 3,
    /// `RETURN`: [`Mode::Return`].
    Return = 4,
}

impl Mode {
    /// The mode's name in the Redis script's arguments.
    pub fn code(self) -> ModeCode {
        match self {
            Mode::Enforce => ModeCode::Enforce,
            Mode::Shadow => ModeCode::Shadow,
            Mode::Settle => ModeCode::Settle,
            Mode::Lease => ModeCode::Lease,
            Mode::Return { .. } => ModeCode::Return,
        }
    }

    /// The mode's number in the Redis script's arguments.
    pub fn wire(self) -> u8 {
        self.code() as u8
    }

    /// Whether the take is a settlement or a lease's return: it changes its bucket and is
    /// never refused, so it is sent even when nobody waits for its answer.
    pub fn settles(self) -> bool {
        matches!(self, Mode::Settle | Mode::Return { .. })
    }
}

/// One bucket a request takes from: which, what shape, how much, and how it counts.
#[derive(Debug, Clone, Copy)]
pub struct Take<'a> {
    /// The bucket.
    pub key: BucketKey<'a>,
    /// The bucket's capacity and refill rate.
    pub spec: BucketSpec,
    /// Tokens this request needs.
    pub cost: f64,
    /// Enforcing, shadow or a settlement.
    pub mode: Mode,
    /// Overdraft and penalty (none by default); settlements ignore them.
    pub terms: Terms,
}

impl Take<'_> {
    /// Whether this take is part of the all-or-nothing set.
    pub fn enforces(&self) -> bool {
        self.mode == Mode::Enforce
    }
}

/// Which takes pay, given each bucket's assessment: every enforcing take when all enforcing
/// takes are allowed (else none), each shadow take that is allowed on its own, and every
/// settlement.
pub fn paying<'t>(
    takes: &'t [Take<'_>],
    assessments: &'t [Assessment],
) -> impl Iterator<Item = usize> + 't {
    let enforced = takes
        .iter()
        .zip(assessments)
        .filter(|(t, _)| t.enforces())
        .all(|(_, a)| a.is_allowed());
    takes
        .iter()
        .zip(assessments)
        .enumerate()
        .filter(move |(_, (t, a))| a.is_allowed() && (enforced || !t.enforces()))
        .map(|(i, _)| i)
}
