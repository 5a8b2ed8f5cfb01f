//! What a store keeps of a bucket between requests.

/// What is stored for a bucket between requests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BucketState {
    /// Tokens held at `updated_us`, fractional; below zero while the bucket is in debt.
    pub tokens: f64,
    /// When `tokens` was true, in microseconds on the store's clock.
    pub updated_us: u64,
    /// Until when a penalty refuses every take, on the store's clock; 0 for none.
    pub blocked_until_us: u64,
}
