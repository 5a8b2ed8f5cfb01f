//! `GET /v1/decisions/{ref}`: what decided the request with that id, and why, as JSON (see
//! [`crate::explain::Record::to_json`]): from this instance's ring, else the fleet's shelf.
//! A ref outside the grammar (1 to 64 hex digits and `-`) is a 400 naming `ref`; unknown or
//! past `decisions.max_age`, a 404; the shelf unreadable and the ring without it, a 503.

use super::api::ControlApi;
use super::reply::Reply;
use crate::explain::{Found, Reference};
use http::StatusCode;
use serde_json::{json, Value};

impl ControlApi {
    /// `GET /v1/decisions/{ref}`.
    pub(super) async fn explain(&self, reference: &str) -> Reply {
        let reference = match Reference::parse(reference) {
            Ok(reference) => reference,
            Err(e) => return Reply::bad_field("ref", &e.to_string()),
        };
        match self.decisions.find(&reference, self.clock.now_ms()).await {
            Found::Here(record) => Reply::json(StatusCode::OK, &found(record, "this instance")),
            Found::Fleet(record) => Reply::json(StatusCode::OK, &found(record, "fleet")),
            Found::Unknown => Reply::unknown(
                "ref",
                &format!(
                    "no decision is kept under `{reference}`: unknown, older than \
                     decisions.max_age, or made by an instance that does not share this one's \
                     Redis store"
                ),
            ),
            Found::Unavailable(e) => Reply::problem(
                StatusCode::SERVICE_UNAVAILABLE,
                &format!("not kept on this instance, and the fleet's store cannot be read: {e}"),
                json!({ "field": "ref" }),
            ),
        }
    }
}

/// `record` with where it was found.
fn found(mut record: Value, from: &str) -> Value {
    if let Some(fields) = record.as_object_mut() {
        fields.insert("found_on".to_owned(), from.into());
    }
    record
}
