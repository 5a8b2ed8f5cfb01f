//! Crawlers held to the site's robots.txt (issue 84): the trap's fleet-wide tables (`trap`).

pub mod trap;
