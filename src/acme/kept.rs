//! What the vault keeps and answers: a domain's certificate, who orders, what a write did,
//! what a read found.

/// A domain's certificate as kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// The chain, PEM, leaf first.
    pub chain: String,
    /// The private key, PEM (sealed at rest in Redis).
    pub key: String,
}

/// Whether this instance places the orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lead {
    /// It does (it took or kept the lock; always, on files).
    Ordering,
    /// Another instance of the fleet does.
    Elsewhere,
}

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// It is kept.
    Kept,
    /// The lock was lost meanwhile: nothing was written.
    LockLost,
}

/// What a read of the certificates found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Certificates {
    /// Nothing changed since the version known.
    Unchanged,
    /// Every certificate kept, and the version they make.
    All {
        /// The version to ask from next time.
        version: u64,
        /// `(domain, certificate)`.
        kept: Vec<(String, Kept)>,
    },
}
