//! Redemption against real tokens (minted by the blind flow for the challenges offered): the
//! fleet's instances redeem each other's, a nonce is spent once, and every wrong token is
//! refused for the right reason, before the spent set is asked.

use super::*;
use crate::identity::IdentityKey;
use crate::limiter::{LedgerError, MemoryNonces};
use crate::privacy_pass::test_issuer::{authorization, fresh_nonce, Fields, TestIssuer};
use crate::privacy_pass::{IssuerKey, TokenChallenge, DEFAULT_WINDOW};
use async_trait::async_trait;
use base64::Engine;
use std::sync::atomic::{AtomicUsize, Ordering};

const NOW: u64 = 1_700_000_000_000;
const WINDOW: u64 = 300_000;
const ISSUER: &str = "issuer.example";
const ORIGIN: &str = "site.example";

fn key(issuer: &TestIssuer) -> IssuerKey {
    IssuerKey::from_token_key(&issuer.token_key()).unwrap()
}

fn issuer(keys: &[&TestIssuer]) -> Arc<Issuer> {
    let keys = keys.iter().map(|i| key(i)).collect();
    Arc::new(Issuer::new(ISSUER, keys, &[ORIGIN.to_owned()]).unwrap())
}

fn instance(issuers: Vec<Arc<Issuer>>, ledger: Arc<dyn NonceLedger>) -> Redeemer {
    let windows = Windows::from_identity_key(&IdentityKey::from_bytes([7; 32]), DEFAULT_WINDOW);
    Redeemer::new(issuers, windows, ledger)
}

fn redeemer() -> Redeemer {
    instance(
        vec![issuer(&[&TestIssuer::a()])],
        Arc::new(MemoryNonces::default()),
    )
}

/// A token of `signer` for the challenge `redeemer` offers at `at_ms`.
fn minted(redeemer: &Redeemer, signer: &TestIssuer, at_ms: u64) -> Vec<u8> {
    signer.mint(&redeemer.challenges(at_ms)[0].challenge)
}

async fn redeem(redeemer: &Redeemer, token: &[u8], now_ms: u64) -> Redemption {
    redeemer
        .redeem(authorization(token).as_bytes(), now_ms)
        .await
}

fn invalid(outcome: &Redemption) -> Option<Invalid> {
    match outcome {
        Redemption::Invalid { why, .. } => Some(*why),
        _ => None,
    }
}

#[tokio::test]
async fn a_token_for_one_instances_challenge_is_redeemed_on_another_once() {
    let ledger: Arc<dyn NonceLedger> = Arc::new(MemoryNonces::default());
    let one = instance(vec![issuer(&[&TestIssuer::a()])], ledger.clone());
    let two = instance(vec![issuer(&[&TestIssuer::a()])], ledger);
    let token = minted(&one, &TestIssuer::a(), NOW);
    let redeemed = redeem(&two, &token, NOW + 1000).await;
    assert!(matches!(&redeemed, Redemption::Redeemed { issuer } if &**issuer == ISSUER));
    assert_eq!(redeemed.result_word(), "redeemed");
    for again in [&one, &two] {
        let replayed = redeem(again, &token, NOW + 2000).await;
        assert!(
            matches!(replayed, Redemption::Replayed { .. }),
            "{replayed:?}"
        );
        assert_eq!(replayed.result_word(), "replayed");
    }
}

#[tokio::test]
async fn a_token_answers_its_window_and_the_next_never_later() {
    let r = redeemer();
    let start = NOW / WINDOW * WINDOW;
    let in_the_next = minted(&r, &TestIssuer::a(), start);
    let redeemed = redeem(&r, &in_the_next, start + WINDOW + WINDOW / 2).await;
    assert!(
        matches!(redeemed, Redemption::Redeemed { .. }),
        "{redeemed:?}"
    );
    let stale = minted(&r, &TestIssuer::a(), start);
    let refused = redeem(&r, &stale, start + 2 * WINDOW).await;
    assert_eq!(invalid(&refused), Some(Invalid::BadChallenge));
    assert_eq!(refused.issuer().map(|i| &**i), Some(ISSUER));
    let early = minted(&r, &TestIssuer::a(), start + WINDOW);
    assert_eq!(
        invalid(&redeem(&r, &early, start).await),
        Some(Invalid::BadChallenge)
    );
}

