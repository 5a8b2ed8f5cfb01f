//! The conditions on headers, User-Agent and networks, on requests built by hand.

use super::*;
use http::HeaderValue;

fn request(headers: &HeaderMap, ip: Option<&str>) -> Request<'static> {
    let headers: &'static HeaderMap = Box::leak(Box::new(headers.clone()));
    Request::new(headers, None, ip.map(|i| i.parse().unwrap()), None)
}

fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.append(*name, HeaderValue::from_static(value));
    }
    map
}

fn rule(name: &'static str, rule: HeaderRule) -> (HeaderName, HeaderRule) {
    (HeaderName::from_static(name), rule)
}

#[test]
fn present_and_absent_look_at_the_header_name_only() {
    let keyed = Conditions {
        headers: vec![rule("x-api-key", HeaderRule::Present)],
        ..Conditions::default()
    };
    let anonymous = Conditions {
        headers: vec![rule("x-api-key", HeaderRule::Absent)],
        ..Conditions::default()
    };
    let with = request(&headers(&[("X-Api-Key", "k")]), None);
    let without = request(&headers(&[("accept", "*/*")]), None);
    assert!(keyed.hold(&with) && !keyed.hold(&without));
    assert!(anonymous.hold(&without) && !anonymous.hold(&with));
}

#[test]
fn a_regex_matches_a_value_and_never_an_absent_header() {
    let html = Conditions {
        headers: vec![rule(
            "accept",
            HeaderRule::Matches(Regex::new("^text/html").unwrap()),
        )],
        ..Conditions::default()
    };
    assert!(html.hold(&request(&headers(&[("accept", "text/html,*/*")]), None)));
    assert!(!html.hold(&request(&headers(&[("accept", "application/json")]), None)));
    assert!(!html.hold(&request(&HeaderMap::new(), None)));
}

#[test]
fn the_user_agent_must_match_and_an_absent_one_never_does() {
    let bots = Conditions {
        user_agent: Some(UserAgent(Regex::new("(?i)bot").unwrap())),
        ..Conditions::default()
    };
    assert!(bots.hold(&request(&headers(&[("user-agent", "GoodBot/1.0")]), None)));
    assert!(!bots.hold(&request(&headers(&[("user-agent", "curl/8")]), None)));
    assert!(!bots.hold(&request(&HeaderMap::new(), None)));
}

#[test]
fn networks_match_the_canonical_client_address() {
    let ours = Conditions {
        networks: vec![
            crate::identity::parse_network("127.0.0.2/32").unwrap(),
            crate::identity::parse_network("2001:db8::/32").unwrap(),
        ],
        ..Conditions::default()
    };
    let none = HeaderMap::new();
    assert!(ours.hold(&request(&none, Some("127.0.0.2"))));
    assert!(ours.hold(&request(&none, Some("::ffff:127.0.0.2"))));
    assert!(ours.hold(&request(&none, Some("2001:db8::7"))));
    assert!(!ours.hold(&request(&none, Some("127.0.0.3"))));
    assert!(!ours.hold(&request(&none, None)));
}

#[test]
fn every_condition_must_hold_and_none_holds_always() {
    let both = Conditions {
        headers: vec![rule("x-debug", HeaderRule::Absent)],
        networks: vec![crate::identity::parse_network("10.0.0.0/8").unwrap()],
        ..Conditions::default()
    };
    assert!(both.hold(&request(&HeaderMap::new(), Some("10.1.2.3"))));
    assert!(!both.hold(&request(&headers(&[("x-debug", "1")]), Some("10.1.2.3"))));
    assert!(Conditions::default().hold(&request(&HeaderMap::new(), None)));
    assert!(Conditions::default().is_empty());
}
