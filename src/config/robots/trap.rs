//! `robots.trap`: a plain path, apart from every path the config gives a meaning to, and
//! disallowed to every group of a managed file by RFC 9309's matching (no `allow` of a group
//! reaches it with a rule at least as long).

use super::super::check::Checker;
use super::super::error::ConfigError;
use super::groups::{key_of, GroupFile};
use super::Context;
use crate::robots::allow_reaches;
use std::collections::BTreeMap;
use toml::Spanned;

/// The trap at `value`, checked.
pub(super) fn trap(
    check: &Checker<'_>,
    value: &Spanned<String>,
    groups: Option<&Spanned<BTreeMap<String, Spanned<GroupFile>>>>,
    context: &Context<'_>,
) -> Result<String, ConfigError> {
    let trap = value.get_ref();
    let plain = trap
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/-_.~".contains(&b));
    if !trap.starts_with('/') || !plain || trap == "/" {
        let message = format!(
            "`robots.trap` must be a plain path below `/` like `/.well-known/floodgate-trap/` \
             (`/`, letters, digits, `-`, `_`, `.`, `~`), not `{trap}`"
        );
        return Err(check.error(value, message));
    }
    if let Some(taken) = overlapped(trap, context) {
        let message = format!(
            "`robots.trap`: `{trap}` overlaps {taken}: the trap must lie apart from every path \
             the site or Floodgate answers"
        );
        return Err(check.error(value, message));
    }
    if let Some(groups) = groups {
        reachable(check, trap, groups)?;
    }
    Ok(trap.clone())
}

/// Whether one of `a` and `b` is a prefix of the other.
fn overlap(a: &str, b: &str) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// What `trap` overlaps, named for a message: `/robots.txt`, `challenge.path`, a route's or a
/// policy's path prefix (a prefix of `/` names the whole site and is not counted).
fn overlapped(trap: &str, context: &Context<'_>) -> Option<String> {
    if overlap(trap, "/robots.txt") {
        return Some("`/robots.txt`".to_owned());
    }
    if overlap(trap, context.challenge_path) {
        return Some(format!("`challenge.path` (`{}`)", context.challenge_path));
    }
    for (i, route) in context.routes.iter().enumerate() {
        if let Some(p) = site_part(route.route.path_prefix.as_ref()).filter(|p| overlap(trap, p)) {
            return Some(format!(
                "the path prefix `{p}` of `[[route]]` number {}",
                i + 1
            ));
        }
    }
    for policy in context.policies {
        if let Some(p) = site_part(policy.route.path_prefix.as_ref()).filter(|p| overlap(trap, p)) {
            return Some(format!(
                "the path prefix `{p}` of policy `{}`",
                policy.name()
            ));
        }
    }
    None
}

/// A path prefix that names a part of the site: not `/`, the whole of it.
fn site_part(prefix: Option<&String>) -> Option<&str> {
    prefix.map(String::as_str).filter(|p| *p != "/")
}

/// Refuses an `allow` of a group that lets a crawler obeying the file fetch the trap or a
/// path below it: it would be trapped for doing as it was told.
fn reachable(
    check: &Checker<'_>,
    trap: &str,
    groups: &Spanned<BTreeMap<String, Spanned<GroupFile>>>,
) -> Result<(), ConfigError> {
    for (name, entry) in groups.get_ref() {
        for allow in &entry.get_ref().allow {
            if allow_reaches(allow.get_ref(), trap) {
                let message = format!(
                    "`{}.allow`: `{}` lets crawlers fetch the trap `{trap}` or below it (RFC \
                     9309: the longer rule wins, `Allow` a tie), and one that obeys the file \
                     would be trapped: narrow the rule or move the trap",
                    key_of(name),
                    allow.get_ref()
                );
                return Err(check.error(allow, message));
            }
        }
    }
    Ok(())
}
