//! Issue 85 end to end, on the memory store: a `challenge` policy on everything and one trusted
//! issuer (`tests/common/issuer.rs`, its key configured). A page load meets a 401 offering the
//! issuer's token challenge; a token minted for it is served once with a pass cookie, never
//! reaching the backend, logged and counted; the cookie then passes alone; the token again,
//! and tokens for another origin, issuer or window, forged, of another type, of an unknown
//! key or of any wrong length, are the challenge again, counted, never a 500. `directory.rs`:
//! the issuer's keys from its directory, rotated.

mod directory;

use crate::common::control_api::{admin_tables, explained};
use crate::common::wait::eventually;
use crate::common::{header, Proxy, Upstream};
use crate::issuer::{authorization, challenge_bytes, Fields, TestIssuer};
use crate::tokens::{
    challenge, challenged, config_keyed, counted, load, pass_cookie, presenting, ISSUER, ORIGIN,
};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use sha2::{Digest, Sha256};
use std::time::Duration;

/// The issuer of fixture key `a`, its key configured.
fn start(upstream: &Upstream) -> (tempfile::TempDir, Proxy) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let proxy = Proxy::start_with_tables(
        &[&upstream.addr],
        "access_log = true",
        &admin_tables(dir.path(), ""),
        &config_keyed(&TestIssuer::a()),
    );
    (dir, proxy)
}

/// The redemption context of the base64url TokenChallenge `challenge`.
fn context_of(challenge: &str) -> Vec<u8> {
    let bytes = URL_SAFE_NO_PAD.decode(challenge).expect("base64url");
    let issuer_len = usize::from(u16::from_be_bytes([bytes[2], bytes[3]]));
    let at = 4 + issuer_len;
    assert_eq!(bytes[at], 32, "a 32-byte redemption context");
    bytes[at + 1..at + 33].to_vec()
}

#[test]
fn a_token_is_served_once_with_a_pass_and_never_reaches_the_backend() {
    let upstream = Upstream::start();
    let (_dir, proxy) = start(&upstream);
    let a = TestIssuer::a();
    let token = a.mint(&challenge(&proxy, &a));
    assert_eq!(upstream.served(), 0);

    let served = presenting(&proxy, &token);
    assert_eq!(served.status(), 200, "served with the token");
    let cookie = pass_cookie(&served).expect("a pass cookie");
    let id = header(&served, "x-request-id");
    assert_eq!(upstream.served(), 1);
    assert_eq!(upstream.last_header("authorization"), [] as [String; 0]);
    assert_eq!(counted(&proxy, ISSUER, "redeemed"), 1.0);
    let logged = eventually(Duration::from_secs(2), || {
        let log = proxy.log();
        let line = log.lines().find(|l| l.contains(&format!("id={id}")));
        line.is_some_and(|l| l.contains("decision=pass_issued") && l.contains("via=privacy_pass"))
    });
    assert!(logged, "{}", proxy.log());
    assert_eq!(explained(&proxy, &id)["via"], "privacy_pass");

    let with_cookie = load(&proxy, &[("cookie", &cookie)]);
    assert_eq!(with_cookie.status(), 200, "the cookie alone passes");
    assert_eq!(pass_cookie(&with_cookie), None);

    challenged(presenting(&proxy, &token), &a);
    assert_eq!(counted(&proxy, ISSUER, "replayed"), 1.0);
    assert_eq!(upstream.served(), 2, "a replay is not served");

    let bearer = load(
        &proxy,
        &[("cookie", &cookie), ("authorization", "Bearer abc")],
    );
    assert_eq!(bearer.status(), 200);
    assert_eq!(upstream.last_header("authorization"), ["Bearer abc"]);

    let fresh = a.mint(&challenge(&proxy, &a));
    let twice = load(
        &proxy,
        &[
            ("authorization", &authorization(&fresh)),
            ("authorization", "Bearer abc"),
        ],
    );
    assert_eq!(twice.status(), 400, "two Authorization lines");
    assert_eq!(counted(&proxy, ISSUER, "redeemed"), 1.0, "not spent");
    assert_eq!(presenting(&proxy, &fresh).status(), 200);
}

#[test]
fn tokens_answering_no_live_challenge_of_ours_are_the_challenge_again() {
    let upstream = Upstream::start();
    let (_dir, proxy) = start(&upstream);
    let (a, b) = (TestIssuer::a(), TestIssuer::b());
    let ours = challenge(&proxy, &a);
    let context = context_of(&ours);
    let minted_for = |issuer: &str, context: &[u8], origin: &str| {
        a.mint(&URL_SAFE_NO_PAD.encode(challenge_bytes(issuer, context, origin)))
    };
    let mut flipped = a.mint(&ours);
    flipped[200] ^= 1;
    let other_type = a.sign(Fields {
        token_type: 1,
        nonce: [7; 32],
        challenge_digest: Sha256::digest(URL_SAFE_NO_PAD.decode(&ours).unwrap()).into(),
        token_key_id: a.key_id(),
    });
    let refused = [
        (
            "another origin",
            minted_for(ISSUER, &context, "other.example"),
        ),
        ("another issuer", minted_for("other.test", &context, ORIGIN)),
        ("an old window", minted_for(ISSUER, &[9; 32], ORIGIN)),
        ("a bit flipped", flipped),
        ("another type", other_type),
        ("an unknown key", b.mint(&ours)),
    ];
    for (what, token) in &refused {
        challenged(presenting(&proxy, token), &a);
        eprintln!("{what}: the challenge again");
    }
    let malformed = "PrivateToken token=\"not*base64!\"";
    challenged(load(&proxy, &[("authorization", malformed)]), &a);
    for len in (0..400).step_by(37) {
        let mut bytes = vec![0xa5; len];
        bytes[..len.min(2)].copy_from_slice(&[0, 2][..len.min(2)]);
        challenged(presenting(&proxy, &bytes), &a);
    }
    assert_eq!(upstream.served(), 0);
    assert_eq!(counted(&proxy, ISSUER, "invalid"), 4.0, "bound to our key");
    assert_eq!(counted(&proxy, "unknown", "invalid"), 1.0 + 1.0 + 11.0);
    assert_eq!(counted(&proxy, "unknown", "unknown_key"), 1.0);
    assert_eq!(counted(&proxy, ISSUER, "redeemed"), 0.0);
    assert_eq!(presenting(&proxy, &a.mint(&ours)).status(), 200, "ours");
}
