//! envoyproxy/ratelimit's configuration (its file format in [`super::yaml`]), every `*.yaml` /
//! `*.yml` of `rls.config_dir`, as a tree per domain. Each limit becomes a Floodgate bucket:
//! capacity `requests_per_unit`, refilled over the unit (a token bucket, not a fixed window).

use super::yaml::{quota_mode_lines, DescriptorFile, DomainFile};
use crate::limiter::PolicyKey;
use crate::policy::{Enforcement, Limits, Rate};
use crate::telemetry::{Metrics, PolicyCounters};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Why the rules cannot be loaded, located in their file.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}")]
pub struct RulesError {
    /// The file.
    pub file: PathBuf,
    /// 1-based line (0 when the error is about the file as a whole).
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

/// What a matched descriptor does.
#[derive(Debug, Clone)]
pub enum Effect {
    /// Counts against a bucket.
    Limit(Arc<Rule>),
    /// Never limited (`unlimited: true`).
    Unlimited,
}

/// One limit of the configuration.
#[derive(Debug)]
pub struct Rule {
    /// Its name: `rate_limit.name`, or the domain and the path of keys and values that leads
    /// to it. The metrics' policy label and the RateLimit headers' item name.
    pub name: String,
    /// The same, shared (as the headers name it).
    pub arc_name: Arc<str>,
    /// Its buckets' policy key (`rls:<name>`).
    pub key: PolicyKey,
    /// The bucket each descriptor value gets.
    pub limits: Limits,
    /// `requests_per_unit`, as Envoy reports it back.
    pub requests_per_unit: u32,
    /// The unit, in Envoy's enumeration (1 second … 7 year).
    pub unit: i32,
    /// Whether it refuses, or only counts (`shadow_mode`).
    pub enforcement: Enforcement,
    /// `requests_per_unit: 0`: every request is over the limit (a deny-list entry), with no
    /// store call.
    pub refuses_all: bool,
    /// The names of the limits this one replaces in a request.
    pub replaces: Vec<String>,
    /// Its series, resolved at its first decision.
    pub counters: RuleCounters,
}

/// A rule's series, resolved once (its labels are looked up at the first decision, not at
/// every one).
#[derive(Default)]
pub struct RuleCounters(OnceLock<PolicyCounters>);

impl RuleCounters {
    /// The series of the rule called `name`, in `metrics`.
    pub fn of(&self, metrics: &Metrics, name: &str) -> &PolicyCounters {
        self.0.get_or_init(|| metrics.policy(name))
    }
}

impl std::fmt::Debug for RuleCounters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RuleCounters")
    }
}

/// A node of a domain's descriptor tree.
#[derive(Debug, Default)]
pub struct Node {
    /// What a descriptor ending here does.
    pub effect: Option<Effect>,
    /// Children by `key`.
    pub children: HashMap<String, Branch>,
}

/// The children of one key: by exact value, by value prefix (`value: "/api/*"`), and for
/// any value (`key` alone).
#[derive(Debug, Default)]
pub struct Branch {
    /// By exact value.
    pub values: HashMap<String, Node>,
    /// By value prefix (the value without its `*`).
    pub prefixes: Vec<(String, Node)>,
    /// For any value.
    pub any: Option<Box<Node>>,
}

/// Every domain's tree.
#[derive(Debug, Default)]
pub struct RlsRules {
    /// The trees by domain.
    pub domains: HashMap<String, Node>,
}

impl RlsRules {
    /// The rules of every YAML file in `dir`.
    pub fn load_dir(dir: &Path) -> Result<Self, RulesError> {
        let whole = |message: String| RulesError {
            file: dir.to_owned(),
            line: 0,
            column: 0,
            message,
        };
        let entries = std::fs::read_dir(dir).map_err(|e| whole(format!("cannot read: {e}")))?;
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
            .collect();
        files.sort();
        let mut rules = Self::default();
        for file in files {
            let text = std::fs::read_to_string(&file).map_err(|e| RulesError {
                file: file.clone(),
                line: 0,
                column: 0,
                message: format!("cannot read: {e}"),
            })?;
            rules.add(&file, &text)?;
        }
        Ok(rules)
    }

    /// Adds the domain written in `text` (the file `file`).
    pub fn add(&mut self, file: &Path, text: &str) -> Result<(), RulesError> {
        let located = |e: serde_yaml_ng::Error| {
            let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
            // The place is said in front, as in every config error.
            let message = e.to_string();
            let place = format!(" at line {line} column {column}");
            RulesError {
                file: file.to_owned(),
                line,
                column,
                message: message.strip_suffix(&place).unwrap_or(&message).to_owned(),
            }
        };
        let parsed: DomainFile = serde_yaml_ng::from_str(text).map_err(located)?;
        let at_file = |message: String| RulesError {
            file: file.to_owned(),
            line: 0,
            column: 0,
            message,
        };
        if parsed.domain.is_empty() {
            return Err(at_file("`domain` is empty".into()));
        }
        if self.domains.contains_key(&parsed.domain) {
            return Err(at_file(format!(
                "domain `{}` is defined twice",
                parsed.domain
            )));
        }
        let mut root = Node::default();
        let path = parsed.domain.clone();
        build(&mut root, &parsed.descriptors, &path).map_err(at_file)?;
        warn_quota_mode(file, text, &parsed);
        self.domains.insert(parsed.domain, root);
        Ok(())
    }
}

