//! `[identity]` and `[access]` → the identity chain, the client-address resolver, the JWT
//! verifier and the allow/deny lists.

use super::check::Checker;
use super::error::ConfigError;
use super::value::{config_keys, Bounded, Header, Period, SourceList};
use crate::identity::{
    parse_network, AccessRules, ClientIpResolver, ForwardingHeader, IdentityChain, IdentityKey,
    IpFolding, JwtSettings, JwtVerifier, KeySource, OnInvalidToken, Rule, Source, SourceSpec,
};
use serde::Deserialize;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use toml::Spanned;

pub(crate) use lines::IdentityLines;

config_keys! {
    Ipv4Prefix = "identity.ip.ipv4_prefix",
    Ipv6Prefix = "identity.ip.ipv6_prefix",
    Ja4Header = "identity.ja4_header",
    Leeway = "identity.jwt.leeway",
}

/// How far a token's times may be off when `identity.jwt.leeway` is not given.
const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);

/// `identity.on_invalid_token`.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum OnInvalidTokenFile {
    #[default]
    Reject,
    Next,
}

/// `[identity]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct IdentityFile {
    pub(crate) sources: Option<SourceList>,
    #[serde(default)]
    pub(crate) on_invalid_token: OnInvalidTokenFile,
    #[serde(default)]
    pub(crate) ip: IpFile,
    pub(crate) jwt: Option<JwtFile>,
    pub(crate) hash_key: Option<Spanned<String>>,
    pub(crate) ja4_header: Option<Header<Ja4Header>>,
    pub(crate) verify: Option<super::verify::VerifyFile>,
}

/// `[identity.ip]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct IpFile {
    pub(crate) ipv4_prefix: Option<Bounded<Ipv4Prefix, 1, 32>>,
    pub(crate) ipv6_prefix: Option<Bounded<Ipv6Prefix, 1, 128>>,
    #[serde(default)]
    pub(crate) trusted_proxies: Vec<Spanned<String>>,
    pub(crate) header: Option<Spanned<String>>,
}

/// `[identity.jwt]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct JwtFile {
    pub(crate) algorithms: Spanned<Vec<Spanned<String>>>,
    pub(crate) secret: Option<Spanned<String>>,
    pub(crate) public_key_file: Option<Spanned<String>>,
    pub(crate) jwks_file: Option<Spanned<String>>,
    pub(crate) issuer: Option<String>,
    pub(crate) audience: Option<String>,
    pub(crate) leeway: Option<Period<Leeway>>,
}

/// `[access]`: the allow and deny lists.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AccessFile {
    #[serde(default)]
    pub(crate) allow: Vec<Spanned<String>>,
    #[serde(default)]
    pub(crate) deny: Vec<Spanned<String>>,
}

/// The validated `[identity]` table.
pub(crate) struct IdentityParts {
    pub(crate) chain: IdentityChain,
    pub(crate) client_ip: ClientIpResolver,
    pub(crate) hash_key: Option<IdentityKey>,
}

pub(crate) fn identity(
    check: &Checker<'_>,
    file: &IdentityFile,
) -> Result<IdentityParts, ConfigError> {
    let sources = match &file.sources {
        None => vec![SourceSpec::from_str("ip").expect("`ip` is a source")],
        Some(list) if list.get_ref().is_empty() => {
            return Err(check.error(list, "`identity.sources` needs at least one source".into()));
        }
        Some(list) => list
            .get_ref()
            .iter()
            .map(|s| check.source_spec(s, "identity.sources"))
            .collect::<Result<_, _>>()?,
    };
    let default = IpFolding::default();
    let ip = IpFolding {
        ipv4_prefix: file
            .ip
            .ipv4_prefix
            .as_ref()
            .map_or(default.ipv4_prefix, |n| n.count() as u8),
        ipv6_prefix: file
            .ip
            .ipv6_prefix
            .as_ref()
            .map_or(default.ipv6_prefix, |n| n.count() as u8),
    };
    let trusted = file
        .ip
        .trusted_proxies
        .iter()
        .map(|t| {
            check.host_bits(t, t.get_ref(), "identity.ip.trusted_proxies");
            parse_network(t.get_ref()).ok_or_else(|| {
                check.error(
                    t,
                    format!(
                        "`identity.ip.trusted_proxies`: `{}` is not a network like 10.0.0.0/8",
                        t.get_ref()
                    ),
                )
            })
        })
        .collect::<Result<_, _>>()?;
    let header = match &file.ip.header {
        Some(name) => name.get_ref().parse().map_err(|e| {
            check.error(
                name,
                format!("`identity.ip.header`: {e}; use x-forwarded-for, forwarded, x-real-ip or another header name"),
            )
        })?,
        None => ForwardingHeader::default(),
    };
    let on_invalid_token = match file.on_invalid_token {
        OnInvalidTokenFile::Reject => OnInvalidToken::Reject,
        OnInvalidTokenFile::Next => OnInvalidToken::Next,
    };
    Ok(IdentityParts {
        chain: IdentityChain {
            sources,
            ip,
            on_invalid_token,
        },
        client_ip: ClientIpResolver::new(trusted, header)
            .with_ja4_header(file.ja4_header.as_ref().map(Header::get)),
        hash_key: file
            .hash_key
            .as_ref()
            .map(|text| {
                IdentityKey::from_secret(text.get_ref())
                    .map_err(|e| check.error(text, format!("`identity.hash_key`: {e}")))
            })
            .transpose()?,
    })
}

