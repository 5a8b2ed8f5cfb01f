//! What Floodgate, as a front proxy, adds and removes: forwarding headers (a client's replaced,
//! a trusted proxy's kept), `Via`, request ids both ways (a client's own apart), no hop-by-hop response headers,
//! `Connection: close` on answers that close, no `RateLimit` on publicly cacheable responses,
//! and pipelined requests answered in order.

use crate::common;

use common::scripted::Scripted;
use common::{free_port, raw, Proxy, Upstream};
use std::io::Write;

/// A header's value in a raw response text (name case-insensitive).
fn header<'a>(response: &'a str, name: &str) -> Option<&'a str> {
    let head = response.split("\r\n\r\n").next()?;
    head.lines().find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

fn is_generated_id(id: &str) -> bool {
    id.len() == 35 && id.starts_with("fg-") && id[3..].bytes().all(|b| b.is_ascii_hexdigit())
}

#[test]
fn the_upstream_sees_forwarding_headers_and_a_request_id_the_client_gets_back() {
    let upstream = Upstream::start();
    let proxy = Proxy::start_with_server(&[&upstream.addr], "via = true", "");
    let host = format!("127.0.0.1:{}", proxy.port);
    let spoofed = [
        ("x-forwarded-proto", "https"),
        ("x-forwarded-host", "evil.example"),
        ("forwarded", "for=203.0.113.9;proto=https"),
    ];
    let answer = proxy.get("/a", &spoofed);
    assert_eq!(answer.status(), 200);
    assert_eq!(upstream.last_header("x-forwarded-proto"), ["http"]);
    assert_eq!(upstream.last_header("x-forwarded-host"), [host.as_str()]);
    assert_eq!(
        upstream.last_header("forwarded"),
        [format!("for=127.0.0.1;host=\"{host}\";proto=http")]
    );
    assert_eq!(upstream.last_header("x-forwarded-for"), ["127.0.0.1"]);
    assert_eq!(upstream.last_header("via"), ["1.1 floodgate"]);
    let sent = upstream.last_header("x-request-id");
    assert_eq!(sent.len(), 1);
    assert!(is_generated_id(&sent[0]), "{sent:?}");
    assert_eq!(answer.headers()["x-request-id"], sent[0].as_str());
    assert_eq!(answer.headers()["via"], "1.1 floodgate");

    // A client's own id is never kept: the backend gets it apart, as it came.
    for own in [
        "order-42:retry.1",
        "two words",
        "semi;colon",
        &"x".repeat(129),
    ] {
        let answer = proxy.get("/c", &[("x-request-id", own)]);
        let id = answer.headers()["x-request-id"]
            .to_str()
            .expect("text")
            .to_owned();
        assert!(is_generated_id(&id), "{own:?} became {id:?}");
        assert_eq!(upstream.last_header("x-request-id"), [id]);
        assert_eq!(upstream.last_header("x-client-request-id"), [own]);
    }
}

#[test]
fn a_trusted_proxys_forwarding_headers_are_kept_and_extended() {
    let upstream = Upstream::start();
    let trusted = "[identity.ip]\ntrusted_proxies = [\"127.0.0.1/32\"]";
    let proxy = Proxy::start_with_server(
        &[&upstream.addr],
        "request_id_header = \"x-trace\"",
        trusted,
    );
    let sent = [
        ("x-forwarded-proto", "https"),
        ("x-forwarded-host", "shop.example"),
        ("forwarded", "for=203.0.113.9;proto=https"),
        ("x-trace", "lb-7 req 99"),
    ];
    let answer = proxy.get("/", &sent);
    assert_eq!(upstream.last_header("x-forwarded-proto"), ["https"]);
    assert_eq!(upstream.last_header("x-forwarded-host"), ["shop.example"]);
    let forwarded = &upstream.last_header("forwarded")[0];
    assert!(
        forwarded.starts_with("for=203.0.113.9;proto=https, for=127.0.0.1;"),
        "{forwarded}"
    );
    // The load balancer's id is trusted as it is, in the configured header.
    assert_eq!(upstream.last_header("x-trace"), ["lb-7 req 99"]);
    assert_eq!(answer.headers()["x-trace"], "lb-7 req 99");
    assert!(upstream.last_header("x-client-request-id").is_empty());
    // But never one in Floodgate's own form: only Floodgate makes those.
    let forged = format!("fg-{}", "0".repeat(32));
    let answer = proxy.get("/", &[("x-trace", forged.as_str())]);
    let id = answer.headers()["x-trace"].to_str().expect("text");
    assert!(is_generated_id(id) && id != forged, "{id}");
    assert_eq!(
        upstream.last_header("x-client-request-id"),
        [forged.as_str()]
    );
    assert!(upstream.last_header("x-request-id").is_empty());
    assert!(
        upstream.last_header("via").is_empty(),
        "Via is off by default"
    );
}

