//! The crawlers a running config knows: the catalogue (shipped, plus `[[bots.crawler]]`) and
//! the published ranges of each, read when the config is.

use super::{Catalogue, Ranges};
use std::sync::Arc;

/// The catalogue and, for each of its crawlers (by number), the ranges it publishes, when a
/// file of them was given or downloaded.
#[derive(Debug)]
pub struct Crawlers {
    /// Which crawler a User-Agent claims.
    pub catalogue: Catalogue,
    /// The ranges of crawler number `i`, if known.
    pub ranges: Vec<Option<Arc<Ranges>>>,
}

impl Crawlers {
    /// The ranges of crawler number `i`, if known.
    pub fn ranges_of(&self, i: usize) -> Option<&Ranges> {
        self.ranges.get(i).and_then(|r| r.as_deref())
    }

    /// How many crawlers have ranges.
    pub fn with_ranges(&self) -> usize {
        self.ranges.iter().flatten().count()
    }
}
