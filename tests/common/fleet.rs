//! One or more proxies with the same policies in front of one upstream: on the memory store
//! (one instance), or sharing one Redis (any number of instances, asked in turn).

use super::redis::RedisServer;
use super::{Proxy, Upstream};
use reqwest::blocking::Response;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Where the buckets live.
#[derive(Debug, Clone, Copy)]
pub enum Store {
    /// The memory store, one proxy.
    Memory,
    /// One Redis shared by this many proxies.
    Redis(usize),
}

/// The proxies of one test, their upstream and their Redis.
pub struct Fleet {
    pub proxies: Vec<Proxy>,
    pub upstream: Upstream,
    pub redis: Option<RedisServer>,
    next: AtomicUsize,
}

impl Fleet {
    /// Proxies on `store` with `policies` (and `[store]` keys `store_extra` on Redis).
    pub fn start(store: Store, policies: &str, store_extra: &str) -> Self {
        let upstream = Upstream::start();
        let (proxies, redis) = match store {
            Store::Memory => (vec![Proxy::start(&[&upstream.addr], policies)], None),
            Store::Redis(n) => {
                let redis = RedisServer::start();
                let config = format!(
                    "[store]\nkind = \"redis\"\nurl = \"{}\"\n{store_extra}\n\n{policies}",
                    redis.url()
                );
                let proxies = (0..n)
                    .map(|_| Proxy::start(&[&upstream.addr], &config))
                    .collect();
                (proxies, Some(redis))
            }
        };
        Self {
            proxies,
            upstream,
            redis,
            next: AtomicUsize::new(0),
        }
    }

    /// The next proxy in turn.
    pub fn proxy(&self) -> &Proxy {
        let i = self.next.fetch_add(1, Ordering::SeqCst);
        &self.proxies[i % self.proxies.len()]
    }

    /// GET `path` with `headers` from the next proxy in turn.
    pub fn get(&self, path: &str, headers: &[(&str, &str)]) -> Response {
        self.proxy().get(path, headers)
    }

    /// The status of GET `path` from the next proxy in turn.
    pub fn status(&self, path: &str) -> u16 {
        self.get(path, &[]).status().as_u16()
    }

    /// The sum of one series over every proxy.
    pub fn metric(&self, series: &str) -> f64 {
        self.proxies.iter().map(|p| p.metric(series)).sum()
    }
}
