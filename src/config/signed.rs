//! `[bots.signed]` → the agents whose key directories may be fetched (authorities, lower
//! case), the CA file trusted for them (read now: PEM certificates), and `[[bots.signed.key]]`
//! keys (Ed25519 JWKs).

use super::check::Checker;
use super::error::ConfigError;
use super::value::config_keys;
use crate::bots::signed::{ConfiguredKey, SignedSettings};
use serde::Deserialize;
use std::path::PathBuf;
use toml::Spanned;
use values::{authority, AgentAuthority, Jwk};

config_keys! {
    KeyAgent = "bots.signed.key.agent",
}

/// `[bots.signed]`: signed agents (Web Bot Auth).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SignedFile {
    #[serde(default)]
    pub(crate) agents: Vec<Spanned<String>>,
    pub(crate) ca_file: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) key: Vec<SignedKeyFile>,
}

/// `[[bots.signed.key]]`: a key written in the config for an agent.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SignedKeyFile {
    pub(crate) agent: AgentAuthority<KeyAgent>,
    pub(crate) jwk: Jwk,
}

/// The checked `[bots.signed]` table (nothing verified when it is absent).
pub(crate) fn signed(
    check: &Checker<'_>,
    file: Option<&SignedFile>,
) -> Result<SignedSettings, ConfigError> {
    let Some(file) = file else {
        return Ok(SignedSettings::default());
    };
    let agents = file
        .agents
        .iter()
        .map(|agent| {
            authority(agent.get_ref(), "bots.signed.agents")
                .map_err(|message| check.error(agent, message))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let ca_file = match &file.ca_file {
        Some(path) => Some(ca_file(check, path)?),
        None => None,
    };
    let keys = file
        .key
        .iter()
        .map(|key| ConfiguredKey {
            agent: key.agent.get(),
            jwk: key.jwk.0.clone(),
        })
        .collect();
    Ok(SignedSettings {
        agents,
        ca_file,
        keys,
    })
}

/// `bots.signed.ca_file`: a readable file of PEM certificates.
fn ca_file(check: &Checker<'_>, path: &Spanned<String>) -> Result<PathBuf, ConfigError> {
    let resolved = PathBuf::from(check.readable(path, "bots.signed.ca_file")?);
    let pem = std::fs::read(&resolved)
        .map_err(|e| check.error(path, format!("`bots.signed.ca_file`: cannot read it: {e}")))?;
    match reqwest::Certificate::from_pem_bundle(&pem) {
        Ok(certificates) if !certificates.is_empty() => Ok(resolved),
        _ => Err(check.error(
            path,
            "`bots.signed.ca_file` holds no PEM certificate".to_owned(),
        )),
    }
}

mod values;

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use crate::config::tests::BASE;
    use std::path::Path;

    const X: &str = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";

    fn error_of(signed: &str) -> String {
        let text = format!("{BASE}\n{signed}\n");
        parse(&text, Path::new("f.toml")).unwrap_err().to_string()
    }

    #[test]
    fn bad_signed_tables_are_refused_where_they_stand() {
        for (signed, at, says) in [
            (
                "[bots.signed]\nagents = [\"ok.example\", \"https://a.example/\"]".to_owned(),
                "f.toml:10:",
                "not an agent's authority",
            ),
            (
                "[bots.signed]\nca_file = \"missing.pem\"".to_owned(),
                "f.toml:10:",
                "cannot read",
            ),
            (
                format!("[[bots.signed.key]]\nagent = \"a.example\"\njwk = {{ kty = \"RSA\", crv = \"Ed25519\", x = \"{X}\" }}"),
                "f.toml:11:7: `bots.signed.key.jwk`: ",
                "not an Ed25519 key",
            ),
            (
                "[[bots.signed.key]]\nagent = \"a.example\"\njwk = { kty = \"OKP\", crv = \"Ed25519\", x = \"AAAA\" }".to_owned(),
                "f.toml:11:",
                "no Ed25519 public key",
            ),
            (
                format!("[[bots.signed.key]]\nagent = \"a b\"\njwk = {{ kty = \"OKP\", crv = \"Ed25519\", x = \"{X}\" }}"),
                "f.toml:10:9: `bots.signed.key.agent`: `a b` is not",
                "not an agent's authority",
            ),
        ] {
            let error = error_of(&signed);
            assert!(
                error.starts_with(at) && error.contains(says),
                "{signed}: {error}"
            );
        }
    }

    #[test]
    fn agents_and_keys_are_read_in_lower_case() {
        let text = format!(
            "{BASE}\n[bots.signed]\nagents = [\"ChatGPT.com\", \"127.0.0.1:8443\"]\n\
             [[bots.signed.key]]\nagent = \"Example.com\"\njwk = {{ kty = \"OKP\", crv = \"Ed25519\", x = \"{X}\" }}\n"
        );
        let config = parse(&text, Path::new("f.toml")).unwrap();
        let signed = &config.bots.signed;
        assert_eq!(
            signed.agents.iter().map(|a| &**a).collect::<Vec<_>>(),
            ["chatgpt.com", "127.0.0.1:8443"]
        );
        assert_eq!(&*signed.keys[0].agent, "example.com");
        assert!(parse(BASE, Path::new("f.toml"))
            .unwrap()
            .bots
            .signed
            .is_empty());
    }
}
