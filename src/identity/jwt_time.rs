//! A verified token's time window: its `exp` not passed and its `nbf`, when given, reached,
//! each give or take the leeway, at a time the verifier's clock gives (jsonwebtoken would read
//! the system's itself, so it is told not to check them).

use jsonwebtoken::errors::ErrorKind;
use serde_json::{Map, Value};

/// Whether `claims` hold at `now_s` (Unix seconds) with `leeway_s` either way: `exp` is
/// required (a whole number, as jsonwebtoken's own check requires), `nbf` optional; else
/// what jsonwebtoken would have called it.
pub(super) fn in_time(
    claims: &Map<String, Value>,
    now_s: u64,
    leeway_s: u64,
) -> Result<(), ErrorKind> {
    let seconds = |name: &str| match claims.get(name) {
        None => Ok(None),
        Some(value) => value
            .as_u64()
            .map(Some)
            .ok_or_else(|| ErrorKind::InvalidClaimFormat(name.to_owned())),
    };
    let exp = seconds("exp")?.ok_or_else(|| ErrorKind::MissingRequiredClaim("exp".into()))?;
    if exp.saturating_add(leeway_s) < now_s {
        return Err(ErrorKind::ExpiredSignature);
    }
    match seconds("nbf")? {
        Some(nbf) if nbf > now_s.saturating_add(leeway_s) => Err(ErrorKind::ImmatureSignature),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NOW: u64 = 1_700_000_000;

    fn claims(value: Value) -> Map<String, Value> {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn exp_holds_through_the_leeway_and_not_a_second_more() {
        let token = claims(json!({"exp": NOW}));
        assert!(in_time(&token, NOW, 0).is_ok());
        assert!(in_time(&token, NOW + 1, 0).is_err());
        assert!(in_time(&token, NOW + 5, 5).is_ok());
        let late = in_time(&token, NOW + 6, 5);
        assert!(matches!(late, Err(ErrorKind::ExpiredSignature)), "{late:?}");
    }

    #[test]
    fn nbf_is_reached_within_the_leeway() {
        let token = claims(json!({"exp": NOW + 600, "nbf": NOW + 10}));
        let early = in_time(&token, NOW, 5);
        assert!(
            matches!(early, Err(ErrorKind::ImmatureSignature)),
            "{early:?}"
        );
        assert!(in_time(&token, NOW + 5, 5).is_ok());
        assert!(in_time(&claims(json!({"exp": NOW + 600})), NOW, 0).is_ok());
    }

    #[test]
    fn times_that_are_not_whole_seconds_are_refused() {
        for token in [
            json!({"exp": "soon"}),
            json!({"exp": 1.5e9}),
            json!({"exp": -1}),
            json!({"exp": NOW + 60, "nbf": "now"}),
            json!({}),
        ] {
            assert!(in_time(&claims(token.clone()), NOW, 0).is_err(), "{token}");
        }
    }
}
