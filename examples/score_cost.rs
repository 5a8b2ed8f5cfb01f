//! What working out a request's bot score costs (issue 74: at most 2 µs a request when asked;
//! nothing when not, as nothing is called): `Scorer::score` on requests of five shapes (Chrome
//! as Chrome, curl posing as Chrome, curl as itself, a 64 KiB User-Agent, 5,000 headers), on
//! one thread. Each round times a batch of every shape and a batch of an empty loop over the
//! same requests (the harness's own cost), one after the other, the order alternating; the
//! cost is their difference, per call; prints the median over rounds of each shape.
//! `cargo run --release --example score_cost [rounds]`.

use floodgate::bots::score::{ScoreSettings, Scorer};
use floodgate::identity::Traits;
use http::HeaderMap;
use std::hint::black_box;
use std::time::Instant;

const CHROME: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
                      Chrome/156.0.0.0 Safari/537.36";
const BATCH: u32 = 20_000;

/// A request's headers and what is known of its sender.
struct Case {
    name: &'static str,
    headers: HeaderMap,
    traits: Traits,
}

fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
    pairs
        .iter()
        .map(|(k, v)| {
            let name = http::HeaderName::from_bytes(k.as_bytes()).expect("name");
            (name, v.parse().expect("value"))
        })
        .collect()
}

fn tls(ja4: &str) -> Traits {
    Traits {
        ja4: Some(ja4.parse().expect("ja4")),
        h2fp: Some(
            "1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p"
                .parse()
                .expect("h2fp"),
        ),
        asn: Some(3320),
        ..Traits::default()
    }
}

fn cases() -> Vec<Case> {
    let browser = headers(&[
        ("host", "example.com"),
        ("user-agent", CHROME),
        ("accept", "text/html,application/xhtml+xml"),
        ("accept-language", "en-US,en;q=0.9"),
        ("accept-encoding", "gzip, deflate, br, zstd"),
        (
            "sec-ch-ua",
            "\"Chromium\";v=\"156\", \"Not-A.Brand\";v=\"24\"",
        ),
        ("sec-ch-ua-mobile", "?0"),
        ("sec-ch-ua-platform", "\"Linux\""),
        ("sec-fetch-site", "none"),
        ("sec-fetch-mode", "navigate"),
        ("sec-fetch-user", "?1"),
        ("sec-fetch-dest", "document"),
        ("upgrade-insecure-requests", "1"),
        ("priority", "u=0, i"),
    ]);
    let long = format!("{CHROME} {}", "x".repeat(64 << 10));
    let mut many = headers(&[("user-agent", CHROME)]);
    for i in 0..5000 {
        let name = http::HeaderName::from_bytes(format!("x-h{i}").as_bytes()).expect("name");
        many.insert(name, "v".parse().expect("value"));
    }
    let chrome_ja4 = "t13d1517h2_8daaf6152771_02713d6af862";
    let curl_ja4 = "t13d3112h2_e8f1e7e78f70_0123456789ab";
    vec![
        Case {
            name: "chrome as chrome",
            headers: browser,
            traits: tls(chrome_ja4),
        },
        Case {
            name: "curl as chrome",
            headers: headers(&[
                ("host", "example.com"),
                ("user-agent", CHROME),
                ("accept", "*/*"),
            ]),
            traits: tls(curl_ja4),
        },
        Case {
            name: "curl as itself",
            headers: headers(&[
                ("host", "example.com"),
                ("user-agent", "curl/8.5.0"),
                ("accept", "*/*"),
            ]),
            traits: tls(curl_ja4),
        },
        Case {
            name: "64 KiB user-agent",
            headers: headers(&[("user-agent", &long)]),
            traits: tls(curl_ja4),
        },
        Case {
            name: "5,000 headers",
            headers: many,
            traits: tls(curl_ja4),
        },
    ]
}

/// Nanoseconds a call of `BATCH` calls of `work` took.
fn timed(mut work: impl FnMut()) -> f64 {
    let started = Instant::now();
    for _ in 0..BATCH {
        work();
    }
    started.elapsed().as_nanos() as f64 / f64::from(BATCH)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(31);
    let scorer = Scorer::new(&ScoreSettings::default());
    for case in cases() {
        let score = scorer.score(&case.traits, &case.headers);
        let mut costs = Vec::with_capacity(rounds);
        for round in 0..rounds {
            let scored = || {
                black_box(scorer.score(black_box(&case.traits), black_box(&case.headers)));
            };
            let empty = || {
                black_box((black_box(&case.traits), black_box(&case.headers)));
            };
            let (with, without) = match round % 2 {
                0 => {
                    let with = timed(scored);
                    (with, timed(empty))
                }
                _ => {
                    let without = timed(empty);
                    (timed(scored), without)
                }
            };
            costs.push(with - without);
        }
        println!(
            "{:<20} {:>8.0} ns a request (median of {rounds} paired rounds); score {} {}",
            case.name,
            median(costs),
            score.value,
            score.signals
        );
    }
}
