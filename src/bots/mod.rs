//! Knowing the bot: which crawler a request claims to be (the catalogue), whether the claim
//! holds (published ranges, reverse DNS confirmed forward), and the network and country of
//! its address (MaxMind-format databases). What this room learns becomes the request's
//! [`Traits`](crate::identity::Traits), which the gate's conditions and identity sources read;
//! the gate never depends on this room.

mod catalogue;
mod crawlers;
pub mod dns;
mod geo;
mod profile;
mod ranges;
pub mod score;
mod settings;
pub mod signed;
pub mod update;

pub use catalogue::{Catalogue, CatalogueError, Crawler, CrawlerError};
pub use crawlers::Crawlers;
pub use dns::{DnsError, ReverseDns};
pub use geo::{Geo, GeoError, GeoKind, GeoSettings};
pub use profile::Profiler;
pub use ranges::{Ranges, RangesError};
pub use score::{ScoreSettings, Scorer};
pub use settings::{BotsSettings, DnsSettings, DNS_TIMEOUT};
pub use signed::{Message, SignedAgents, SignedSettings};
