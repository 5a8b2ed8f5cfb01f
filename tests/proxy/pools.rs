//! Health-checked route pools: active checks take a failing backend out and bring it back,
//! passive ejection stops a hanging one from costing requests and takes out one that cuts its
//! responses short, routes pick pools by path and host, a `hash` pool keeps a caller on one
//! backend, `/readyz` fails when a pool has no backend up, and `floodgate_backend_up` shows it
//! all.

use crate::common;

use common::scripted::Scripted;
use common::wait::eventually;
use common::{free_port, header, Health, Proxy, Upstream};
use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

/// The upstream that answered `path`.
fn served_by(proxy: &Proxy, path: &str, headers: &[(&str, &str)]) -> String {
    let resp = proxy.get(path, headers);
    assert_eq!(resp.status(), 200, "{path}");
    header(&resp, "x-served-by")
}

fn backend_up(proxy: &Proxy, pool: &str, backend: &str) -> f64 {
    proxy.metric(&format!(
        "floodgate_backend_up{{backend=\"{backend}\",pool=\"{pool}\"}}"
    ))
}

#[test]
fn a_backend_failing_its_health_check_leaves_the_rotation_and_returns() {
    let (a, b) = (Upstream::start(), Upstream::start());
    // interval × unhealthy_after = 400 ms; the probe timeout stays at its 1 s default so a
    // busy machine does not fail the healthy backend.
    let config = "[upstream.health]\npath = \"/healthz\"\ninterval = \"200ms\"\n\
                  unhealthy_after = 2\nhealthy_after = 2\n";
    let proxy = Proxy::start(&[&a.addr, &b.addr], config);
    assert!(eventually(Duration::from_secs(5), || b.probes() >= 1));
    assert_eq!(backend_up(&proxy, "default", &b.addr), 1.0);

    b.set_health(Health::Fail);
    let failing = Instant::now();
    assert!(eventually(Duration::from_secs(3), || {
        backend_up(&proxy, "default", &b.addr) == 0.0
    }));
    // Two failed probes (interval × unhealthy_after = 400 ms), the phase of the first probe (up
    // to one interval), the gauge's 100 ms tick, and a margin for a busy machine.
    let took = failing.elapsed();
    assert!(
        took < Duration::from_millis(400 + 200 + 100 + 300),
        "{took:?}"
    );
    let served: BTreeSet<String> = (0..10).map(|_| served_by(&proxy, "/", &[])).collect();
    assert_eq!(
        served,
        BTreeSet::from([a.addr.clone()]),
        "b left the rotation"
    );
    assert_eq!(backend_up(&proxy, "default", &a.addr), 1.0);

    b.set_health(Health::Ok);
    assert!(eventually(Duration::from_secs(3), || {
        backend_up(&proxy, "default", &b.addr) == 1.0
    }));
    let served: BTreeSet<String> = (0..10).map(|_| served_by(&proxy, "/", &[])).collect();
    assert_eq!(served.len(), 2, "b is back: {served:?}");
}

#[test]
fn a_hanging_backend_stops_costing_requests_once_ejected() {
    let (a, b) = (Upstream::start(), Upstream::start());
    b.set_hang(true);
    // No active checks: only passive ejection can take b out.
    let config = "read_timeout = \"300ms\"\n\n[upstream.health]\nactive = false\n\
                  eject_after = 2\neject_for = \"60s\"\n";
    let proxy = Proxy::start(&[&a.addr, &b.addr], config);
    // A fresh connection per request: the proxy closes the client's connection after a 504.
    let client = reqwest::blocking::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let mut timeouts = 0;
    let mut slow_after_ejection = 0;
    for _ in 0..12 {
        let started = Instant::now();
        let status = client.get(proxy.url("/")).send().unwrap().status();
        if status == 504 {
            timeouts += 1;
        } else {
            assert_eq!(status, 200);
            if timeouts == 2 && started.elapsed() >= Duration::from_millis(300) {
                slow_after_ejection += 1;
            }
        }
    }
    assert_eq!(
        timeouts, 2,
        "only eject_after requests paid the read timeout"
    );
    assert_eq!(slow_after_ejection, 0);
    assert_eq!(a.served(), 10);
    assert!(eventually(Duration::from_secs(2), || {
        backend_up(&proxy, "default", &b.addr) == 0.0
    }));
    assert!(proxy
        .log()
        .contains("ejected for 60s after 2 failed requests"));
}

