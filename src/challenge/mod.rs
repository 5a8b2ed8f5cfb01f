//! The challenge: a page a browser solves once (`refresh`, `pow`) for a signed pass that
//! turns an anonymous client into a caller the gate can name and limit (the source `pass`).
//! The gate decides who is challenged; this room opens passes before it decides, renders the
//! pages it asks for, and receives solutions.

mod settings;

pub use settings::ChallengeSettings;
