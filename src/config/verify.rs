//! `[identity.verify]` → the verified sources: which sources must be proven before they name a
//! caller, and how (`by = "backend"`: the backend's answers on the routes of `match`;
//! `by = "list"`: a file of keys or their SHA-256 digests).

use super::check::Checker;
use super::error::ConfigError;
use super::policy_table::PolicyMatchFile;
use super::value::{config_keys, Bounded, Header, PositivePeriod};
use crate::identity::{IdentityChain, Source, SourceSpec};
use crate::proof::{
    BackendProof, By, KeyList, OnRefused, Scope, StatusSet, Verified, VerifySettings, DEFAULT_KEEP,
    DEFAULT_REMEMBER,
};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use toml::Spanned;

config_keys! {
    Remember = "identity.verify.remember",
    Keep = "identity.verify.keep",
    ProofHeader = "identity.verify.proof_header",
}

/// `[identity.verify]` as written: a source → how it is proven.
pub(crate) type VerifyFile = Spanned<BTreeMap<String, Spanned<VerifiedFile>>>;

/// `by`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ByWord {
    Backend,
    List,
}

/// `refused`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RefusedWord {
    #[default]
    Next,
    Reject,
}

/// One source's entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct VerifiedFile {
    by: Spanned<ByWord>,
    file: Option<Spanned<String>>,
    #[serde(rename = "match")]
    scope: Option<Spanned<PolicyMatchFile>>,
    proof_header: Option<Spanned<Header<ProofHeader>>>,
    proven_status: Option<Spanned<Vec<Spanned<toml::Value>>>>,
    refused_status: Option<Spanned<Vec<Spanned<toml::Value>>>>,
    remember: Option<PositivePeriod<Remember>>,
    keep: Option<Bounded<Keep, 1, 100_000_000>>,
    #[serde(default)]
    refused: RefusedWord,
}

/// The verified sources of `file`, each of which must be a part of one of `chains`.
pub(crate) fn verify(
    check: &Checker<'_>,
    file: Option<&VerifyFile>,
    chains: &[&IdentityChain],
) -> Result<VerifySettings, ConfigError> {
    let Some(table) = file else {
        return Ok(VerifySettings::default());
    };
    let sources = table
        .get_ref()
        .iter()
        .map(|(name, entry)| verified(check, name, entry, chains))
        .collect::<Result<_, _>>()?;
    Ok(VerifySettings { sources })
}

fn verified(
    check: &Checker<'_>,
    name: &str,
    entry: &Spanned<VerifiedFile>,
    chains: &[&IdentityChain],
) -> Result<Verified, ConfigError> {
    let key = format!("identity.verify.\"{name}\"");
    let source = source(check, name, entry, &key)?;
    let in_a_chain = chains
        .iter()
        .flat_map(|chain| &chain.sources)
        .any(|spec| spec.parts().contains(&source));
    if !in_a_chain {
        let message = format!(
            "`{key}`: `{name}` is in no identity chain (`identity.sources` or a policy's \
             `sources`): add it there, or remove it here"
        );
        return Err(check.error(entry, message));
    }
    let file = entry.get_ref();
    let by = match file.by.get_ref() {
        ByWord::Backend => By::Backend(Box::new(backend(check, file, &key)?)),
        ByWord::List => By::List(Arc::new(list(check, file, &key)?)),
    };
    Ok(Verified {
        source,
        by,
        refused: match file.refused {
            RefusedWord::Next => OnRefused::Next,
            RefusedWord::Reject => OnRefused::Reject,
        },
    })
}

/// The source a key names: a single header, cookie or query parameter.
fn source(
    check: &Checker<'_>,
    name: &str,
    entry: &Spanned<VerifiedFile>,
    key: &str,
) -> Result<Source, ConfigError> {
    let spec: SourceSpec = name
        .parse()
        .map_err(|e| check.error(entry, format!("`{key}`: {e}")))?;
    match spec.parts() {
        [part @ (Source::Header(_) | Source::Cookie(_) | Source::Query(_))] => Ok(part.clone()),
        [Source::Jwt(_)] => Err(check.error(
            entry,
            format!("`{key}`: a JWT claim is proven already: its token is verified"),
        )),
        _ => Err(check.error(
            entry,
            format!("`{key}`: only a `header:`, `cookie:` or `query:` source is verified"),
        )),
    }
}

