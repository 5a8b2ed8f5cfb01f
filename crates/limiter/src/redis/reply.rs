//! The take script's reply, read into assessments: `{ now_us, answers }`, the answers 17 bytes
//! per bucket (`u8` allowed + 2 × penalty, then remaining and retry_after_us as little-endian
//! doubles); how long each bucket takes to fill again follows from remaining and its shape.

use crate::{Assessment, Assessments, BucketSpec, LimiterError, Penalty};
use redis::Value;

/// Bytes per bucket in the answers.
const ANSWER_BYTES: usize = 17;

/// The Redis time of a call whose groups held buckets of `shapes` (one list per group), and
/// its answers, one list per group.
pub(super) fn parse_groups(
    reply: &[Value],
    shapes: &[Vec<BucketSpec>],
) -> Result<(u64, Vec<Assessments>), LimiterError> {
    let buckets: usize = shapes.iter().map(Vec::len).sum();
    let bad = || LimiterError::Store(format!("unexpected script reply for {buckets} buckets"));
    let (now, answers) = match reply {
        [Value::Int(now), Value::BulkString(answers)] => {
            (u64::try_from(*now).map_err(|_| bad())?, answers)
        }
        _ => return Err(bad()),
    };
    if answers.len() != ANSWER_BYTES * buckets {
        return Err(bad());
    }
    let mut answers = answers.chunks_exact(ANSWER_BYTES);
    let groups = shapes
        .iter()
        .map(|group| {
            group
                .iter()
                .zip(answers.by_ref())
                .map(|(spec, bytes)| assessment(spec, bytes, now).ok_or_else(bad))
                .collect()
        })
        .collect::<Result<_, LimiterError>>()?;
    Ok((now, groups))
}

/// One bucket's answer at Redis time `now_us`, if well formed.
fn assessment(spec: &BucketSpec, bytes: &[u8], now_us: u64) -> Option<Assessment> {
    let double = |at: usize| {
        bytes
            .get(at..at + 8)?
            .try_into()
            .ok()
            .map(f64::from_le_bytes)
    };
    let flags = *bytes.first()?;
    let remaining = double(1)?;
    let retry_after = double(9)?;
    let whole = retry_after >= 0.0 && retry_after.fract() == 0.0;
    let wait_us = whole.then_some(retry_after as u64)?;
    let full_in_us = spec.micros_to_gain(spec.capacity() - remaining, now_us);
    let penalty = Penalty::from_wire(u64::from(flags >> 1))?;
    Some(match flags & 1 == 1 {
        true => Assessment::allowed(remaining, wait_us, full_in_us),
        false => Assessment::refused(remaining, wait_us, full_in_us, penalty),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(flags: u8, remaining: f64, retry_after: f64) -> Vec<u8> {
        let mut bytes = vec![flags];
        bytes.extend_from_slice(&remaining.to_le_bytes());
        bytes.extend_from_slice(&retry_after.to_le_bytes());
        bytes
    }

    #[test]
    fn answers_are_read_per_group_with_their_fill_time() {
        let spec = BucketSpec::new(10.0, 2.0).unwrap();
        let bytes = [answer(1, 2.5, 0.0), answer(2, 0.0, 750_000.0)].concat();
        let reply = [Value::Int(7), Value::BulkString(bytes)];
        let (now, groups) = parse_groups(&reply, &[vec![spec], vec![spec]]).unwrap();
        assert_eq!(now, 7);
        let (a, b) = (&groups[0][0], &groups[1][0]);
        assert_eq!(
            (a.is_allowed(), a.remaining(), a.full_in_us()),
            (true, 2.5, 3_750_000)
        );
        assert_eq!(
            (b.is_allowed(), b.wait_us(), b.penalty()),
            (false, 750_000, Penalty::Started)
        );
    }

    #[test]
    fn a_reply_of_the_wrong_shape_is_an_error() {
        let spec = BucketSpec::new(10.0, 2.0).unwrap();
        let one = answer(1, 2.5, 0.0);
        let reply = |bytes: Vec<u8>| [Value::Int(7), Value::BulkString(bytes)];
        assert!(parse_groups(&reply(one.clone()), &[vec![spec, spec]]).is_err());
        assert!(parse_groups(&reply(answer(7, 2.5, 0.0)), &[vec![spec]]).is_err());
        assert!(parse_groups(&reply(answer(1, 2.5, 0.5)), &[vec![spec]]).is_err());
        assert!(parse_groups(&[Value::Int(-1), Value::BulkString(one)], &[vec![spec]]).is_err());
        assert!(parse_groups(&[Value::Int(7)], &[vec![spec]]).is_err());
    }
}
