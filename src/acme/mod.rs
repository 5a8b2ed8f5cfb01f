//! ACME (RFC 8555): certificates for `tls.acme.domains`, ordered, kept and renewed without
//! anyone thinking about them. On the Redis store one instance of the fleet orders (the lock
//! of `lua/acme.lua`) and every instance serves what it ordered; on the memory store the
//! state is in `tls.acme.state_dir`. HTTP-01 tokens are answered by the proxy, TLS-ALPN-01
//! validations by the TLS listener, on whichever instance the CA reaches.

mod answers;
mod client;
mod error;
mod files;
mod fleet;
mod kept;
mod manager;
mod order;
mod renewal;
mod seal;
mod settings;
mod vault;

pub use answers::{Answers, HTTP01_PATH};
pub use error::{AcmeError, Step};
pub use files::FileVault;
pub use fleet::{FleetVault, ACME_SCRIPT};
pub use manager::AcmeManager;
pub use settings::{AcmeSettings, ChallengeType, Eab, LETS_ENCRYPT, LETS_ENCRYPT_STAGING};
pub use vault::Vault;
