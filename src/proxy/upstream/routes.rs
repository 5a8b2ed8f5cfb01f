//! `[[route]]` tables: the first whose `match` fits a request names its pool; a request no
//! route fits goes to the default pool (`upstream.backends`). Routes match on the same
//! [`RouteFacts`] the policies see.

use super::settings::PoolRoute;
use crate::policy::{RouteFacts, RouteIndex};

/// The routes of one config, in order.
#[derive(Debug, Default)]
pub(super) struct Routes {
    routes: Vec<PoolRoute>,
    index: RouteIndex,
    needs_host: bool,
}

impl Routes {
    /// The routes `routes`, tried in this order.
    pub(super) fn new(routes: &[PoolRoute]) -> Self {
        Self {
            needs_host: routes.iter().any(|r| r.route.host.is_some()),
            index: RouteIndex::new(routes.iter().map(|r| r.route.clone()).collect()),
            routes: routes.to_vec(),
        }
    }

    /// Whether any route looks at the host.
    pub(super) fn needs_host(&self) -> bool {
        self.needs_host
    }

    /// Whether there is any route (else every request goes to the default pool).
    pub(super) fn is_empty(&self) -> bool {
        self.routes.is_empty()
    }

    /// The index of the pool a request with `facts` goes to.
    pub(super) fn pool_for(&self, facts: &RouteFacts<'_>) -> usize {
        self.index.first(facts).map_or(0, |i| self.routes[i].pool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Route;
    use http::Method;

    #[test]
    fn the_first_fitting_route_wins_else_the_default_pool() {
        let prefix = |p: &str| Route {
            path_prefix: Some(p.into()),
            ..Route::default()
        };
        let host = Route {
            host: Some("static.example.com".into()),
            ..Route::default()
        };
        let routes = Routes::new(&[
            PoolRoute {
                route: prefix("/api/"),
                pool: 1,
            },
            PoolRoute {
                route: host,
                pool: 2,
            },
            PoolRoute {
                route: prefix("/api/v2"),
                pool: 3,
            },
        ]);
        assert!(routes.needs_host());
        let facts = |host, path| RouteFacts {
            method: &Method::GET,
            host,
            path,
        };
        assert_eq!(routes.pool_for(&facts(None, "/api/v2/x")), 1);
        assert_eq!(routes.pool_for(&facts(Some("static.example.com"), "/a")), 2);
        assert_eq!(routes.pool_for(&facts(Some("other"), "/a")), 0);
    }
}
