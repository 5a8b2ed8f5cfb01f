//! [`ReverseDns`]: whether an address's reverse DNS confirms a crawler's domain, asked from
//! any request handler, answered within the configured timeout, remembered per address.

use super::answer::Answer;
use super::background::Background;
use super::cache::{Ask, Cache, CAPACITY, MAX_LOOKUPS};
use super::lookup::look_up;
use super::resolver::Asker;
use crate::bots::DnsSettings;
use crate::identity::Verification;
use hickory_resolver::net::NetError;
use parking_lot::Mutex;
use std::net::IpAddr;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Reverse-DNS verification of crawlers, with its cache and lookup thread. Cheap to clone:
/// clones share both; the thread stops when the last clone is dropped.
#[derive(Debug, Clone)]
pub struct ReverseDns {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    resolver: Asker,
    cache: Arc<Mutex<Cache>>,
    timeout: Duration,
    background: Background,
}

/// Why reverse-DNS verification could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum DnsError {
    /// No `bots.resolver` was given and the system's configuration could not be read.
    #[error(
        "cannot read the system's DNS configuration (/etc/resolv.conf): {0}; set [bots] resolver"
    )]
    SystemConfig(String),
    /// The resolver could not be built.
    #[error("cannot set up the DNS resolver: {0}")]
    Resolver(NetError),
    /// The lookup thread could not be started.
    #[error("cannot start the DNS lookup thread: {0}")]
    Thread(std::io::Error),
}

impl ReverseDns {
    /// Verification asking `settings.resolver` (or the system's servers), holding a request
    /// at most `settings.timeout`.
    pub fn new(settings: &DnsSettings) -> Result<ReverseDns, DnsError> {
        let background = Background::start("floodgate-dns").map_err(DnsError::Thread)?;
        let resolver = {
            let _inside = background.handle().enter();
            Asker::new(settings)?
        };
        let capacity = NonZeroUsize::new(CAPACITY).unwrap_or(NonZeroUsize::MIN);
        Ok(Self {
            inner: Arc::new(Inner {
                resolver,
                cache: Arc::new(Mutex::new(Cache::new(capacity, MAX_LOOKUPS))),
                timeout: settings.timeout,
                background,
            }),
        })
    }

    /// Whether `ip`'s reverse DNS confirms one of `suffixes` (lower-case, no leading dot,
    /// matched on label boundaries: "googlebot.com" matches "crawl-1.googlebot.com" and
    /// "googlebot.com", never "evilgooglebot.com"): Verified(Proof::ReverseDns), Failed,
    /// or Unfinished when the answer did not come within the timeout (the lookup goes on
    /// and its answer serves the next request). No suffixes: Failed, nothing asked.
    /// Call it inside a Tokio runtime with timers (pingora's are).
    pub async fn verify(&self, ip: IpAddr, suffixes: &[Arc<str>]) -> Verification {
        if suffixes.is_empty() {
            return Verification::Failed;
        }
        let ip = ip.to_canonical();
        let ask = self.inner.cache.lock().ask(ip, Instant::now());
        let answer = match ask {
            Ask::Known(answer) => answer,
            Ask::Busy => return Verification::Unfinished,
            Ask::Wait { answer, start } => {
                if start {
                    self.start_lookup(ip);
                }
                match tokio::time::timeout(self.inner.timeout, answer).await {
                    Ok(Ok(answer)) => answer,
                    _ => return Verification::Unfinished,
                }
            }
        };
        answer.verdict(suffixes)
    }

    fn start_lookup(&self, ip: IpAddr) {
        let resolver = self.inner.resolver.clone();
        let mut settle = Settle {
            cache: self.inner.cache.clone(),
            ip,
            answer: None,
        };
        self.inner.background.spawn(async move {
            let found = look_up(&resolver, ip).await;
            settle.found(found);
        });
    }
}

/// Settles a lookup when its task ends, however it ends: with its answer, or as failed if
/// the task panicked or was dropped, so no address is left waiting for ever.
struct Settle {
    cache: Arc<Mutex<Cache>>,
    ip: IpAddr,
    answer: Option<(Answer, Option<Duration>)>,
}

impl Settle {
    fn found(&mut self, found: (Answer, Option<Duration>)) {
        self.answer = Some(found);
    }
}

impl Drop for Settle {
    fn drop(&mut self) {
        let (answer, ttl) = self.answer.take().unwrap_or((Answer::Failed, None));
        self.cache
            .lock()
            .settle(self.ip, answer, ttl, Instant::now());
    }
}
