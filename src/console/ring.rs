//! The rate history: per policy, one `[allowed, throttled]` pair per second over the last
//! [`SECONDS`], in a ring that never grows. Pure: every call takes the time as an argument.

use std::collections::{BTreeMap, VecDeque};

/// How many seconds the history keeps: 15 minutes.
pub const SECONDS: usize = 15 * 60;

/// One policy's last [`SECONDS`] seconds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ring {
    /// The second of the newest value.
    last: Option<u64>,
    /// Oldest first; the newest is the second `last`.
    values: VecDeque<[u64; 2]>,
}

impl Ring {
    /// Records `value` for `second`: seconds skipped since the last are zeros, a second seen
    /// again adds up, an older second is dropped.
    pub fn record(&mut self, second: u64, value: [u64; 2]) {
        match self.last {
            Some(last) if second < last => {}
            Some(last) if second == last => {
                if let Some(newest) = self.values.back_mut() {
                    newest[0] += value[0];
                    newest[1] += value[1];
                }
            }
            last => {
                let gap = last.map_or(0, |l| (second - l - 1).min(SECONDS as u64));
                for _ in 0..gap {
                    self.push([0, 0]);
                }
                self.push(value);
                self.last = Some(second);
            }
        }
    }

    fn push(&mut self, value: [u64; 2]) {
        if self.values.len() == SECONDS {
            self.values.pop_front();
        }
        self.values.push_back(value);
    }

    /// The values of the seconds after `since` (all kept when `None`) up to the newest: the
    /// first one's second, and the values, oldest first.
    pub fn since(&self, since: Option<u64>) -> (u64, Vec<[u64; 2]>) {
        let Some(last) = self.last else {
            return (0, Vec::new());
        };
        let first_kept = last + 1 - self.values.len() as u64;
        let first = since.map_or(first_kept, |s| s.saturating_add(1).max(first_kept));
        let skip = (first - first_kept) as usize;
        (first, self.values.iter().skip(skip).copied().collect())
    }

    /// The value of `second`, zeros when none was recorded.
    pub fn at(&self, second: u64) -> [u64; 2] {
        match self.last {
            Some(last) if second <= last && last - second < self.values.len() as u64 => {
                self.values[self.values.len() - 1 - (last - second) as usize]
            }
            _ => [0, 0],
        }
    }
}

/// Every policy's ring.
pub type History = BTreeMap<String, Ring>;

/// What each policy's counters moved since they were last read: the counters are totals
/// since the process started, the history wants per-second figures.
#[derive(Debug, Default)]
pub struct Deltas {
    previous: BTreeMap<String, [u64; 2]>,
}

impl Deltas {
    /// The change of each policy's `[allowed, throttled]` since the last call (everything on
    /// the first call is a baseline: zeros).
    pub fn of(&mut self, totals: Vec<(String, [u64; 2])>) -> Vec<(String, [u64; 2])> {
        let first = self.previous.is_empty();
        totals
            .into_iter()
            .map(|(policy, now)| {
                let before = self.previous.insert(policy.clone(), now);
                let before = before.unwrap_or(if first { now } else { [0, 0] });
                let delta = [
                    now[0].saturating_sub(before[0]),
                    now[1].saturating_sub(before[1]),
                ];
                (policy, delta)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_keeps_the_last_fifteen_minutes_with_gaps_as_zeros() {
        let mut ring = Ring::default();
        ring.record(100, [5, 1]);
        ring.record(100, [1, 1]);
        ring.record(103, [2, 0]);
        assert_eq!(
            ring.since(None),
            (100, vec![[6, 2], [0, 0], [0, 0], [2, 0]])
        );
        assert_eq!(ring.since(Some(101)), (102, vec![[0, 0], [2, 0]]));
        assert_eq!(ring.since(Some(103)), (104, vec![]));
        assert_eq!(ring.at(100), [6, 2]);
        assert_eq!(ring.at(99), [0, 0]);
        ring.record(90, [9, 9]);
        assert_eq!(ring.at(103), [2, 0]);
        for second in 104..104 + 2 * SECONDS as u64 {
            ring.record(second, [1, 0]);
        }
        let (first, values) = ring.since(None);
        assert_eq!(values.len(), SECONDS);
        assert_eq!(first, 104 + SECONDS as u64);
        ring.record(1_000_000, [3, 3]);
        assert_eq!(ring.since(None).1.len(), SECONDS);
        assert_eq!(ring.at(1_000_000), [3, 3]);
        assert_eq!(ring.at(999_999), [0, 0]);
    }

    #[test]
    fn deltas_start_from_a_baseline() {
        let mut deltas = Deltas::default();
        let totals = |a, t| vec![("p".to_owned(), [a, t])];
        assert_eq!(deltas.of(totals(50, 5)), totals(0, 0));
        assert_eq!(deltas.of(totals(60, 8)), totals(10, 3));
        let more = vec![("p".to_owned(), [60, 8]), ("q".to_owned(), [4, 1])];
        assert_eq!(
            deltas.of(more),
            vec![("p".to_owned(), [0, 0]), ("q".to_owned(), [4, 1])]
        );
    }
}
