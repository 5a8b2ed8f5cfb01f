use super::*;
use crate::identity::IdentityKey;

const KEY: IdentityKey = IdentityKey::from_bytes([3; 32]);
const HOUR: u64 = 3_600_000;

fn id(n: u32) -> Identity {
    Identity::of(&KEY, "header:x-api-key", &n.to_le_bytes())
}

#[test]
fn a_refusal_of_an_unknown_value_is_not_kept() {
    let book = Book::new(10);
    assert_eq!(book.learn(id(1), Verdict::Refused, 0, 24 * HOUR), None);
    assert!(book.is_empty(), "invented values cost no write");
}

#[test]
fn a_proof_is_told_once_per_half_remember_and_a_refusal_revokes_it() {
    let book = Book::new(10);
    let remember = 24 * HOUR;
    let first = book.learn(id(1), Verdict::Proven, 1_000, remember).unwrap();
    assert_eq!(
        (first.kept, first.until_ms),
        (Kept::Proven, 1_000 + remember)
    );
    assert_eq!(book.learn(id(1), Verdict::Proven, 2_000, remember), None);
    assert_eq!(
        book.learn(id(1), Verdict::Proven, 1_000 + 11 * HOUR, remember),
        None
    );
    let extended = book.learn(id(1), Verdict::Proven, 1_000 + 12 * HOUR, remember);
    assert_eq!(
        extended.map(|c| c.kept),
        Some(Kept::Proven),
        "half remember: told again"
    );
    let revoked = book.learn(id(1), Verdict::Refused, 1_000 + 13 * HOUR, remember);
    assert_eq!(revoked.map(|c| c.kept), Some(Kept::Revoked));
    assert_eq!(
        book.learn(id(1), Verdict::Refused, 1_000 + 14 * HOUR, remember),
        None
    );
    let healed = book.learn(id(1), Verdict::Proven, 1_000 + 15 * HOUR, remember);
    assert_eq!(
        healed.map(|c| c.kept),
        Some(Kept::Proven),
        "a mistake heals"
    );
}

#[test]
fn a_proof_is_forgotten_after_remember() {
    let book = Book::new(10);
    book.learn(id(1), Verdict::Proven, 0, HOUR);
    assert!(book.get(&id(1), HOUR - 1).is_some());
    assert_eq!(book.get(&id(1), HOUR), None);
}

#[test]
fn the_least_recently_used_value_goes_first_past_keep() {
    let book = Book::new(8);
    for n in 0..64 {
        book.learn(id(n), Verdict::Proven, 0, HOUR);
    }
    assert!(book.len() <= 8);
    assert!(book.may_miss());
    assert!(book.get(&id(63), 1).is_some(), "the newest is kept");
}

#[test]
fn a_revoked_value_goes_through_once_per_period() {
    let book = Book::new(10);
    book.learn(id(1), Verdict::Proven, 0, 24 * HOUR);
    book.learn(id(1), Verdict::Refused, 1, 24 * HOUR);
    assert!(book.let_through(&id(1), 2, HOUR));
    assert!(!book.let_through(&id(1), 3, HOUR));
    assert!(!book.let_through(&id(1), HOUR + 1, HOUR));
    assert!(book.let_through(&id(1), HOUR + 2, HOUR));
}
