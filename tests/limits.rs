//! Issue 16, end to end: limits that see the response and the cost (count_status,
//! cost_header, settle_header), concurrency (max_in_flight), shaping (max_delay), penalties
//! (block_for) and request facts as identity parts. Each scenario runs on the memory store,
//! on Redis, and on Redis shared by three instances (asked in turn).

mod common;

use common::fleet::{Fleet, Store};

/// Three tests per scenario: `memory`, `redis` and `redis_three_instances`.
macro_rules! on_every_store {
    ($($scenario:ident),+ $(,)?) => {
        $(mod $scenario {
            use super::*;

            #[test]
            fn memory() {
                super::$scenario(Store::Memory);
            }

            #[test]
            fn redis() {
                super::$scenario(Store::Redis(1));
            }

            #[test]
            fn redis_three_instances() {
                super::$scenario(Store::Redis(3));
            }
        })+
    };
}

on_every_store!(per_endpoint_buckets);

/// `ip+path`: `/ep/a` twice → 200, 429; `/ep/b` → 200. `const:` is one bucket for all.
fn per_endpoint_buckets(store: Store) {
    let policies = r#"
[identity]
sources = ["header:x-api-key"]

[[policy]]
name = "per-endpoint"
capacity = 1
rate = "1/h"
sources = ["ip+path"]
match = { path_prefix = "/ep/" }

[[policy]]
name = "shared"
capacity = 2
rate = "1/h"
sources = ["const:backend"]
match = { path_prefix = "/shared" }
"#;
    let fleet = Fleet::start(store, policies, "");
    assert_eq!(fleet.status("/ep/a"), 200);
    assert_eq!(fleet.status("/ep/a"), 429);
    assert_eq!(fleet.status("/ep/b"), 200);
    assert_eq!(fleet.status("/ep/b?q=1"), 429, "the path, not the query");
    let key = |k| fleet.get("/shared", &[("x-api-key", k)]).status();
    assert_eq!([key("alice"), key("bob"), key("carol")], [200, 200, 429]);
}