#[tokio::test]
async fn tokens_for_another_origin_or_issuer_name_are_bad_challenges() {
    let r = redeemer();
    let context = r.windows().context_at(NOW);
    let a = TestIssuer::a();
    let elsewhere = [
        TokenChallenge::new(ISSUER, context, "other.example").unwrap(),
        TokenChallenge::new(ISSUER, context, "").unwrap(),
        TokenChallenge::new("other-issuer.example", context, ORIGIN).unwrap(),
        TokenChallenge::new(ISSUER, [0; 32], ORIGIN).unwrap(),
    ];
    for challenge in elsewhere {
        let token = a.mint(&challenge.to_base64url());
        let refused = redeem(&r, &token, NOW).await;
        assert_eq!(
            invalid(&refused),
            Some(Invalid::BadChallenge),
            "{challenge:?}"
        );
        assert_eq!(refused.result_word(), "invalid");
    }
    let ours = TokenChallenge::new(ISSUER, context, ORIGIN).unwrap();
    let redeemed = redeem(&r, &a.mint(&ours.to_base64url()), NOW).await;
    assert!(
        matches!(redeemed, Redemption::Redeemed { .. }),
        "{redeemed:?}"
    );
}

#[tokio::test]
async fn a_flipped_bit_is_refused_where_it_lands() {
    let r = redeemer();
    let token = minted(&r, &TestIssuer::a(), NOW);
    let flipped = |at: usize| {
        let mut t = token.clone();
        t[at] ^= 1;
        t
    };
    let cases = [
        (1, Some(Invalid::WrongType)),
        (2, Some(Invalid::BadSignature)),
        (40, Some(Invalid::BadChallenge)),
        (200, Some(Invalid::BadSignature)),
        (353, Some(Invalid::BadSignature)),
    ];
    for (at, expected) in cases {
        assert_eq!(
            invalid(&redeem(&r, &flipped(at), NOW).await),
            expected,
            "bit at byte {at}"
        );
    }
    let unknown = redeem(&r, &flipped(70), NOW).await;
    assert!(matches!(unknown, Redemption::UnknownKey), "{unknown:?}");
    assert_eq!(unknown.result_word(), "unknown_key");
    let redeemed = redeem(&r, &token, NOW).await;
    assert!(
        matches!(redeemed, Redemption::Redeemed { .. }),
        "the intact one still"
    );
}

#[tokio::test]
async fn another_issuers_key_is_unknown_until_it_is_the_issuers() {
    let r = redeemer();
    let by_b = minted(&r, &TestIssuer::b(), NOW);
    assert!(matches!(
        redeem(&r, &by_b, NOW).await,
        Redemption::UnknownKey
    ));
    r.issuers()[0].set_keys(vec![key(&TestIssuer::b())]);
    assert_eq!(r.challenges(NOW)[0].token_key, TestIssuer::b().token_key());
    let redeemed = redeem(&r, &by_b, NOW).await;
    assert!(
        matches!(redeemed, Redemption::Redeemed { .. }),
        "{redeemed:?}"
    );
    let by_a = minted(&r, &TestIssuer::a(), NOW);
    assert!(
        matches!(redeem(&r, &by_a, NOW).await, Redemption::UnknownKey),
        "rotated out"
    );
}

#[tokio::test]
async fn malformed_values_and_other_types_are_invalid_with_no_issuer() {
    let r = redeemer();
    let cases = [
        ("Bearer abc".to_owned(), Invalid::Malformed),
        ("PrivateToken token=\"AAIA\"".to_owned(), Invalid::Malformed),
        ("PrivateToken token=\"AAEA\"".to_owned(), Invalid::WrongType),
    ];
    for (value, why) in cases {
        let refused = r.redeem(value.as_bytes(), NOW).await;
        assert_eq!(invalid(&refused), Some(why), "{value}");
        assert_eq!(refused.issuer(), None);
    }
}

/// A ledger that counts its calls and fails when told to.
#[derive(Default)]
struct Counting {
    calls: AtomicUsize,
    full: bool,
}

