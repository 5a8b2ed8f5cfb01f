//! The order of the gate's answers: the deny-list, then `deny` policies, then `allow`
//! policies, then the limits; shadow rules only counted; conditions checked on the index's
//! candidates.

use crate::gate::tests::from_config;
use crate::gate::{Gate, OutcomeKind};
use crate::identity::Request;
use crate::policy::RouteFacts;
use http::{HeaderMap, HeaderValue, Method};

fn gate(tables: &str) -> Gate {
    from_config(&format!(
        "[access]\ndeny = [\"cidr:192.0.2.66/32\"]\n{tables}"
    ))
}

async fn decide(gate: &Gate, ip: &str, ua: Option<&'static str>) -> OutcomeKind {
    let mut headers = HeaderMap::new();
    if let Some(ua) = ua {
        headers.insert("user-agent", HeaderValue::from_static(ua));
    }
    let req = Request::new(&headers, None, ip.parse().ok(), None);
    let route = RouteFacts {
        method: &Method::GET,
        host: Some("api.example.com"),
        path: "/",
    };
    gate.decide(&req, &route).await.outcome.kind()
}

const RULES: &str = "
[[policy]]
name = \"office\"
action = \"allow\"
match = { networks = [\"192.0.2.0/24\"] }

[[policy]]
name = \"no-bots\"
action = \"deny\"
match = { user_agent = \"bot\" }

[[policy]]
name = \"one\"
capacity = 1
rate = \"1/h\"
";

#[tokio::test]
async fn the_deny_list_then_deny_then_allow_then_limits() {
    let gate = gate(RULES);
    assert_eq!(
        decide(&gate, "192.0.2.66", Some("bot")).await,
        OutcomeKind::Denylisted
    );
    assert_eq!(
        decide(&gate, "192.0.2.7", Some("bot")).await,
        OutcomeKind::Denied
    );
    for _ in 0..3 {
        assert_eq!(
            decide(&gate, "192.0.2.7", None).await,
            OutcomeKind::AllowedByRule
        );
    }
    assert_eq!(
        decide(&gate, "198.51.100.1", None).await,
        OutcomeKind::Allowed
    );
    assert_eq!(
        decide(&gate, "198.51.100.1", None).await,
        OutcomeKind::Throttled
    );
}

#[tokio::test]
async fn shadow_rules_only_count() {
    let gate = gate(&RULES.replace("action = ", "shadow = true\naction = "));
    assert_eq!(
        decide(&gate, "192.0.2.7", Some("bot")).await,
        OutcomeKind::Allowed
    );
    assert_eq!(
        decide(&gate, "192.0.2.7", Some("bot")).await,
        OutcomeKind::Throttled
    );
}

#[tokio::test]
async fn conditions_hold_on_the_index_candidates_too() {
    let hosts: String = (0..20)
        .map(|i| {
            format!("[[policy]]\nname = \"h{i}\"\naction = \"deny\"\nmatch = {{ host = \"h{i}.example.com\" }}\n")
        })
        .collect();
    let gate = gate(&format!(
        "{hosts}\n[[policy]]\nname = \"bots\"\naction = \"deny\"\n\
         match = {{ host = \"api.example.com\", user_agent = \"bot\" }}\n"
    ));
    assert_eq!(
        decide(&gate, "198.51.100.1", Some("a bot")).await,
        OutcomeKind::Denied
    );
    assert_eq!(
        decide(&gate, "198.51.100.1", Some("a person")).await,
        OutcomeKind::Unlimited
    );
}
