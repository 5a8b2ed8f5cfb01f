//! A request's [`Traits`]: the network and country of its address, and the crawler its
//! User-Agent claims with how the claim fared. A claim is verified by the crawler's published
//! ranges (no I/O), else by reverse DNS confirmed forward (cached; never longer than
//! `bots.dns_timeout`). Counts `floodgate_bot_requests_total`.

use super::{BotsSettings, Crawler, Crawlers, DnsSettings, Geo, ReverseDns};
use crate::identity::{BotClaim, Proof, Traits, Verification};
use crate::telemetry::BotMetrics;
use http::header::USER_AGENT;
use http::HeaderMap;
use std::net::IpAddr;
use std::sync::Arc;

/// Works out what is known of a request's sender.
pub struct Profiler {
    crawlers: Arc<Crawlers>,
    /// Reverse DNS, shared across reloads while `[bots]`'s DNS settings stay the same; `None`
    /// when no resolver could be set up (claims checkable by DNS alone stay unfinished).
    dns: Option<Arc<ReverseDns>>,
    /// What `dns` was set up with.
    dns_settings: DnsSettings,
    geo: Arc<Geo>,
    metrics: BotMetrics,
}

impl Profiler {
    /// A profiler knowing the crawlers of `settings`, asking reverse DNS as they say (the
    /// resolver and cache of `previous` when its settings are the same, so a reload keeps
    /// what was learnt) and reading `geo`.
    pub fn new(
        settings: &BotsSettings,
        previous: Option<&Profiler>,
        geo: Arc<Geo>,
        metrics: BotMetrics,
    ) -> Self {
        let kept = previous
            .filter(|p| p.dns_settings == settings.dns)
            .map(|p| p.dns.clone());
        let dns = kept.unwrap_or_else(|| match ReverseDns::new(&settings.dns) {
            Ok(dns) => Some(Arc::new(dns)),
            Err(e) => {
                log::warn!(
                    "crawlers' reverse DNS cannot be asked ({e}): such claims stay unverified"
                );
                None
            }
        });
        Self {
            crawlers: settings.crawlers.clone(),
            dns,
            dns_settings: settings.dns.clone(),
            geo,
            metrics,
        }
    }

    /// What is known of the sender of a request from `client` with `headers`.
    pub async fn profile(&self, client: Option<IpAddr>, headers: &HeaderMap) -> Traits {
        let client = client.map(|ip| ip.to_canonical());
        let mut traits = Traits::default();
        if let (Some(ip), false) = (client, self.geo.is_empty()) {
            traits.asn = self.geo.asn(ip);
            traits.country = self.geo.country(ip);
        }
        traits.bot = self.claim(client, headers).await;
        if let Some(claim) = &traits.bot {
            self.metrics.count(claim.category(), claim.verified());
        }
        traits
    }

    /// The crawler the first User-Agent claims, checked against `client`.
    async fn claim(&self, client: Option<IpAddr>, headers: &HeaderMap) -> Option<BotClaim> {
        let user_agent = headers.get(USER_AGENT)?.to_str().ok()?;
        let (number, crawler) = self.crawlers.catalogue.classify(user_agent)?;
        let verification = match client {
            Some(ip) => self.verify(number, crawler, ip).await,
            None => Verification::Unchecked,
        };
        Some(BotClaim {
            name: crawler.name.clone(),
            operator: crawler.operator.clone(),
            claimed: crawler.category,
            verification,
        })
    }

    /// Whether `ip` is crawler number `number`'s: in its ranges, else confirmed by reverse DNS;
    /// failed when it publishes a way and `ip` passes none; unchecked when it publishes none.
    async fn verify(&self, number: usize, crawler: &Crawler, ip: IpAddr) -> Verification {
        let ranges = self.crawlers.ranges_of(number);
        if ranges.is_some_and(|r| r.contains(ip)) {
            return Verification::Verified(Proof::Ranges);
        }
        match (&self.dns, crawler.rdns.is_empty(), ranges.is_some()) {
            (Some(dns), false, _) => dns.verify(ip, &crawler.rdns).await,
            (None, false, _) => Verification::Unfinished,
            (_, true, true) => Verification::Failed,
            (_, true, false) => Verification::Unchecked,
        }
    }
}
