//! Crawlers held to robots.txt: the site's robots.txt, read from the backend ([`fetch`]).
pub mod fetch;
