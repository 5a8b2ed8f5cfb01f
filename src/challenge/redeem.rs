//! Solutions coming back (`GET <challenge.path>?nonce=…&solution=…&to=…`): a good one earns
//! a pass cookie and a redirect to where the client was going; a wrong, stale or replayed one
//! a new challenge; one whose nonce does not open (forged, or from another network) a
//! redirect back, where whatever asked asks again; a malformed one a 400. Never a pass on
//! doubt: a ledger that cannot answer means a new challenge.

use super::encoding::Coding;
use super::pow::{self, MAX_SOLUTION_DIGITS};
use super::room::{Challenges, Page, PageError, Visitor};
use super::target::{return_target, MAX_TARGET_LEN};
use super::token::{Nonce, TOKEN_LEN};
use crate::identity::ChallengeKind;
use crate::limiter::Redeemed;
use crate::telemetry::ChallengeResult;
use std::net::IpAddr;
use std::time::Duration;

/// How far a nonce's issue may lie in the future (the fleet's clocks differ a little).
const CLOCK_SKEW: Duration = Duration::from_secs(30);

/// What a solution earns.
#[derive(Debug)]
pub enum Redemption {
    /// A pass: set `cookie` (a whole `Set-Cookie` value) and send the client to `target`.
    Passed {
        /// The `Set-Cookie` value.
        cookie: String,
        /// Where the client was going: a same-origin path and query.
        target: String,
    },
    /// A new challenge page (the solution was wrong, stale or replayed).
    Again(Page),
    /// Back to `target`: the nonce did not open here, so whatever asks will ask again.
    Back {
        /// Where the client was going.
        target: String,
    },
    /// Not a solution: a 400 saying which parameter.
    Malformed(&'static str),
}

/// What a solution's query says.
struct Solution<'q> {
    nonce: String,
    solution: Option<String>,
    target: &'q str,
}

impl Challenges {
    /// What the solution in `query`, from `client` at `now_ms` over TLS or not (`secure`),
    /// earns; a new page (showing the request id `reference`) is encoded with `coding`.
    pub async fn redeem(
        &self,
        query: Option<&str>,
        client: Option<IpAddr>,
        reference: &str,
        now_ms: u64,
        secure: bool,
        coding: Coding,
    ) -> Result<Redemption, PageError> {
        let mut target = String::new();
        let solution = match read(query.unwrap_or(""), &mut target) {
            Ok(solution) => solution,
            Err(which) => return Ok(Redemption::Malformed(which)),
        };
        let Ok(nonce) = self.signer.open_nonce(&solution.nonce, client) else {
            self.metrics
                .count("unknown", "unknown", ChallengeResult::Failed);
            return Ok(Redemption::Back {
                target: solution.target.to_owned(),
            });
        };
        let kind = nonce.challenge.kind.word();
        if !self.holds(&nonce, &solution, now_ms).await {
            self.count(nonce.policy, kind, ChallengeResult::Failed);
            let visitor = Visitor {
                target: solution.target,
                client,
                reference,
            };
            let page = self.page(&nonce.challenge, nonce.policy, &visitor, now_ms, coding)?;
            return Ok(Redemption::Again(page));
        }
        let expires_s = now_ms / 1000 + self.settings.pass_ttl.as_secs();
        let (_, value) = self.signer.pass(&nonce, client, expires_s)?;
        self.count(nonce.policy, kind, ChallengeResult::Passed);
        Ok(Redemption::Passed {
            cookie: self.cookie(&value, secure),
            target: solution.target.to_owned(),
        })
    }

    /// Whether `solution` answers `nonce` at `now_ms`: in time, solved, and its first
    /// redemption.
    async fn holds(&self, nonce: &Nonce, solution: &Solution<'_>, now_ms: u64) -> bool {
        let expires_ms = nonce.issued_ms + self.settings.nonce_ttl.as_millis() as u64;
        let fresh =
            now_ms < expires_ms && nonce.issued_ms <= now_ms + CLOCK_SKEW.as_millis() as u64;
        let solved = match nonce.challenge.kind {
            ChallengeKind::Refresh => {
                now_ms >= nonce.issued_ms + self.settings.refresh_wait.as_millis() as u64
            }
            ChallengeKind::Pow { difficulty } => solution
                .solution
                .as_deref()
                .is_some_and(|s| pow::solved(&solution.nonce, s, difficulty)),
            // No page asks for a token: a nonce naming one was never issued here.
            ChallengeKind::PrivacyPass => false,
        };
        if !(fresh && solved) {
            return false;
        }
        match self
            .nonces
            .redeem("challenge", &nonce.id, now_ms, expires_ms)
            .await
        {
            Ok(Redeemed::First) => true,
            Ok(Redeemed::Replayed) => false,
            Err(e) => {
                log::warn!("a challenge solution was refused: the nonce ledger failed: {e}");
                false
            }
        }
    }

    /// The pass cookie `value` as a `Set-Cookie` value.
    pub(super) fn cookie(&self, value: &str, secure: bool) -> String {
        let name = &self.settings.cookie;
        let max_age = self.settings.pass_ttl.as_secs();
        let secure = if secure { "; Secure" } else { "" };
        format!("{name}={value}; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Lax{secure}")
    }
}

/// The solution in `query` (its decoded target kept in `target`), or the parameter that is
/// missing, repeated, too long or unsafe.
fn read<'t>(query: &str, target: &'t mut String) -> Result<Solution<'t>, &'static str> {
    let (mut nonce, mut solution, mut to) = (None, None, None);
    for (key, value) in form_urlencoded::parse(query.as_bytes()) {
        let (slot, most, name) = match key.as_ref() {
            "nonce" => (&mut nonce, TOKEN_LEN, "nonce"),
            "solution" => (&mut solution, MAX_SOLUTION_DIGITS, "solution"),
            "to" => (&mut to, MAX_TARGET_LEN, "to"),
            _ => continue,
        };
        if slot.is_some() || value.len() > most {
            return Err(name);
        }
        *slot = Some(value.into_owned());
    }
    *target = to.ok_or("to")?;
    let target = return_target(target).map_err(|_| "to")?;
    Ok(Solution {
        nonce: nonce.ok_or("nonce")?,
        solution,
        target,
    })
}
