//! Reverse-DNS verification of crawlers against a real DNS server on loopback (dnslib):
//! PTR names confirmed forward, names pointing elsewhere, look-alike domains, forward
//! answers with many addresses, no PTR, a server that fails, one that never answers and
//! one that answers late (the answer lands in the cache for the next request).

use crate::common;

use common::dns::{DnsServer, SilentDns};
use floodgate::bots::{DnsSettings, ReverseDns};
use floodgate::identity::{Proof, Verification};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a request may wait past `dns_timeout` on a busy two-core machine.
const MARGIN: Duration = Duration::from_millis(250);

const VERIFIED: Verification = Verification::Verified(Proof::ReverseDns);

fn google() -> Vec<Arc<str>> {
    vec!["googlebot.com".into(), "google.com".into()]
}

fn ip(text: &str) -> IpAddr {
    text.parse().expect("address")
}

fn checker(server: SocketAddr, timeout: Duration) -> ReverseDns {
    ReverseDns::new(&DnsSettings {
        timeout,
        resolver: Some(server),
    })
    .expect("reverse dns")
}

/// A forward answer of `name` holding every one of `addresses`.
fn many<'a>(name: &'a str, addresses: &'a [String]) -> Vec<(&'a str, &'a str, &'a str)> {
    addresses.iter().map(|a| (name, "A", a.as_str())).collect()
}

#[tokio::test]
async fn reverse_dns_confirmed_forward_verifies_and_nothing_else_does() {
    let mut zone = vec![
        // Confirmed: PTR and A agree.
        ("127.0.0.5", "PTR", "crawl-5.googlebot.com"),
        ("crawl-5.googlebot.com", "A", "127.0.0.5"),
        // The PTR name resolves elsewhere.
        ("127.0.0.6", "PTR", "crawl-6.googlebot.com"),
        ("crawl-6.googlebot.com", "A", "127.0.0.99"),
        // A look-alike domain, confirmed forward.
        ("127.0.0.7", "PTR", "crawl-7.evilgooglebot.com"),
        ("crawl-7.evilgooglebot.com", "A", "127.0.0.7"),
        // The PTR name resolves, but only for IPv6.
        ("127.0.0.11", "PTR", "crawl-11.googlebot.com"),
        ("crawl-11.googlebot.com", "AAAA", "::1"),
        // Several PTR names: the first is nobody's, the second confirms.
        ("127.0.0.12", "PTR", "host-12.example.net"),
        ("127.0.0.12", "PTR", "crawl-12.googlebot.com"),
        ("host-12.example.net", "A", "127.0.0.12"),
        ("crawl-12.googlebot.com", "A", "127.0.0.12"),
        // 127.0.0.10 has no PTR at all.
        // IPv6.
        ("::1", "PTR", "crawl-v6.googlebot.com"),
        ("crawl-v6.googlebot.com", "AAAA", "::1"),
        // Case and the root dot do not matter.
        ("127.0.0.13", "PTR", "CRAWL-13.GoogleBot.COM."),
        ("crawl-13.googlebot.com", "A", "127.0.0.13"),
    ];
    // Forward answers with many addresses, with and without the asking one.
    let with: Vec<String> = (100..120)
        .map(|n| format!("127.0.1.{n}"))
        .chain(["127.0.0.8".to_owned()])
        .collect();
    let without: Vec<String> = (100..120).map(|n| format!("127.0.1.{n}")).collect();
    zone.push(("127.0.0.8", "PTR", "many-8.googlebot.com"));
    zone.push(("127.0.0.9", "PTR", "many-9.googlebot.com"));
    zone.extend(many("many-8.googlebot.com", &with));
    zone.extend(many("many-9.googlebot.com", &without));
    let server = DnsServer::start(&zone);
    let dns = checker(server.addr, Duration::from_secs(2));

    for (address, expected) in [
        ("127.0.0.5", VERIFIED),
        ("127.0.0.6", Verification::Failed),
        ("127.0.0.7", Verification::Failed),
        ("127.0.0.8", VERIFIED),
        ("127.0.0.9", Verification::Failed),
        ("127.0.0.10", Verification::Failed),
        ("127.0.0.11", Verification::Failed),
        ("127.0.0.12", VERIFIED),
        ("127.0.0.13", VERIFIED),
        ("::1", VERIFIED),
        ("::ffff:127.0.0.5", VERIFIED),
    ] {
        assert_eq!(
            dns.verify(ip(address), &google()).await,
            expected,
            "{address}"
        );
    }
    // The cache is per address, not per crawler: another crawler's suffix, no new query.
    let asked = server.queries().len();
    assert_eq!(
        dns.verify(ip("127.0.0.5"), &["search.msn.com".into()])
            .await,
        Verification::Failed
    );
    assert_eq!(
        dns.verify(ip("127.0.0.7"), &["evilgooglebot.com".into()])
            .await,
        VERIFIED
    );
    assert_eq!(server.queries().len(), asked, "{:?}", server.queries());
    assert_eq!(dns.verify(ip("127.0.0.5"), &[]).await, Verification::Failed);
}

