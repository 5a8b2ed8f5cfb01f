//! The load of the overload scenarios: a swarm of clients each request from a new address of
//! 10.0.0.0/8 (half loading pages, half calling the API), and a customer with an API key
//! sending a request every 100 ms.

use crate::common::Proxy;
use reqwest::blocking::{Client, Response};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The swarm's clients (connections).
const SWARM_THREADS: usize = 96;
/// Each swarm client's pause between requests: the swarm's own clients must not take the
/// machine from the proxy (it still sends many times the capacity).
const PAUSE: Duration = Duration::from_millis(20);

pub(super) fn client() -> Client {
    Client::builder()
        .timeout(Duration::from_secs(10))
        .pool_max_idle_per_host(4)
        .build()
        .expect("client")
}

/// A random address of 10.0.0.0/8 (the swarm's: a new one for nearly every request).
fn swarm_address(n: u32) -> String {
    let x = n.wrapping_mul(2_654_435_761);
    format!("10.{}.{}.{}", (x >> 16) & 0xff, (x >> 8) & 0xff, x & 0xff)
}

/// What the swarm got: statuses by kind (`api`, `page`), and whether every 503 said when to
/// come back.
#[derive(Default)]
pub(super) struct SwarmReport {
    pub(super) statuses: BTreeMap<(&'static str, u16), usize>,
    pub(super) challenge_pages: usize,
    pub(super) shed_without_retry_after: usize,
    pub(super) sent: usize,
}

impl SwarmReport {
    /// Counts one answer by kind and status, and whether it was a challenge page or a 503
    /// without `Retry-After`.
    fn tally(&mut self, kind: &'static str, response: &Response) {
        let status = response.status().as_u16();
        let retry_after = response.headers().contains_key("retry-after");
        let html = response
            .headers()
            .get("content-type")
            .is_some_and(|c| c.as_bytes().starts_with(b"text/html"));
        self.challenge_pages += usize::from(status == 403 && html);
        self.shed_without_retry_after += usize::from(status == 503 && !retry_after);
        *self.statuses.entry((kind, status)).or_default() += 1;
    }
}

/// The swarm: `SWARM_THREADS` clients, half loading pages, half calling the API (with a key of
/// their own invention for each request when `invented_keys`), each request from a new
/// address, until `stop`.
pub(super) fn swarm(
    proxy: &Proxy,
    stop: &AtomicBool,
    counter: &AtomicU32,
    invented_keys: bool,
) -> SwarmReport {
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..SWARM_THREADS)
            .map(|i| {
                scope.spawn(move || {
                    let client = client();
                    let page = i % 2 == 0;
                    let (kind, accept) = match page {
                        true => ("page", "text/html,application/xhtml+xml"),
                        false => ("api", "application/json"),
                    };
                    let mut report = SwarmReport::default();
                    while !stop.load(Ordering::Relaxed) {
                        let n = counter.fetch_add(1, Ordering::Relaxed);
                        let address = swarm_address(n);
                        let url = proxy.url(if page { "/page" } else { "/api/items" });
                        let mut request = client
                            .get(url)
                            .header("x-forwarded-for", address)
                            .header("accept", accept);
                        if invented_keys && !page {
                            request = request.header("x-api-key", format!("swarm-{n}"));
                        }
                        let sent = request.send();
                        report.sent += 1;
                        if let Ok(response) = sent {
                            report.tally(kind, &response);
                        }
                        std::thread::sleep(PAUSE);
                    }
                    report
                })
            })
            .collect();
        let mut all = SwarmReport::default();
        for handle in handles {
            let report = handle.join().expect("a swarm thread");
            for (key, n) in report.statuses {
                *all.statuses.entry(key).or_default() += n;
            }
            all.challenge_pages += report.challenge_pages;
            all.shed_without_retry_after += report.shed_without_retry_after;
            all.sent += report.sent;
        }
        all
    })
}

/// The customer: one request every 100 ms with its API key until `until`; each answer's
/// status and latency.
pub(super) fn customer(proxy: &Proxy, until: Instant) -> Vec<(u16, Duration)> {
    let client = client();
    let mut answers = Vec::new();
    while Instant::now() < until {
        let sent = Instant::now();
        let status = client
            .get(proxy.url("/api/orders"))
            .header("x-api-key", "customer-1")
            .header("accept", "application/json")
            .send()
            .map(|r| r.status().as_u16())
            .unwrap_or(0);
        answers.push((status, sent.elapsed()));
        std::thread::sleep(Duration::from_millis(100).saturating_sub(sent.elapsed()));
    }
    answers
}

pub(super) fn p95(answers: &[(u16, Duration)]) -> Duration {
    let mut latencies: Vec<Duration> = answers.iter().map(|(_, l)| *l).collect();
    latencies.sort();
    latencies[(latencies.len() * 95).div_ceil(100).saturating_sub(1)]
}
