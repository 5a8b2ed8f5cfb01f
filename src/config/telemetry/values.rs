//! `[telemetry]`'s typed values: each checks itself while the file is parsed, so toml locates
//! its error at the value.

use crate::trace::{traces_url, Sampling};
use serde::{de::Error, Deserialize, Deserializer};

/// `telemetry.otlp_endpoint`: an OTLP/HTTP URL, held as the URL spans are posted to.
#[derive(Debug)]
pub(crate) struct OtlpEndpoint(pub(crate) String);

impl<'de> Deserialize<'de> for OtlpEndpoint {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        traces_url(&text).map(Self).map_err(|e| {
            D::Error::custom(format!(
                "`telemetry.otlp_endpoint`: {e} (an OTLP/HTTP URL such as `http://127.0.0.1:4318`)"
            ))
        })
    }
}

/// `telemetry.service_name`: the service spans are from, not empty.
#[derive(Debug)]
pub(crate) struct ServiceName(pub(crate) String);

impl<'de> Deserialize<'de> for ServiceName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        match name.trim().is_empty() {
            true => Err(D::Error::custom("`telemetry.service_name` is empty")),
            false => Ok(Self(name)),
        }
    }
}

/// `telemetry.sample_ratio`: a number (allowed requests; refusals all kept) or
/// `{ allowed, refused }`, each from 0 to 1.
#[derive(Debug)]
pub(crate) struct SampleRatio(pub(crate) Sampling);

/// `sample_ratio`'s table form.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RatioTable {
    allowed: Option<toml::Value>,
    refused: Option<toml::Value>,
}

impl<'de> Deserialize<'de> for SampleRatio {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = toml::Value::deserialize(deserializer)?;
        sampling(value)
            .map(Self)
            .map_err(|what| D::Error::custom(format!("`telemetry.sample_ratio`: {what}")))
    }
}

/// The sampling a `sample_ratio` value says, or what is wrong with it.
fn sampling(value: toml::Value) -> Result<Sampling, String> {
    let mut sampling = Sampling::default();
    match value {
        toml::Value::Table(table) => {
            let both: RatioTable = toml::Value::Table(table)
                .try_into()
                .map_err(|e: toml::de::Error| e.message().trim().to_owned())?;
            if let Some(allowed) = &both.allowed {
                sampling.allowed = ratio("allowed", allowed)?;
            }
            if let Some(refused) = &both.refused {
                sampling.refused = ratio("refused", refused)?;
            }
        }
        number => sampling.allowed = ratio("the ratio", &number)?,
    }
    Ok(sampling)
}

/// One ratio, from 0 to 1.
fn ratio(key: &str, value: &toml::Value) -> Result<f64, String> {
    let n = match value {
        toml::Value::Float(f) => *f,
        toml::Value::Integer(i) => *i as f64,
        _ => return Err(format!("{key} must be a number from 0 to 1")),
    };
    match (0.0..=1.0).contains(&n) {
        true => Ok(n),
        false => Err(format!("{key} is {n}: a ratio is from 0 to 1")),
    }
}