/// Warns, located, at each `quota_mode: true` of `parsed` (the text of `file`): Floodgate
/// holds such a limit like any other.
fn warn_quota_mode(file: &Path, text: &str, parsed: &DomainFile) {
    if !parsed
        .descriptors
        .iter()
        .any(DescriptorFile::uses_quota_mode)
    {
        return;
    }
    let what = "`quota_mode: true` is read as an ordinary limit: a request over it is refused \
                (envoyproxy/ratelimit refuses only when every quota-mode limit of the request \
                is over); give it `shadow_mode: true` to count without refusing";
    let lines = quota_mode_lines(text);
    if lines.is_empty() {
        log::warn!("{}: {what}", file.display());
    }
    for (line, column) in lines {
        log::warn!("{}:{line}:{column}: {what}", file.display());
    }
}

fn build(node: &mut Node, descriptors: &[DescriptorFile], path: &str) -> Result<(), String> {
    for d in descriptors {
        let here = match &d.value {
            Some(value) => format!("{path}.{}_{value}", d.key),
            None => format!("{path}.{}", d.key),
        };
        let mut child = Node {
            effect: effect(d, &here)?,
            ..Node::default()
        };
        build(&mut child, &d.descriptors, &here)?;
        let branch = node.children.entry(d.key.clone()).or_default();
        let taken = match d.value.as_deref() {
            None => branch.any.replace(Box::new(child)).is_some(),
            Some(value) => match value.strip_suffix('*') {
                Some(prefix) if branch.prefixes.iter().any(|(p, _)| p == prefix) => true,
                Some(prefix) => {
                    branch.prefixes.push((prefix.to_owned(), child));
                    false
                }
                None => branch.values.insert(value.to_owned(), child).is_some(),
            },
        };
        if taken {
            return Err(format!("descriptor `{here}` is defined twice"));
        }
    }
    Ok(())
}

fn effect(d: &DescriptorFile, path: &str) -> Result<Option<Effect>, String> {
    let Some(limit) = &d.rate_limit else {
        return Ok(None);
    };
    if limit.unlimited {
        return Ok(Some(Effect::Unlimited));
    }
    let (Some(unit), Some(requests)) = (&limit.unit, limit.requests_per_unit) else {
        return Err(format!(
            "`{path}`: `rate_limit` needs `unit` and `requests_per_unit` (or `unlimited: true`)"
        ));
    };
    let (seconds, code) = unit_seconds(unit).ok_or_else(|| {
        format!("`{path}`: unknown unit `{unit}` (second, minute, hour, day, week, month, year)")
    })?;
    let requests_per_unit = u32::try_from(requests)
        .map_err(|_| format!("`{path}`: `requests_per_unit` must be at most 4294967295"))?;
    // 0 refuses everything; its bucket is never asked (one token keeps the shape valid).
    let per = Duration::from_secs(seconds);
    let rate = Rate::new(f64::from(requests_per_unit.max(1)), per)
        .map_err(|e| format!("`{path}`: {e}"))?;
    let limits = Limits::new(u64::from(requests_per_unit.max(1)), rate)
        .map_err(|e| format!("`{path}`: {e}"))?;
    let name = label(&limit.name.clone().unwrap_or_else(|| path.to_owned()));
    Ok(Some(Effect::Limit(Arc::new(Rule {
        arc_name: Arc::from(name.as_str()),
        key: PolicyKey::new(&format!("rls:{name}")),
        name,
        limits,
        requests_per_unit,
        unit: code,
        enforcement: Enforcement::shadow_if(d.shadow_mode),
        refuses_all: requests_per_unit == 0,
        replaces: limit.replaces.clone(),
        counters: RuleCounters::default(),
    }))))
}

/// Seconds in a unit, and Envoy's number for it.
fn unit_seconds(unit: &str) -> Option<(u64, i32)> {
    Some(match unit.to_ascii_lowercase().as_str() {
        "second" => (1, 1),
        "minute" => (60, 2),
        "hour" => (3_600, 3),
        "day" => (86_400, 4),
        "week" => (604_800, 7),
        "month" => (2_592_000, 5),
        "year" => (31_536_000, 6),
        _ => return None,
    })
}

/// A rule's name as a policy name: letters, digits and `-_.` only.
fn label(name: &str) -> String {
    name.chars()
        .map(|c| match c.is_ascii_alphanumeric() || "-_.".contains(c) {
            true => c,
            false => '_',
        })
        .collect()
}