fn backend(
    check: &Checker<'_>,
    file: &VerifiedFile,
    key: &str,
) -> Result<BackendProof, ConfigError> {
    if let Some(path) = &file.file {
        let message = format!("`{key}.file` is for `by = \"list\"`");
        return Err(check.error(path, message));
    }
    let proven_status = statuses(check, file.proven_status.as_ref(), key, "proven_status")?
        .unwrap_or_else(StatusSet::success);
    let refused_status = statuses(check, file.refused_status.as_ref(), key, "refused_status")?
        .unwrap_or_else(StatusSet::unauthorized);
    if proven_status.overlaps(&refused_status) {
        let at = file.refused_status.as_ref().map(Spanned::span);
        let span = at.or(file.proven_status.as_ref().map(Spanned::span));
        let message = format!(
            "`{key}`: `proven_status` ({proven_status}) and `refused_status` ({refused_status}) \
             share a status"
        );
        return Err(super::error::ConfigError::at(
            check.path, check.text, span, message,
        ));
    }
    let scope = match &file.scope {
        Some(table) => Some(scope(check, table, key)?),
        None => {
            log::warn!(
                "{}",
                check.error(
                    &file.by,
                    format!(
                        "`{key}` has no `match`: every route's answers count, and a route that \
                         answers 2xx to anyone (a static file, a health check, a login page) \
                         proves any value; name the routes where the backend checks it"
                    )
                )
            );
            None
        }
    };
    Ok(BackendProof {
        scope,
        proof_header: file.proof_header.as_ref().map(|h| h.get_ref().get()),
        proven_status,
        refused_status,
        remember: file
            .remember
            .as_ref()
            .map_or(DEFAULT_REMEMBER, PositivePeriod::get),
        keep: file.keep.as_ref().map_or(DEFAULT_KEEP, Bounded::count),
    })
}

fn scope(
    check: &Checker<'_>,
    table: &Spanned<PolicyMatchFile>,
    key: &str,
) -> Result<Scope, ConfigError> {
    let table_key = format!("{key}.match");
    Ok(Scope {
        route: super::policies::route(check, &table.get_ref().route(), &table_key)?,
        conditions: super::conditions::conditions(check, Some(table.get_ref()), &table_key)?,
    })
}

/// A list of statuses: numbers from 100 to 599, or ranges `"200-299"` and `"2xx"`.
fn statuses(
    check: &Checker<'_>,
    list: Option<&Spanned<Vec<Spanned<toml::Value>>>>,
    key: &str,
    name: &str,
) -> Result<Option<StatusSet>, ConfigError> {
    let Some(list) = list else {
        return Ok(None);
    };
    if list.get_ref().is_empty() {
        return Err(check.error(list, format!("`{key}.{name}` needs at least one status")));
    }
    let ranges = list
        .get_ref()
        .iter()
        .map(|value| {
            status_range(value.get_ref()).ok_or_else(|| {
                let message = format!(
                    "`{key}.{name}`: `{}` is not a status from 100 to 599, a range like \
                     \"200-299\" or a class like \"2xx\"",
                    value.get_ref()
                );
                check.error(value, message)
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(Some(StatusSet::of(ranges)))
}

fn status_range(value: &toml::Value) -> Option<(u16, u16)> {
    let valid = |n: i64| (100..=599).contains(&n).then_some(n as u16);
    let range = match value {
        toml::Value::Integer(n) => (valid(*n)?, valid(*n)?),
        toml::Value::String(text) => {
            let text = text.trim();
            match (text.split_once('-'), text.strip_suffix("xx")) {
                (Some((lo, hi)), _) => (
                    valid(lo.trim().parse().ok()?)?,
                    valid(hi.trim().parse().ok()?)?,
                ),
                (None, Some(class)) => {
                    let class: i64 = class.parse().ok()?;
                    (valid(class * 100)?, valid(class * 100 + 99)?)
                }
                (None, None) => return None,
            }
        }
        _ => return None,
    };
    (range.0 <= range.1).then_some(range)
}

fn list(check: &Checker<'_>, file: &VerifiedFile, key: &str) -> Result<KeyList, ConfigError> {
    let backend_only = [
        file.scope.as_ref().map(|s| (s.span(), "match")),
        file.proof_header
            .as_ref()
            .map(|s| (s.span(), "proof_header")),
        file.proven_status
            .as_ref()
            .map(|s| (s.span(), "proven_status")),
        file.refused_status
            .as_ref()
            .map(|s| (s.span(), "refused_status")),
    ];
    if let Some((span, name)) = backend_only.into_iter().flatten().next() {
        let message = format!("`{key}.{name}` is for `by = \"backend\"`");
        return Err(ConfigError::at(check.path, check.text, Some(span), message));
    }
    let Some(name) = &file.file else {
        let message = format!("`{key}`: `by = \"list\"` needs `file`, the list of keys");
        return Err(check.error(&file.by, message));
    };
    let path = check.resolve(name.get_ref());
    let text = std::fs::read_to_string(&path).map_err(|e| {
        check.error(
            name,
            format!("`{key}.file`: cannot read {}: {e}", path.display()),
        )
    })?;
    let list = KeyList::parse(&text).map_err(|e| {
        check.error(
            name,
            format!("`{key}.file`: {}:{}: {}", path.display(), e.line, e.reason),
        )
    })?;
    if list.has_raw_keys() {
        private(check, name, &path, key)?;
    }
    Ok(list)
}

/// Refuses a file of raw keys that users other than its owner may read.
fn private(
    check: &Checker<'_>,
    name: &Spanned<String>,
    path: &std::path::Path,
    key: &str,
) -> Result<(), ConfigError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path)
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or(0);
    if mode & 0o077 == 0 {
        return Ok(());
    }
    let message = format!(
        "`{key}.file`: {} holds raw keys and others may read it (mode {mode:o}): `chmod 600` it, \
         or write `sha256:<hex>` lines instead",
        path.display()
    );
    Err(check.error(name, message))
}

mod lines;

pub(crate) use lines::{warn_presence_tests, VerifyLines};

#[cfg(test)]
mod tests;
