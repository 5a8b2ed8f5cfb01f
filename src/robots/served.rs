//! One robots.txt as Floodgate serves and enforces it: its text with the trap written into
//! every group, parsed once, and the finder of the tokens its groups name.

use super::fetch::RobotsCopy;
use super::{Agents, RobotsTxt};
use bytes::Bytes;

/// A robots.txt, ready to serve and to judge requests by.
#[derive(Debug, Default)]
pub struct Served {
    /// The body answered to `/robots.txt`.
    body: Bytes,
    /// The file, parsed.
    txt: RobotsTxt,
    /// Which of its groups a User-Agent names.
    agents: Agents,
}

impl Served {
    /// The file `txt`, with `trap` (when armed) disallowed in every group.
    pub fn new(txt: RobotsTxt, trap: Option<&str>) -> Self {
        let txt = match trap {
            Some(trap) => txt.with_trap(trap),
            None => txt,
        };
        Self {
            body: Bytes::from(txt.text().to_owned()),
            agents: Agents::new(txt.tokens()),
            txt,
        }
    }

    /// The backend's `copy` as served: its rules, or none (a 4xx, or no good copy: nothing
    /// is enforced but the trap).
    pub fn of_copy(copy: &RobotsCopy, trap: Option<&str>) -> Self {
        let txt = match copy.rules() {
            Some(body) => RobotsTxt::parse(body),
            None => RobotsTxt::default(),
        };
        Self::new(txt, trap)
    }

    /// The body answered to `/robots.txt`.
    pub fn body(&self) -> Bytes {
        self.body.clone()
    }

    /// The file, parsed.
    pub fn txt(&self) -> &RobotsTxt {
        &self.txt
    }

    /// Which of its groups a User-Agent names.
    pub fn agents(&self) -> &Agents {
        &self.agents
    }
}
