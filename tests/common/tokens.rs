//! Floodgate's Privacy Pass challenge from a client's side, over HTTP: the config of a
//! `challenge` policy on everything with one trusted issuer, page loads with and without a
//! token, what the answer offers and sets, and the counter. Included beside `issuer.rs` by the
//! tests that use it (`#[path = "../common/tokens.rs"] mod tokens;`), which it names as
//! `crate::issuer`.
#![allow(dead_code)]

use crate::common::{header, Proxy};
use crate::issuer::{authorization, challenges_of, TestIssuer};
use reqwest::blocking::Response;

/// The issuer's name in the config.
pub(crate) const ISSUER: &str = "issuer.test";

/// The origin the challenges name.
pub(crate) const ORIGIN: &str = "127.0.0.1";

/// A page load's `Accept`.
pub(crate) const PAGE: (&str, &str) = ("accept", "text/html");

/// A `challenge` policy on everything and the issuer, its keys from `keys` (a `token_key` or a
/// `directory` line, and any other key of the table).
pub(crate) fn config(keys: &str) -> String {
    format!(
        "[[policy]]\nname = \"browsers\"\naction = \"challenge\"\n\n\
         [challenge.privacy_pass]\nissuer = \"{ISSUER}\"\norigins = [\"{ORIGIN}\"]\n{keys}\n"
    )
}

/// [`config`] with `signer`'s key as `token_key`.
pub(crate) fn config_keyed(signer: &TestIssuer) -> String {
    config(&format!("token_key = \"{}\"", signer.token_key()))
}

/// The `(challenge, token-key)` of each token challenge `response` offers.
pub(crate) fn offered(response: &Response) -> Vec<(String, String)> {
    let values = response.headers().get_all("www-authenticate");
    challenges_of(values.iter().filter_map(|v| v.to_str().ok()))
}

/// A page load of `proxy` with `headers`.
pub(crate) fn load(proxy: &Proxy, headers: &[(&str, &str)]) -> Response {
    proxy.get("/articles/7", &[&[PAGE], headers].concat())
}

/// A page load presenting `token`.
pub(crate) fn presenting(proxy: &Proxy, token: &[u8]) -> Response {
    load(proxy, &[("authorization", &authorization(token))])
}

/// The challenge a page load meets: asserted a 401 with the page and one token challenge of
/// `signer`'s key.
pub(crate) fn challenge(proxy: &Proxy, signer: &TestIssuer) -> String {
    challenged(load(proxy, &[]), signer)
}

/// `response`, asserted the challenge (a 401 page offering `signer`'s key): its challenge.
pub(crate) fn challenged(response: Response, signer: &TestIssuer) -> String {
    assert_eq!(response.status(), 401, "the challenge");
    let offers = offered(&response);
    assert_eq!(offers.len(), 1, "one issuer, one challenge: {offers:?}");
    let (challenge, key) = offers.into_iter().next().unwrap_or_default();
    assert_eq!(key, signer.token_key(), "its key is offered");
    assert!(header(&response, "content-type").starts_with("text/html"));
    assert!(response.text().unwrap_or_default().contains("<html"));
    challenge
}

/// The `name=value` of the pass cookie `response` sets, if it sets one.
pub(crate) fn pass_cookie(response: &Response) -> Option<String> {
    let set = header(response, "set-cookie");
    let pair = set.split(';').next()?;
    pair.starts_with("floodgate_pass=").then(|| pair.to_owned())
}

/// `floodgate_privacy_pass_total` for `issuer` and `result`.
pub(crate) fn counted(proxy: &Proxy, issuer: &str, result: &str) -> f64 {
    proxy.metric(&format!(
        "floodgate_privacy_pass_total{{issuer=\"{issuer}\",result=\"{result}\"}}"
    ))
}