#[tokio::test]
async fn a_server_failure_is_unfinished_not_spoofed() {
    let server = DnsServer::start(&[
        ("127.0.0.20", "SERVFAIL", ""),
        ("127.0.0.21", "PTR", "crawl-21.googlebot.com"),
        ("crawl-21.googlebot.com", "SERVFAIL", ""),
    ]);
    let dns = checker(server.addr, Duration::from_secs(2));
    assert_eq!(
        dns.verify(ip("127.0.0.20"), &google()).await,
        Verification::Unfinished
    );
    assert_eq!(
        dns.verify(ip("127.0.0.21"), &google()).await,
        Verification::Unfinished,
        "a PTR under the suffix whose forward lookup failed is not refuted"
    );
    let asked = server.queries().len();
    assert_eq!(
        dns.verify(ip("127.0.0.20"), &google()).await,
        Verification::Unfinished
    );
    assert_eq!(
        server.queries().len(),
        asked,
        "a failure is kept a while: the server is not asked per request"
    );
}

#[tokio::test]
async fn a_server_that_never_answers_does_not_hold_requests() {
    let silent = SilentDns::start();
    let timeout = Duration::from_millis(200);
    let dns = checker(silent.addr, timeout);
    for address in ["127.0.0.30", "127.0.0.30", "127.0.0.31"] {
        let started = Instant::now();
        let verdict = dns.verify(ip(address), &google()).await;
        let took = started.elapsed();
        assert_eq!(verdict, Verification::Unfinished, "{address}");
        assert!(
            took < timeout + MARGIN,
            "{address} held the request {took:?}"
        );
    }
}

#[tokio::test]
async fn a_late_answer_lands_in_the_cache_for_the_next_request() {
    let server = DnsServer::start_with(
        &[
            ("127.0.0.40", "PTR", "crawl-40.googlebot.com"),
            ("crawl-40.googlebot.com", "A", "127.0.0.40"),
        ],
        Duration::from_millis(600),
    );
    let timeout = Duration::from_millis(200);
    let dns = checker(server.addr, timeout);
    let started = Instant::now();
    assert_eq!(
        dns.verify(ip("127.0.0.40"), &google()).await,
        Verification::Unfinished
    );
    assert!(started.elapsed() < timeout + MARGIN);
    // The lookup (PTR then A, 600 ms each) goes on in the background.
    let deadline = Instant::now() + Duration::from_secs(10);
    let served = loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let started = Instant::now();
        let verdict = dns.verify(ip("127.0.0.40"), &google()).await;
        if verdict == VERIFIED {
            break started.elapsed();
        }
        assert_eq!(verdict, Verification::Unfinished);
        assert!(Instant::now() < deadline, "the late answer never landed");
    };
    assert!(served < timeout, "served from the cache, took {served:?}");
    // One lookup for all the requests (UDP may have sent a query twice while it waited).
    let mut asked = server.queries();
    asked.dedup();
    assert_eq!(
        asked,
        ["40.0.0.127.in-addr.arpa PTR", "crawl-40.googlebot.com A"]
    );
    let before = server.queries().len();
    for _ in 0..5 {
        assert_eq!(dns.verify(ip("127.0.0.40"), &google()).await, VERIFIED);
    }
    assert_eq!(server.queries().len(), before, "served from the cache");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_for_one_address_share_one_lookup() {
    let server = DnsServer::start_with(
        &[
            ("127.0.0.50", "PTR", "crawl-50.googlebot.com"),
            ("crawl-50.googlebot.com", "A", "127.0.0.50"),
        ],
        Duration::from_millis(300),
    );
    let dns = checker(server.addr, Duration::from_secs(3));
    let requests: Vec<_> = (0..20)
        .map(|_| {
            let dns = dns.clone();
            tokio::spawn(async move { dns.verify(ip("127.0.0.50"), &google()).await })
        })
        .collect();
    for request in requests {
        assert_eq!(request.await.expect("request"), VERIFIED);
    }
    // One lookup: a PTR and an A query (UDP may have sent one twice while it waited).
    let mut asked = server.queries();
    asked.dedup();
    assert_eq!(
        asked,
        ["50.0.0.127.in-addr.arpa PTR", "crawl-50.googlebot.com A"]
    );
}

#[test]
fn verification_works_from_any_runtime() {
    let server = DnsServer::start(&[
        ("127.0.0.60", "PTR", "crawl-60.googlebot.com"),
        ("crawl-60.googlebot.com", "A", "127.0.0.60"),
        ("127.0.0.61", "PTR", "crawl-61.googlebot.com"),
        ("crawl-61.googlebot.com", "A", "127.0.0.61"),
    ]);
    let dns = checker(server.addr, Duration::from_secs(2));
    // Like pingora: one current-thread runtime per worker thread, each asking.
    let workers: Vec<_> = ["127.0.0.60", "127.0.0.61"]
        .into_iter()
        .map(|address| {
            let dns = dns.clone();
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("runtime");
                runtime.block_on(dns.verify(ip(address), &google()))
            })
        })
        .collect();
    for worker in workers {
        assert_eq!(worker.join().expect("worker"), VERIFIED);
    }
    // The checker outlives the runtimes that used it, and is dropped outside any.
    drop(dns);
}

#[tokio::test]
async fn without_a_resolver_the_systems_servers_are_used() {
    // Reads /etc/resolv.conf; asks nothing.
    let dns = ReverseDns::new(&DnsSettings::default());
    assert!(dns.is_ok(), "{:?}", dns.err());
}
