//! What a decision leaves beside its outcome: the request's class for overload protection and
//! the trail of the policies its buckets were checked against, for the front door that
//! explains it ([`Gate::decide_noted`](super::Gate::decide_noted)).

use super::Trail;
use crate::policy::Class;

/// A decision's notes.
#[derive(Debug, Default)]
pub struct Notes<'g> {
    /// The request's class when the backend is overloaded.
    pub class: Class,
    /// The policies whose buckets the request met, in the order they were checked.
    pub trail: Trail<'g>,
}
