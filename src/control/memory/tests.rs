//! The memory ledger with its state file: changes kept across a restart, the file's mode, the
//! earlier single-document format, a line cut short by a crash, and compaction.

use super::*;
use crate::control::entry::{Ban, BanTarget, Contents, Override};
use std::os::unix::fs::PermissionsExt;

fn ban(net: &str) -> Entry {
    Entry::Ban(Ban {
        id: 0,
        target: BanTarget::Cidr {
            value: net.to_owned(),
        },
        reason: "test".into(),
        by: "ops".into(),
        created_at_ms: 0,
        expires_at_ms: None,
    })
}

fn override_of(caller: &str, capacity: u64) -> Entry {
    Entry::Override(Override {
        id: 0,
        policy: "per-user".into(),
        source: "header:x-api-key".into(),
        caller: caller.into(),
        capacity,
        rate: "1/s".into(),
        quota: None,
        reason: String::new(),
        by: "ops".into(),
        created_at_ms: 0,
        expires_at_ms: None,
    })
}

async fn contents(ledger: &MemoryLedger) -> Contents {
    match ledger.read(None).await.unwrap() {
        Read::Whole { contents, .. } => contents,
        other => panic!("a ledger read with no version gives the whole state, not {other:?}"),
    }
}

fn created(added: Added) -> Entry {
    match added {
        Added::Created(entry) => entry,
        other => panic!("expected a new entry, got {other:?}"),
    }
}

#[tokio::test]
async fn the_state_file_keeps_every_change_across_a_restart_and_is_0600() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.json");
    let ledger = MemoryLedger::open(Some(&path)).unwrap();
    let kept = created(
        ledger
            .add(ban("203.0.113.0/24"), None, 10, None)
            .await
            .unwrap(),
    );
    ledger
        .add(ban("198.51.100.7/32"), None, 10, None)
        .await
        .unwrap();
    assert!(ledger.remove(Kind::Ban, kept.id(), None).await.unwrap());
    assert!(!ledger.remove(Kind::Ban, kept.id(), None).await.unwrap());
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the file holds the digest key");

    let reopened = MemoryLedger::open(Some(&path)).unwrap();
    let held = contents(&reopened).await;
    assert_eq!(held.bans.len(), 1);
    assert_eq!(
        held.bans[0].target,
        BanTarget::Cidr {
            value: "198.51.100.7/32".into()
        }
    );
    let next = created(
        reopened
            .add(ban("10.0.0.0/8"), None, 10, None)
            .await
            .unwrap(),
    );
    assert_eq!(next.id(), 3, "numbers are never given twice");
}

#[tokio::test]
async fn a_full_list_refuses_and_a_new_override_replaces_the_old() {
    let ledger = MemoryLedger::open(None).unwrap();
    ledger
        .add(override_of("aa", 5), None, 1, None)
        .await
        .unwrap();
    let kept = created(
        ledger
            .add(override_of("aa", 50), None, 1, None)
            .await
            .unwrap(),
    );
    assert_eq!(kept.id(), 2);
    assert_eq!(
        ledger.add(override_of("bb", 5), None, 1, None).await,
        Err(ControlError::Full {
            kind: Kind::Override,
            max: 1
        })
    );
    let held = contents(&ledger).await;
    assert_eq!(held.overrides.len(), 1);
    assert_eq!(held.overrides[0].capacity, 50);
}

#[tokio::test]
async fn a_second_ban_of_a_target_and_a_retry_under_one_key_change_nothing() {
    let ledger = MemoryLedger::open(None).unwrap();
    let first = created(
        ledger
            .add(ban("10.0.0.0/8"), None, 10, Some("k1"))
            .await
            .unwrap(),
    );
    let again = ledger.add(ban("10.0.0.0/8"), None, 10, None).await.unwrap();
    assert_eq!(again, Added::Existing(first.clone()));
    let retried = ledger
        .add(ban("10.0.0.0/8"), None, 10, Some("k1"))
        .await
        .unwrap();
    assert_eq!(retried, Added::Existing(first.clone()));
    assert_eq!(ledger.made_under("k1").await.unwrap(), Some(first.id()));
    assert!(ledger
        .remove(Kind::Ban, first.id(), Some("k2"))
        .await
        .unwrap());
    assert!(
        ledger
            .remove(Kind::Ban, first.id(), Some("k2"))
            .await
            .unwrap(),
        "a retried delete answers as the first did"
    );
    let replayed = ledger
        .add(ban("10.0.0.0/8"), None, 10, Some("k1"))
        .await
        .unwrap();
    assert_eq!(replayed, Added::Replayed(first.id()));
    assert!(contents(&ledger).await.bans.is_empty());
}

