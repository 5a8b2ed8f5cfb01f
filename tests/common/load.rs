//! Bounded load from client threads: each sends requests back to back until a deadline and
//! records every status and latency.

use reqwest::blocking::Client;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// What a load run saw.
#[derive(Debug, Default)]
pub struct LoadReport {
    /// Responses by status (0: the request failed without a response).
    pub statuses: BTreeMap<u16, usize>,
    /// Every request's latency.
    pub latencies: Vec<Duration>,
    /// (seconds since the start, status) of every response, in each thread's order.
    pub timeline: Vec<(f64, u16)>,
    /// Seconds since the start at which the first request was sent.
    pub first_sent: Option<f64>,
}

impl LoadReport {
    pub fn count(&self, status: u16) -> usize {
        self.statuses.get(&status).copied().unwrap_or(0)
    }

    pub fn total(&self) -> usize {
        self.statuses.values().sum()
    }

    pub fn max_latency(&self) -> Duration {
        self.latencies.iter().copied().max().unwrap_or_default()
    }

    /// The latency below which `q` (0..1) of requests fell.
    pub fn quantile(&self, q: f64) -> Duration {
        let mut sorted = self.latencies.clone();
        sorted.sort();
        sorted
            .get(((sorted.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or_default()
    }

    /// Seconds from the first request sent to the last answer received: the span the requests
    /// actually covered (0 without requests).
    pub fn span(&self) -> f64 {
        let last = self.timeline.iter().map(|&(t, _)| t).fold(0.0, f64::max);
        self.first_sent.map_or(0.0, |first| (last - first).max(0.0))
    }

    fn merge(&mut self, other: LoadReport) {
        self.first_sent = match (self.first_sent, other.first_sent) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        for (status, n) in other.statuses {
            *self.statuses.entry(status).or_default() += n;
        }
        self.latencies.extend(other.latencies);
        self.timeline.extend(other.timeline);
    }
}

/// Sends GET requests to each of `urls` from `threads_per_url` threads for `duration`, with
/// `headers`, pausing `pause` between requests of one thread.
pub fn hammer(
    urls: &[String],
    threads_per_url: usize,
    duration: Duration,
    pause: Duration,
    headers: &[(&str, &str)],
) -> LoadReport {
    let start = Instant::now();
    let deadline = start + duration;
    std::thread::scope(|scope| {
        let handles: Vec<_> = urls
            .iter()
            .flat_map(|url| std::iter::repeat_n(url, threads_per_url))
            .map(|url| {
                scope.spawn(move || {
                    let client = Client::builder()
                        .timeout(Duration::from_secs(10))
                        .build()
                        .expect("client");
                    let mut report = LoadReport::default();
                    while Instant::now() < deadline {
                        let sent = Instant::now();
                        report
                            .first_sent
                            .get_or_insert((sent - start).as_secs_f64());
                        let mut req = client.get(url);
                        for (k, v) in headers {
                            req = req.header(*k, *v);
                        }
                        let status = req.send().map(|r| r.status().as_u16()).unwrap_or(0);
                        report.latencies.push(sent.elapsed());
                        report
                            .timeline
                            .push((start.elapsed().as_secs_f64(), status));
                        *report.statuses.entry(status).or_default() += 1;
                        if !pause.is_zero() {
                            std::thread::sleep(pause);
                        }
                    }
                    report
                })
            })
            .collect();
        let mut all = LoadReport::default();
        for handle in handles {
            all.merge(handle.join().expect("load thread"));
        }
        all
    })
}

/// Checks that a flood of one identity was admitted as the exact token bucket allows: at most
/// `capacity + rate × elapsed` within max(1, 0.5 %), and no fewer than that less the edges of
/// the measured span (50 ms of refill).
pub fn assert_exact_bucket(report: &LoadReport, capacity: f64, rate: f64, elapsed: f64) {
    assert_eq!(
        report.count(200) + report.count(429),
        report.total(),
        "{:?}",
        report.statuses
    );
    let allowed = report.count(200) as f64;
    let exact = capacity + rate * elapsed;
    let tolerance = (0.005 * exact).max(1.0);
    eprintln!(
        "allowed {allowed} of {} over {elapsed:.3} s; exact bucket: {exact:.2}",
        report.total()
    );
    assert!(
        allowed <= exact + tolerance,
        "over-admitted: {allowed} > {exact:.2} + {tolerance:.2}"
    );
    assert!(
        allowed >= exact - tolerance - rate * 0.05,
        "under-admitted: {allowed} < {exact:.2}"
    );
}

/// Sends GET requests to each of `urls` from `threads_per_url` threads for `duration`, with
/// `headers`, offering `rate` requests a second in all: each thread keeps its own schedule
/// (evenly spread, threads offset from one another) and sends each request when it is due, or
/// at once when it is late, until `duration` is over (a slow answer holds its thread up, so
/// fewer may be answered than offered, as a client with a fixed number of connections sees).
pub fn paced(
    urls: &[String],
    threads_per_url: usize,
    rate: f64,
    duration: Duration,
    headers: &[(&str, &str)],
) -> LoadReport {
    let start = Instant::now();
    let deadline = start + duration;
    let threads = urls.len() * threads_per_url;
    let every = Duration::from_secs_f64(threads as f64 / rate);
    std::thread::scope(|scope| {
        let handles: Vec<_> = urls
            .iter()
            .flat_map(|url| std::iter::repeat_n(url, threads_per_url))
            .enumerate()
            .map(|(i, url)| {
                scope.spawn(move || {
                    let client = Client::builder()
                        .timeout(Duration::from_secs(10))
                        .build()
                        .expect("client");
                    let mut report = LoadReport::default();
                    let mut due = start + every.mul_f64(i as f64 / threads as f64);
                    while due < deadline && Instant::now() < deadline {
                        let now = Instant::now();
                        if due > now {
                            std::thread::sleep(due - now);
                        }
                        due += every;
                        let sent = Instant::now();
                        report
                            .first_sent
                            .get_or_insert((sent - start).as_secs_f64());
                        let mut req = client.get(url);
                        for (k, v) in headers {
                            req = req.header(*k, *v);
                        }
                        let status = req.send().map(|r| r.status().as_u16()).unwrap_or(0);
                        report.latencies.push(sent.elapsed());
                        report
                            .timeline
                            .push((start.elapsed().as_secs_f64(), status));
                        *report.statuses.entry(status).or_default() += 1;
                    }
                    report
                })
            })
            .collect();
        let mut all = LoadReport::default();
        for handle in handles {
            all.merge(handle.join().expect("load thread"));
        }
        all
    })
}

impl LoadReport {
    /// The latency below which `q` (0..1) of the requests answered `status` fell.
    pub fn quantile_of(&self, status: u16, q: f64) -> Duration {
        let mut sorted: Vec<Duration> = self
            .latencies
            .iter()
            .zip(&self.timeline)
            .filter(|(_, (_, s))| *s == status)
            .map(|(latency, _)| *latency)
            .collect();
        sorted.sort();
        sorted
            .get(((sorted.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or_default()
    }
}
