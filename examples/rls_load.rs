//! A ghz-style load on a rate limit service: CONNS concurrent callers over one HTTP/2
//! connection each, asking `ShouldRateLimit` for one descriptor (`api_key`, one of KEYS
//! values) in domain `bench` for SECONDS; prints "decisions/s p50_ms p99_ms over_limit_share".
//! usage: rls_load HOST:PORT [CONNS=32] [SECONDS=10] [KEYS=1000]

use envoy_types::pb::envoy::extensions::common::ratelimit::v3::rate_limit_descriptor::Entry;
use envoy_types::pb::envoy::extensions::common::ratelimit::v3::RateLimitDescriptor;
use envoy_types::pb::envoy::service::ratelimit::v3::rate_limit_service_client::RateLimitServiceClient;
use envoy_types::pb::envoy::service::ratelimit::v3::RateLimitRequest;
use std::time::{Duration, Instant};

fn arg<T: std::str::FromStr>(i: usize, default: T) -> T {
    std::env::args()
        .nth(i)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

fn request(key: u64) -> RateLimitRequest {
    RateLimitRequest {
        domain: "bench".into(),
        descriptors: vec![RateLimitDescriptor {
            entries: vec![Entry {
                key: "api_key".into(),
                value: format!("key-{key}"),
            }],
            ..RateLimitDescriptor::default()
        }],
        hits_addend: 0,
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let target: String = arg(1, "127.0.0.1:8081".to_owned());
    let (conns, seconds, keys): (usize, u64, u64) = (arg(2, 32), arg(3, 10), arg(4, 1000));
    let end = Instant::now() + Duration::from_secs(seconds);
    let mut workers = Vec::new();
    for w in 0..conns {
        let target = target.clone();
        workers.push(tokio::spawn(async move {
            let mut client = RateLimitServiceClient::connect(format!("http://{target}"))
                .await
                .expect("the service answers");
            let (mut latencies, mut over) = (Vec::new(), 0u64);
            let mut n = w as u64;
            while Instant::now() < end {
                let asked = Instant::now();
                let answer = client.should_rate_limit(request(n % keys)).await;
                latencies.push(asked.elapsed());
                over += u64::from(answer.map_or(true, |a| a.into_inner().overall_code != 1));
                n += conns as u64;
            }
            (latencies, over)
        }));
    }
    let (mut all, mut over) = (Vec::new(), 0);
    for w in workers {
        let (latencies, o) = w.await.expect("a worker");
        all.extend(latencies);
        over += o;
    }
    all.sort();
    let pick = |q: f64| all.get(((all.len() as f64 * q) as usize).min(all.len().saturating_sub(1)));
    let ms = |d: Option<&Duration>| d.map_or(0.0, |d| d.as_secs_f64() * 1000.0);
    println!(
        "{:.0} {:.3} {:.3} {:.4}",
        all.len() as f64 / seconds as f64,
        ms(pick(0.5)),
        ms(pick(0.99)),
        over as f64 / all.len().max(1) as f64
    );
}
