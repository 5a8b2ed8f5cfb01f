//! robots.txt's trap across a fleet of two real instances on one real Redis: a crawler that
//! read /robots.txt on one and then fetched the trap there is refused by the other (403,
//! `decision=trapped`) within a second; with no `trap` configured both serve the fleet's one
//! random trap, and a reader of the file on one is caught on the other; a browser that read
//! the file and fetched the trap is spared (404) and served on both.

use crate::common;

use common::redis::RedisServer;
use common::wait::within;
use common::{client_from, Proxy, Upstream};
use reqwest::header::USER_AGENT;
use std::time::{Duration, Instant};

/// A crawler no catalogue names: not a browser, so the trap catches it.
const BADBOT: &str = "Mozilla/5.0 (compatible; BadBot/1.0)";
/// OpenAI's crawler (an `ai-crawler` of the catalogue).
const GPTBOT: &str = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; \
                      +https://openai.com/gptbot)";
/// Firefox on Linux: a browser, never banned by the trap.
const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0";

/// The configured trap of the first test.
const TRAP: &str = "/.well-known/floodgate-trap/";

/// Two instances sharing one Redis in front of one upstream, access logs on.
struct Pair {
    a: Proxy,
    b: Proxy,
    _upstream: Upstream,
    _redis: RedisServer,
}

impl Pair {
    /// `[robots]` managed, AI crawlers kept from everything, with `trap` when given (else the
    /// fleet's random one).
    fn start(trap: Option<&str>) -> Self {
        let (upstream, redis) = (Upstream::start(), RedisServer::start());
        let trap = trap.map_or(String::new(), |t| format!("trap = \"{t}\"\n"));
        let config = format!(
            "[store]\nkind = \"redis\"\nurl = \"{}\"\n\n[robots]\nsource = \"managed\"\n\
             groups = {{ \"ai-crawler\" = {{ disallow = [\"/\"] }} }}\n{trap}",
            redis.url()
        );
        let start = || Proxy::start_with_server(&[&upstream.addr], "access_log = true", &config);
        let (a, b) = (start(), start());
        Self {
            a,
            b,
            _upstream: upstream,
            _redis: redis,
        }
    }
}

/// GET `path` from `proxy`, sent from `address` as `agent`: the status and the body.
fn get(proxy: &Proxy, address: &str, agent: &str, path: &str) -> (u16, String) {
    let response = client_from(address)
        .get(proxy.url(path))
        .header(USER_AGENT, agent)
        .send()
        .expect("the proxy answers");
    let status = response.status().as_u16();
    (status, response.text().unwrap_or_default())
}

/// The trap path `Disallow`ed in a robots.txt `body` (the line naming the trap prefix).
fn trap_in(body: &str) -> String {
    let line = body
        .lines()
        .find_map(|l| l.strip_prefix("Disallow: /.well-known/floodgate-trap/"))
        .unwrap_or_else(|| panic!("no trap in robots.txt:\n{body}"));
    format!("/.well-known/floodgate-trap/{line}")
}

/// Whether `proxy`'s access log has `GET path` answered `status` with `decision`, within 2 s
/// (the line is written once the request has ended, after its answer went out).
fn logged(proxy: &Proxy, path: &str, status: u16, decision: &str) -> bool {
    let (request, answer) = (format!("GET {path} "), format!(" status={status} "));
    let decision = format!(" decision={decision}");
    let found = |log: &str| {
        log.lines()
            .any(|l| l.contains(&request) && l.contains(&answer) && l.contains(&decision))
    };
    found(&proxy.log_when(found))
}

#[test]
fn a_crawler_trapped_on_one_instance_is_refused_by_the_other_within_a_second() {
    let fleet = Pair::start(Some(TRAP));
    let crawler = "127.0.3.1";
    let (status, body) = get(&fleet.a, crawler, BADBOT, "/robots.txt");
    assert_eq!(status, 200);
    assert_eq!(trap_in(&body), TRAP);
    assert_eq!(get(&fleet.b, crawler, BADBOT, "/").0, 200, "not banned yet");

    let (status, body) = get(
        &fleet.a,
        crawler,
        BADBOT,
        "/.well-known/floodgate-trap/x.png",
    );
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("\"trapped\":true"), "{body}");
    let caught = Instant::now();
    let refused = within(Duration::from_secs(2), || {
        get(&fleet.b, crawler, BADBOT, "/").0 == 403
    });
    let seen = refused.map(|_| caught.elapsed());
    eprintln!("b refused the trapped crawler {seen:?} after a caught it");
    assert!(
        seen.is_some_and(|t| t < Duration::from_secs(1)),
        "b refuses a's trapped crawler within a second: {seen:?}"
    );
    assert!(logged(&fleet.b, "/", 403, "trapped"), "{}", fleet.b.log());
    let (status, body) = get(&fleet.b, crawler, BADBOT, "/robots.txt");
    assert_eq!(
        (status, trap_in(&body)),
        (200, TRAP.to_owned()),
        "still read"
    );
    assert_eq!(
        get(&fleet.b, "127.0.3.2", BADBOT, "/").0,
        200,
        "another address"
    );
    let banned = "floodgate_robots_trap_total{result=\"banned\"}";
    assert_eq!((fleet.a.metric(banned), fleet.b.metric(banned)), (1.0, 0.0));
}

#[test]
fn the_fleets_random_trap_catches_on_one_instance_a_reader_of_the_other() {
    let fleet = Pair::start(None);
    let (reader, browser) = ("127.0.3.3", "127.0.3.4");
    let (status, body) = get(&fleet.a, reader, GPTBOT, "/robots.txt");
    assert_eq!(status, 200);
    let trap = trap_in(&body);
    assert!(trap.len() > TRAP.len() + 20, "a random trap: {trap}");
    let (status, on_b) = get(&fleet.b, browser, FIREFOX, "/robots.txt");
    assert_eq!((status, trap_in(&on_b)), (200, trap.clone()), "one trap");

    // A browser that read the file (on b) and fetched the trap (on a): spared, not banned.
    let (status, body) = get(&fleet.a, browser, FIREFOX, &format!("{trap}pixel.png"));
    assert_eq!(status, 404, "{body}");
    let spared = "floodgate_robots_trap_total{result=\"spared\"}";
    assert_eq!(fleet.a.metric(spared), 1.0);

    // The crawler read it on a; b catches it.
    let (status, body) = get(&fleet.b, reader, GPTBOT, &trap);
    assert_eq!(status, 403, "{body}");
    assert!(logged(&fleet.b, &trap, 403, "trapped"), "{}", fleet.b.log());
    let refused = within(Duration::from_secs(1), || {
        get(&fleet.a, reader, GPTBOT, "/").0 == 403
    });
    assert!(refused.is_some(), "a refuses it within a second");
    // The browser's address is served everywhere, after the crawler's ban was read.
    for proxy in [&fleet.a, &fleet.b] {
        assert_eq!(get(proxy, browser, FIREFOX, "/").0, 200);
    }
    let banned = "floodgate_robots_trap_total{result=\"banned\"}";
    assert_eq!((fleet.a.metric(banned), fleet.b.metric(banned)), (0.0, 1.0));
}
