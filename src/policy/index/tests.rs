use super::*;
use http::Method;
use proptest::prelude::*;
use regex::Regex;

const HOSTS: [&str; 3] = ["a.example", "B.example", "c.example"];
const PREFIXES: [&str; 5] = ["/", "/api", "/api/", "/api/v1", "/s"];
const REGEXES: [&str; 6] = [
    "^/api/v[0-9]+/users",
    "\\.png$",
    "^/s",
    "^/api/v1?",
    "^/x|^/s",
    "^/api/v1.*",
];
const METHODS: [Method; 3] = [Method::GET, Method::POST, Method::DELETE];
const PATHS: [&str; 7] = [
    "/",
    "/api",
    "/api/v1/users/7",
    "/api/v2/users",
    "/s/x.png",
    "/other",
    "/apix",
];

/// A route from four choices (`None` for each condition it does not have).
fn route(
    host: Option<usize>,
    prefix: Option<usize>,
    regex: Option<usize>,
    methods: Vec<usize>,
) -> Route {
    Route {
        host: host.map(|i| HOSTS[i].to_owned()),
        path_prefix: prefix.map(|i| PREFIXES[i].to_owned()),
        path_regex: regex.map(|i| Regex::new(REGEXES[i]).unwrap()),
        methods: methods.into_iter().map(|i| METHODS[i].clone()).collect(),
    }
}

fn any_route() -> impl Strategy<Value = Route> {
    (
        proptest::option::of(0..HOSTS.len()),
        proptest::option::of(0..PREFIXES.len()),
        proptest::option::of(0..REGEXES.len()),
        proptest::collection::vec(0..METHODS.len(), 0..3),
    )
        .prop_map(|(h, p, r, m)| route(h, p, r, m))
}

proptest! {
    #[test]
    fn the_index_finds_exactly_the_routes_trying_each_finds_in_their_order(
        routes in proptest::collection::vec(any_route(), 0..60),
        host in proptest::option::of(0..HOSTS.len()),
        path in 0..PATHS.len(),
        method in 0..METHODS.len(),
    ) {
        let lower = host.map(|i| HOSTS[i].to_ascii_lowercase());
        let facts = RouteFacts { method: &METHODS[method], host: lower.as_deref(), path: PATHS[path] };
        let linear: Vec<usize> = (0..routes.len()).filter(|&i| routes[i].matches(&facts)).collect();
        let index = RouteIndex::new(routes);
        prop_assert_eq!(index.matching(&facts).to_vec(), linear.clone());
        prop_assert_eq!(index.first(&facts), linear.first().copied());
    }
}

#[test]
fn an_anchored_regex_is_filed_by_the_literal_it_requires() {
    assert_eq!(
        literal_prefix("^/api/v[0-9]+/users").as_deref(),
        Some("/api/v")
    );
    assert_eq!(literal_prefix("^/api/v1?").as_deref(), Some("/api/v"));
    assert_eq!(literal_prefix("^/r7/x$").as_deref(), Some("/r7/x"));
    assert_eq!(literal_prefix("^/x|^/s"), None);
    assert_eq!(literal_prefix("\\.png$"), None);
    assert_eq!(literal_prefix("^[a-z]"), None);
}
