//! `cost_header`: a request's cost from one of its headers, a whole number from 1 to the
//! capacity of the caller's bucket. Absent, the policy's `cost` applies; anything else is a
//! bad request, never a guess.

use http::{HeaderName, HeaderValue};
use std::sync::Arc;

/// A cost header that cannot be a cost: the request is refused with 400.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadCost {
    /// The policy whose header it is.
    pub policy: Arc<str>,
    /// The header.
    pub header: HeaderName,
    /// The largest cost the caller's bucket accepts.
    pub capacity: u64,
}

/// What a cost header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeaderCost {
    /// No such header: the policy's cost.
    Absent,
    /// A whole number from 1 to the capacity.
    Valid(u64),
    /// Anything else: empty, not digits, zero, or above the capacity.
    Invalid,
}

/// The cost `value` states, for a bucket of `capacity`. Surrounding whitespace is allowed;
/// signs, fractions and leading `+` are not.
pub(crate) fn header_cost(value: Option<&HeaderValue>, capacity: u64) -> HeaderCost {
    let Some(value) = value else {
        return HeaderCost::Absent;
    };
    let digits = value.as_bytes().trim_ascii();
    if digits.is_empty() || digits.len() > 20 || !digits.iter().all(u8::is_ascii_digit) {
        return HeaderCost::Invalid;
    }
    let cost = digits.iter().try_fold(0u64, |n, d| {
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    });
    match cost {
        Some(cost) if (1..=capacity).contains(&cost) => HeaderCost::Valid(cost),
        _ => HeaderCost::Invalid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(text: &'static str) -> HeaderCost {
        header_cost(Some(&HeaderValue::from_static(text)), 10)
    }

    #[test]
    fn a_whole_number_up_to_the_capacity_is_a_cost() {
        assert_eq!(header_cost(None, 10), HeaderCost::Absent);
        assert_eq!(cost("7"), HeaderCost::Valid(7));
        assert_eq!(cost(" 10 "), HeaderCost::Valid(10));
        assert_eq!(cost("007"), HeaderCost::Valid(7));
        for bad in [
            "",
            "0",
            "11",
            "-1",
            "+3",
            "1.5",
            "3x",
            "0x10",
            "1e3",
            "99999999999999999999999",
        ] {
            assert_eq!(cost(bad), HeaderCost::Invalid, "{bad:?}");
        }
    }
}