#[tokio::test]
async fn readers_get_the_changes_after_the_version_they_know() {
    let ledger = MemoryLedger::open(None).unwrap();
    let Read::Whole { version, .. } = ledger.read(None).await.unwrap() else {
        panic!("whole");
    };
    let a = created(ledger.add(ban("10.0.0.0/8"), None, 10, None).await.unwrap());
    ledger.remove(Kind::Ban, a.id(), None).await.unwrap();
    let Read::Changes {
        version: now,
        changes,
        more,
    } = ledger.read(Some(version)).await.unwrap()
    else {
        panic!("changes");
    };
    assert_eq!((now, more), (version + 2, false));
    assert_eq!(changes[0].added, vec![a.clone()]);
    assert_eq!(changes[1].gone, vec![a.id()]);
    assert_eq!(ledger.read(Some(now)).await.unwrap(), Read::Unchanged);
}

#[tokio::test]
async fn a_state_file_of_the_earlier_format_is_read_and_rewritten_as_a_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.json");
    let legacy = r#"{
  "next_id": 9,
  "hash_key": "secret",
  "bans": [{"scope": "cidr", "value": "10.0.0.0/8", "id": 4, "created_at_ms": 1}],
  "overrides": []
}"#;
    std::fs::write(&path, legacy).unwrap();
    let ledger = MemoryLedger::open(Some(&path)).unwrap();
    assert_eq!(contents(&ledger).await.bans.len(), 1);
    assert_eq!(
        ledger.digest_secret("fresh".into()).unwrap().as_deref(),
        Some("secret")
    );
    let next = created(
        ledger
            .add(ban("10.1.0.0/16"), None, 10, None)
            .await
            .unwrap(),
    );
    assert_eq!(next.id(), 10);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.lines().count() >= 3, "a log of lines: {text}");
}

#[tokio::test]
async fn a_last_line_cut_short_by_a_crash_is_skipped_and_a_bad_line_before_it_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.json");
    let ledger = MemoryLedger::open(Some(&path)).unwrap();
    ledger.add(ban("10.0.0.0/8"), None, 10, None).await.unwrap();
    drop(ledger);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("{\"ban\":{\"scope\":\"ci");
    std::fs::write(&path, &text).unwrap();
    let reopened = MemoryLedger::open(Some(&path)).unwrap();
    assert_eq!(contents(&reopened).await.bans.len(), 1);
    drop(reopened);
    std::fs::write(&path, "not json\n{\"gone\":1}\n").unwrap();
    let error = MemoryLedger::open(Some(&path)).err().expect("refused");
    assert!(error.to_string().contains("line 1"), "{error}");
}

#[tokio::test]
async fn the_log_is_compacted_as_it_grows_and_holds_only_the_live_state() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.json");
    let ledger = MemoryLedger::open(Some(&path)).unwrap();
    for round in 0..3_000u32 {
        let net = format!("10.{}.{}.0/24", round / 256, round % 256);
        let entry = created(ledger.add(ban(&net), None, 100_000, None).await.unwrap());
        if round % 10 != 0 {
            ledger.remove(Kind::Ban, entry.id(), None).await.unwrap();
        }
    }
    let lines = std::fs::read_to_string(&path).unwrap().lines().count();
    assert!(lines < 300 * 2 + 1024 + 300 * 3, "compacted: {lines} lines");
    let reopened = MemoryLedger::open(Some(&path)).unwrap();
    assert_eq!(contents(&reopened).await.bans.len(), 300);
}
