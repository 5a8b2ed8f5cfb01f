//! A take: whether a bucket can pay a cost at an instant under its terms (from what it holds,
//! by prepaying into an overdraft, or not at all, which may start a penalty block), and the
//! state to store after.

use super::{Assessment, BucketSpec, BucketState, Penalty, Terms, EPSILON};

impl BucketSpec {
    /// Whether `level` can pay `cost` at `now_us` under `terms`, and what the bucket would
    /// look like after: paid from what it holds, prepaid into the overdraft (allowed, with a
    /// wait), or refused (by a standing block, or for want of tokens, which starts a block
    /// when the terms have one).
    pub fn assess(&self, level: BucketState, cost: f64, terms: Terms, now_us: u64) -> Assessment {
        let tokens = level.tokens;
        let refused = |retry_after_us: u64, penalty: Penalty| {
            let full_in_us = self.micros_to_gain(self.capacity - tokens, now_us);
            Assessment::refused(tokens, retry_after_us, full_in_us, penalty)
        };
        let short = cost - terms.overdraft - tokens;
        let token_wait = match tokens + terms.overdraft + EPSILON >= cost {
            true => 0,
            false => self.micros_to_gain(short, now_us),
        };
        if now_us < level.blocked_until_us {
            let block_wait = level.blocked_until_us - now_us;
            return refused(block_wait.max(token_wait), Penalty::Standing);
        }
        if token_wait > 0 {
            return match terms.block_us {
                0 => refused(token_wait, Penalty::None),
                block => refused(token_wait.max(block), Penalty::Started),
            };
        }
        let (remaining, wait_us) = match tokens + EPSILON >= cost {
            true => ((tokens - cost).max(0.0), 0),
            false => (tokens - cost, self.micros_to_gain(cost - tokens, now_us)),
        };
        let full_in_us = self.micros_to_gain(self.capacity - remaining, now_us);
        Assessment::allowed(remaining, wait_us, full_in_us)
    }

    /// The state to store after an allowed take from `level` answered `assessment`.
    pub fn after_take(&self, level: BucketState, assessment: &Assessment) -> BucketState {
        BucketState {
            tokens: assessment.remaining(),
            ..level
        }
    }

    /// The state to store after a refusal at `now_us` that started a block under `terms`:
    /// the tokens are untouched, the block runs from now.
    pub fn after_refusal(&self, level: BucketState, terms: Terms, now_us: u64) -> BucketState {
        BucketState {
            blocked_until_us: now_us.saturating_add(terms.block_us),
            ..level
        }
    }
}
