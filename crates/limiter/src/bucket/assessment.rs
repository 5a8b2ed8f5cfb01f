//! What a take is told: allowed (with how long a prepaid take waits) or refused (with when to
//! come back, and whether a penalty block is involved), as governor's `NotUntil` is a type of
//! its own; and the terms a take comes with.

/// What a take may do beyond paying from what the bucket holds now.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Terms {
    /// Tokens the bucket may go below zero to pay now (rate × `max_delay`): such a take is
    /// allowed and waits `retry_after_us` for its tokens to have been there.
    pub overdraft: f64,
    /// How long a refusal blocks the bucket (`block_for`), in microseconds; 0 for never.
    pub block_us: u64,
}

/// A penalty's part in an answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Penalty {
    /// No block is involved.
    #[default]
    None,
    /// This refusal started a block.
    Started,
    /// A block started earlier refused this take.
    Standing,
}

impl Penalty {
    /// The penalty's number in the Redis script's reply.
    pub fn wire(self) -> u8 {
        match self {
            Penalty::None => 0,
            Penalty::Started => 1,
            Penalty::Standing => 2,
        }
    }

    /// The penalty the script's number `n` stands for.
    pub fn from_wire(n: u64) -> Option<Self> {
        match n {
            0 => Some(Penalty::None),
            1 => Some(Penalty::Started),
            2 => Some(Penalty::Standing),
            _ => None,
        }
    }
}

/// The answer for one bucket and one cost at one instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Assessment {
    /// The bucket holds the cost (or can prepay it within its overdraft).
    Allowed(Allowed),
    /// It does not, or a penalty block stands.
    Refused(Refused),
}

/// An allowed take's answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Allowed {
    /// Tokens left after taking the cost (below zero when prepaid).
    pub remaining: f64,
    /// How long a prepaid take waits for its tokens to have been there; 0 when it needs not.
    pub wait_us: u64,
    /// Microseconds until the bucket is full again, counted from `remaining`.
    pub full_in_us: u64,
}

/// A refused take's answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Refused {
    /// Tokens the bucket holds, untouched.
    pub remaining: f64,
    /// Microseconds until the take would be allowed (a block's end at the earliest).
    pub retry_after_us: u64,
    /// Microseconds until the bucket is full again, counted from `remaining`.
    pub full_in_us: u64,
    /// Whether a penalty block refused the take, or this refusal started one.
    pub penalty: Penalty,
}

impl Assessment {
    /// An allowance leaving `remaining`, its prepaid tokens there in `wait_us`.
    pub fn allowed(remaining: f64, wait_us: u64, full_in_us: u64) -> Self {
        Assessment::Allowed(Allowed {
            remaining,
            wait_us,
            full_in_us,
        })
    }

    /// A refusal of a bucket holding `remaining`, allowed again in `retry_after_us`.
    pub fn refused(remaining: f64, retry_after_us: u64, full_in_us: u64, penalty: Penalty) -> Self {
        Assessment::Refused(Refused {
            remaining,
            retry_after_us,
            full_in_us,
            penalty,
        })
    }

    /// Whether the take is allowed.
    pub fn is_allowed(&self) -> bool {
        matches!(self, Assessment::Allowed(_))
    }

    /// Tokens left: after the take if allowed, as they are if refused.
    pub fn remaining(&self) -> f64 {
        match self {
            Assessment::Allowed(a) => a.remaining,
            Assessment::Refused(r) => r.remaining,
        }
    }

    /// Microseconds until the bucket is full again.
    pub fn full_in_us(&self) -> u64 {
        match self {
            Assessment::Allowed(a) => a.full_in_us,
            Assessment::Refused(r) => r.full_in_us,
        }
    }

    /// How long the request waits for this bucket: refused, until it may come back; allowed,
    /// until its prepaid tokens are there (0 for most).
    pub fn wait_us(&self) -> u64 {
        match self {
            Assessment::Allowed(a) => a.wait_us,
            Assessment::Refused(r) => r.retry_after_us,
        }
    }

    /// A refusal's penalty part; [`Penalty::None`] for an allowance.
    pub fn penalty(&self) -> Penalty {
        match self {
            Assessment::Allowed(_) => Penalty::None,
            Assessment::Refused(r) => r.penalty,
        }
    }

    /// The refusal, if this is one.
    pub fn refusal(&self) -> Option<&Refused> {
        match self {
            Assessment::Allowed(_) => None,
            Assessment::Refused(r) => Some(r),
        }
    }
}
