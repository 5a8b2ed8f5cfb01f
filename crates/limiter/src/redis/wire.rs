//! The take script's numbers in one binary string (`ARGV[2]` of `lua/take.lua`, whose header
//! is the contract): the call's distinct bucket shapes once, then its groups of takes, each
//! number little-endian, so Redis reads each with `struct.unpack` instead of parsing decimal
//! text (the largest cost of a call's arguments) and no number loses a bit in transit.

use crate::{Mode, Take};
use std::collections::HashMap;

/// A shape as the script keeps it: capacity, rate, overdraft and block, as bits (to tell
/// shapes apart exactly), then a quota's four period boundaries (0 for a bucket).
type Shape = [u64; 8];

/// The binary string of one call, built group by group.
#[derive(Default)]
pub(super) struct Wire {
    shapes: Vec<Shape>,
    shape_of: HashMap<Shape, u32>,
    groups: u32,
    takes: Vec<u8>,
}

impl Wire {
    /// Adds one group: the takes of one decision, all or nothing among its enforcing ones.
    pub(super) fn group<'a>(&mut self, takes: impl ExactSizeIterator<Item = Take<'a>>) {
        self.groups += 1;
        self.takes
            .extend_from_slice(&(takes.len() as u32).to_le_bytes());
        for take in takes {
            let shape = self.shape(&take);
            self.takes.extend_from_slice(&shape.to_le_bytes());
            self.takes.push(take.mode.wire());
            self.takes.extend_from_slice(&take.cost.to_le_bytes());
            if let Mode::Return { leased, window } = take.mode {
                self.takes.extend_from_slice(&leased.to_le_bytes());
                self.takes.extend_from_slice(&(window as f64).to_le_bytes());
            }
        }
    }

    /// The whole string: `u32 shapes, (capacity rate overdraft block [4 boundaries if the
    /// rate is 0: a quota])…, u32 groups, then the groups` (doubles but for the counts, the
    /// shape numbers and the modes).
    pub(super) fn finish(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + 64 * self.shapes.len() + self.takes.len());
        out.extend_from_slice(&(self.shapes.len() as u32).to_le_bytes());
        for shape in &self.shapes {
            let quota = f64::from_bits(shape[1]) == 0.0;
            let sent = if quota { &shape[..] } else { &shape[..4] };
            for bits in sent {
                out.extend_from_slice(&bits.to_le_bytes());
            }
        }
        out.extend_from_slice(&self.groups.to_le_bytes());
        out.extend_from_slice(&self.takes);
        out
    }

    /// The 1-based number of `take`'s shape, added if new.
    fn shape(&mut self, take: &Take<'_>) -> u32 {
        let bounds = take.spec.periods().map_or([0; 4], |p| p.boundaries());
        let bits = |n: u64| (n as f64).to_bits();
        let shape = [
            take.spec.capacity().to_bits(),
            take.spec.rate_per_second().to_bits(),
            take.terms.overdraft.to_bits(),
            bits(take.terms.block_us),
            bits(bounds[0]),
            bits(bounds[1]),
            bits(bounds[2]),
            bits(bounds[3]),
        ];
        *self.shape_of.entry(shape).or_insert_with(|| {
            self.shapes.push(shape);
            self.shapes.len() as u32
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BucketKey, BucketSpec, PolicyKey, Terms};
    use crate::{Identity, IdentityKey};

    fn take(policy: &PolicyKey, capacity: f64, mode: Mode) -> Take<'_> {
        Take {
            key: BucketKey {
                policy,
                identity: Identity::of(&IdentityKey::from_bytes([0; 32]), "t", b"a"),
            },
            spec: BucketSpec::new(capacity, 2.5).unwrap(),
            cost: 1.0,
            mode,
            terms: Terms::default(),
        }
    }

    fn f64_at(bytes: &[u8], at: usize) -> f64 {
        f64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
    }

    fn u32_at(bytes: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
    }

    #[test]
    fn shapes_are_sent_once_and_groups_refer_to_them() {
        let p = PolicyKey::new("p");
        let back = Mode::Return {
            leased: 8.0,
            window: 90_000_001,
        };
        let mut wire = Wire::default();
        wire.group([take(&p, 10.0, Mode::Enforce), take(&p, 20.0, Mode::Shadow)].into_iter());
        wire.group([take(&p, 10.0, back)].into_iter());
        let bytes = wire.finish();
        assert_eq!(u32_at(&bytes, 0), 2, "two shapes");
        assert_eq!((f64_at(&bytes, 4), f64_at(&bytes, 12)), (10.0, 2.5));
        assert_eq!(f64_at(&bytes, 36), 20.0);
        let groups = 4 + 2 * 32;
        assert_eq!(u32_at(&bytes, groups), 2, "two groups");
        assert_eq!(u32_at(&bytes, groups + 4), 2, "the first of two takes");
        let first = groups + 8;
        assert_eq!((u32_at(&bytes, first), bytes[first + 4]), (1, 0));
        assert_eq!(f64_at(&bytes, first + 5), 1.0);
        assert_eq!((u32_at(&bytes, first + 13), bytes[first + 17]), (2, 1));
        let second = first + 2 * 13;
        assert_eq!(u32_at(&bytes, second), 1);
        assert_eq!((u32_at(&bytes, second + 4), bytes[second + 8]), (1, 4));
        assert_eq!(f64_at(&bytes, second + 17), 8.0);
        assert_eq!(f64_at(&bytes, second + 25), 90_000_001.0);
        assert_eq!(bytes.len(), second + 33);
    }
}
