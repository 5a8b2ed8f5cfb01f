//! Issue 59, signed agents (Web Bot Auth), end to end: the real binary, the test's own signing
//! agent (web-bot-auth's signer and PyPI's `http-message-signatures`), key directories over
//! HTTPS on loopback with a test CA.

mod directory;
mod scenarios;
mod signer;
