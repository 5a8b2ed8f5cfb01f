//! `--test`'s lines for `[bots]`: the crawler catalogue, reverse DNS and signed agents.

use crate::bots::BotsSettings;
use std::fmt;

/// `--test`'s lines for the crawler catalogue and how claims are verified.
pub(crate) struct BotsLines<'a>(pub(crate) &'a BotsSettings);

impl fmt::Display for BotsLines<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let crawlers = &self.0.crawlers;
        let catalogue = &crawlers.catalogue;
        writeln!(
            f,
            "crawlers        {} in the catalogue of {}, {} with published ranges loaded",
            catalogue.len(),
            catalogue.updated(),
            crawlers.with_ranges()
        )?;
        let dns = &self.0.dns;
        let resolver = dns
            .resolver
            .map_or("the system's resolver".to_owned(), |r| r.to_string());
        writeln!(
            f,
            "reverse DNS     {resolver}, a request waits at most {:?}",
            dns.timeout
        )?;
        self.signed(f)
    }
}

impl BotsLines<'_> {
    /// The signed agents' line, when any are verified.
    fn signed(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let signed = &self.0.signed;
        if signed.is_empty() {
            return Ok(());
        }
        writeln!(
            f,
            "signed agents   directories of {} fetched{}, {} keys in the config",
            match signed.agents.is_empty() {
                true => "none".to_owned(),
                false => signed.agents.join(" "),
            },
            signed
                .ca_file
                .as_ref()
                .map_or(String::new(), |p| format!(" (CA {})", p.display())),
            signed.keys.len()
        )
    }
}