#[test]
fn hop_by_hop_headers_never_reach_the_client_and_closing_answers_say_close() {
    let backend = Scripted::start();
    let limits = "[[policy]]\nname = \"p\"\ncapacity = 2\nrate = \"1/h\"";
    let proxy = Proxy::start(&[&backend.addr], limits);
    assert_eq!(raw::get(proxy.port, "/hop", ""), 200);
    let answer = raw::exchange(
        proxy.port,
        "GET /hop HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
    );
    for hop in [
        "x-hop-secret",
        "keep-alive",
        "upgrade",
        "proxy-authenticate",
        "proxy-connection",
        "trailer",
    ] {
        assert_eq!(header(&answer, hop), None, "{hop} in\n{answer}");
    }
    assert_eq!(header(&answer, "connection"), Some("close"));
    assert!(header(&answer, "x-request-id").is_some_and(is_generated_id));

    // The bucket is empty now: the refusal carries the request id too.
    let refused = raw::exchange(
        proxy.port,
        "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(raw::status(&refused), 429, "{refused}");
    assert!(header(&refused, "x-request-id").is_some_and(is_generated_id));

    // A backend that is gone: 502, and the connection closes, as the answer says.
    let gone = Proxy::start(&[&format!("127.0.0.1:{}", free_port())], "");
    let mut stream = raw::connect(gone.port);
    stream
        .write_all(b"GET / HTTP/1.1\r\nHost: a\r\nx-request-id: ask-1\r\n\r\n")
        .expect("send");
    let answer = raw::read_response(&mut stream);
    assert_eq!(raw::status(&answer), 502, "{answer}");
    assert_eq!(header(&answer, "connection"), Some("close"), "{answer}");
    assert!(header(&answer, "x-request-id").is_some_and(is_generated_id));
    assert_eq!(
        raw::read_response(&mut stream),
        "",
        "closed after the answer"
    );
}

#[test]
fn http1_header_names_go_lowercase_unless_their_case_is_kept() {
    let backend = Scripted::start();
    let ask = "GET /head HTTP/1.1\r\nHost: a\r\nX-Mixed-Case: 1\r\nConnection: close\r\n\r\n";
    for (server, kept) in [("", false), ("preserve_header_case = true", true)] {
        let proxy = Proxy::start_with_server(&[&backend.addr], server, "");
        let answer = raw::exchange(proxy.port, ask);
        let (head, seen) = answer.split_once("\r\n\r\n").expect("a whole answer");
        // The status line's reason and every value pass unchanged either way.
        assert!(head.starts_with("HTTP/1.1 200 Fine\r\n"), "{answer}");
        assert!(seen.starts_with("GET /head HTTP/1.1\r\n"), "{seen}");
        let (request_name, response_name) = match kept {
            true => ("X-Mixed-Case", "X-Mixed-Case"),
            false => ("x-mixed-case", "x-mixed-case"),
        };
        assert!(
            seen.contains(&format!("\r\n{request_name}: 1\r\n")),
            "{seen}"
        );
        assert!(
            head.contains(&format!("\r\n{response_name}: yes\r\n")),
            "{head}"
        );
        // The headers the proxy adds arrive with the others, whatever the case rule.
        assert!(
            header(seen, "x-forwarded-for") == Some("127.0.0.1"),
            "{seen}"
        );
        assert!(
            header(head, "x-request-id").is_some_and(is_generated_id),
            "{head}"
        );
    }
}

#[test]
fn publicly_cacheable_responses_carry_no_ratelimit_headers() {
    let backend = Scripted::start();
    let limits = "[[policy]]\nname = \"p\"\ncapacity = 100\nrate = \"1/s\"";
    let proxy = Proxy::start(&[&backend.addr], limits);
    let private = proxy.get("/", &[]);
    assert!(private.headers().contains_key("ratelimit"));
    assert!(private.headers().contains_key("ratelimit-policy"));
    let public = proxy.get("/public", &[]);
    assert_eq!(public.status(), 200, "{}", proxy.log());
    assert!(!public.headers().contains_key("ratelimit"));
    assert!(!public.headers().contains_key("ratelimit-policy"));
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], "");
    let mut stream = raw::connect(proxy.port);
    // Three requests in one write, before reading anything.
    let pipelined = "GET /1 HTTP/1.1\r\nHost: one\r\n\r\n\
                     GET /2 HTTP/1.1\r\nHost: two\r\n\r\n\
                     GET /3 HTTP/1.1\r\nHost: three\r\nConnection: close\r\n\r\n";
    stream.write_all(pipelined.as_bytes()).expect("send");
    for host in ["one", "two", "three"] {
        let answer = raw::read_response(&mut stream);
        assert_eq!(raw::status(&answer), 200, "{answer}");
        assert_eq!(header(&answer, "x-seen-host"), Some(host), "{answer}");
    }
    assert_eq!(upstream.served(), 3);
}
