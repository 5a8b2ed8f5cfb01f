//! `floodgate --test`: the effective configuration, as a person reads it (secrets hidden).

use super::bots::BotsLines;
use super::challenge::ChallengeLine;
use super::crowdsec::CrowdSecLine;
use super::decisions::CheckLine;
use super::identity::IdentityLines;
use super::overload::OverloadLine;
use super::rls::RlsLine;
use super::runtime::Config;
use super::store::StoreLines;
use super::upstream::PoolLine;
use crate::identity::ChallengeKind;
use std::fmt;

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
        write!(f, "{s}")?;
        write!(f, "{}", self.admin)?;
        if let Some(check) = &self.check {
            write!(f, "{}", CheckLine(check))?;
        }
        if let Some(rls) = &self.rls {
            write!(f, "{}", RlsLine(rls))?;
        }
        if let Some(cs) = &self.crowdsec {
            write!(f, "{}", CrowdSecLine(cs))?;
        }
        if let Some(traces) = &self.traces {
            let kept = traces.sampling;
            writeln!(
                f,
                "traces          OTLP/HTTP to {} as {}; kept: {} of allowed requests, {} of refusals",
                traces.url, traces.service_name, kept.allowed, kept.refused
            )?;
        }
        for line in self.geo.describe() {
            writeln!(f, "geo             {line}")?;
        }
        self.describe_challenge(f)?;
        if let Some(overload) = &self.overload {
            write!(f, "{}", OverloadLine(overload))?;
        }
        for pool in &u.pools {
            write!(f, "{}", PoolLine(pool))?;
        }
        for route in &u.routes {
            let pool = u.pools.get(route.pool).map_or("?", |p| p.name.as_str());
            writeln!(f, "route           {} → pool {pool}", route.route)?;
        }
        write!(f, "{}", s.limits)?;
        if s.listen.is_some() {
            self.proxy_lines(f)?;
        }
        write!(f, "{}", StoreLines(&self.store))?;
        let identity = IdentityLines {
            chain: &self.identity,
            hash_key: self.hash_key.as_ref(),
            store: &self.store,
            client_ip: &self.client_ip,
            jwt: self.jwt.as_ref(),
            access: &self.access,
        };
        write!(f, "{identity}")?;
        write!(
            f,
            "{}",
            super::verify::VerifyLines(&self.verify, &self.store)
        )?;
        write!(f, "{}", self.response)?;
        if self.server.shadow {
            writeln!(f, "shadow mode     every policy counts but never blocks")?;
        }
        if self.policies.is_empty() {
            writeln!(f, "policies        none: every request passes")?;
        }
        for policy in &self.policies {
            writeln!(f, "policy          {policy}")?;
        }
        write!(f, "{}", BotsLines(&self.bots))?;
        if let Some(robots) = &self.robots {
            write!(f, "{}", super::robots::RobotsLine(robots))?;
        }
        Ok(())
    }
}

impl Config {
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
        // A CrowdSec captcha is a `pow` challenge: only a policy can ask for `refresh`.
        let refresh = self.policies.iter().any(|p| {
            let on_limit = p.limit().and_then(|l| l.rules.on_limit.as_ref());
            let mut kinds = p.action.challenge().into_iter().chain(on_limit);
            kinds.any(|c| c.kind == ChallengeKind::Refresh)
        });
        let settings = &self.challenge;
        write!(f, "{}", ChallengeLine { settings, refresh })
    }
}
