//! `[store] sentinels` and `sentinel_master`: Redis behind Sentinel, with the sentinels' own
//! credentials (`sentinel_username`, `sentinel_password`; `username` and `password` stay the
//! data nodes').

use super::StoreFile;
use crate::config::check::Checker;
use crate::config::error::ConfigError;
use crate::limiter::driver::SentinelSettings;

/// The Sentinel settings of `file`, if it names sentinels.
pub(crate) fn sentinel(
    check: &Checker<'_>,
    file: &StoreFile,
) -> Result<Option<SentinelSettings>, ConfigError> {
    let Some(sentinels) = &file.sentinels else {
        if let Some(master) = &file.sentinel_master {
            let message = "`store.sentinel_master` needs `store.sentinels`";
            return Err(check.error(master, message.into()));
        }
        return Ok(None);
    };
    if sentinels.get_ref().is_empty() {
        let message = "`store.sentinels` needs at least one sentinel URL";
        return Err(check.error(sentinels, message.into()));
    }
    let nodes = sentinels
        .get_ref()
        .iter()
        .map(|n| check.redis_url(n, "store.sentinels"))
        .collect::<Result<Vec<_>, _>>()?;
    let master = match &file.sentinel_master {
        Some(master) if !master.get_ref().trim().is_empty() => master.get_ref().clone(),
        Some(master) => {
            return Err(check.error(master, "`store.sentinel_master` is empty".into()));
        }
        None => {
            let message =
                "`store.sentinels` needs `store.sentinel_master`, the name the sentinels monitor";
            return Err(check.error(sentinels, message.into()));
        }
    };
    Ok(Some(SentinelSettings {
        nodes,
        master,
        username: file.sentinel_username.as_ref().map(|u| u.get_ref().clone()),
        password: file.sentinel_password.as_ref().map(|p| p.get_ref().clone()),
    }))
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use crate::limiter::StoreSettings;
    use std::path::Path;

    const BASE: &str =
        "[server]\nlisten = \"127.0.0.1:8080\"\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n\n";

    #[test]
    fn sentinels_name_the_master_and_keep_their_passwords_out_of_the_description() {
        let text = format!(
            "{BASE}[store]\nkind = \"redis\"\nsentinels = [\"redis://:pw@127.0.0.1:26379\", \"redis://127.0.0.1:26380\"]\n\
             sentinel_master = \"mymaster\"\nsentinel_password = \"sentinel-secret\"\npassword = \"data-secret\"\n"
        );
        let config = parse(&text, Path::new("t.toml")).unwrap();
        let StoreSettings::Redis(redis) = &config.store else {
            panic!("a redis store");
        };
        let sentinel = redis.sentinel.as_ref().unwrap();
        assert_eq!(sentinel.master, "mymaster");
        assert_eq!(sentinel.password.as_deref(), Some("sentinel-secret"));
        let shown = config.to_string();
        assert!(shown.contains("sentinel master `mymaster`"), "{shown}");
        for secret in ["pw@", "sentinel-secret", "data-secret"] {
            assert!(!shown.contains(secret), "{shown}");
        }
    }

    #[test]
    fn a_sentinel_setup_missing_a_part_is_a_located_error() {
        let cases = [
            ("sentinels = [\"redis://127.0.0.1:26379\"]\n", "needs `store.sentinel_master`"),
            ("sentinel_master = \"m\"\nurl = \"redis://h:1\"\n", "needs `store.sentinels`"),
            (
                "sentinels = [\"redis://127.0.0.1:26379\"]\nsentinel_master = \"m\"\nurl = \"redis://h:1\"\n",
                "not both",
            ),
            ("sentinels = [\"http://x\"]\nsentinel_master = \"m\"\n", "redis:// or rediss://"),
        ];
        for (store, message) in cases {
            let text = format!("{BASE}[store]\nkind = \"redis\"\n{store}");
            let e = parse(&text, Path::new("t.toml")).unwrap_err().to_string();
            assert!(e.contains(message) && e.starts_with("t.toml:"), "{e}");
        }
    }
}
