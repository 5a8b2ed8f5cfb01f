//! Decisions explained: each request's decision kept as a [`Record`] (time, route, the
//! policies checked and what each said, the caller's source and digest, the bucket, the bot
//! claim, fingerprints, pass, overload, the final decision and status) in a bounded ring per
//! instance and, with the Redis store, on the fleet's shelf, to be looked up by the request's
//! [`Reference`] (`GET /v1/decisions/{ref}`).

mod book;
mod budget;
mod record;
mod reference;
mod ring;
mod settings;
mod shared;
mod step;

pub use book::{Decisions, Found};
pub use budget::Budget;
pub use record::{kept_path, Bucket, Caller, Record, MAX_PATH};
pub use reference::{is_own_form, BadReference, Reference, MAX_LEN};
pub use ring::{Evicted, Kept, Ring};
pub use settings::{DecisionSettings, DEFAULT_KEEP, DEFAULT_MAX_AGE};
pub use shared::{Shelf, ShelfWriter, QUEUE};
pub use step::{Admittance, Overloaded, Said, Step};
