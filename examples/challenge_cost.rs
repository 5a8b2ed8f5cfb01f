//! What the challenge costs the server, in process (issue #62: a pass checked in ≤ 2 µs, a
//! solution in ≤ 5 µs): checking a pass, checking a solution, the in-process nonce ledger, a
//! whole redemption, and rendering a challenge page, with their parts. Medians over ROUNDS
//! rounds of ITERS iterations of every operation (each round starting one operation later).
//! usage: challenge_cost [ROUNDS] [ITERS]   (defaults 15 and 200,000; build with --release)

use floodgate::challenge::{
    solved, ChallengeSettings, Challenges, Coding, PageInput, Pages, Redemption, Signer, Visitor,
};
use floodgate::identity::{cookie_value, Bind, Challenge, ChallengeKind, IdentityKey};
use floodgate::limiter::{MemoryNonces, NonceLedger};
use floodgate::telemetry::Metrics;
use http::header::COOKIE;
use http::{HeaderMap, HeaderValue};
use std::collections::HashMap;
use std::future::Future;
use std::hint::black_box;
use std::net::IpAddr;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

const KEY: IdentityKey = IdentityKey::from_bytes([7; 32]);
const NOW_MS: u64 = 1_800_000_000_000;
const NOW_S: u64 = NOW_MS / 1000;
/// The default challenge: `pow` at 16 bits, the pass bound to the client's /24.
const POW: Challenge = Challenge {
    kind: ChallengeKind::Pow {
        difficulty: floodgate::identity::DEFAULT_DIFFICULTY,
    },
    bind: Bind::Network,
};
const TARGET: &str = "/articles/2026/11/a-long-read?page=2&ref=front";
/// The request id each page shows.
const REFERENCE: &str = "0123456789abcdef0123456789abcdef";

/// One measured operation: its name, the target (ns) if it has one, and its body,
/// run `iters` times from round `round`.
struct Op<'a> {
    name: &'static str,
    target_ns: Option<f64>,
    run: Box<dyn FnMut(u64, usize) + 'a>,
}

fn client() -> Option<IpAddr> {
    Some(IpAddr::from([203, 0, 113, 77]))
}

fn room(ledger: Arc<dyn NonceLedger>) -> Challenges {
    let names = HashMap::from([(1, Arc::from("browsers"))]);
    let metrics = Metrics::new().challenges.clone();
    Challenges::new(ChallengeSettings::default(), &KEY, ledger, names, metrics)
        .expect("the default never_paths are valid")
}

/// A browser's Cookie header with the pass among its other cookies.
fn cookie_header(pass: &str) -> HeaderMap {
    let text = format!(
        "_ga=GA1.1.1234567890.1790000000; theme=dark; lang=en-GB; \
         session=5f36efce86f68877cee18fda5637abb2a1bb409f; floodgate_pass={pass}; \
         consent=analytics%3Dno%2Cads%3Dno; _ga_XYZ123=GS1.1.1790000000.3.1.1790000100.0.0.0"
    );
    let mut headers = HeaderMap::new();
    headers.insert(
        COOKIE,
        HeaderValue::from_str(&text).expect("an ASCII header"),
    );
    headers.insert("accept", HeaderValue::from_static("text/html,*/*;q=0.8"));
    headers
}

/// The smallest solution of `nonce` at `difficulty`, as the page's script finds it.
fn solve(nonce: &str, difficulty: u8) -> String {
    (0u64..)
        .map(|n| n.to_string())
        .find(|s| solved(nonce, s, difficulty))
        .expect("a solution exists")
}

/// The output of a future that never waits (the in-process ledger never does).
fn ready<T>(future: impl Future<Output = T>) -> T {
    match pin!(future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("an in-process future waited"),
    }
}

