//! `[[route]]` tables → the routes to the pools of `[upstream]`: each `match` (the route keys
//! of a policy's) and the pool it names.

use crate::config::check::Checker;
use crate::config::error::ConfigError;
use crate::config::policies;
use crate::config::policy_table::MatchFile;
use crate::policy::Route;
use crate::proxy::{PoolRoute, PoolSettings};
use serde::Deserialize;
use toml::Spanned;

/// `[[route]]`: requests its `match` fits go to `pool`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RouteFile {
    #[serde(rename = "match")]
    pub(crate) route: Option<MatchFile>,
    pub(crate) pool: Spanned<String>,
}

/// `[[route]]` tables, each naming a pool of `pools`.
pub(super) fn pool_routes(
    check: &Checker<'_>,
    routes: &[RouteFile],
    pools: &[PoolSettings],
) -> Result<Vec<PoolRoute>, ConfigError> {
    routes
        .iter()
        .map(|file| {
            let name = file.pool.get_ref();
            let Some(pool) = pools.iter().position(|p| p.name == *name) else {
                let known: Vec<&str> = pools.iter().map(|p| p.name.as_str()).collect();
                let message = format!(
                    "`route.pool`: no pool named `{name}` (pools: {})",
                    known.join(", ")
                );
                return Err(check.error(&file.pool, message));
            };
            let route = match &file.route {
                Some(m) => policies::route(check, m, "route.match")?,
                None => Route::default(),
            };
            Ok(PoolRoute { route, pool })
        })
        .collect()
}
