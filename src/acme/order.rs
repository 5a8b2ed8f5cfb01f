//! One order, for one domain: place it, answer each authorization's challenge (here and, in a
//! fleet, in Redis), wait for the CA to validate, send the certificate request, download the
//! chain. The answers are withdrawn however it ends; every failure names its step.

use super::answers::Answers;
use super::error::{AcmeError, Step};
use super::kept::{Kept, Written};
use super::settings::ChallengeType;
use super::vault::Vault;
use instant_acme::{Account, AuthorizationStatus, Identifier, NewOrder, OrderStatus, RetryPolicy};
use std::time::Duration;

/// How long an answer is kept for the CA to ask (it asks within seconds of `set_ready`).
const ANSWER_TTL: Duration = Duration::from_secs(300);
/// How long the CA may take to validate, and to issue.
const VALIDATION_WAIT: Duration = Duration::from_secs(90);

/// What an order needs.
pub(super) struct Ordering<'o> {
    pub(super) account: &'o Account,
    pub(super) challenge: ChallengeType,
    pub(super) answers: &'o Answers,
    pub(super) vault: &'o Vault,
}

impl Ordering<'_> {
    /// A certificate and key for `domain`.
    pub(super) async fn order(&self, domain: &str) -> Result<Kept, AcmeError> {
        let mut published = Vec::new();
        let result = self.run(domain, &mut published).await;
        for name in published {
            self.answers.withdraw(&name);
            if let Some(fleet) = self.vault.fleet() {
                fleet.forget(&name).await;
            }
        }
        result.map_err(|e| e.of(domain))
    }

    async fn run(&self, domain: &str, published: &mut Vec<String>) -> Result<Kept, AcmeError> {
        let identifiers = [Identifier::Dns(domain.to_owned())];
        let mut order = self
            .account
            .new_order(&NewOrder::new(&identifiers))
            .await
            .map_err(|e| AcmeError::failed(Step::Order, &e))?;
        let mut authorizations = order.authorizations();
        while let Some(authorization) = authorizations.next().await {
            let mut authorization =
                authorization.map_err(|e| AcmeError::failed(Step::Authorization, &e))?;
            match authorization.status {
                AuthorizationStatus::Pending => {}
                AuthorizationStatus::Valid => continue,
                other => {
                    let why = format!("the authorization is {other:?}");
                    return Err(AcmeError::at(Step::Authorization, why));
                }
            }
            let kind = match self.challenge {
                ChallengeType::Http01 => instant_acme::ChallengeType::Http01,
                ChallengeType::TlsAlpn01 => instant_acme::ChallengeType::TlsAlpn01,
            };
            let mut challenge = authorization.challenge(kind).ok_or_else(|| {
                let why = format!("the CA offers no {} challenge", self.challenge.word());
                AcmeError::at(Step::Authorization, why)
            })?;
            let key_authorization = challenge.key_authorization();
            let answer = key_authorization.as_str();
            let name = match self.challenge {
                ChallengeType::Http01 => self.answers.publish_http01(&challenge.token, answer),
                ChallengeType::TlsAlpn01 => self.answers.publish_alpn(domain, answer),
            };
            published.push(name.clone());
            if let Some(fleet) = self.vault.fleet() {
                let shared = fleet.answer(&name, answer, ANSWER_TTL).await?;
                if shared == Written::LockLost {
                    return Err(AcmeError::at(Step::Challenge, "the fleet's lock was lost"));
                }
            }
            challenge
                .set_ready()
                .await
                .map_err(|e| AcmeError::failed(Step::Challenge, &e))?;
        }
        let patience = RetryPolicy::new().timeout(VALIDATION_WAIT);
        let status = order
            .poll_ready(&patience)
            .await
            .map_err(|e| AcmeError::failed(Step::Validation, &e))?;
        if status != OrderStatus::Ready {
            let problem = order.state().error.as_ref().map(|p| p.to_string());
            let why = format!("the order is {status:?}: {}", problem.unwrap_or_default());
            return Err(AcmeError::at(Step::Validation, why));
        }
        let key = order
            .finalize()
            .await
            .map_err(|e| AcmeError::failed(Step::Finalize, &e))?;
        let chain = order
            .poll_certificate(&patience)
            .await
            .map_err(|e| AcmeError::failed(Step::Certificate, &e))?;
        Ok(Kept { chain, key })
    }
}
