//! The control API as an operator calls it: a token file for the `[admin]` table, and calls
//! on a proxy's admin listener with that token (from 127.0.0.1).

use super::wait::within;
use super::{client_from, Proxy};
use reqwest::blocking::Response;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// The operators' token written to the token file of `admin_tables`.
pub const TOKEN: &str = "s3cr3t-0123456789abcdef";

/// Writes a token file (a comment line, then `ops:TOKEN`) into `dir`; the `[admin]` lines that
/// use it, then `more`.
pub fn admin_tables(dir: &Path, more: &str) -> String {
    let tokens = dir.join("tokens");
    std::fs::write(&tokens, format!("# operators\nops:{TOKEN}\n")).expect("write the token file");
    format!("token_file = \"{}\"\n{more}", tokens.display())
}

/// A call on `proxy`'s admin listener with `token` (none: no `Authorization`).
pub fn call(
    proxy: &Proxy,
    method: &str,
    path: &str,
    body: Option<Value>,
    token: Option<&str>,
) -> Response {
    let url = format!("http://127.0.0.1:{}{path}", proxy.admin_port);
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("an HTTP method");
    let mut req = client_from("127.0.0.1").request(method, url);
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    if let Some(body) = body {
        req = req.json(&body);
    }
    req.send().expect("the admin listener answers")
}

/// A control call with `TOKEN`: the status and the JSON answer (null if none).
pub fn control(proxy: &Proxy, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let response = call(proxy, method, path, body, Some(TOKEN));
    let status = response.status().as_u16();
    let text = response.text().unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// The decision `proxy` explains under `id`, once it has kept it (as the request ends, just
/// after the answer left; within 3 s).
pub fn explained(proxy: &Proxy, id: &str) -> Value {
    let mut found = Value::Null;
    let path = format!("/v1/decisions/{id}");
    within(Duration::from_secs(3), || {
        let (status, body) = control(proxy, "GET", &path, None);
        found = body;
        status == 200
    })
    .unwrap_or_else(|| panic!("{id} is not explained: {found}"));
    found
}
