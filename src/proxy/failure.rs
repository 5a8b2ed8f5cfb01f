//! When proxying fails: which status the client gets, and how the failure is counted.

use crate::respond;
use pingora::proxy::Session;
use pingora::{Error, ErrorSource, ErrorType, Result};

/// Answers the request with a problem body.
pub(super) async fn write_problem(session: &mut Session, code: u16, detail: &str) -> Result<()> {
    let body = respond::problem_body(code, detail, serde_json::json!({}));
    let header = respond::problem_header(code, body.len())?;
    session
        .write_response_header(Box::new(header), false)
        .await?;
    session.write_response_body(Some(body), true).await
}

/// The status to answer an error with, and the upstream error kind it counts as, if any.
pub(super) fn classify(e: &Error) -> (u16, Option<&'static str>) {
    use ErrorType::*;
    if let HTTPStatus(code) = e.etype() {
        return (*code, None);
    }
    match e.esource() {
        ErrorSource::Upstream => match e.etype() {
            ConnectTimedout | ReadTimedout | WriteTimedout => (504, Some("timeout")),
            ConnectRefused | ConnectNoRoute | ConnectError | SocketError => (502, Some("connect")),
            _ => (502, Some("other")),
        },
        ErrorSource::Downstream => match e.etype() {
            // The client is gone; nobody is left to answer.
            WriteError | ReadError | ConnectionClosed => (0, None),
            _ => (400, None),
        },
        ErrorSource::Internal | ErrorSource::Unset => (500, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_failures_are_classified() {
        let refused = Error::new(ErrorType::ConnectRefused).into_up();
        assert_eq!(classify(&refused), (502, Some("connect")));
        let slow = Error::new(ErrorType::ReadTimedout).into_up();
        assert_eq!(classify(&slow), (504, Some("timeout")));
        let gone = Error::new(ErrorType::ConnectionClosed).into_down();
        assert_eq!(classify(&gone), (0, None));
    }
}