#[async_trait]
impl NonceLedger for Counting {
    async fn redeem(
        &self,
        scope: &'static str,
        _: &[u8; 16],
        now_ms: u64,
        until_ms: u64,
    ) -> Result<Redeemed, LedgerError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        assert_eq!(scope, "privacy_pass");
        assert!(
            until_ms >= now_ms + WINDOW && until_ms <= now_ms + 2 * WINDOW,
            "two windows at most"
        );
        match self.full {
            true => Err(LedgerError::Full(7)),
            false => Ok(Redeemed::First),
        }
    }
}

#[tokio::test]
async fn only_a_valid_token_asks_the_spent_set_and_a_failing_one_fails_closed() {
    let counting = Arc::new(Counting::default());
    let r = instance(vec![issuer(&[&TestIssuer::a()])], counting.clone());
    let mut forged = minted(&r, &TestIssuer::a(), NOW);
    forged[300] ^= 1;
    let stale = minted(&r, &TestIssuer::a(), NOW - 3 * WINDOW);
    for token in [
        forged,
        stale,
        minted(&r, &TestIssuer::b(), NOW),
        vec![0; 10],
    ] {
        assert!(!matches!(
            redeem(&r, &token, NOW).await,
            Redemption::Redeemed { .. }
        ));
    }
    assert_eq!(counting.calls.load(Ordering::Relaxed), 0);
    let full = Arc::new(Counting {
        full: true,
        ..Counting::default()
    });
    let r = instance(vec![issuer(&[&TestIssuer::a()])], full.clone());
    let refused = redeem(&r, &minted(&r, &TestIssuer::a(), NOW), NOW).await;
    assert!(
        matches!(
            &refused,
            Redemption::Unavailable {
                cause: LedgerError::Full(7),
                ..
            }
        ),
        "{refused:?}"
    );
    assert_eq!(refused.result_word(), "unavailable");
    assert_eq!(full.calls.load(Ordering::Relaxed), 1);
}

#[tokio::test]
async fn the_same_nonce_in_another_token_is_spent_too() {
    let r = redeemer();
    let a = TestIssuer::a();
    let offered = &r.challenges(NOW)[0];
    let challenge = crate::privacy_pass::key::BASE64URL
        .decode(&offered.challenge)
        .unwrap();
    let fields = Fields {
        token_type: 2,
        nonce: fresh_nonce(),
        challenge_digest: Sha256::digest(&challenge).into(),
        token_key_id: a.key_id(),
    };
    let first = redeem(&r, &a.sign(fields), NOW).await;
    assert!(matches!(first, Redemption::Redeemed { .. }), "{first:?}");
    let resigned = redeem(&r, &a.sign(fields), NOW + 1).await;
    assert!(
        matches!(resigned, Redemption::Replayed { .. }),
        "a second signature, one nonce"
    );
}

#[test]
fn challenges_offer_each_issuer_with_a_key_for_the_current_window() {
    let keyless = Arc::new(Issuer::new("keyless.example", vec![], &[]).unwrap());
    let r = instance(
        vec![issuer(&[&TestIssuer::a()]), keyless],
        Arc::new(MemoryNonces::default()),
    );
    let offers = r.challenges(NOW);
    assert_eq!(offers.len(), 1, "{offers:?}");
    let offer = &offers[0];
    assert_eq!(&*offer.issuer, ISSUER);
    assert_eq!(offer.token_key, TestIssuer::a().token_key());
    let bytes = crate::privacy_pass::key::BASE64URL
        .decode(&offer.challenge)
        .unwrap();
    let challenge = TokenChallenge::from_bytes(&bytes).unwrap();
    let expected = TokenChallenge::new(ISSUER, r.windows().context_at(NOW), ORIGIN).unwrap();
    assert_eq!(challenge, expected);
    assert_eq!(r.challenges(NOW + 1), offers, "one window, one challenge");
    assert_ne!(r.challenges(NOW + WINDOW)[0].challenge, offer.challenge);
    assert_eq!(spent_id(&[1; 32]), spent_id(&[1; 32]));
    assert_ne!(spent_id(&[1; 32]), spent_id(&[2; 32]));
}
