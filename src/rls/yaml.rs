//! envoyproxy/ratelimit's YAML, as its users write it: one file per domain (`domain`, nested
//! `descriptors` of `key`, optional `value`, `rate_limit { unit, requests_per_unit, name,
//! unlimited, replaces }`, `shadow_mode`, `quota_mode`, `metadata`, `detailed_metric`,
//! `value_to_metric`). What envoyproxy/ratelimit refuses is refused here, located by the YAML
//! reader at the descriptor: a `replaces` entry without a name or naming its own limit, and
//! `unlimited: true` with a `unit`.

use serde::Deserialize;

/// One domain's file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DomainFile {
    pub(super) domain: String,
    #[serde(default)]
    pub(super) descriptors: Vec<DescriptorFile>,
}

/// One descriptor entry and the entries under it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DescriptorFile {
    pub(super) key: String,
    pub(super) value: Option<String>,
    pub(super) rate_limit: Option<RateLimitFile>,
    #[serde(default)]
    pub(super) descriptors: Vec<DescriptorFile>,
    #[serde(default)]
    pub(super) shadow_mode: bool,
    /// Read as an ordinary limit, with a located warning at load (see `rules.rs`).
    #[serde(default)]
    pub(super) quota_mode: bool,
    /// Accepted and ignored: envoyproxy/ratelimit copies it into Envoy's dynamic metadata,
    /// which Floodgate's answers do not carry.
    #[serde(default, rename = "metadata")]
    _metadata: Option<serde_yaml_ng::Value>,
    /// Accepted and ignored: Floodgate's metrics are labelled by rule, never by a descriptor
    /// value (labels stay bounded).
    #[serde(default, rename = "detailed_metric")]
    _detailed_metric: bool,
    #[serde(default, rename = "value_to_metric")]
    _value_to_metric: bool,
}

impl DescriptorFile {
    /// Whether this entry or one under it sets `quota_mode: true`.
    pub(super) fn uses_quota_mode(&self) -> bool {
        self.quota_mode || self.descriptors.iter().any(Self::uses_quota_mode)
    }
}

/// A descriptor's `rate_limit`, checked as envoyproxy/ratelimit checks it.
#[derive(Debug, Deserialize)]
#[serde(try_from = "RateLimitYaml")]
pub(super) struct RateLimitFile {
    pub(super) name: Option<String>,
    /// The names of the limits this one replaces, none empty and none its own.
    pub(super) replaces: Vec<String>,
    pub(super) unit: Option<String>,
    pub(super) requests_per_unit: Option<u64>,
    pub(super) unlimited: bool,
}

/// A `rate_limit` as written, before its checks.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RateLimitYaml {
    name: Option<String>,
    #[serde(default)]
    replaces: Vec<Replaces>,
    unit: Option<String>,
    requests_per_unit: Option<u64>,
    #[serde(default)]
    unlimited: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Replaces {
    /// `- name:` with nothing after it reads as none, refused as empty.
    name: Option<String>,
}

impl TryFrom<RateLimitYaml> for RateLimitFile {
    type Error = String;

    fn try_from(yaml: RateLimitYaml) -> Result<Self, String> {
        if yaml.unlimited && yaml.unit.is_some() {
            return Err(
                "`rate_limit`: `unlimited: true` takes no `unit` (it is never counted)".into(),
            );
        }
        let mut replaces = Vec::with_capacity(yaml.replaces.len());
        for entry in yaml.replaces {
            let name = entry.name.unwrap_or_default();
            if name.is_empty() {
                return Err("`rate_limit`: a `replaces` entry needs the `name` of a limit".into());
            }
            if yaml.name.as_ref() == Some(&name) {
                let message =
                    format!("`rate_limit`: `replaces` names this limit itself (`{name}`)");
                return Err(message);
            }
            replaces.push(name);
        }
        Ok(Self {
            name: yaml.name,
            replaces,
            unit: yaml.unit,
            requests_per_unit: yaml.requests_per_unit,
            unlimited: yaml.unlimited,
        })
    }
}

/// The 1-based line and column of each `quota_mode: true` written in block style in `text`
/// (`quota_mode: true`, or `- quota_mode: true` opening a list entry).
pub(super) fn quota_mode_lines(text: &str) -> Vec<(usize, usize)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let rest = line.trim_start();
            let rest = rest.strip_prefix('-').map_or(rest, str::trim_start);
            let value = rest
                .strip_prefix("quota_mode")?
                .trim_start()
                .strip_prefix(':')?;
            let value = value.split('#').next().unwrap_or_default().trim();
            let column = line.chars().count() - rest.chars().count() + 1;
            matches!(value, "true" | "True" | "TRUE").then_some((i + 1, column))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::quota_mode_lines;
    use crate::rls::RlsRules;
    use std::path::Path;

    /// The rules of the fixture `name` (tests/fixtures/rls/envoy), loaded as `[rls]` loads them.
    fn load(name: &str) -> Result<RlsRules, String> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/rls/envoy")
            .join(name);
        let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
        let mut rules = RlsRules::default();
        rules
            .add(Path::new(name), &text)
            .map_err(|e| e.to_string())?;
        Ok(rules)
    }

    #[test]
    fn envoy_ratelimits_own_example_and_metadata_files_load() {
        let rules = load("example.yaml").unwrap();
        let rl = &rules.domains["rl"];
        let service = &rl.children["service"];
        assert!(
            service.values.contains_key("service_1") && service.values.contains_key("service_2")
        );
        assert!(load("metadata.yaml").is_ok());
    }

    #[test]
    fn the_files_envoy_ratelimit_refuses_are_refused_where_the_limit_is() {
        for (name, at, message) in [
            (
                "replaces_empty.yaml",
                "replaces_empty.yaml:6:9:",
                "a `replaces` entry needs the `name` of a limit",
            ),
            (
                "replaces_self.yaml",
                "replaces_self.yaml:6:9:",
                "`replaces` names this limit itself (`self`)",
            ),
            (
                "unlimited_with_unit.yaml",
                "unlimited_with_unit.yaml:3:5:",
                "`unlimited: true` takes no `unit`",
            ),
        ] {
            let e = load(name).unwrap_err();
            assert!(e.starts_with(at) && e.contains(message), "{e}");
        }
    }

    #[test]
    fn quota_mode_is_found_where_it_is_written() {
        let text = "descriptors:\n  - key: a\n    quota_mode: true\n  - quota_mode: true # on\n    key: b\n  - key: c\n    quota_mode: false\n";
        assert_eq!(quota_mode_lines(text), [(3, 5), (4, 5)]);
    }
}
