//! What `[telemetry]` says about traces: where they go, under which service name, how many
//! are kept; and how an endpoint URL becomes the one spans are posted to.

use super::sampling::Sampling;

/// The collector's path for traces, added to an endpoint given without a path.
const TRACES_PATH: &str = "/v1/traces";

/// `[telemetry]` when `otlp_endpoint` is set.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceSettings {
    /// The URL spans are posted to (`otlp_endpoint`, `/v1/traces` added when it has no path).
    pub url: String,
    /// `service.name` of every span (`service_name`, default `floodgate`).
    pub service_name: String,
    /// Which requests' spans are kept (`sample_ratio`).
    pub sampling: Sampling,
}

/// Why an endpoint cannot take spans.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// Not a URL at all.
    #[error("not a URL: {0}")]
    NotAUrl(String),
    /// A URL of another scheme than http or https.
    #[error("the scheme must be http or https")]
    Scheme,
    /// A URL without a host.
    #[error("the URL names no host")]
    NoHost,
}

/// The URL spans are posted to for `endpoint`: as written when it has a path (like
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), with `/v1/traces` added when it has none (like
/// `OTEL_EXPORTER_OTLP_ENDPOINT`, the collector's default path).
pub fn traces_url(endpoint: &str) -> Result<String, EndpointError> {
    let uri: http::Uri = endpoint
        .parse()
        .map_err(|e: http::uri::InvalidUri| EndpointError::NotAUrl(e.to_string()))?;
    match uri.scheme_str() {
        Some("http") | Some("https") => {}
        _ => return Err(EndpointError::Scheme),
    }
    if uri.host().is_none_or(str::is_empty) {
        return Err(EndpointError::NoHost);
    }
    let bare = uri.path_and_query().is_none_or(|p| p.as_str() == "/");
    Ok(match bare {
        true => format!("{}{TRACES_PATH}", endpoint.trim_end_matches('/')),
        false => endpoint.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_endpoint_gets_the_collectors_path_and_a_path_is_kept() {
        for (endpoint, url) in [
            ("http://127.0.0.1:4318", "http://127.0.0.1:4318/v1/traces"),
            ("http://collector:4318/", "http://collector:4318/v1/traces"),
            (
                "https://otel.example/v1/traces",
                "https://otel.example/v1/traces",
            ),
            ("http://gw:80/otlp/spans", "http://gw:80/otlp/spans"),
        ] {
            assert_eq!(traces_url(endpoint).unwrap(), url);
        }
    }

    #[test]
    fn an_endpoint_that_is_not_http_is_refused() {
        assert_eq!(traces_url("grpc://c:4317"), Err(EndpointError::Scheme));
        assert_eq!(traces_url("collector:4318"), Err(EndpointError::Scheme));
        assert!(matches!(
            traces_url("http://a b"),
            Err(EndpointError::NotAUrl(_))
        ));
        assert_eq!(traces_url("/v1/traces"), Err(EndpointError::Scheme));
    }
}
