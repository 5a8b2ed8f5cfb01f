//! Every decision is named alike by each reader of the record: the access log's word, the
//! decision record's JSON, the metric's label (the span's: trace/span.rs).

use super::*;
use crate::explain::{kept_path, Reference};
use crate::telemetry::Metrics;
use smallvec::SmallVec;

/// A decision record of `decision`, with nothing else known.
fn explained(decision: RequestDecision) -> crate::explain::Record {
    crate::explain::Record {
        reference: Reference::parse("0123456789abcdef0123456789abcdef").unwrap(),
        at_ms: 1,
        method: http::Method::GET,
        path: kept_path("/"),
        route: None,
        steps: SmallVec::new(),
        caller: None,
        bucket: None,
        bot: None,
        ja4: None,
        h2fp: None,
        score: None,
        pass: None,
        proof: None,
        privacy_pass: false,
        robots: None,
        overload: None,
        blocked_by: None,
        decision: Some(decision),
        status: 200,
    }
}

#[test]
fn each_decision_has_one_word_in_the_log_the_record_and_the_metric() {
    let metrics = Metrics::new();
    let mut words = std::collections::BTreeSet::new();
    for &decision in RequestDecision::ALL {
        let record = Record::answered(decision);
        let word = record.decision_word();
        assert!(words.insert(word), "{word} names two decisions");
        assert_eq!(explained(decision).to_json("i")["decision"], word);
        metrics.decisions.inc(decision);
        let series = format!("floodgate_decisions_total{{decision=\"{word}\"}} 1");
        assert!(metrics.render().contains(&series), "{series}");
    }
    assert_eq!(Record::default().decision_word(), "", "no decision yet");
}

#[test]
fn shedding_amends_the_decision_and_says_what_overload_did() {
    let mut record = Record::answered(RequestDecision::PassIssued);
    record.shed(Priority::Low, false);
    assert_eq!(record.decision(), Some(RequestDecision::Shed));
    let overload = record.take_for_keeping().overload.unwrap();
    assert_eq!(overload.admission, Admittance::Shed);

    let mut record = Record::answered(RequestDecision::Allowed);
    record.challenged_by_overload(Priority::Normal, "on-overload".into());
    assert_eq!(record.decision(), Some(RequestDecision::Challenged));
    assert_eq!(record.policy().map(|p| &**p), Some("on-overload"));
}

#[test]
fn only_a_solution_at_the_challenges_path_is_one() {
    assert!(Record::answered(RequestDecision::PassIssued).is_solution());
    assert!(Record::answered(RequestDecision::SolutionRefused).is_solution());
    assert!(!Record::answered(RequestDecision::Throttled).is_solution());
    assert!(Record::answered(RequestDecision::Throttled)
        .offender()
        .is_none());
}
