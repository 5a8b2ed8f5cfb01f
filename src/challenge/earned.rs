//! What a Privacy Pass token earns at the challenge room: the pass a solved challenge would,
//! one that answers every challenge, with the cookie that carries it.

use super::room::Challenges;
use super::tokens::{Tokens, PRIVACY_PASS_POLICY};
use crate::identity::Pass;
use crate::privacy_pass::is_private_token;
use http::header::AUTHORIZATION;
use http::HeaderMap;
use std::net::IpAddr;

/// What a request's Privacy Pass token earned.
#[derive(Debug)]
pub struct Earned {
    /// The pass, as the gate reads it.
    pub pass: Pass,
    /// The `Set-Cookie` value carrying it to the client.
    pub cookie: String,
}

impl Challenges {
    /// The room, taking tokens from `tokens`' issuers.
    pub fn with_tokens(mut self, tokens: Option<Tokens>) -> Self {
        self.tokens = tokens;
        self
    }

    /// The trusted issuers, when `[challenge.privacy_pass]` names any.
    pub fn tokens(&self) -> Option<&Tokens> {
        self.tokens.as_ref()
    }

    /// The pass the Privacy Pass token in `headers` earns for `client` at `now_ms` (`secure`:
    /// the cookie is `Secure`); `None` without a token, or for one that does not redeem.
    pub async fn redeem_token(
        &self,
        headers: &HeaderMap,
        client: Option<IpAddr>,
        now_ms: u64,
        secure: bool,
    ) -> Option<Earned> {
        let tokens = self.tokens.as_ref()?;
        let value = headers.get(AUTHORIZATION)?.as_bytes();
        if !is_private_token(value) || !tokens.redeem(value, now_ms).await {
            return None;
        }
        let expires_s = now_ms / 1000 + self.settings.pass_ttl.as_secs();
        let made = self
            .signer
            .pass_for(PRIVACY_PASS_POLICY, tokens.challenge(), client, expires_s);
        match made {
            Ok((pass, value)) => Some(Earned {
                pass,
                cookie: self.cookie(&value, secure),
            }),
            Err(e) => {
                log::error!("a redeemed Privacy Pass token earned no pass: {e}");
                None
            }
        }
    }
}
