//! What went wrong, named by the domain and the step: an order that fails leaves the
//! certificate in force, and the log says where it stopped.

use crate::telemetry::Causes;
use std::fmt;

/// The step of getting a certificate that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Reaching the directory, or creating or restoring the account.
    Account,
    /// Placing the order.
    Order,
    /// Reading an authorization or finding its challenge.
    Authorization,
    /// Publishing the challenge's answer and telling the CA it is ready.
    Challenge,
    /// Waiting for the CA to validate.
    Validation,
    /// Sending the certificate request.
    Finalize,
    /// Downloading and reading the certificate.
    Certificate,
    /// Keeping the account or certificate (files, Redis).
    Store,
}

impl Step {
    /// The step's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Account => "account",
            Self::Order => "new order",
            Self::Authorization => "authorization",
            Self::Challenge => "challenge",
            Self::Validation => "validation",
            Self::Finalize => "finalize",
            Self::Certificate => "certificate",
            Self::Store => "store",
        }
    }
}

/// An ACME failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcmeError {
    /// The domain being ordered, if the failure is an order's.
    pub domain: Option<String>,
    /// Where it stopped.
    pub step: Step,
    /// Why, as the CA, the network or the store said it.
    pub why: String,
}

impl AcmeError {
    /// A failure at `step`, for no domain in particular.
    pub fn at(step: Step, why: impl fmt::Display) -> Self {
        Self {
            domain: None,
            step,
            why: why.to_string(),
        }
    }

    /// A failure at `step` because of `error`, said with its causes (the TLS reason under an
    /// HTTP client's `error sending request`).
    pub fn failed(step: Step, error: &(dyn std::error::Error + 'static)) -> Self {
        Self::at(step, Causes(error))
    }

    /// The same failure, of the order for `domain`.
    pub fn of(mut self, domain: &str) -> Self {
        self.domain = Some(domain.to_owned());
        self
    }
}

impl fmt::Display for AcmeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.domain {
            Some(domain) => write!(f, "ACME, `{domain}`, {}: {}", self.step.name(), self.why),
            None => write!(f, "ACME, {}: {}", self.step.name(), self.why),
        }
    }
}

impl std::error::Error for AcmeError {}
