//! One robots.txt as Floodgate serves and enforces it: its text with the trap written into
//! every group, parsed once, the finder of the tokens its groups name, and the groups each
//! token obeys (so a request finds its groups by the finder's number, with no lookup).

use super::fetch::RobotsCopy;
use super::{Agents, Obeyed, RobotsTxt};
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
    /// The groups obeyed by the crawler of each of `agents`' tokens, by its number.
    obeyed: Vec<Box<[usize]>>,
}

impl Served {
    /// The file `txt`, with `trap` (when armed) disallowed in every group.
    pub fn new(txt: RobotsTxt, trap: Option<&str>) -> Self {
        let txt = match trap {
            Some(trap) => txt.with_trap(trap),
            None => txt,
        };
        let agents = Agents::new(txt.tokens());
        let obeyed = agents
            .tokens()
            .iter()
            .map(|token| txt.obeyed(Some(token)).groups().into())
            .collect();
        Self {
            body: Bytes::from(txt.text().to_owned()),
            agents,
            obeyed,
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

    /// The groups obeyed by the crawler of the token numbered `found` by [`Served::agents`]
    /// (`None`: a crawler named by no group, which obeys the `*` groups).
    pub fn obeyed(&self, found: Option<usize>) -> Obeyed<'_> {
        match found.and_then(|i| self.obeyed.get(i)) {
            Some(groups) => self.txt.obeying(groups),
            None => self.txt.obeyed(None),
        }
    }
}
