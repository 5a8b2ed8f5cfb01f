//! The calendar periods a quota's bucket counts in, as one clock saw them: the store picks the
//! one holding its own now, so every instance agrees at a boundary whatever its clock says.

/// Four boundaries in microseconds since the Unix epoch, strictly increasing: the start of the
/// period before, the start and end of the period holding the instant they were computed
/// for, and the end of the period after. The store's clock picks one of the three periods
/// (`lua/take.lua` picks the same way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Periods([u64; 4]);

impl Periods {
    /// The periods of `boundaries`, if they increase strictly.
    pub fn new(boundaries: [u64; 4]) -> Option<Self> {
        boundaries
            .windows(2)
            .all(|w| w[0] < w[1])
            .then_some(Self(boundaries))
    }

    /// One period that never ends (in 285 years): what a quota without a calendar counts in.
    /// Its boundaries stay exact as doubles, as the take script reads them.
    pub fn unending() -> Self {
        Self([0, 1, (1 << 53) - 1, 1 << 53])
    }

    /// The four boundaries.
    pub fn boundaries(&self) -> [u64; 4] {
        self.0
    }

    /// The period holding `now_us` as `[start, end)`: the one before, the middle one or the
    /// one after (a clock past the last end still counts in the last period).
    pub fn at(&self, now_us: u64) -> (u64, u64) {
        let [before, start, end, after] = self.0;
        if now_us < start {
            (before, start)
        } else if now_us < end {
            (start, end)
        } else {
            (end, after)
        }
    }

    /// Whether `now_us` falls in the middle period, the one the boundaries were computed in:
    /// a settlement of a request admitted then applies only while it lasts.
    pub fn settles_at(&self, now_us: u64) -> bool {
        self.at(now_us).0 == self.0[1]
    }

    /// Microseconds from `now_us` to the end of its period (at least 1: a refusal always
    /// waits).
    pub fn to_end_us(&self, now_us: u64) -> u64 {
        self.at(now_us).1.saturating_sub(now_us).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_clock_picks_the_period() {
        let p = Periods::new([10, 20, 30, 40]).unwrap();
        assert_eq!(p.at(15), (10, 20), "a clock behind the caller's");
        assert_eq!(p.at(20), (20, 30));
        assert_eq!(p.at(29), (20, 30));
        assert_eq!(p.at(30), (30, 40), "a clock ahead, past the boundary");
        assert_eq!(p.at(99), (30, 40));
        assert_eq!(p.to_end_us(25), 5);
        assert_eq!(p.to_end_us(99), 1);
        assert!(p.settles_at(20) && !p.settles_at(19) && !p.settles_at(30));
    }

    #[test]
    fn boundaries_must_increase() {
        assert!(Periods::new([1, 2, 2, 3]).is_none());
        assert!(Periods::new([4, 3, 2, 1]).is_none());
    }
}
