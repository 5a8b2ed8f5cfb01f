//! Keys a client cannot invent: the sources of `[identity.verify]` name a caller only once a
//! value is proven, by the backend's answers (`lesson`: a request whose only credential it is,
//! on a route where the backend checks it; a 2xx proves it, a 401 revokes a proven one) or by
//! a key list (`list`). What is proven or revoked is kept as keyed digests in a bounded
//! [`Book`] per source, shared by the fleet through Redis (`fleet`, `keeper`); the identity
//! chain reads it through [`Proofs`], the seam `identity::Provenance`, never the store.

mod book;
mod fleet;
mod keeper;
mod lesson;
mod list;
mod proofs;
mod settings;

pub use book::{Book, Change, Entry, Kept, Verdict};
pub use fleet::{Fleet, PROOFS_SCRIPT};
pub use keeper::{Keeper, SourceBook, READ_EVERY};
pub use lesson::Lesson;
pub use list::{BadLine, KeyList};
pub use proofs::{state_of, Proofs, REJECTED_PASS_EVERY_MS};
pub use settings::{
    BackendProof, By, OnRefused, Scope, StatusSet, Verified, VerifySettings, DEFAULT_KEEP,
    DEFAULT_REMEMBER,
};
