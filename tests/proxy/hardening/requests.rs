//! Requests that tried to slip past the policies: path spellings that missed a route,
//! requests without a usable `Host`, and forwarding headers a client wrote itself.

use crate::common::{raw, Proxy, Upstream};

#[test]
fn route_policies_cannot_be_bypassed_by_spelling_the_path_differently() {
    let upstream = Upstream::start();
    let config = "[[policy]]\nname = \"captcha\"\ncapacity = 1\nrate = \"1/h\"\n\
                  match = { path_prefix = \"/sendCaptcha\" }\n\n\
                  [[policy]]\nname = \"login\"\ncapacity = 1\nrate = \"1/h\"\n\
                  match = { path_regex = \"^/login$\" }\n";
    let proxy = Proxy::start(&[&upstream.addr], config);
    assert_eq!(raw::get(proxy.port, "/sendCaptcha?to=1", ""), 200);
    for path in [
        "//sendCaptcha",
        "/%73endCaptcha",
        "/./sendCaptcha",
        "/a/../sendCaptcha",
        "/%2e/sendCaptcha?to=2",
    ] {
        assert_eq!(raw::get(proxy.port, path, ""), 429, "{path}");
    }
    assert_eq!(raw::get(proxy.port, "/login", ""), 200);
    assert_eq!(raw::get(proxy.port, "//login", ""), 429);
    assert_eq!(
        raw::get(proxy.port, "/x/..//login/.", ""),
        200,
        "/login/ is not ^/login$"
    );
    assert_eq!(
        upstream.served(),
        3,
        "no respelled request reached the backend"
    );
    // What the backend serves is the path the policies saw, with the query as sent.
    assert_eq!(raw::get(proxy.port, "/a//b/./../%63?q=%2F", ""), 200);
    assert_eq!(upstream.last_target().as_deref(), Some("/a/c?q=%2F"));
    // A path with no normal form is refused, with a problem body.
    let refused = raw::exchange(
        proxy.port,
        "GET /a%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(raw::status(&refused), 400, "{refused}");
    assert!(refused.contains("application/problem+json"), "{refused}");
    assert_eq!(upstream.served(), 4);
}

#[test]
fn http11_without_host_gets_400() {
    let upstream = Upstream::start();
    let config = "[[policy]]\nname = \"api\"\ncapacity = 1\nrate = \"1/h\"\n\
                  match = { host = \"api.example.com\" }\n";
    let proxy = Proxy::start(&[&upstream.addr], config);
    let response = raw::exchange(proxy.port, "GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
    assert_eq!(raw::status(&response), 400, "{response}");
    assert!(response.contains("Host header"), "{response}");
    assert_eq!(upstream.served(), 0);
    assert!(
        !proxy.log().contains("ERROR"),
        "a client error is not a proxy error"
    );
}

#[test]
fn http10_without_host_and_empty_or_invalid_hosts_get_400() {
    let upstream = Upstream::start();
    let config = "[[policy]]\nname = \"api\"\ncapacity = 1\nrate = \"1/h\"\n\
                  match = { host = \"api.example.com\" }\n";
    let proxy = Proxy::start_with_server(&[&upstream.addr], "h2c = true", config);
    let no_host = [
        "GET / HTTP/1.0\r\n\r\n",
        "GET / HTTP/1.0\r\nHost:\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: :80\r\nConnection: close\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: api.example.com x\r\nConnection: close\r\n\r\n",
    ];
    for head in no_host {
        let response = raw::exchange(proxy.port, head);
        assert_eq!(raw::status(&response), 400, "{head:?}: {response}");
        assert!(response.contains("application/problem+json"), "{response}");
    }
    assert_eq!(upstream.served(), 0);
    // HTTP/1.0 naming its host, in Host or in an absolute target: the host policy applies.
    let named = raw::exchange(
        proxy.port,
        "GET / HTTP/1.0\r\nHost: api.example.com\r\n\r\n",
    );
    assert_eq!(raw::status(&named), 200, "{named}");
    let absolute = raw::exchange(proxy.port, "GET http://api.example.com/ HTTP/1.0\r\n\r\n");
    assert_eq!(raw::status(&absolute), 429, "{absolute}");
    // HTTP/2 names its host in :authority.
    let h2 = |host: &str| {
        let client = reqwest::blocking::Client::builder()
            .http2_prior_knowledge()
            .resolve(host, ([127, 0, 0, 1], proxy.port).into())
            .build()
            .unwrap();
        let resp = client.get(format!("http://{host}:{}/", proxy.port)).send();
        let resp = resp.expect("an HTTP/2 answer");
        assert_eq!(resp.version(), reqwest::Version::HTTP_2);
        resp.status().as_u16()
    };
    assert_eq!(h2("localhost"), 200);
    assert_eq!(h2("api.example.com"), 429);
    // Pingora's pool may race its idle watcher when two requests reuse one backend connection
    // in a row ("failed to acquire reusable stream", then a fresh connection): not ours.
    let log = proxy.log();
    let errors: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("ERROR") && !l.contains("failed to acquire reusable stream"))
        .collect();
    assert!(
        errors.is_empty(),
        "a client error is not a proxy error: {errors:?}"
    );
}

#[test]
fn two_x_forwarded_for_lines_reach_the_upstream_merged() {
    let upstream = Upstream::start();
    let config = "[identity.ip]\ntrusted_proxies = [\"127.0.0.1/32\"]\n\n\
                  [[policy]]\nname = \"per-ip\"\ncapacity = 1\nrate = \"1/h\"\n";
    let proxy = Proxy::start(&[&upstream.addr], config);
    let lines = "X-Forwarded-For: 203.0.113.1\r\nX-Forwarded-For: 198.51.100.2, 192.0.2.3\r\n";
    assert_eq!(raw::get(proxy.port, "/", lines), 200);
    assert_eq!(
        upstream.last_header("x-forwarded-for"),
        vec!["203.0.113.1, 198.51.100.2, 192.0.2.3, 127.0.0.1".to_owned()]
    );
    // The limiter read the same list: its nearest untrusted hop is the caller.
    assert_eq!(
        raw::get(proxy.port, "/", "X-Forwarded-For: 192.0.2.3\r\n"),
        429
    );
}

#[test]
fn a_clients_forwarded_header_does_not_beat_the_load_balancers_x_forwarded_for() {
    let upstream = Upstream::start();
    // The test client plays the load balancer: trusted, it appends the client's address to
    // X-Forwarded-For and passes the client's own `Forwarded` through untouched.
    let config = "[identity.ip]\ntrusted_proxies = [\"127.0.0.1/32\"]\n\n\
                  [[policy]]\nname = \"per-ip\"\ncapacity = 2\nrate = \"1/h\"\n";
    let proxy = Proxy::start(&[&upstream.addr], config);
    let attacker = "203.0.113.5";
    let statuses: Vec<u16> = (0..6)
        .map(|i| {
            let forwarded = format!("for=198.51.100.{i}");
            let headers = [("x-forwarded-for", attacker), ("forwarded", &forwarded)];
            proxy.get("/", &headers).status().as_u16()
        })
        .collect();
    assert_eq!(
        statuses,
        [200, 200, 429, 429, 429, 429],
        "no fresh bucket per Forwarded"
    );
    // `Forwarded: for=<victim>` drained the attacker's own bucket, not the victim's.
    for _ in 0..3 {
        let headers = [
            ("x-forwarded-for", attacker),
            ("forwarded", "for=192.0.2.77"),
        ];
        assert_eq!(proxy.get("/", &headers).status(), 429);
    }
    let victim = [("x-forwarded-for", "192.0.2.77")];
    assert_eq!(proxy.get("/", &victim).status(), 200);
    assert_eq!(proxy.get("/", &victim).status(), 200);
    assert_eq!(proxy.get("/", &victim).status(), 429);
}
