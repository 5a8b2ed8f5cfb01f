//! `floodgate --test`: the effective configuration, as a person reads it (secrets hidden).

use super::runtime::Config;
use crate::identity::ChallengeKind;
use crate::limiter::StoreSettings;
use crate::proxy::PoolSettings;
use std::fmt;

/// One pool on one line: backends, balance, Host, health.
fn describe_pool(pool: &PoolSettings) -> String {
    let backends: Vec<String> = pool
        .backends
        .iter()
        .map(|b| {
            let weight = match b.weight {
                1 => String::new(),
                w => format!(" weight {w}"),
            };
            match &b.tls_name {
                Some(name) => format!("https://{} (verified as {name}){weight}", b.address),
                None if b.h2c => format!("h2c://{}{weight}", b.address),
                None => format!("{}{weight}", b.address),
            }
        })
        .collect();
    let mut line = format!("{} ({}", backends.join(", "), pool.balance.as_str());
    if let Some(host) = &pool.host {
        line.push_str(&format!("; Host {host}"));
    }
    let h = &pool.health;
    if let Some(c) = &h.active {
        line.push_str(&format!(
            "; GET {} every {:?} (timeout {:?}), out after {}, back after {}",
            c.path, c.interval, c.timeout, c.unhealthy_after, c.healthy_after
        ));
    }
    match h.eject_after {
        0 => line.push_str("; no ejection)"),
        n => line.push_str(&format!("; ejected {:?} after {n} failures)", h.eject_for)),
    }
    line
}

impl Config {
    /// The lines about what only the proxy does: its TLS listener, its timeouts to backends,
    /// the headers it forwards.
    fn proxy_lines(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (s, u) = (&self.server, &self.upstream);
        if let Some(tls) = &s.tls {
            let alpn = if tls.h2 { "h2, http/1.1" } else { "http/1.1" };
            let certificates = match (&tls.files, &self.acme) {
                (Some(files), None) => files.cert_file.clone(),
                (Some(files), Some(acme)) => {
                    format!(
                        "{} and ACME for {}",
                        files.cert_file,
                        acme.domains.join(", ")
                    )
                }
                (None, Some(acme)) => format!("ACME for {}", acme.domains.join(", ")),
                (None, None) => "no certificate".to_owned(),
            };
            writeln!(
                f,
                "TLS listener    {} ({certificates}; ALPN {alpn})",
                tls.listen
            )?;
        }
        writeln!(
            f,
            "timeouts        connect {:?}, read {:?}, write {:?}; upgraded connections idle {:?}",
            u.connect_timeout, u.read_timeout, u.write_timeout, u.idle_timeout
        )?;
        let via = if s.front.via { "; Via added" } else { "" };
        let case = match s.front.preserve_header_case {
            true => "kept as sent",
            false => "lowercase",
        };
        writeln!(
            f,
            "forwarding      X-Forwarded-For/-Proto/-Host, Forwarded; request id in `{}`{via}; \
             HTTP/1 header names {case}",
            s.front.request_id_header
        )?;
        writeln!(f, "fingerprints    {}", self.fingerprints())?;
        Ok(())
    }

