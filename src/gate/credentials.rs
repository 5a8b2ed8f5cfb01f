//! What a request's verified credentials (`[identity.verify]`) earn before any list or policy.

use super::Outcome;
use crate::identity::Request;

/// The refusal a request's credentials earn before any list or policy: a verified source sent
/// twice (400), or a refused one under `refused = "reject"` (403).
pub(super) fn refusal<'g>(req: &Request<'_>) -> Option<Outcome<'g>> {
    if let Some(source) = req.ambiguous_credential() {
        return Some(Outcome::AmbiguousCredential(source));
    }
    req.rejected_credential().map(Outcome::KeyRefused)
}
