//! When proxying fails: which status the client gets, and how the failure is counted.

use super::front::{write_answer, Front};
use super::render::{problem, Handling};
use crate::gate::reply::problem_body;
use crate::telemetry::UpstreamErrorKind;
use pingora::proxy::Session;
use pingora::{Error, ErrorSource, ErrorType, Result};
use ErrorType::HTTPStatus;

/// How a failed request is answered and counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Failure {
    /// The status to answer with; `None` when nobody is left to answer (the client is gone).
    pub(super) status: Option<u16>,
    /// The upstream error kind it counts as, if the backend failed.
    pub(super) upstream: Option<UpstreamErrorKind>,
}

/// How error `e` is answered and counted.
pub(super) fn classify(e: &Error) -> Failure {
    use ErrorType::*;
    let (status, upstream) = match (e.etype(), e.esource()) {
        (HTTPStatus(code), _) => (Some(*code), None),
        (ConnectTimedout | ReadTimedout | WriteTimedout, ErrorSource::Upstream) => {
            (Some(504), Some(UpstreamErrorKind::Timeout))
        }
        (ConnectRefused | ConnectNoRoute | ConnectError | SocketError, ErrorSource::Upstream) => {
            (Some(502), Some(UpstreamErrorKind::Connect))
        }
        (_, ErrorSource::Upstream) => (Some(502), Some(UpstreamErrorKind::Other)),
        (WriteError | ReadError | ConnectionClosed, ErrorSource::Downstream) => (None, None),
        (_, ErrorSource::Downstream) => (Some(400), None),
        (_, ErrorSource::Internal | ErrorSource::Unset) => (Some(500), None),
    };
    Failure { status, upstream }
}

/// What the client is told about `e`, a failure of kind `upstream`: the explanation of a
/// status Floodgate chose itself (`HTTPStatus` errors carry one written for the client), else
/// a fixed sentence.
fn detail(e: &Error, upstream: Option<UpstreamErrorKind>) -> &str {
    match (e.etype(), upstream, e.context.as_ref()) {
        (HTTPStatus(_), _, Some(why)) => why.as_str(),
        (_, Some(UpstreamErrorKind::Timeout), _) => "The backend did not answer in time.",
        (_, Some(_), _) => "The backend could not be reached or failed to answer.",
        (_, None, _) => "The request could not be proxied.",
    }
}

/// Whether `e` is a client error Floodgate answered on purpose (nothing worth an error log).
pub(super) fn is_client_error(e: &Error) -> bool {
    matches!(e.etype(), HTTPStatus(status) if (400..500).contains(status))
}

/// Answers the request of `front` with a problem body for `failure`, the outcome of `e`.
pub(super) async fn write_problem(
    session: &mut Session,
    status: u16,
    failure: Failure,
    e: &Error,
    front: &Front,
) -> Result<()> {
    let body = problem_body(status, detail(e, failure.upstream), serde_json::json!({}));
    match problem(status, body, &[]) {
        Handling::Answer(header, body) => write_answer(session, front, header, body).await,
        Handling::Forward(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_failures_are_classified() {
        let refused = Error::new(ErrorType::ConnectRefused).into_up();
        assert_eq!(
            classify(&refused),
            Failure {
                status: Some(502),
                upstream: Some(UpstreamErrorKind::Connect)
            }
        );
        let slow = Error::new(ErrorType::ReadTimedout).into_up();
        assert_eq!(classify(&slow).upstream, Some(UpstreamErrorKind::Timeout));
        assert_eq!(classify(&slow).status, Some(504));
        let gone = Error::new(ErrorType::ConnectionClosed).into_down();
        assert_eq!(classify(&gone).status, None);
    }
}
