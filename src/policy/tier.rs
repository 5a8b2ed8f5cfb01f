//! Tiers: a value of the request (a claim or a header, say `plan`) picks the capacity and rate
//! a caller's bucket gets, such as `free` and `pro`.

use super::Limits;
use crate::identity::{IpFolding, Request, Source};

/// A source whose value selects one of several limits.
#[derive(Debug, Clone, PartialEq)]
pub struct Tiers {
    /// Where the tier's name is read.
    pub source: Source,
    /// Limits by tier name, in config order.
    pub levels: Vec<(String, Limits)>,
}

impl Tiers {
    /// The position in `levels` of the tier `req` names, if it names a known one. A token that
    /// does not verify names no tier.
    pub fn select_index(&self, req: &Request<'_>) -> Option<usize> {
        let value = self.source.value(req, &IpFolding::default()).ok()??;
        self.levels
            .iter()
            .position(|(name, _)| name.as_bytes() == &*value)
    }
}
