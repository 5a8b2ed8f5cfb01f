//! What redeeming a Privacy Pass token costs (issue #85: at most 100 µs of CPU): tokens minted
//! beforehand by the test issuer (tests/common/issuer.rs: the real blind RSA flow) for the
//! challenge the redeemer offers, each with its own nonce, redeemed one after another on one
//! thread (the nonce ledger in memory); and the parts: reading the header, the RSA-2048
//! verification alone. Prints medians and 99th percentiles.
//! usage: `cargo run --release --example privacy_pass_cost [tokens]` (default 2,000)

#[path = "../tests/common/issuer.rs"]
mod issuer;

use floodgate::identity::IdentityKey;
use floodgate::limiter::MemoryNonces;
use floodgate::privacy_pass::{
    Issuer, IssuerKey, Redeemer, Redemption, Token, Windows, DEFAULT_WINDOW,
};
use issuer::{authorization, TestIssuer};
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

const NOW_MS: u64 = 1_800_000_000_000;

fn main() {
    let count: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(2_000);
    let signer = TestIssuer::a();
    let key = IssuerKey::from_token_key(&signer.token_key()).expect("the issuer's key");
    let issuer = Issuer::new(
        "issuer.example",
        vec![key.clone()],
        &["site.example".into()],
    )
    .expect("an issuer");
    let windows = Windows::from_identity_key(&IdentityKey::from_bytes([7; 32]), DEFAULT_WINDOW);
    let redeemer = Redeemer::new(
        vec![Arc::new(issuer)],
        windows,
        Arc::new(MemoryNonces::default()),
    );
    let challenge = redeemer.challenges(NOW_MS)[0].challenge.clone();
    let minting = Instant::now();
    let headers: Vec<String> = (0..count)
        .map(|_| authorization(&signer.mint(&challenge)))
        .collect();
    println!(
        "minted {count} tokens in {:.1} s",
        minting.elapsed().as_secs_f64()
    );

    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let mut redeem: Vec<Duration> = runtime.block_on(async {
        let mut took = Vec::with_capacity(count);
        for header in &headers {
            let started = Instant::now();
            let outcome = redeemer.redeem(header.as_bytes(), NOW_MS).await;
            took.push(started.elapsed());
            assert!(
                matches!(outcome, Redemption::Redeemed { .. }),
                "{outcome:?}"
            );
        }
        took
    });
    let mut parse = timed(&headers, |h| {
        black_box(Token::from_authorization(h.as_bytes()).is_ok());
    });
    let tokens: Vec<Token> = headers
        .iter()
        .map(|h| Token::from_authorization(h.as_bytes()).expect("a token"))
        .collect();
    let mut verify = timed(&tokens, |t| {
        assert!(key.verify(&t.token_input(), &t.authenticator));
    });
    report("whole redemption", &mut redeem, Some(100.0));
    report("  reading the header", &mut parse, None);
    report("  RSA-2048 PSS verification", &mut verify, None);
}

/// How long `f` took on each item.
fn timed<T>(items: &[T], mut f: impl FnMut(&T)) -> Vec<Duration> {
    items
        .iter()
        .map(|item| {
            let started = Instant::now();
            f(item);
            started.elapsed()
        })
        .collect()
}

fn report(name: &str, took: &mut [Duration], target_us: Option<f64>) {
    took.sort_unstable();
    let at = |q: f64| took[((took.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e6;
    let target = target_us.map_or(String::new(), |t| {
        let verdict = if at(0.5) <= t { "within" } else { "OVER" };
        format!(" ({verdict} the {t:.0} µs target)")
    });
    println!(
        "{name}: median {:.1} µs, p99 {:.1} µs{target}",
        at(0.5),
        at(0.99)
    );
}
