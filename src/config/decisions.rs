//! `[check]` → the decision endpoint's listener, the proxies that may ask it, and the request
//! id header that answers repeated checks once; and `--test`'s line for it.

use super::check::Checker;
use super::error::ConfigError;
use super::value::{config_keys, Address};
use crate::check::CheckSettings;
use crate::identity::parse_network;
use http::HeaderName;
use serde::Deserialize;
use std::fmt;
use toml::Spanned;

config_keys! {
    Listen = "check.listen",
}

/// `[check]`: the decision endpoint.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CheckFile {
    pub(crate) listen: Address<Listen>,
    pub(crate) trusted: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) dedupe_header: Option<Spanned<String>>,
}

/// Who may ask when `check.trusted` is not given: this host.
const LOOPBACK: [&str; 2] = ["127.0.0.1/32", "::1/128"];

/// The checked `[check]` table.
pub(crate) fn check(check: &Checker<'_>, file: &CheckFile) -> Result<CheckSettings, ConfigError> {
    let listen = file.listen.get();
    let trusted = match &file.trusted {
        Some(list) => list
            .get_ref()
            .iter()
            .map(|net| {
                check.host_bits(net, net.get_ref(), "check.trusted");
                parse_network(net.get_ref()).ok_or_else(|| {
                    let message = format!(
                        "`check.trusted`: `{}` is not an address or a network like 10.0.0.0/8",
                        net.get_ref()
                    );
                    check.error(net, message)
                })
            })
            .collect::<Result<Vec<_>, _>>()?,
        None => LOOPBACK.iter().filter_map(|n| parse_network(n)).collect(),
    };
    let dedupe_header = match &file.dedupe_header {
        Some(name) => Some(
            HeaderName::from_bytes(name.get_ref().as_bytes()).map_err(|_| {
                let message = format!(
                    "`check.dedupe_header`: `{}` is not a header name",
                    name.get_ref()
                );
                check.error(name, message)
            })?,
        ),
        None => None,
    };
    Ok(CheckSettings {
        listen,
        trusted,
        dedupe_header,
    })
}

/// `--test`'s line for the decision endpoint.
pub(crate) struct CheckLine<'a>(pub(crate) &'a CheckSettings);

impl fmt::Display for CheckLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let check = self.0;
        let trusted: Vec<String> = check.trusted.iter().map(|n| n.to_string()).collect();
        writeln!(
            f,
            "decisions       {} for proxies in [{}]{}",
            check.listen,
            trusted.join(", "),
            check
                .dedupe_header
                .as_ref()
                .map_or(String::new(), |h| format!(
                    "; repeated checks of one `{h}` answered once"
                ))
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use std::path::Path;

    const BASE: &str =
        "[server]\nlisten = \"127.0.0.1:8080\"\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n\n";

    #[test]
    fn the_check_table_defaults_to_loopback_and_refuses_bad_values_where_they_are() {
        let config = parse(
            &format!("{BASE}[check]\nlisten = \"127.0.0.1:9100\"\n"),
            Path::new("t.toml"),
        )
        .unwrap();
        let check = config.check.unwrap();
        assert_eq!(check.trusted.len(), 2);
        assert_eq!(check.dedupe_header, None);
        for (table, message) in [
            (
                "listen = \"nowhere\"\n",
                "`check.listen` must be an address",
            ),
            (
                "listen = \"127.0.0.1:9100\"\ntrusted = [\"10.0.0.0/33\"]\n",
                "`check.trusted`",
            ),
            (
                "listen = \"127.0.0.1:9100\"\ndedupe_header = \"x id\"\n",
                "`check.dedupe_header`",
            ),
        ] {
            let e = parse(&format!("{BASE}[check]\n{table}"), Path::new("t.toml"))
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("t.toml:") && e.contains(message), "{e}");
        }
    }
}
