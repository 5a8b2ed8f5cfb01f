//! Which limit a request's descriptor meets, as envoyproxy/ratelimit finds it: walk the
//! domain's tree entry by entry, each entry matching `key` and `value` exactly, else a value
//! prefix (`value: "/api/*"`), else `key` alone (any value); the limit is the one on the node
//! the last entry reaches. A descriptor that leaves the tree early, or ends on a node without
//! a limit, is not limited.

use super::rules::{Effect, Node, RlsRules};

/// The effect for `entries` (key, value pairs, in order) in `domain`.
pub fn find<'r>(rules: &'r RlsRules, domain: &str, entries: &[(&str, &str)]) -> Option<&'r Effect> {
    let mut node = rules.domains.get(domain)?;
    for (i, (key, value)) in entries.iter().enumerate() {
        let next = step(node, key, value)?;
        if i + 1 == entries.len() {
            return next.effect.as_ref();
        }
        node = next;
    }
    None
}

fn step<'r>(node: &'r Node, key: &str, value: &str) -> Option<&'r Node> {
    let branch = node.children.get(key)?;
    let prefixed = || {
        branch
            .prefixes
            .iter()
            .filter(|(prefix, _)| value.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, next)| next)
    };
    (branch.values.get(value))
        .or_else(prefixed)
        .or(branch.any.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const RULES: &str = r#"
domain: edge
descriptors:
  - key: remote_address
    rate_limit: { unit: second, requests_per_unit: 10 }
  - key: path
    value: "/api/*"
    rate_limit: { unit: minute, requests_per_unit: 100 }
  - key: path
    value: /health
    rate_limit: { unlimited: true }
  - key: tenant
    descriptors:
      - key: plan
        value: pro
        rate_limit: { unit: hour, requests_per_unit: 1000, name: pro }
"#;

    fn rules() -> RlsRules {
        let mut rules = RlsRules::default();
        rules.add(Path::new("edge.yaml"), RULES).unwrap();
        rules
    }

    fn name(effect: Option<&Effect>) -> Option<String> {
        match effect? {
            Effect::Limit(rule) => Some(rule.name.clone()),
            Effect::Unlimited => Some("unlimited".into()),
        }
    }

    #[test]
    fn the_last_entry_decides_exact_before_prefix_before_any_value() {
        let r = rules();
        assert_eq!(
            name(find(&r, "edge", &[("remote_address", "10.0.0.1")])).as_deref(),
            Some("edge.remote_address")
        );
        assert_eq!(
            name(find(&r, "edge", &[("path", "/api/users")])).as_deref(),
            Some("edge.path__api__")
        );
        assert_eq!(
            name(find(&r, "edge", &[("path", "/health")])).as_deref(),
            Some("unlimited")
        );
        assert_eq!(name(find(&r, "edge", &[("path", "/other")])), None);
        assert_eq!(
            name(find(&r, "edge", &[("tenant", "acme"), ("plan", "pro")])).as_deref(),
            Some("pro")
        );
        assert_eq!(
            name(find(&r, "edge", &[("tenant", "acme")])),
            None,
            "no limit on the node"
        );
        assert_eq!(
            name(find(&r, "edge", &[("tenant", "acme"), ("plan", "free")])),
            None
        );
        assert_eq!(name(find(&r, "other", &[("remote_address", "x")])), None);
    }

    #[test]
    fn bad_rules_are_refused_where_they_are() {
        let mut r = RlsRules::default();
        let e = r.add(Path::new("x.yaml"), "domain: d\ndescriptors:\n  - key: k\n    rate_limit: { unit: fortnight, requests_per_unit: 1 }\n").unwrap_err();
        assert!(
            e.to_string().starts_with("x.yaml:") && e.to_string().contains("unknown unit"),
            "{e}"
        );
        let e = r
            .add(
                Path::new("y.yaml"),
                "domain: d\ndescriptors:\n  - key: k\n    colour: red\n",
            )
            .unwrap_err();
        assert!(e.to_string().starts_with("y.yaml:4:"), "{e}");
        let e = r
            .add(
                Path::new("z.yaml"),
                "domain: d\ndescriptors:\n  - key: k\n    rate_limit: { unit: second }\n",
            )
            .unwrap_err();
        assert!(e.to_string().contains("requests_per_unit"), "{e}");
    }
}