    /// Which client fingerprints are read, and which go to the backend in which header.
    fn fingerprints(&self) -> String {
        let to_backend = |header: Option<&http::HeaderName>| match header {
            Some(name) => format!(", to the backend in `{name}`"),
            None => String::new(),
        };
        let ja4 = match self.server.tls.as_ref().is_some_and(|tls| tls.ja4) {
            true => format!(
                "JA4 of TLS clients{}",
                to_backend(self.upstream.ja4_header.as_ref())
            ),
            false => "no JA4 (no TLS listener, or tls_ja4 = false)".to_owned(),
        };
        let h2fp = match self.wants_h2fp() {
            true => format!(
                "HTTP/2 fingerprint of h2 and h2c connections{}",
                to_backend(self.upstream.h2fp_header.as_ref())
            ),
            false => "no HTTP/2 fingerprint (nothing asks for one)".to_owned(),
        };
        format!("{ja4}; {h2fp}")
    }
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.server;
        let u = &self.upstream;
        writeln!(f, "config {} is valid", self.path.display())?;
        let h2c = if s.h2c { ", HTTP/1 and h2c" } else { "" };
        match s.listen {
            Some(listen) => writeln!(f, "proxy listener  {listen} ({} threads{h2c})", s.threads)?,
            None => writeln!(
                f,
                "proxy listener  none: no [upstream] ({} threads)",
                s.threads
            )?,
        }
        writeln!(
            f,
            "shutdown        in-flight requests get {:?}, then {:?} to stop",
            s.grace_period, s.shutdown_timeout
        )?;
        writeln!(f, "pid file        {}", s.pid_file.display())?;
        writeln!(f, "upgrade socket  {}", s.upgrade_sock)?;
        writeln!(
            f,
            "admin listener  {} (top {} offenders over {:?}){}",
            self.admin.listen,
            self.admin.offenders_top,
            self.admin.offenders_window,
            match self.admin.protect_metrics {
                true => "; /metrics and /offenders need a token",
                false => "",
            }
        )?;
        let a = &self.admin;
        match &a.token_file {
            Some(tokens) => writeln!(
                f,
                "control API     tokens from {}; at most {} bans, {} overrides{}",
                tokens.display(),
                a.bounds.max_bans,
                a.bounds.max_overrides,
                a.state_file
                    .as_ref()
                    .map_or(String::new(), |p| format!("; kept in {}", p.display()))
            )?,
            None => writeln!(f, "control API     off (set admin.token_file to enable it)")?,
        }
        if let Some(check) = &self.check {
            let trusted: Vec<String> = check.trusted.iter().map(|n| n.to_string()).collect();
            writeln!(
                f,
                "decisions       {} for proxies in [{}]{}",
                check.listen,
                trusted.join(", "),
                check
                    .dedupe_header
                    .as_ref()
                    .map_or(String::new(), |h| format!(
                        "; repeated checks of one `{h}` answered once"
                    ))
            )?;
        }
        if let Some(rls) = &self.rls {
            let rules: usize = rls.rules.domains.len();
            writeln!(
                f,
                "rate limit svc  {}{} for Envoy, {rules} domain(s) from {}, store budget {:?}",
                rls.listen,
                if rls.tls.is_some() { " (TLS)" } else { "" },
                rls.config_dir.display(),
                rls.timeout
            )?;
        }
        if let Some(cs) = &self.crowdsec {
            writeln!(
                f,
                "crowdsec        {} every {}s, scopes [{}], captcha → {}",
                cs.url,
                cs.poll_interval.as_secs(),
                cs.scopes.join(", "),
                cs.on_captcha.word()
            )?;
        }
        for line in self.geo.describe() {
            writeln!(f, "geo             {line}")?;
        }
        self.describe_challenge(f)?;
        self.describe_overload(f)?;
        for pool in &u.pools {
            writeln!(f, "pool {:<10} {}", pool.name, describe_pool(pool))?;
        }
        for route in &u.routes {
            let pool = u.pools.get(route.pool).map_or("?", |p| p.name.as_str());
            writeln!(f, "route           {} → pool {pool}", route.route)?;
        }
        let l = &s.limits;
        let per_ip = l
            .max_connections_per_ip
            .map_or(String::new(), |n| format!(", {n} per client address"));
        writeln!(
            f,
            "connections     at most {}{per_ip}; a request head within {:?} and {} bytes; idle {:?} between requests",
            l.max_connections, l.header_timeout, l.max_header_bytes, l.keepalive_timeout
        )?;
        if s.listen.is_some() {
            self.proxy_lines(f)?;
        }
        match &self.store {
            StoreSettings::Memory { max_entries } => {
                writeln!(f, "store           memory, at most {max_entries} buckets")?
            }
            StoreSettings::Redis(r) => {
                writeln!(
                    f,
                    "store           redis {} (keys {}:{{identity}}:policy)",
                    r.redacted_url(),
                    r.prefix
                )?;
                writeln!(
                    f,
                    "                budget {:?}, on error {}, breaker at {:.0} % failed of at least {} calls in {:?}, else {} in a row (probes after {:?})",
                    r.timeout, r.on_error.as_str(), r.breaker.failure_ratio * 100.0,
                    r.breaker.min_calls, r.breaker.window, r.breaker.consecutive_failures,
                    r.breaker.cooldown
                )?;
                writeln!(
                    f,
                    "                deny cache {} entries, key expiry margin {:?}, concurrency leases {:?}",
                    r.deny_cache_entries, r.ttl_margin, r.in_flight_lease
                )?;
                match r.fleet_size {
                    Some(n) => writeln!(f, "                fleet of {n} instances (pinned)")?,
                    None => writeln!(f, "                fleet size learned from Redis")?,
                }
            }
        }
        let id = &self.identity;
        writeln!(
            f,
            "identity        {id} (ipv4 /{}, ipv6 /{}; invalid tokens: {:?})",
            id.ip.ipv4_prefix, id.ip.ipv6_prefix, id.on_invalid_token
        )?;
        let keyed_by = match (&self.hash_key, &self.store) {
            (Some(_), _) => "identity.hash_key (hidden)",
            (None, StoreSettings::Memory { .. }) => "a random key of this process",
            (None, StoreSettings::Redis(_)) => "the fleet's key in Redis (`prefix:hash_key`)",
        };
        writeln!(f, "digests         keyed BLAKE3, keyed by {keyed_by}")?;
        let trusted: Vec<String> = self
            .client_ip
            .trusted()
            .iter()
            .map(|n| n.to_string())
            .collect();
        match trusted.is_empty() {
            true => writeln!(f, "client address  the TCP peer (no trusted proxies)")?,
            false => writeln!(
                f,
                "client address  `{}` (and no other forwarding header) from {}",
                self.client_ip.header(),
                trusted.join(", ")
            )?,
        }
        if let Some(jwt) = &self.jwt {
            writeln!(f, "bearer tokens   verified by {jwt:?}")?;
        }
        for rule in self.access.allow() {
            writeln!(f, "allow           {rule}")?;
        }
        for rule in self.access.deny() {
            writeln!(f, "deny (403)      {rule}")?;
        }
        writeln!(f, "throttled with  {}", self.response.throttle_status)?;
        if self.server.shadow {
            writeln!(f, "shadow mode     every policy counts but never blocks")?;
        }
        if self.policies.is_empty() {
            writeln!(f, "policies        none: every request passes")?;
        }
        for policy in &self.policies {
            writeln!(f, "policy          {policy}")?;
        }
        self.describe_bots(f)
    }
}