/// A pow nonce at difficulty 1 and its solution, as a solution's query: the check is one hash
/// at any difficulty, so solving cheaply changes only the setup.
fn solved_query(signer: &Signer, i: u64) -> String {
    let easy = Challenge {
        kind: ChallengeKind::Pow { difficulty: 1 },
        bind: Bind::Network,
    };
    let nonce = signer
        .nonce(&easy, 1, client(), NOW_MS + i % 1000)
        .expect("randomness");
    let solution = solve(&nonce, 1);
    format!("nonce={nonce}&solution={solution}&to=%2Farticles%2F2026%3Fpage%3D2")
}

fn pass_ops<'a>(room: &'a Challenges, signer: &'a Signer, headers: &'a HeaderMap) -> Vec<Op<'a>> {
    vec![
        Op {
            name: "pass: cookie_value + open_pass (Challenges::pass_of)",
            target_ns: Some(2000.0),
            run: Box::new(move |_, iters| {
                for _ in 0..iters {
                    black_box(room.pass_of(black_box(headers), client(), NOW_S));
                }
            }),
        },
        Op {
            name: "· of which open_pass alone",
            target_ns: None,
            run: Box::new(move |_, iters| {
                let value = cookie_value(headers, "floodgate_pass").expect("the pass");
                for _ in 0..iters {
                    black_box(signer.open_pass(black_box(value), client(), NOW_S).ok());
                }
            }),
        },
    ]
}

fn solution_ops<'a>(signer: &'a Signer, nonce: &'a str, solution: &'a str) -> Vec<Op<'a>> {
    vec![
        Op {
            name: "solution: open_nonce + solved (16 bits) + pass",
            target_ns: Some(5000.0),
            run: Box::new(move |_, iters| {
                for _ in 0..iters {
                    let opened = signer
                        .open_nonce(black_box(nonce), client())
                        .expect("opens");
                    assert!(solved(black_box(nonce), black_box(solution), 16));
                    black_box(
                        signer
                            .pass(&opened, client(), NOW_S + 604_800)
                            .expect("a pass"),
                    );
                }
            }),
        },
        Op {
            name: "· of which solved alone (one SHA-256)",
            target_ns: None,
            run: Box::new(move |_, iters| {
                for _ in 0..iters {
                    black_box(solved(black_box(nonce), black_box(solution), 16));
                }
            }),
        },
    ]
}

/// The in-process ledger and the whole redemption: a fresh room per round, so the ledger's
/// size is the round's count, as it would be after as many solutions.
fn ledger_ops<'a>(queries: &'a [String]) -> Vec<Op<'a>> {
    vec![
        Op {
            name: "MemoryNonces::redeem (a new nonce)",
            target_ns: None,
            run: Box::new(move |round, iters| {
                let ledger = MemoryNonces::default();
                for i in 0..iters as u64 {
                    let mut id = [0u8; 16];
                    id[..8].copy_from_slice(&(round << 40 | i).to_le_bytes());
                    black_box(
                        ready(ledger.redeem("challenge", &id, NOW_MS, NOW_MS + 300_000)).ok(),
                    );
                }
            }),
        },
        Op {
            name: "whole Challenges::redeem, memory ledger",
            target_ns: None,
            run: Box::new(move |_, iters| {
                let room = room(Arc::new(MemoryNonces::default()));
                for query in queries.iter().cycle().take(iters) {
                    let out = ready(room.redeem(
                        Some(query),
                        client(),
                        REFERENCE,
                        NOW_MS + 2000,
                        false,
                        Coding::Identity,
                    ));
                    assert!(matches!(out, Ok(Redemption::Passed { .. })));
                }
            }),
        },
    ]
}

