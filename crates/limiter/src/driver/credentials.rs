//! A server's connection info: its URL read, with configured credentials replacing the URL's.
//! Shared by the connection and the sentinels (which name the master by address only).

use crate::LimiterError;
use redis::IntoConnectionInfo;

/// The connection info of `url` (`what` names it in errors), with `username` and `password`
/// replacing the URL's when given.
pub(super) fn connection_info(
    url: &str,
    what: &str,
    username: &Option<String>,
    password: &Option<String>,
) -> Result<redis::ConnectionInfo, LimiterError> {
    let info = url
        .into_connection_info()
        .map_err(|e| LimiterError::Store(format!("bad {what}: {}", e.category())))?;
    let mut redis_info = info.redis_settings().clone();
    if let Some(user) = username {
        redis_info = redis_info.set_username(user);
    }
    if let Some(password) = password {
        redis_info = redis_info.set_password(password);
    }
    Ok(info.set_redis_settings(redis_info))
}
