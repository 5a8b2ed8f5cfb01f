//! Crawlers held to the site's robots.txt: the backend's copy read in the background
//! ([`fetch`]), and the trap's fleet-wide tables ([`trap`]).

pub mod fetch;
pub mod trap;
