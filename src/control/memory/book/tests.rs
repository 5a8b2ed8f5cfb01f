//! The memory ledger's state, time as an argument: expiry a bounded part at a time, readers
//! that fall behind the kept changes read the whole state.

use super::*;
use crate::control::entry::BanTarget;

fn ban(n: u32) -> Entry {
    Entry::Ban(Ban {
        id: 0,
        target: BanTarget::Cidr {
            value: format!("10.0.{}.{}/32", n / 256, n % 256),
        },
        reason: String::new(),
        by: "ops".into(),
        created_at_ms: 0,
        expires_at_ms: None,
    })
}

#[test]
fn expired_entries_go_a_bounded_number_at_a_time_each_a_change() {
    let mut book = Book::default();
    for n in 0..250 {
        book.add(ban(n), (1_000, Some(500)), usize::MAX, None)
            .unwrap();
    }
    book.add(ban(999), (1_000, None), usize::MAX, None).unwrap();
    assert_eq!(book.expire(1_499), None, "not yet");
    let first = book.expire(1_500).expect("a change");
    assert_eq!(first.gone.len(), EXPIRE_AT_ONCE);
    book.expire(1_500);
    book.expire(1_500);
    assert_eq!(book.len(), 1, "the one that never ends stays");
    assert_eq!(book.expire(1_500), None);
}

#[test]
fn a_reader_behind_the_kept_changes_reads_the_whole_state_and_a_page_says_more() {
    let mut book = Book::default();
    for n in 0..(KEEP_CHANGES as u32 + 10) {
        book.add(ban(n % 60_000), (0, None), usize::MAX, None)
            .unwrap();
    }
    assert!(matches!(book.read(Some(1)), Read::Whole { .. }));
    let recent = book.version - 600;
    let Read::Changes {
        version,
        changes,
        more,
    } = book.read(Some(recent))
    else {
        panic!("changes");
    };
    assert_eq!(changes.len(), READ_CHANGES);
    assert_eq!(version, recent + READ_CHANGES as u64);
    assert!(more);
}

#[test]
fn idempotency_keys_are_forgotten_after_a_day() {
    let mut book = Book::default();
    book.add(ban(1), (0, None), 10, Some("k")).unwrap();
    assert!(book.made_under("k").is_some());
    book.expire(KEY_LIFETIME_MS - 1);
    assert!(book.made_under("k").is_some());
    book.expire(KEY_LIFETIME_MS);
    assert_eq!(book.made_under("k"), None);
}
