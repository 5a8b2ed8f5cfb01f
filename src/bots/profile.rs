//! A request's [`Traits`]: the network and country of its address, and the crawler its
//! User-Agent claims with how the claim fared. A claim is verified by the crawler's published
//! ranges (no I/O), else by reverse DNS confirmed forward (cached; never longer than
//! `bots.dns_timeout`). A Web Bot Auth signature outranks the User-Agent: a request offering
//! one is the signed agent it names, verified or not. Counts `floodgate_bot_requests_total`.

use super::{
    BotsSettings, Crawler, Crawlers, DnsSettings, Geo, Message, ReverseDns, Scorer, SignedAgents,
};
use crate::clock::Clock;
use crate::identity::{BotClaim, Proof, Score, Traits, Verification};
use crate::limiter::NonceLedger;
use crate::telemetry::{BotMetrics, SignedMetrics};
use http::header::USER_AGENT;
use http::HeaderMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

/// Works out what is known of a request's sender.
pub struct Profiler {
    crawlers: Arc<Crawlers>,
    /// Reverse DNS, shared across reloads while `[bots]`'s DNS settings stay the same; `None`
    /// when no resolver could be set up (claims checkable by DNS alone stay unfinished).
    dns: Option<Arc<ReverseDns>>,
    /// What `dns` was set up with.
    dns_settings: DnsSettings,
    geo: Arc<Geo>,
    /// `None` when `[bots.signed]` configures nothing: signatures are not looked at.
    signed: Option<SignedAgents>,
    /// Works out bot scores (`[bots.score]`), when asked.
    scorer: Scorer,
    metrics: BotMetrics,
    /// What signatures' `created` and `expires` are compared with.
    clock: Clock,
}

impl Profiler {
    /// A profiler knowing the crawlers of `settings`, asking reverse DNS as they say (the
    /// resolver and cache of `previous` when its settings are the same, so a reload keeps
    /// what was learnt) and reading `geo`; signed agents' nonces are redeemed in `nonces`.
    pub fn new(
        settings: &BotsSettings,
        previous: Option<&Profiler>,
        geo: Arc<Geo>,
        metrics: BotMetrics,
        signed_metrics: SignedMetrics,
        nonces: Arc<dyn NonceLedger>,
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
        let signed = (!settings.signed.is_empty()).then(|| {
            let previous = previous.and_then(|p| p.signed.as_ref());
            SignedAgents::new(&settings.signed, previous, nonces, signed_metrics)
        });
        Self {
            crawlers: settings.crawlers.clone(),
            dns,
            dns_settings: settings.dns.clone(),
            geo,
            signed,
            scorer: Scorer::new(&settings.score),
            metrics,
            clock: Clock::System,
        }
    }

    /// The same profiler, checking signatures' times against `clock`.
    pub fn with_clock(self, clock: Clock) -> Self {
        Self { clock, ..self }
    }

    /// What is known of the sender of `request`, from `client`.
    pub async fn profile(&self, client: Option<IpAddr>, request: &Message<'_>) -> Traits {
        let client = client.map(|ip| ip.to_canonical());
        let mut traits = Traits::default();
        if let (Some(ip), false) = (client, self.geo.is_empty()) {
            traits.asn = self.geo.asn(ip);
            traits.country = self.geo.country(ip);
        }
        // A signature that held or failed outranks the User-Agent; one that could not be
        // checked yet does not hide what the User-Agent's claim showed (a spoofed crawler stays
        // spoofed).
        traits.bot = match self.signed_claim(request).await {
            Some(signed) if signed.verification != Verification::Unfinished => Some(signed),
            unfinished => self.claim(client, request.headers).await.or(unfinished),
        };
        if let Some(claim) = &traits.bot {
            self.metrics.count(claim.category(), claim.verified());
        }
        traits
    }

    /// The bot score of a request with `headers` from the sender `traits` describes (its
    /// JA4 and HTTP/2 fingerprint filled in); counts `floodgate_bot_signals_total`.
    pub fn score(&self, traits: &Traits, headers: &HeaderMap) -> Score {
        let score = self.scorer.score(traits, headers);
        self.metrics.count_signals(score.signals);
        score
    }

    /// The signed agent `request` claims to be, if it offers a signature and signatures are
    /// verified.
    async fn signed_claim(&self, request: &Message<'_>) -> Option<BotClaim> {
        let signed = self.signed.as_ref()?;
        signed
            .verify(request, self.clock.now_ms(), Instant::now())
            .await
    }

    /// The crawler the first User-Agent claims, checked against `client`.
    async fn claim(&self, client: Option<IpAddr>, headers: &HeaderMap) -> Option<BotClaim> {
        let user_agent = headers.get(USER_AGENT)?.to_str().ok()?;
        let (number, crawler) = self.crawlers.catalogue.classify(user_agent)?;
        let verification = match client {
            Some(ip) => self.verify(number, crawler, ip).await,
            None if crawler.checkable() => Verification::Unfinished,
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
    /// failed when `ip` passes none of the ways loaded; unfinished when the check cannot be
    /// made (no resolver, or only ranges it publishes but that are not loaded); unchecked
    /// only when it publishes no way at all.
    async fn verify(&self, number: usize, crawler: &Crawler, ip: IpAddr) -> Verification {
        let ranges = self.crawlers.ranges_of(number);
        if ranges.is_some_and(|r| r.contains(ip)) {
            return Verification::Verified(Proof::Ranges);
        }
        match (&self.dns, crawler.rdns.is_empty(), ranges.is_some()) {
            (Some(dns), false, _) => dns.verify(ip, &crawler.rdns).await,
            (None, false, _) => Verification::Unfinished,
            (_, true, true) => Verification::Failed,
            (_, true, false) if crawler.checkable() => Verification::Unfinished,
            (_, true, false) => Verification::Unchecked,
        }
    }
}
