//! Underscore spellings of header names: `X_Api_Key` for `x-api-key`, which CGI and WSGI
//! servers (folding `_` into `-`) read as the same header. The proxy strips them toward the
//! backend; a verified source (`[identity.verify]`) refuses a request that carries one.

/// Whether `name` is an underscore spelling of `of`: the same name (in any case) with one or
/// more of its `-` written `_`, which CGI and WSGI read as `of`. A name without `-` has none.
pub fn is_underscore_spelling(name: &str, of: &str) -> bool {
    let (name, of) = (name.as_bytes(), of.as_bytes());
    let spelled = |(&n, &o): (&u8, &u8)| n == b'_' && o == b'-';
    name.len() == of.len()
        && name.iter().zip(of).any(spelled)
        && name
            .iter()
            .zip(of)
            .all(|pair| spelled(pair) || pair.0.eq_ignore_ascii_case(pair.1))
}
