//! Which group of a robots.txt a request's User-Agent names: a group's token found in it as
//! a whole word, ignoring ASCII case. Crawlers name themselves inside a comment
//! (`Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)`), so the token
//! may stand anywhere, but only as a whole word: `Spider` does not name `SpiderOak/1.0`.
//! Word characters are ASCII letters, digits, `-` and `_`. When several tokens are named,
//! the longest wins (`Googlebot-Image` over `Googlebot`).
//!
//! One pass of an Aho-Corasick automaton (leftmost-longest) finds them: a token is made of
//! word characters only, so a whole-word match is never hidden inside a longer match that
//! was not one. What recent User-Agents named is remembered ([`super::memo`]): most requests
//! come with one of a few browsers' User-Agents.

use super::memo::Memo;
use super::settings::is_product_token;
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use std::collections::HashSet;
use std::sync::Arc;

/// How much of a User-Agent is looked at: its first 64 KiB.
pub const MAX_USER_AGENT: usize = 64 * 1024;

/// The tokens of a robots.txt's groups, and the automaton finding them in a User-Agent.
#[derive(Debug, Clone, Default)]
pub struct Agents {
    /// The tokens, lowercase, by pattern number (shared: a request's fact names its token).
    tokens: Vec<Arc<str>>,
    /// `None` when there are no tokens.
    matcher: Option<AhoCorasick>,
    /// What recent User-Agents named.
    memo: Memo,
}

impl Agents {
    /// A finder of `tokens` (as [`super::RobotsTxt::tokens`] gives them; any case). A value
    /// that is not a product token (`[A-Za-z_-]+`) can name no group and is left out.
    pub fn new<'a>(tokens: impl IntoIterator<Item = &'a str>) -> Agents {
        let mut seen = HashSet::new();
        let tokens: Vec<Arc<str>> = tokens
            .into_iter()
            .filter(|t| is_product_token(t))
            .map(str::to_ascii_lowercase)
            .filter(|t| seen.insert(t.clone()))
            .map(Arc::from)
            .collect();
        let matcher = match tokens.is_empty() {
            true => None,
            false => matcher(&tokens),
        };
        Agents {
            tokens,
            matcher,
            memo: Memo::default(),
        }
    }

    /// The tokens, lowercase, by pattern number ([`Agents::find`]'s numbers).
    pub fn tokens(&self) -> &[Arc<str>] {
        &self.tokens
    }

    /// How many tokens it looks for.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether it looks for none.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The token `user_agent` (its bytes, as sent) names (lowercase), the longest if it names
    /// several; `None` if it names none.
    pub fn token(&self, user_agent: impl AsRef<[u8]>) -> Option<&str> {
        self.find(user_agent).map(|found| &*self.tokens[found])
    }

    /// The number of the token `user_agent` names (see [`Agents::token`]), an index of
    /// [`Agents::tokens`]. Looks at the first [`MAX_USER_AGENT`] bytes, in one pass.
    pub fn find(&self, user_agent: impl AsRef<[u8]>) -> Option<usize> {
        let matcher = self.matcher.as_ref()?;
        let user_agent = user_agent.as_ref();
        let haystack = &user_agent[..user_agent.len().min(MAX_USER_AGENT)];
        if let Some(named) = self.memo.recall(haystack) {
            return named;
        }
        let found = self.search(matcher, haystack);
        self.memo.remember(haystack, found);
        found
    }

    /// The number of the token `haystack` names, found by `matcher`'s pass over it.
    fn search(&self, matcher: &AhoCorasick, haystack: &[u8]) -> Option<usize> {
        let is_word = |i: usize| haystack.get(i).is_some_and(|&b| is_word_byte(b));
        let mut best: Option<usize> = None;
        for found in matcher.find_iter(haystack) {
            let whole =
                (found.start() == 0 || !is_word(found.start() - 1)) && !is_word(found.end());
            let longer = best.is_none_or(|b| self.tokens[b].len() < found.len());
            if whole && longer {
                best = Some(found.pattern().as_usize());
            }
        }
        best
    }
}

/// The automaton finding `tokens`: a DFA (a table lookup per byte of the User-Agent: the
/// search runs for every request with a `[robots]` config), or the automaton the crate picks
/// when a DFA of that many tokens would be too large.
fn matcher(tokens: &[Arc<str>]) -> Option<AhoCorasick> {
    let build = |kind| {
        AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostLongest)
            .kind(kind)
            .build(tokens.iter().map(|t| t.as_bytes()))
    };
    build(Some(AhoCorasickKind::DFA))
        .or_else(|_| build(None))
        .ok()
}

/// A word character: an ASCII letter or digit, `-` or `_`.
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

#[cfg(test)]
mod tests {
    use super::{Agents, MAX_USER_AGENT};

    fn agents() -> Agents {
        Agents::new([
            "Googlebot",
            "googlebot-image",
            "GPTBot",
            "Spider",
            "bot/2",
            "*",
            "",
        ])
    }

    #[test]
    fn a_token_as_a_whole_word_in_any_case_the_longest_winning() {
        let a = agents();
        assert_eq!(a.len(), 4, "`bot/2`, `*` and the empty value name no group");
        let ua = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
        assert_eq!(a.token(ua), Some("googlebot"));
        assert_eq!(a.token("Googlebot-Image/1.0"), Some("googlebot-image"));
        assert_eq!(
            a.token("googlebot-image googlebot"),
            Some("googlebot-image")
        );
        assert_eq!(a.token("GOOGLEBOT"), Some("googlebot"));
        assert_eq!(
            a.token("Mozilla/5.0 AppleWebKit/537.36; compatible; GPTBot/1.2"),
            Some("gptbot")
        );
        assert_eq!(a.token("spider"), Some("spider"));
    }

    #[test]
    fn a_token_inside_a_longer_word_names_nothing() {
        let a = agents();
        for ua in [
            "SpiderOak/1.0",
            "MySpider",
            "Spider_x",
            "Spider-2",
            "Googlebot2",
            "xGooglebot",
            "Googlebot-Imagex",
            "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0",
            "",
        ] {
            assert_eq!(a.token(ua), None, "{ua}");
        }
        // A whole word after a part of a longer one.
        assert_eq!(a.token("SpiderOak Spider"), Some("spider"));
        assert_eq!(a.token("Googlebot-Imagex Googlebot"), Some("googlebot"));
    }

    #[test]
    fn no_tokens_names_nothing_and_a_huge_user_agent_is_read_once_up_to_its_limit() {
        assert_eq!(Agents::new([]).token("Googlebot"), None);
        let a = agents();
        let filler = "Spider".repeat(MAX_USER_AGENT / 6 + 10);
        assert_eq!(a.token(&filler), None);
        let late = format!("{} Googlebot", "x".repeat(MAX_USER_AGENT));
        assert_eq!(a.token(&late), None, "past the limit");
        let early = format!("Googlebot {}", "x".repeat(MAX_USER_AGENT));
        assert_eq!(a.token(&early), Some("googlebot"));
    }
}
