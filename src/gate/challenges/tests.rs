//! Who is challenged: page loads without a pass that answers the challenge; never verified
//! crawlers; what cannot show a page gets the ordinary answer; shadow challenges only count;
//! a challenge awaits behind the limits.

use crate::gate::tests::from_config;
use crate::gate::{Gate, OutcomeKind};
use crate::identity::{
    Bind, BotClaim, Category, ChallengeKind, Pass, PassId, Proof, Reach, Request, Traits,
    Verification,
};
use crate::policy::RouteFacts;
use http::{HeaderMap, Method};
use std::sync::Arc;

fn gate(tables: &str) -> Gate {
    from_config(tables)
}

/// What a request of `reach`, carrying `pass`, from a sender with `traits`, comes to.
async fn decide(gate: &Gate, reach: Reach, pass: Option<&Pass>, traits: &Traits) -> OutcomeKind {
    let headers = HeaderMap::new();
    let req = Request::new(&headers, None, "198.51.100.1".parse().ok(), None)
        .with_traits(traits)
        .with_pass(pass, reach);
    let route = RouteFacts {
        method: &Method::GET,
        host: None,
        path: "/",
    };
    gate.decide(&req, &route).await.outcome.kind()
}

fn pass(kind: ChallengeKind) -> Pass {
    Pass {
        id: PassId([1; 16]),
        kind,
        bind: Bind::Network,
        policy: 0,
        expires_s: u64::MAX,
    }
}

const CHALLENGE: &str =
    "[[policy]]\nname = \"browsers\"\naction = \"challenge\"\ndifficulty = 12\n";

#[tokio::test]
async fn page_loads_without_an_answering_pass_are_challenged() {
    let gate = gate(CHALLENGE);
    let none = Traits::default();
    assert_eq!(
        decide(&gate, Reach::Page, None, &none).await,
        OutcomeKind::Challenged
    );
    let strong = pass(ChallengeKind::Pow { difficulty: 16 });
    assert_eq!(
        decide(&gate, Reach::Page, Some(&strong), &none).await,
        OutcomeKind::Unlimited
    );
    let weak = pass(ChallengeKind::Refresh);
    assert_eq!(
        decide(&gate, Reach::Page, Some(&weak), &none).await,
        OutcomeKind::Challenged
    );
    assert_eq!(
        decide(&gate, Reach::NotAPage, None, &none).await,
        OutcomeKind::Denied
    );
}

#[tokio::test]
async fn verified_crawlers_are_never_challenged_and_claims_that_failed_are() {
    let gate = gate(CHALLENGE);
    let crawler = |verification| Traits {
        bot: Some(BotClaim {
            name: Arc::from("Googlebot"),
            operator: Arc::from("Google"),
            claimed: Category::SearchEngine,
            verification,
        }),
        ..Traits::default()
    };
    let verified = crawler(Verification::Verified(Proof::Ranges));
    assert_eq!(
        decide(&gate, Reach::Page, None, &verified).await,
        OutcomeKind::Unlimited
    );
    let spoofed = crawler(Verification::Failed);
    assert_eq!(
        decide(&gate, Reach::Page, None, &spoofed).await,
        OutcomeKind::Challenged
    );
}

#[tokio::test]
async fn shadow_challenges_only_count_and_the_limits_still_apply_behind_a_challenge() {
    let shadow = gate(&CHALLENGE.replace("action = ", "shadow = true\naction = "));
    let none = Traits::default();
    assert_eq!(
        decide(&shadow, Reach::Page, None, &none).await,
        OutcomeKind::Unlimited
    );
    let limited = gate(&format!(
        "{CHALLENGE}\n[[policy]]\nname = \"per-ip\"\ncapacity = 2\nrate = \"1/h\"\n"
    ));
    let kinds = [
        decide(&limited, Reach::Page, None, &none).await,
        decide(&limited, Reach::Page, None, &none).await,
        decide(&limited, Reach::Page, None, &none).await,
    ];
    assert_eq!(
        kinds,
        [
            OutcomeKind::Challenged,
            OutcomeKind::Challenged,
            OutcomeKind::Throttled
        ],
        "challenge page loads take from the address's own limits"
    );
}

#[tokio::test]
async fn on_limit_challenges_only_page_loads_of_a_dry_bucket_without_a_pass() {
    let gate = gate(
        "[[policy]]\nname = \"site\"\ncapacity = 1\nrate = \"1/h\"\non_limit = \"challenge\"\n",
    );
    let none = Traits::default();
    assert_eq!(
        decide(&gate, Reach::Page, None, &none).await,
        OutcomeKind::Allowed
    );
    assert_eq!(
        decide(&gate, Reach::Page, None, &none).await,
        OutcomeKind::Challenged
    );
    assert_eq!(
        decide(&gate, Reach::NotAPage, None, &none).await,
        OutcomeKind::Throttled
    );
    let holder = pass(ChallengeKind::Pow { difficulty: 16 });
    assert_eq!(
        decide(&gate, Reach::Page, Some(&holder), &none).await,
        OutcomeKind::Throttled,
        "a pass holder whose bucket is dry gets the ordinary 429"
    );
}
