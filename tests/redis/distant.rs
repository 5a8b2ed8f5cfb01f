//! Issue #82 (11): Redis a few milliseconds away. One key floods a 20 + 50/s bucket through a
//! relay that delays every chunk the same time each way (`DelayLine`): the caller's refusals
//! are answered from the deny cache, one request at a time asking Redis when a refusal lapses,
//! so its 429s do not wait for the round trip; admission stays within max(2, 1 %) of the exact
//! bucket. `bench/distant` runs `distant_bench` at 0.5, 2 and 10 ms each way.

use crate::common;

use common::load::{hammer, paced, LoadReport};
use common::redis::RedisServer;
use common::relay::DelayLine;
use common::{Proxy, Upstream};
use std::time::Duration;

const CAPACITY: f64 = 20.0;
const RATE: f64 = 50.0;

fn config(port: u16) -> String {
    format!(
        "[store]\nkind = \"redis\"\nurl = \"redis://127.0.0.1:{port}\"\n\n\
         [identity]\nsources = [\"header:x-api-key\"]\n\n\
         [[policy]]\nname = \"shared\"\ncapacity = {CAPACITY}\nrate = \"{RATE}/s\"\n"
    )
}

/// How the load is offered.
enum Load {
    /// Threads per instance sending back to back.
    Closed(usize),
    /// Requests a second in all, from this many threads per instance.
    Paced(f64, usize),
}

/// One flood of one key through `instances` proxies sharing a Redis `each_way` away.
struct Flood {
    report: LoadReport,
    exact: f64,
}

fn flood(each_way: Duration, instances: usize, load: Load, duration: Duration) -> Flood {
    let redis = RedisServer::start();
    let line = DelayLine::start(redis.port, each_way);
    let upstream = Upstream::start();
    let proxies: Vec<Proxy> = (0..instances)
        .map(|_| Proxy::start(&[&upstream.addr], &config(line.port)))
        .collect();
    let urls: Vec<String> = proxies.iter().map(|p| p.url("/")).collect();
    let key = [("x-api-key", "flood")];
    let report = match load {
        Load::Closed(threads) => hammer(&urls, threads, duration, Duration::ZERO, &key),
        Load::Paced(rate, threads) => paced(&urls, threads, rate, duration, &key),
    };
    let exact = CAPACITY + RATE * report.span();
    Flood { report, exact }
}

/// A line for `bench/distant`.
fn describe(label: &str, flood: &Flood) -> String {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let r = &flood.report;
    format!(
        "distant-redis {label}: admitted {} exact {:.1} answered {} p50-429 {:.2} p99-429 {:.2} \
         p50-200 {:.2} statuses {:?}",
        r.count(200),
        flood.exact,
        r.total(),
        ms(r.quantile_of(429, 0.5)),
        ms(r.quantile_of(429, 0.99)),
        ms(r.quantile_of(200, 0.5)),
        r.statuses
    )
}

/// Before the fix the requests that came while one asked Redis about a lapsed refusal waited
/// for that call, and for a call of their own when it was allowed: with 10 ms each way most
/// 429s took 20–40 ms.
#[test]
fn a_flooding_callers_refusals_do_not_wait_for_a_distant_redis() {
    let _turn = common::serial::alone();
    let each_way = Duration::from_millis(10);
    let flood = flood(each_way, 1, Load::Closed(6), Duration::from_secs(3));
    eprintln!("{}", describe("10ms one instance", &flood));
    let report = &flood.report;
    assert_eq!(
        report.count(200) + report.count(429),
        report.total(),
        "{:?}",
        report.statuses
    );
    let p90 = report.quantile_of(429, 0.9);
    assert!(
        p90 < each_way,
        "429s wait for Redis: p90 {p90:?} (a round trip is {:?})",
        each_way * 2
    );
    // The span runs from the first request sent to the last answered: the tokens that accrue
    // while the first and the last decisions are on their way (a store call: the 200s' p50,
    // about two and a half round trips here, as one call waits for the one before) and the
    // one round trip a lapsed refusal waits for its asking request fall outside it.
    let tolerance = (0.01 * flood.exact).max(2.0);
    let on_the_way = report.quantile_of(200, 0.5).as_secs_f64() + 2.0 * each_way.as_secs_f64();
    let admitted = report.count(200) as f64;
    assert!(
        admitted <= flood.exact + tolerance,
        "over-admitted {admitted} > {:.1}",
        flood.exact
    );
    assert!(
        admitted >= flood.exact - tolerance - RATE * on_the_way,
        "under-admitted {admitted} < {:.1}",
        flood.exact
    );
}

/// `bench/distant`: `FG_DISTANT` = each way in ms, instances, offered req/s, seconds (e.g.
/// `2,1,2000,6`); prints one line.
#[test]
#[ignore = "a benchmark: bench/distant runs it"]
fn distant_bench() {
    let _turn = common::serial::alone();
    let spec = std::env::var("FG_DISTANT").unwrap_or_else(|_| "2,1,2000,6".into());
    let v: Vec<f64> = spec
        .split(',')
        .map(|x| x.trim().parse().expect("number"))
        .collect();
    let [each_way_ms, instances, rate, seconds] = v[..] else {
        panic!("FG_DISTANT: each way ms, instances, req/s, seconds");
    };
    let threads = std::env::var("FG_DISTANT_THREADS").map_or(8, |t| t.parse().expect("threads"));
    let flood = flood(
        Duration::from_secs_f64(each_way_ms / 1000.0),
        instances as usize,
        Load::Paced(rate, threads),
        Duration::from_secs_f64(seconds),
    );
    println!("{}", describe(&spec, &flood));
}
