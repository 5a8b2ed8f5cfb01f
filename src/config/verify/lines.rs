//! What `[identity.verify]` says beside its settings: `--test`'s lines about each verified
//! source, and the warning where a policy tests a verified header's presence.

use super::super::check::Checker;
use crate::identity::Source;
use crate::limiter::StoreSettings;
use crate::proof::{By, OnRefused, VerifySettings};
use std::collections::BTreeMap;
use toml::Spanned;

/// Warns, located, where a policy's `match.headers` tests the presence of a verified header:
/// anyone can send one; `proven` says whether it was proven.
pub(crate) fn warn_presence_tests(
    check: &Checker<'_>,
    verify: &VerifySettings,
    headers: Option<&Spanned<BTreeMap<String, Spanned<toml::Value>>>>,
    table: &str,
) {
    let Some(headers) = headers else {
        return;
    };
    for (name, value) in headers.get_ref() {
        let verified = verify.sources.iter().any(
            |v| matches!(&v.source, Source::Header(h) if h.as_str().eq_ignore_ascii_case(name)),
        );
        let presence = matches!(value.get_ref(), toml::Value::Boolean(_));
        if verified && presence {
            let message = format!(
                "`{table}.headers.{name}` tests whether a verified header is sent, which anyone \
                 can do: use `proven = true` (or false) to test whether it was proven"
            );
            log::warn!("{}", check.error(value, message));
        }
    }
}

/// `--test`'s lines about verified sources: how each is proven, where proofs are kept.
pub(crate) struct VerifyLines<'a>(pub(crate) &'a VerifySettings, pub(crate) &'a StoreSettings);

impl std::fmt::Display for VerifyLines<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kept = match self.1 {
            StoreSettings::Memory { .. } => "kept by this process",
            StoreSettings::Redis(_) => "kept by the fleet in Redis",
        };
        for verified in &self.0.sources {
            let refused = match verified.refused {
                OnRefused::Next => "a revoked value names no one",
                OnRefused::Reject => "a revoked value gets 403",
            };
            match &verified.by {
                By::Backend(b) => {
                    let scope = match &b.scope {
                        Some(scope) => format!("{}{}", scope.route, scope.conditions),
                        None => "every route (no `match`)".to_owned(),
                    };
                    let header = match &b.proof_header {
                        Some(h) => format!(", or `{h}: valid|invalid`"),
                        None => String::new(),
                    };
                    writeln!(
                        f,
                        "verified        {} by the backend's answers on {scope}: proven by {}, revoked by {}{header}; remembered {}, {} kept, {kept}; {refused}; an unproven value names no one",
                        verified.source,
                        b.proven_status,
                        b.refused_status,
                        humantime::format_duration(b.remember),
                        b.keep,
                    )?;
                }
                By::List(list) => writeln!(
                    f,
                    "verified        {} by a list of {} keys; an unlisted value names no one",
                    verified.source,
                    list.len()
                )?,
            }
        }
        Ok(())
    }
}