#[test]
fn a_backend_cutting_its_responses_short_is_ejected() {
    let (cutter, a) = (Scripted::start(), Upstream::start());
    let config = "[upstream.health]\nactive = false\neject_after = 2\neject_for = \"60s\"\n";
    let proxy = Proxy::start(&[&cutter.addr, &a.addr], config);
    let client = reqwest::blocking::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    // The cutter sends a 200 and cuts its body: the client's transfer fails.
    let cut = (0..10)
        .filter(|_| {
            let resp = client.get(proxy.url("/cut")).send().unwrap();
            assert_eq!(resp.status(), 200);
            resp.bytes().is_err()
        })
        .count();
    assert_eq!(cut, 2, "only eject_after responses were cut short");
    assert_eq!(a.served(), 8);
    assert!(eventually(Duration::from_secs(2), || {
        backend_up(&proxy, "default", &cutter.addr) == 0.0
    }));
    assert!(proxy
        .log()
        .contains("ejected for 60s after 2 failed requests"));
}

#[test]
fn requests_are_routed_to_pools_by_path_and_by_host() {
    let (fallback, api, assets) = (Upstream::start(), Upstream::start(), Upstream::start());
    // The api pool's first backend is gone: connections to it fail over within the pool.
    let dead = format!("127.0.0.1:{}", free_port());
    let config = format!(
        "[upstream.pools.api]\nbackends = [\"{dead}\", \"{}\"]\nhost = \"api.internal\"\n\n\
         [upstream.pools.assets]\nbackends = [\"{}\"]\n\n\
         [[route]]\nmatch = {{ path_prefix = \"/api/\" }}\npool = \"api\"\n\n\
         [[route]]\nmatch = {{ host = \"static.example.com\" }}\npool = \"assets\"\n",
        api.addr, assets.addr
    );
    let proxy = Proxy::start(&[&fallback.addr], &config);
    for _ in 0..4 {
        let resp = proxy.get("/api/users", &[]);
        assert_eq!(resp.status(), 200);
        assert_eq!(header(&resp, "x-served-by"), api.addr);
        assert_eq!(
            header(&resp, "x-seen-host"),
            "api.internal",
            "the pool's Host"
        );
    }
    let by_host = proxy.get("/api-docs", &[("host", "Static.Example.com:8080")]);
    assert_eq!(header(&by_host, "x-served-by"), assets.addr);
    assert_eq!(header(&by_host, "x-seen-host"), "Static.Example.com:8080");
    assert_eq!(served_by(&proxy, "/other", &[]), fallback.addr);
    assert_eq!(
        (api.served(), assets.served(), fallback.served()),
        (4, 1, 1)
    );
    for (pool, backend) in [("default", &fallback.addr), ("api", &api.addr)] {
        assert_eq!(backend_up(&proxy, pool, backend), 1.0, "{pool} {backend}");
    }
}

#[test]
fn a_hash_pool_keeps_each_caller_on_one_backend() {
    let upstreams: Vec<Upstream> = (0..3).map(|_| Upstream::start()).collect();
    let list: Vec<String> = upstreams
        .iter()
        .map(|u| format!("\"{}\"", u.addr))
        .collect();
    let pool = format!(
        "[upstream.pools.sticky]\nbackends = [{}]\nbalance = \"hash\"\n\n\
         [[route]]\npool = \"sticky\"\n",
        list.join(", ")
    );
    let policy = "[identity]\nsources = [\"header:x-api-key\"]\n\n\
                  [[policy]]\nname = \"per-key\"\ncapacity = 1000\nrate = \"1000/s\"\n";
    let proxy = Proxy::start(&[&upstreams[0].addr], &format!("{pool}\n{policy}"));
    let mut chosen = HashMap::new();
    for caller in 0..12 {
        let key = format!("caller-{caller}");
        let served: BTreeSet<String> = (0..5)
            .map(|_| served_by(&proxy, "/", &[("x-api-key", &key)]))
            .collect();
        assert_eq!(served.len(), 1, "{key} moved: {served:?}");
        chosen.insert(key, served.into_iter().next());
    }
    let spread: BTreeSet<_> = chosen.values().collect();
    assert!(
        spread.len() >= 2,
        "callers spread over the pool: {spread:?}"
    );

    // Without a deciding policy, the client address is the key: one client, one backend.
    let by_address = Proxy::start(&[&upstreams[0].addr], &pool);
    let served: BTreeSet<String> = (0..8)
        .map(|i| served_by(&by_address, "/", &[("x-api-key", &i.to_string())]))
        .collect();
    assert_eq!(served.len(), 1, "{served:?}");
}

