//! Nonces and passes: made and opened by any instance of the fleet, refused when forged,
//! altered, expired, of the other kind or from another network.

use super::*;

fn signer() -> Signer {
    Signer::new(&IdentityKey::from_bytes([7; 32]))
}

fn pow(bind: Bind) -> Challenge {
    Challenge {
        kind: ChallengeKind::Pow { difficulty: 16 },
        bind,
    }
}

fn ip(text: &str) -> Option<IpAddr> {
    Some(text.parse().unwrap())
}

#[test]
fn a_nonce_opens_on_another_instance_with_what_it_asked() {
    let text = signer()
        .nonce(&pow(Bind::Network), 42, ip("192.0.2.7"), 1_000)
        .unwrap();
    assert_eq!(text.len(), TOKEN_LEN);
    let nonce = signer().open_nonce(&text, ip("192.0.2.200")).unwrap();
    assert_eq!((nonce.issued_ms, nonce.policy), (1_000, 42));
    assert_eq!(nonce.challenge, pow(Bind::Network));
}

#[test]
fn a_bound_token_fails_in_another_network_and_an_unbound_one_does_not() {
    let s = signer();
    let bound = s.nonce(&pow(Bind::Network), 1, ip("192.0.2.7"), 0).unwrap();
    assert_eq!(
        s.open_nonce(&bound, ip("192.0.3.7")),
        Err(TokenError::Forged)
    );
    assert_eq!(s.open_nonce(&bound, None), Err(TokenError::Forged));
    let v6 = s
        .nonce(&pow(Bind::Network), 1, ip("2001:db8:1:2::1"), 0)
        .unwrap();
    assert!(s.open_nonce(&v6, ip("2001:db8:1:ffff::9")).is_ok());
    assert_eq!(
        s.open_nonce(&v6, ip("2001:db8:2::1")),
        Err(TokenError::Forged)
    );
    let mapped = s
        .nonce(&pow(Bind::Network), 1, ip("::ffff:192.0.2.7"), 0)
        .unwrap();
    assert!(s.open_nonce(&mapped, ip("192.0.2.9")).is_ok());
    let free = s.nonce(&pow(Bind::None), 1, ip("192.0.2.7"), 0).unwrap();
    assert!(s.open_nonce(&free, ip("198.51.100.1")).is_ok());
}

#[test]
fn a_pass_is_good_until_it_expires() {
    let s = signer();
    let text = s.nonce(&pow(Bind::Network), 9, ip("192.0.2.7"), 0).unwrap();
    let nonce = s.open_nonce(&text, ip("192.0.2.7")).unwrap();
    let (pass, cookie) = s.pass(&nonce, ip("192.0.2.7"), 100).unwrap();
    assert_ne!(pass.id.0, nonce.id, "a pass's id is not its nonce's");
    let opened = s.open_pass(cookie.as_bytes(), ip("192.0.2.8"), 99).unwrap();
    assert_eq!(opened, pass);
    assert_eq!(
        s.open_pass(cookie.as_bytes(), ip("192.0.2.8"), 100),
        Err(TokenError::Expired)
    );
    assert_eq!(
        s.open_pass(cookie.as_bytes(), ip("10.0.0.1"), 99),
        Err(TokenError::Forged)
    );
}

#[test]
fn forged_altered_and_malformed_tokens_are_refused() {
    let s = signer();
    let text = s.nonce(&pow(Bind::None), 1, None, 0).unwrap();
    let other = Signer::new(&IdentityKey::from_bytes([8; 32]));
    assert_eq!(other.open_nonce(&text, None), Err(TokenError::Forged));
    // A nonce is no pass, and a pass no nonce.
    assert_eq!(
        s.open_pass(text.as_bytes(), None, 0),
        Err(TokenError::Malformed)
    );
    let mut altered = text.clone().into_bytes();
    altered[30] = if altered[30] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    assert!(s.open_nonce(&altered, None).is_err());
    for bad in [
        "",
        "x",
        &text[1..],
        &format!("{text}A"),
        &"%".repeat(TOKEN_LEN),
    ] {
        assert_eq!(s.open_nonce(bad, None), Err(TokenError::Malformed), "{bad}");
    }
    assert_eq!(
        s.open_pass(&[0xff; TOKEN_LEN], None, 0),
        Err(TokenError::Malformed)
    );
}

#[test]
fn token_ids_never_repeat_within_a_thread_or_across_threads() {
    let mine: Vec<[u8; 16]> = (0..1000).map(|_| random_id().unwrap()).collect();
    let theirs = std::thread::spawn(|| random_id().unwrap()).join().unwrap();
    let mut all: Vec<[u8; 16]> = mine.iter().copied().chain([theirs]).collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 1001);
    assert!(mine.iter().all(|id| id != &[0; 16]));
}
