//! `[telemetry]` → the trace settings: where spans go (`otlp_endpoint`, http or https), the
//! service they are from (`service_name`), and how many are kept (`sample_ratio`, a number
//! for allowed requests, or a table of `allowed` and `refused`), each error located.

use crate::trace::TraceSettings;
use serde::Deserialize;
use values::{OtlpEndpoint, SampleRatio, ServiceName};

/// The service name spans carry unless `service_name` says otherwise.
const SERVICE_NAME: &str = "floodgate";

/// `[telemetry]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TelemetryFile {
    otlp_endpoint: Option<OtlpEndpoint>,
    service_name: Option<ServiceName>,
    sample_ratio: Option<SampleRatio>,
}

/// The trace settings of `[telemetry]`: none without a table or an `otlp_endpoint`.
pub(crate) fn traces(file: Option<&TelemetryFile>) -> Option<TraceSettings> {
    let file = file?;
    let endpoint = file.otlp_endpoint.as_ref()?;
    Some(TraceSettings {
        url: endpoint.0.clone(),
        service_name: file
            .service_name
            .as_ref()
            .map_or(SERVICE_NAME.to_owned(), |name| name.0.clone()),
        sampling: file
            .sample_ratio
            .as_ref()
            .map_or_else(Default::default, |ratio| ratio.0),
    })
}

mod values;

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