fn page_ops<'a>(room: &'a Challenges, signer: &'a Signer, pages: &'a Pages) -> Vec<Op<'a>> {
    let nonce = signer.nonce(&POW, 1, client(), NOW_MS).expect("randomness");
    vec![
        Op {
            name: "page: Challenges::page (nonce + render, gzip)",
            target_ns: None,
            run: Box::new(move |_, iters| {
                for _ in 0..iters {
                    let visitor = Visitor {
                        target: black_box(TARGET),
                        client: client(),
                        reference: REFERENCE,
                    };
                    let page = room.page(&POW, 1, &visitor, NOW_MS, Coding::Gzip);
                    black_box(page.ok());
                }
            }),
        },
        Op {
            name: "· of which Signer::nonce",
            target_ns: None,
            run: Box::new(move |_, iters| {
                for _ in 0..iters {
                    black_box(signer.nonce(&POW, 1, client(), NOW_MS).ok());
                }
            }),
        },
        render_op(
            "· of which Pages::render",
            pages,
            nonce.clone(),
            Coding::Gzip,
        ),
        render_op(
            "· Pages::render, not gzipped",
            pages,
            nonce,
            Coding::Identity,
        ),
    ]
}

/// Rendering the page for `nonce` with `coding`.
fn render_op<'a>(name: &'static str, pages: &'a Pages, nonce: String, coding: Coding) -> Op<'a> {
    Op {
        name,
        target_ns: None,
        run: Box::new(move |_, iters| {
            let input = PageInput {
                action: ChallengeSettings::PATH,
                nonce: &nonce,
                target: TARGET,
                wait_s: 2,
                reference: REFERENCE,
            };
            for _ in 0..iters {
                black_box(pages.render(POW.kind, black_box(&input), coding));
            }
        }),
    }
}

/// The median, smallest and largest of `values`.
fn spread(values: &mut [f64]) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    (
        values[values.len() / 2],
        values[0],
        values[values.len() - 1],
    )
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(15);
    let iters: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(200_000);

    let signer = Signer::new(&KEY);
    let shared = room(Arc::new(MemoryNonces::default()));
    let pages = Pages::new();
    let nonce = signer.nonce(&POW, 1, client(), NOW_MS).expect("randomness");
    let solution = solve(&nonce, 16);
    let (_, pass) = signer
        .pass(
            &signer.open_nonce(&nonce, client()).expect("opens"),
            client(),
            NOW_S + 604_800,
        )
        .expect("a pass");
    let headers = cookie_header(&pass);
    assert!(
        shared.pass_of(&headers, client(), NOW_S).is_some(),
        "the pass is good"
    );
    // Distinct solved nonces for whole redemptions (each redeemed once per round's room).
    let queries: Vec<String> = (0..iters.min(20_000) as u64)
        .map(|i| solved_query(&signer, i))
        .collect();
    let redeem_iters = queries.len();

    let mut ops = pass_ops(&shared, &signer, &headers);
    ops.extend(solution_ops(&signer, &nonce, &solution));
    ops.extend(ledger_ops(&queries));
    ops.extend(page_ops(&shared, &signer, &pages));
    let mut per_op: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); ops.len()];
    for round in 0..rounds {
        for k in 0..ops.len() {
            let i = (k + round) % ops.len();
            let n = match ops[i].name {
                name if name.starts_with("whole") => redeem_iters,
                _ => iters,
            };
            let start = Instant::now();
            (ops[i].run)(round as u64, n);
            per_op[i].push(start.elapsed().as_nanos() as f64 / n as f64);
        }
    }

    println!("{rounds} rounds × {iters} iterations ({redeem_iters} for whole redemptions), ns per operation");
    println!();
    println!("| operation | median ns | min | max | target |");
    println!("|---|---|---|---|---|");
    for (op, values) in ops.iter().zip(per_op.iter_mut()) {
        let (median, min, max) = spread(values);
        let target = op.target_ns.map_or(String::new(), |t| {
            let verdict = if median <= t { "met" } else { "MISSED" };
            format!("≤ {t:.0} ({verdict})")
        });
        println!(
            "| {} | {median:.0} | {min:.0} | {max:.0} | {target} |",
            op.name
        );
    }
}
