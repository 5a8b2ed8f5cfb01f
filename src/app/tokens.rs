//! Privacy Pass under a config: the trusted issuers of `[challenge.privacy_pass]`, whose
//! challenges name the config's hosts (its routes' and ACME's) unless they name their own,
//! and whose passes are bound to the network when a challenging policy asks for that.

use crate::challenge::{Redeeming, Tokens, TokensError};
use crate::config::Config;
use crate::gate::Gate;
use crate::identity::{Bind, IdentityKey};
use crate::limiter::NonceLedger;
use crate::telemetry::Metrics;
use std::sync::Arc;

/// The issuers `config` trusts, if any, keyed by `key`, spending nonces in `ledger`, their
/// directories' keys in force by the gate's clock; those of `previous` (the config reloaded)
/// keep the keys their directories gave.
pub(super) fn tokens(
    config: &Config,
    gate: &Gate,
    key: &IdentityKey,
    ledger: Arc<dyn NonceLedger>,
    metrics: &Metrics,
    previous: Option<&Tokens>,
) -> Result<Option<Tokens>, TokensError> {
    let Some(settings) = &config.challenge.privacy_pass else {
        return Ok(None);
    };
    let network = gate
        .policies()
        .flat_map(crate::gate::asked)
        .any(|c| c.bind == Bind::Network);
    let bind = match network {
        true => Bind::Network,
        false => Bind::None,
    };
    let counters = metrics.privacy_pass.clone();
    let hosts = config_hosts(config);
    let redeeming = Redeeming {
        ledger,
        clock: gate.clock().clone(),
    };
    Tokens::new(settings, &hosts, key, redeeming, bind, counters, previous).map(Some)
}

/// The hosts `config` names: its routes' and the ACME domains, each once.
fn config_hosts(config: &Config) -> Vec<String> {
    let routes = config.upstream.routes.iter();
    let routed = routes.filter_map(|r| r.route.host.clone());
    let acme = config.acme.iter().flat_map(|a| a.domains.iter().cloned());
    let mut hosts: Vec<String> = Vec::new();
    for host in routed.chain(acme) {
        if !hosts.contains(&host) {
            hosts.push(host);
        }
    }
    hosts
}