pub(crate) fn jwt(check: &Checker<'_>, file: &JwtFile) -> Result<Arc<JwtVerifier>, ConfigError> {
    let algorithms = file
        .algorithms
        .get_ref()
        .iter()
        .map(|a| {
            jsonwebtoken::Algorithm::from_str(a.get_ref()).map_err(|_| {
                check.error(
                    a,
                    format!(
                        "`identity.jwt.algorithms`: unknown algorithm `{}`",
                        a.get_ref()
                    ),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let keys = match (&file.secret, &file.public_key_file, &file.jwks_file) {
        (Some(secret), None, None) => KeySource::Secret(secret.get_ref().as_bytes().to_vec()),
        (None, Some(pem), None) => {
            KeySource::PublicKeyPem(read_beside(check, pem, "public_key_file")?.into_bytes())
        }
        (None, None, Some(jwks)) => KeySource::Jwks(read_beside(check, jwks, "jwks_file")?),
        _ => {
            let message =
                "`[identity.jwt]` needs exactly one of `secret`, `public_key_file` or `jwks_file`";
            return Err(check.error(&file.algorithms, message.into()));
        }
    };
    let settings = JwtSettings {
        algorithms,
        keys,
        issuer: file.issuer.clone(),
        audience: file.audience.clone(),
        leeway: file.leeway.as_ref().map_or(DEFAULT_LEEWAY, Period::get),
    };
    JwtVerifier::new(&settings)
        .map(Arc::new)
        .map_err(|e| check.error(&file.algorithms, format!("`[identity.jwt]`: {e}")))
}

/// Reads a file named relative to the config file's directory.
fn read_beside(
    check: &Checker<'_>,
    name: &Spanned<String>,
    key: &str,
) -> Result<String, ConfigError> {
    let path = check.resolve(name.get_ref());
    std::fs::read_to_string(&path).map_err(|e| {
        check.error(
            name,
            format!("`identity.jwt.{key}`: cannot read {}: {e}", path.display()),
        )
    })
}

pub(crate) fn access(check: &Checker<'_>, file: &AccessFile) -> Result<AccessRules, ConfigError> {
    let rules = |list: &[Spanned<String>], key: &str| -> Result<Vec<Rule>, ConfigError> {
        list.iter()
            .map(|r| {
                let rule: Rule = r
                    .get_ref()
                    .parse()
                    .map_err(|e| check.error(r, format!("`{key}`: {e}")))?;
                if let Some(net) = r.get_ref().strip_prefix("cidr:") {
                    check.host_bits(r, net, key);
                    check.everyone(r, net, key);
                }
                if let Rule::Value {
                    source: Source::Jwt(_),
                    ..
                } = rule
                {
                    check.jwt_allowed(r, key)?;
                }
                Ok(rule)
            })
            .collect()
    };
    Ok(AccessRules::new(
        rules(&file.allow, "access.allow")?,
        rules(&file.deny, "access.deny")?,
    ))
}

mod lines;
#[cfg(test)]
mod tests;
