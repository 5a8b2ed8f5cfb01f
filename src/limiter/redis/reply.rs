//! The script's reply, read into assessments: `{ now_us, (allowed, remaining, retry_after_us,
//! full_in_us, penalty) × n }`, `remaining` as an 8-byte little-endian double.

use crate::limiter::{Assessment, Assessments, LimiterError, Penalty};
use redis::Value;

/// Values per bucket in the reply.
const FIELDS: usize = 5;

/// The Redis time the script ran at, and one assessment per bucket.
fn parse(reply: &[Value], n: usize) -> Result<(u64, Assessments), LimiterError> {
    let bad = || LimiterError::Store(format!("unexpected script reply of {} values", reply.len()));
    if reply.len() != 1 + FIELDS * n {
        return Err(bad());
    }
    let int = |v: &Value| match v {
        Value::Int(i) => u64::try_from(*i).map_err(|_| bad()),
        _ => Err(bad()),
    };
    let float = |v: &Value| match v {
        Value::BulkString(bytes) => <[u8; 8]>::try_from(bytes.as_slice())
            .map(f64::from_le_bytes)
            .map_err(|_| bad()),
        _ => Err(bad()),
    };
    let now = int(&reply[0])?;
    let assessments = reply[1..]
        .chunks_exact(FIELDS)
        .map(|c| {
            Ok(Assessment {
                allowed: int(&c[0])? == 1,
                remaining: float(&c[1])?,
                retry_after_us: int(&c[2])?,
                full_in_us: int(&c[3])?,
                penalty: Penalty::from_wire(int(&c[4])?).ok_or_else(bad)?,
            })
        })
        .collect::<Result<_, LimiterError>>()?;
    Ok((now, assessments))
}

/// The Redis time of a call holding groups of `lengths` takes, and its answers, one list per
/// group.
pub(super) fn parse_groups(
    reply: &[Value],
    lengths: &[usize],
) -> Result<(u64, Vec<Assessments>), LimiterError> {
    let (now, mut all) = parse(reply, lengths.iter().sum())?;
    let mut groups = Vec::with_capacity(lengths.len());
    for &n in lengths.iter().rev() {
        let at = all.len() - n;
        groups.push(all.drain(at..).collect());
    }
    groups.reverse();
    Ok((now, groups))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_of_the_wrong_length_or_type_is_an_error() {
        let ok = [
            Value::Int(7),
            Value::Int(1),
            Value::BulkString(2.5f64.to_le_bytes().to_vec()),
            Value::Int(0),
            Value::Int(10),
            Value::Int(1),
        ];
        let (now, a) = parse(&ok, 1).unwrap();
        assert_eq!((now, a[0].allowed, a[0].remaining), (7, true, 2.5));
        assert!(parse(&ok[..4], 1).is_err());
        assert_eq!(parse(&ok, 1).unwrap().1[0].penalty, Penalty::Started);
        let two = [ok.to_vec(), ok[1..].to_vec()].concat();
        let (_, groups) = parse_groups(&two, &[1, 1]).unwrap();
        assert_eq!(groups.len(), 2);
        assert!(parse_groups(&two, &[2, 1]).is_err());
        assert!(parse(
            &[
                Value::Int(-1),
                Value::Nil,
                Value::Nil,
                Value::Nil,
                Value::Nil,
                Value::Nil
            ],
            1
        )
        .is_err());
    }
}
