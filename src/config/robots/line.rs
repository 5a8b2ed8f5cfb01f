//! `--test`'s line for `[robots]`: where the file comes from, its groups, and the trap.

use crate::robots::{RobotsSettings, Source};
use humantime::format_duration;
use std::fmt;

/// `--test`'s line for the robots.txt, said when `[robots]` is configured.
pub(crate) struct RobotsLine<'a>(pub(crate) &'a RobotsSettings);

impl fmt::Display for RobotsLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.0;
        let file = match r.source {
            Source::Backend => format!(
                "the backend's /robots.txt, read every {}",
                format_duration(r.refresh)
            ),
            Source::Managed => {
                let groups: Vec<String> = r.groups.iter().map(|g| g.agent.to_string()).collect();
                let signal = match &r.content_signal {
                    Some(signal) => format!(", Content-Signal `{signal}`"),
                    None => String::new(),
                };
                format!("managed: groups {}{signal}", groups.join(", "))
            }
        };
        let trap = r.trap.as_deref().unwrap_or("a random path the fleet keeps");
        writeln!(
            f,
            "robots.txt      {file}; trap {trap}: a caller that read the file in the last {} is \
             banned for {}",
            format_duration(r.trap_window),
            format_duration(r.trap_ban)
        )
    }
}
