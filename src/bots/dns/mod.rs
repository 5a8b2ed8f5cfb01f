//! Reverse-DNS verification of crawlers: the address's PTR names, each resolved forward,
//! confirm a crawler when one is under its suffixes and resolves back to the address.
//! Lookups run on a thread of their own; answers are cached per address.

mod answer;
mod background;
mod cache;
mod lookup;
mod resolver;
mod reverse;
mod suffix;

pub use answer::{FAILURE_LIFETIME, NEGATIVE_LIFETIME, POSITIVE_LIFETIME};
pub(crate) use background::Background;
pub use cache::{CAPACITY, MAX_LOOKUPS};
pub use lookup::{LOOKUP_DEADLINE, MAX_NAMES};
pub use resolver::QUERY_TIMEOUT;
pub use reverse::{DnsError, ReverseDns};
pub use suffix::under_suffix;
