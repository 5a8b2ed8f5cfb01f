//! File structs → runtime config: every check that serde cannot make, each error located.

use super::check::Checker;
use super::error::ConfigError;
use super::file::FileConfig;
use super::identity::{self, IdentityParts};
use super::policies;
use super::runtime::Config;
use super::server::server;
use super::store::store;
use super::upstream;
use super::{acme, bots, challenge, crowdsec, decisions, geo, rls, verify};
use std::path::Path;

/// Refuses a config that gives Floodgate nothing to do: no `[upstream]` to proxy to, no
/// `[check]` or `[rls]` to answer.
fn purpose(check: &Checker<'_>, file: &FileConfig) -> Result<(), ConfigError> {
    if file.upstream.is_some() || file.check.is_some() || file.rls.is_some() {
        return Ok(());
    }
    let message = "nothing to serve: add `[upstream]` (the backends to proxy to), `[check]` (the \
                   decision endpoint) or `[rls]` (Envoy's rate limit service)";
    Err(ConfigError::at(
        check.path,
        check.text,
        None,
        message.to_owned(),
    ))
}

/// `[identity.verify]`, its sources found in the chains of `[identity]` and of `policies`; warns
/// where a policy tests the presence of a verified header instead of its proof.
fn verified_sources(
    check: &Checker<'_>,
    file: &FileConfig,
    chain: &crate::identity::IdentityChain,
    policies: &[crate::policy::Policy],
) -> Result<crate::proof::VerifySettings, ConfigError> {
    let own = policies.iter().filter_map(|p| p.limit()?.sources.as_ref());
    let chains: Vec<_> = std::iter::once(chain).chain(own).collect();
    let verify = verify::verify(check, file.identity.verify.as_ref(), &chains)?;
    for policy in &file.policies {
        for (table, name) in [
            (policy.route.as_ref(), "policy.match"),
            (policy.unless.as_ref().map(|u| u.get_ref()), "policy.unless"),
        ] {
            let headers = table.and_then(|t| t.headers.as_ref());
            verify::warn_presence_tests(check, &verify, headers, name);
        }
    }
    Ok(verify)
}

/// Validates a parsed file into the runtime config.
pub(crate) fn validate(file: FileConfig, path: &Path, text: &str) -> Result<Config, ConfigError> {
    let mut check = Checker {
        path,
        text,
        jwt_configured: false,
    };
    let jwt = match &file.identity.jwt {
        Some(jwt) => Some(identity::jwt(&check, jwt)?),
        None => None,
    };
    check.jwt_configured = jwt.is_some();
    purpose(&check, &file)?;
    let server = server(&check, &file.server, file.upstream.as_ref())?;
    let rls = match &file.rls {
        Some(table) => Some(rls::rls(&check, table, server.tls.as_ref())?),
        None => None,
    };
    let IdentityParts {
        chain,
        client_ip,
        hash_key,
    } = identity::identity(&check, &file.identity)?;
    let upstream = upstream::upstream(&check, file.upstream.as_ref(), &file.routes)?;
    let store = store(&check, &file.store, upstream.read_timeout)?;
    let acme = acme::settings(&check, file.tls.as_ref(), &server, &store)?;
    let policies = policies::policies(&check, &file.policies, &chain, server.shadow)?;
    let verify = verified_sources(&check, &file, &chain, &policies)?;
    let bots = bots::bots(&check, &file.bots)?;
    let challenge = challenge::settings(&check, file.challenge.as_ref())?;
    let robots = super::robots::robots(
        &check,
        file.robots.as_ref(),
        &super::robots::Context {
            backend: file.upstream.is_some(),
            challenge_path: &challenge.path,
            routes: &upstream.routes,
            policies: &policies,
            catalogue: &bots.crawlers.catalogue,
        },
    )?;
    let policies = super::crawl_delay::with_crawl_delay(
        &check,
        policies,
        &file.policies,
        robots.as_ref(),
        &chain,
        server.shadow,
    )?;
    Ok(Config {
        acme,
        path: path.to_owned(),
        admin: file.admin.settings(&check)?,
        upstream,
        store,
        policies,
        verify,
        identity: chain,
        hash_key,
        client_ip,
        jwt,
        access: identity::access(&check, &file.access)?,
        server,
        check: match &file.check {
            Some(table) => Some(decisions::check(&check, table)?),
            None => None,
        },
        rls,
        crowdsec: match &file.crowdsec {
            Some(table) => Some(crowdsec::crowdsec(&check, table)?),
            None => None,
        },
        bots,
        challenge,
        geo: geo::geo(&check, file.geo.as_ref())?,
        response: (&file.response).into(),
        overload: match &file.overload {
            Some(table) => Some(super::overload::overload(&check, table)?),
            None => None,
        },
        traces: super::telemetry::traces(file.telemetry.as_ref()),
        decisions: super::explain::decisions(&check, file.decisions.as_ref())?,
        robots,
    })
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use std::path::Path;

    fn load(text: &str) -> Result<crate::config::Config, String> {
        parse(text, Path::new("t.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn a_config_that_only_decides_needs_no_upstream_nor_server_table() {
        let config = load("[check]\nlisten = \"127.0.0.1:9100\"\n").unwrap();
        assert_eq!(
            config.server.listen, None,
            "nothing to proxy, nothing listens"
        );
        assert!(config.upstream.pools.is_empty());
        let config =
            load("[server]\nlisten = \"127.0.0.1:8080\"\n[check]\nlisten = \"127.0.0.1:9100\"\n")
                .unwrap();
        assert_eq!(config.server.listen, None, "warned about, not opened");
        let rules = tempfile::tempdir().unwrap();
        let rls = format!("[rls]\nconfig_dir = \"{}\"\n", rules.path().display());
        assert_eq!(load(&rls).unwrap().server.listen, None);
    }

    #[test]
    fn a_config_with_nothing_to_serve_or_a_proxy_without_a_listener_is_refused() {
        for (text, expected) in [
            (
                "[server]\nlisten = \"127.0.0.1:8080\"\n",
                "t.toml:1:1: nothing to serve: add `[upstream]`",
            ),
            ("", "t.toml:1:1: nothing to serve"),
            (
                "[upstream]\nbackends = [\"127.0.0.1:8000\"]\n",
                "t.toml:2:12: `[upstream]` needs `server.listen`",
            ),
            (
                "[check]\nlisten = \"127.0.0.1:9100\"\n[[route]]\npool = \"api\"\n",
                "t.toml:4:8: `route.pool`: a `[[route]]` picks a pool of `[upstream]`",
            ),
        ] {
            let e = load(text).unwrap_err();
            assert!(e.starts_with(expected), "{e}");
        }
    }
}
