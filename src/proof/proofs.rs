//! The proofs in force under one snapshot: its verified sources, how each is proven, and the
//! books they are kept in. It is the identity chain's [`Provenance`]: the state of a value is
//! read from the local book (or the key list), never from the store on the request's path.

use super::book::{Book, Entry, Kept};
use super::keeper::Keeper;
use super::settings::{By, OnRefused, Verified, VerifySettings};
use crate::identity::{
    Credential, Identity, IdentityKey, ProofState, Provenance, Source, SourceSpec,
};
use crate::telemetry::{ProofCounters, SourceProofCounters};
use std::sync::Arc;

/// How often a revoked value's request still reaches the backend under `refused = "reject"`.
pub const REJECTED_PASS_EVERY_MS: u64 = 3_600_000;

/// One verified source as this snapshot checks it.
struct Checked {
    verified: Verified,
    /// The source as written: the fleet's entries name it.
    tag: Arc<str>,
    /// The source as a spec of one part: what digests its values, as the chain would.
    spec: SourceSpec,
    /// Its book, when the backend proves it.
    book: Option<Arc<Book>>,
    /// Its requests by state.
    counters: SourceProofCounters,
}

/// Whether a lookup may ask the fleet of a value this instance pushed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Asking {
    /// A request's: the fleet is asked, off its path.
    Fleet,
    /// An operator's question: nothing is asked.
    Nobody,
}

/// The verified sources of a snapshot.
pub struct Proofs {
    sources: Vec<Source>,
    checked: Vec<Checked>,
    keeper: Arc<Keeper>,
    key: IdentityKey,
}

impl Proofs {
    /// The proofs `settings` ask for, kept by `keeper`, digests made with `key`.
    pub fn new(
        settings: &VerifySettings,
        keeper: Arc<Keeper>,
        key: IdentityKey,
        counters: ProofCounters,
    ) -> Self {
        let checked = settings
            .sources
            .iter()
            .map(|verified| {
                let tag: Arc<str> = Arc::from(verified.source.to_string());
                let book = match &verified.by {
                    By::Backend(backend) => Some(keeper.book(&tag, backend.keep, backend.remember)),
                    By::List(_) => None,
                };
                Checked {
                    spec: SourceSpec::of(verified.source.clone()),
                    counters: counters.source(&tag),
                    verified: verified.clone(),
                    tag,
                    book,
                }
            })
            .collect();
        Self {
            sources: settings.sources.iter().map(|v| v.source.clone()).collect(),
            checked,
            keeper,
            key,
        }
    }

    /// The `index`th verified source's settings.
    pub fn verified(&self, index: usize) -> &Verified {
        &self.checked[index].verified
    }

    /// How many sources are verified.
    pub fn len(&self) -> usize {
        self.checked.len()
    }

    /// Whether no source is verified.
    pub fn is_empty(&self) -> bool {
        self.checked.is_empty()
    }

    /// The `index`th verified source as written.
    pub fn tag(&self, index: usize) -> &Arc<str> {
        &self.checked[index].tag
    }

    /// The `index`th verified source's book, when the backend proves it.
    pub(super) fn book(&self, index: usize) -> Option<&Arc<Book>> {
        self.checked[index].book.as_ref()
    }

    /// Where the proofs are kept.
    pub fn keeper(&self) -> &Arc<Keeper> {
        &self.keeper
    }

    /// The digest of `value` of the `index`th verified source.
    pub fn digest(&self, index: usize, value: &[u8]) -> Identity {
        self.checked[index].spec.digest(value, &self.key)
    }

    /// The state of `value` of the `index`th source and its digest; a value missing from a
    /// book that pushed values out is asked of the fleet when `asking` says so.
    fn looked_up(&self, index: usize, value: &[u8], asking: Asking) -> (ProofState, Identity) {
        let identity = self.digest(index, value);
        let checked = &self.checked[index];
        let state = match (&checked.verified.by, &checked.book) {
            (By::List(list), _) if list.holds(value) => ProofState::Proven,
            (By::List(_), _) | (By::Backend(_), None) => ProofState::Unproven,
            (By::Backend(_), Some(book)) => {
                let entry = book.get(&identity, self.keeper.clock().now_ms());
                if entry.is_none() && book.may_miss() && asking == Asking::Fleet {
                    self.keeper.ask(identity);
                }
                state_of(entry)
            }
        };
        (state, identity)
    }
}

impl Provenance for Proofs {
    fn verified(&self) -> &[Source] {
        &self.sources
    }

    fn name(&self, index: usize) -> &Arc<str> {
        &self.checked[index].tag
    }

    fn state(&self, index: usize, value: &[u8]) -> (ProofState, Identity) {
        let (state, identity) = self.looked_up(index, value, Asking::Fleet);
        self.checked[index].counters.count(state);
        (state, identity)
    }

    fn peek(&self, index: usize, value: &[u8]) -> (ProofState, Identity) {
        self.looked_up(index, value, Asking::Nobody)
    }

    fn rejects(&self, credential: &Credential) -> bool {
        let checked = &self.checked[credential.index];
        if credential.state != ProofState::Refused || checked.verified.refused != OnRefused::Reject
        {
            return false;
        }
        let now = self.keeper.clock().now_ms();
        checked.book.as_ref().is_some_and(|book| {
            !book.let_through(&credential.identity, now, REJECTED_PASS_EVERY_MS)
        })
    }
}

/// The state a kept entry (or none) stands for.
pub fn state_of(entry: Option<Entry>) -> ProofState {
    match entry.map(|e| e.kept) {
        Some(Kept::Proven) => ProofState::Proven,
        Some(Kept::Revoked) => ProofState::Refused,
        None => ProofState::Unproven,
    }
}