impl Config {
    /// The crawler catalogue, how claims are verified.
    /// The `[overload]` settings, when configured.
    fn describe_overload(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(o) = &self.overload else {
            return Ok(());
        };
        let limit = match o.max_in_flight {
            crate::overload::MaxInFlight::Fleet(n) => {
                format!("{n} in flight per pool across the fleet (each instance its share)")
            }
            crate::overload::MaxInFlight::Auto { floor, ceiling } => {
                format!("an adaptive limit per pool from {floor} to {ceiling} in flight")
            }
        };
        let target = match o.latency_target {
            Some(t) => format!(", overloaded above {t:?}"),
            None => String::new(),
        };
        let queued = match o.max_queued {
            Some(n) => format!("{n} waiting"),
            None => "4 × the limit waiting (at least 16)".to_owned(),
        };
        writeln!(
            f,
            "overload        {limit}{target}; {queued}, each at most {:?}; shed 503 after Retry-After {}s",
            o.queue_time,
            o.retry_after_s()
        )
    }

    /// The `[challenge]` settings, when a policy or CrowdSec challenges.
    fn describe_challenge(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let policies = self.policies.iter().any(crate::gate::challenges);
        let captcha = self
            .crowdsec
            .as_ref()
            .is_some_and(|c| c.on_captcha == crate::control::Remedy::Challenge);
        if !policies && !captcha {
            return Ok(());
        }
        let c = &self.challenge;
        // A CrowdSec captcha is a `pow` challenge: only a policy can ask for `refresh`.
        let refresh = self.policies.iter().any(|p| {
            let kinds = p.action.challenge().into_iter().chain(&p.rules.on_limit);
            kinds.into_iter().any(|c| c.kind == ChallengeKind::Refresh)
        });
        let wait = match refresh {
            true => format!(
                " (a refresh page reloads after {})",
                humantime::format_duration(c.refresh_wait)
            ),
            false => String::new(),
        };
        writeln!(
            f,
            "challenge       pages answered {}{wait}; solutions at {}, nonces good {}s; \
             passes in cookie `{}` for {}s; never on {}",
            c.status,
            c.path,
            c.nonce_ttl.as_secs(),
            c.cookie,
            c.pass_ttl.as_secs(),
            c.never_paths.join(" ")
        )
    }

    fn describe_bots(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let crawlers = &self.bots.crawlers;
        let catalogue = &crawlers.catalogue;
        writeln!(
            f,
            "crawlers        {} in the catalogue of {}, {} with published ranges loaded",
            catalogue.len(),
            catalogue.updated(),
            crawlers.with_ranges()
        )?;
        let dns = &self.bots.dns;
        let resolver = dns
            .resolver
            .map_or("the system's resolver".to_owned(), |r| r.to_string());
        writeln!(
            f,
            "reverse DNS     {resolver}, a request waits at most {:?}",
            dns.timeout
        )?;
        let signed = &self.bots.signed;
        if signed.is_empty() {
            return Ok(());
        }
        writeln!(
            f,
            "signed agents   directories of {} fetched{}, {} keys in the config",
            match signed.agents.is_empty() {
                true => "none".to_owned(),
                false => signed.agents.join(" "),
            },
            signed
                .ca_file
                .as_ref()
                .map_or(String::new(), |p| format!(" (CA {})", p.display())),
            signed.keys.len()
        )
    }
}
