//! `[telemetry]` → the trace settings: where spans go (`otlp_endpoint`, http or https), the
//! service they are from (`service_name`), and how many are kept (`sample_ratio`, a number
//! for allowed requests, or a table of `allowed` and `refused`), each error located.

use super::check::Checker;
use super::error::ConfigError;
use crate::trace::{traces_url, Sampling, TraceSettings};
use serde::Deserialize;
use toml::Spanned;

/// The service name spans carry unless `service_name` says otherwise.
const SERVICE_NAME: &str = "floodgate";

/// `[telemetry]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TelemetryFile {
    otlp_endpoint: Option<Spanned<String>>,
    service_name: Option<Spanned<String>>,
    sample_ratio: Option<Spanned<toml::Value>>,
}

/// The trace settings of `[telemetry]`: none without a table or an `otlp_endpoint`.
pub(crate) fn traces(
    check: &Checker<'_>,
    file: Option<&TelemetryFile>,
) -> Result<Option<TraceSettings>, ConfigError> {
    let Some(file) = file else {
        return Ok(None);
    };
    let sampling = match &file.sample_ratio {
        Some(value) => sampling(check, value)?,
        None => Sampling::default(),
    };
    let service_name = match &file.service_name {
        Some(name) if name.get_ref().trim().is_empty() => {
            return Err(check.error(name, "`telemetry.service_name` is empty".to_owned()))
        }
        Some(name) => name.get_ref().clone(),
        None => SERVICE_NAME.to_owned(),
    };
    let Some(endpoint) = &file.otlp_endpoint else {
        return Ok(None);
    };
    let url = traces_url(endpoint.get_ref()).map_err(|e| {
        let message = format!(
            "`telemetry.otlp_endpoint`: {e} (an OTLP/HTTP URL such as `http://127.0.0.1:4318`)"
        );
        check.error(endpoint, message)
    })?;
    Ok(Some(TraceSettings {
        url,
        service_name,
        sampling,
    }))
}

/// `sample_ratio`'s table form.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RatioTable {
    allowed: Option<toml::Value>,
    refused: Option<toml::Value>,
}

/// `sample_ratio`: a number (allowed requests; refusals all kept) or `{ allowed, refused }`.
fn sampling(check: &Checker<'_>, value: &Spanned<toml::Value>) -> Result<Sampling, ConfigError> {
    let bad = |what: String| check.error(value, format!("`telemetry.sample_ratio`: {what}"));
    let ratio = |key: &str, v: &toml::Value| -> Result<f64, ConfigError> {
        let n = match v {
            toml::Value::Float(f) => *f,
            toml::Value::Integer(i) => *i as f64,
            _ => return Err(bad(format!("{key} must be a number from 0 to 1"))),
        };
        match (0.0..=1.0).contains(&n) {
            true => Ok(n),
            false => Err(bad(format!("{key} is {n}: a ratio is from 0 to 1"))),
        }
    };
    let mut sampling = Sampling::default();
    match value.get_ref() {
        toml::Value::Table(table) => {
            let both: RatioTable = toml::Value::Table(table.clone())
                .try_into()
                .map_err(|e: toml::de::Error| bad(e.message().trim().to_owned()))?;
            if let Some(allowed) = &both.allowed {
                sampling.allowed = ratio("allowed", allowed)?;
            }
            if let Some(refused) = &both.refused {
                sampling.refused = ratio("refused", refused)?;
            }
        }
        number => sampling.allowed = ratio("the ratio", number)?,
    }
    Ok(sampling)
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use crate::trace::Sampling;
    use std::path::Path;

    const BASE: &str =
        "[server]\nlisten = \"127.0.0.1:8080\"\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n\n";

    fn load(table: &str) -> Result<crate::config::Config, String> {
        parse(&format!("{BASE}{table}"), Path::new("t.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn traces_are_off_without_an_endpoint_and_default_to_every_request() {
        assert_eq!(load("").unwrap().traces, None);
        assert_eq!(
            load("[telemetry]\nservice_name = \"edge\"\n")
                .unwrap()
                .traces,
            None
        );
        let traces = load("[telemetry]\notlp_endpoint = \"http://127.0.0.1:4318\"\n")
            .unwrap()
            .traces
            .unwrap();
        assert_eq!(traces.url, "http://127.0.0.1:4318/v1/traces");
        assert_eq!(traces.service_name, "floodgate");
        assert_eq!(traces.sampling, Sampling::default());
    }

    #[test]
    fn a_number_is_the_ratio_of_allowed_requests_and_a_table_names_both() {
        let endpoint = "[telemetry]\notlp_endpoint = \"https://c.example/otlp/v1/traces\"\n";
        let traces = load(&format!("{endpoint}sample_ratio = 0.25\n"))
            .unwrap()
            .traces
            .unwrap();
        assert_eq!(traces.url, "https://c.example/otlp/v1/traces");
        assert_eq!(
            traces.sampling,
            Sampling {
                allowed: 0.25,
                refused: 1.0
            }
        );
        let table = format!("{endpoint}sample_ratio = {{ allowed = 0, refused = 0.5 }}\n");
        let traces = load(&table).unwrap().traces.unwrap();
        assert_eq!(
            traces.sampling,
            Sampling {
                allowed: 0.0,
                refused: 0.5
            }
        );
    }

    #[test]
    fn a_bad_endpoint_or_ratio_is_refused_at_its_value() {
        for (table, expected) in [
            (
                "[telemetry]\notlp_endpoint = \"grpc://127.0.0.1:4317\"\n",
                "t.toml:8:17: `telemetry.otlp_endpoint`: the scheme must be http or https",
            ),
            (
                "[telemetry]\notlp_endpoint = \"http://c:4318\"\nsample_ratio = 1.5\n",
                "t.toml:9:16: `telemetry.sample_ratio`: the ratio is 1.5: a ratio is from 0 to 1",
            ),
            (
                "[telemetry]\notlp_endpoint = \"http://c:4318\"\nsample_ratio = { refused = -0.1 }\n",
                "t.toml:9:16: `telemetry.sample_ratio`: refused is -0.1",
            ),
            (
                "[telemetry]\nsample_ratio = { allowed = 0.1, denied = 1 }\n",
                "t.toml:8:16: `telemetry.sample_ratio`: unknown field `denied`",
            ),
            (
                "[telemetry]\nsample_ratio = \"half\"\n",
                "t.toml:8:16: `telemetry.sample_ratio`: the ratio must be a number",
            ),
            ("[telemetry]\nendpoint = \"http://c\"\n", "t.toml:8:1: unknown field `endpoint`"),
        ] {
            let e = load(table).unwrap_err();
            assert!(e.starts_with(expected), "{e}");
        }
    }
}