#[test]
fn a_hash_pool_keeps_callers_on_one_backend_whichever_policy_decides() {
    let upstreams: Vec<Upstream> = (0..3).map(|_| Upstream::start()).collect();
    let list: Vec<String> = upstreams
        .iter()
        .map(|u| format!("\"{}\"", u.addr))
        .collect();
    // "everyone" (one bucket for all) is listed first and, once the callers have drained it,
    // is the most restrictive policy: the caller must not change with it.
    let config = format!(
        "[upstream.pools.sticky]\nbackends = [{}]\nbalance = \"hash\"\n\n\
         [[route]]\npool = \"sticky\"\n\n\
         [identity]\nsources = [\"header:x-api-key\"]\n\n\
         [[policy]]\nname = \"everyone\"\ncapacity = 130\nrate = \"1/h\"\n\
         sources = [\"const:all\"]\n\n\
         [[policy]]\nname = \"per-key\"\ncapacity = 100\nrate = \"1/h\"\n",
        list.join(", ")
    );
    let proxy = Proxy::start(&[&upstreams[0].addr], &config);
    let mut served: HashMap<String, BTreeSet<String>> = HashMap::new();
    let mut deciders = BTreeSet::new();
    for round in 0..8 {
        for caller in 0..12 {
            let key = format!("caller-{caller}");
            let resp = proxy.get("/", &[("x-api-key", &key)]);
            assert_eq!(resp.status(), 200, "round {round}");
            deciders.insert(header(&resp, "ratelimit-policy"));
            let by = header(&resp, "x-served-by");
            served.entry(key).or_default().insert(by);
        }
    }
    assert!(
        deciders.iter().any(|p| p.contains("everyone"))
            && deciders.iter().any(|p| p.contains("per-key")),
        "both policies decided in turn: {deciders:?}"
    );
    for (key, backends) in &served {
        assert_eq!(backends.len(), 1, "{key} moved: {backends:?}");
    }
    let spread: BTreeSet<_> = served.values().flatten().collect();
    assert!(
        spread.len() >= 2,
        "callers spread over the pool: {spread:?}"
    );
}

#[test]
fn readyz_is_503_while_every_backend_of_a_pool_is_down() {
    let backend = Upstream::start();
    let config = "[upstream.health]\npath = \"/healthz\"\ninterval = \"100ms\"\n\
                  unhealthy_after = 1\nhealthy_after = 1\n";
    let proxy = Proxy::start(&[&backend.addr], config);
    let ready = |proxy: &Proxy| proxy.admin("/readyz").map(|r| r.status().as_u16());
    assert!(eventually(Duration::from_secs(5), || ready(&proxy).ok() == Some(200)));

    backend.set_health(Health::Fail);
    assert!(eventually(Duration::from_secs(5), || ready(&proxy).ok() == Some(503)));
    let body = proxy.admin("/readyz").unwrap().text().unwrap();
    assert!(body.contains("no backend up in pool default"), "{body}");
    assert!(eventually(Duration::from_secs(2), || {
        backend_up(&proxy, "default", &backend.addr) == 0.0
    }));
    // Every backend down: requests still go to the pool's backends rather than nowhere.
    assert_eq!(proxy.get("/", &[]).status(), 200);

    backend.set_health(Health::Ok);
    assert!(eventually(Duration::from_secs(5), || ready(&proxy).ok() == Some(200)));
    assert!(eventually(Duration::from_secs(2), || {
        backend_up(&proxy, "default", &backend.addr) == 1.0
    }));
}

#[test]
fn a_hanging_health_check_counts_as_a_failure() {
    let (a, b) = (Upstream::start(), Upstream::start());
    let config =
        "[upstream.health]\npath = \"/healthz\"\ninterval = \"100ms\"\ntimeout = \"200ms\"\n\
                  unhealthy_after = 1\nhealthy_after = 1\n";
    let proxy = Proxy::start(&[&a.addr, &b.addr], config);
    b.set_health(Health::Hang);
    assert!(eventually(Duration::from_secs(5), || {
        backend_up(&proxy, "default", &b.addr) == 0.0
    }));
    let served: BTreeSet<String> = (0..6).map(|_| served_by(&proxy, "/", &[])).collect();
    assert_eq!(served, BTreeSet::from([a.addr.clone()]));
}

#[test]
fn a_reload_adds_a_pool_with_its_route_and_its_checks() {
    let (fallback, api) = (Upstream::start(), Upstream::start());
    let proxy = Proxy::start(&[&fallback.addr], "");
    assert_eq!(served_by(&proxy, "/api/x", &[]), fallback.addr);
    proxy.rewrite_config(|text| {
        format!(
            "{text}\n[upstream.pools.api]\nbackends = [\"{}\"]\n\
             health = {{ path = \"/healthz\", interval = \"100ms\" }}\n\n\
             [[route]]\nmatch = {{ path_prefix = \"/api/\" }}\npool = \"api\"\n",
            api.addr
        )
    });
    proxy.signal("HUP");
    assert!(eventually(Duration::from_secs(5), || {
        served_by(&proxy, "/api/x", &[]) == api.addr
    }));
    assert!(eventually(Duration::from_secs(5), || api.probes() >= 2));
    // The gauge is refreshed on the health service's tick, not at each probe.
    assert!(eventually(Duration::from_secs(2), || {
        backend_up(&proxy, "api", &api.addr) == 1.0
    }));
    assert_eq!(fallback.probes(), 0, "the default pool has no health table");
}
