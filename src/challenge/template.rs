//! A page split once into static text and the slots a request fills in (`{{name}}`), rendered
//! into one buffer of exactly the right size, as it is or gzipped (the static text deflated
//! once, [`gzip`](super::gzip)).

use std::ops::Range;

use bytes::Bytes;

use super::gzip::{deflate_alone, stored_len, Member, FRAME_LEN};

/// A per-request value a page holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Slot {
    /// `{{action}}`: where the solution goes.
    Action,
    /// `{{nonce}}`: the nonce as text (in an attribute).
    Nonce,
    /// `{{nonce_url}}`: the nonce as a query value.
    NonceUrl,
    /// `{{to}}`: the return target as a query value.
    To,
    /// `{{wait}}`: seconds before a `refresh` page reloads.
    Wait,
    /// `{{seconds}}`: `second` or `seconds`, after `{{wait}}` in a sentence.
    Seconds,
    /// `{{difficulty}}`: the `pow` difficulty in bits.
    Difficulty,
    /// `{{ref}}`: the request id, the reference a visitor quotes.
    Reference,
}

impl Slot {
    fn named(name: &str) -> Option<Self> {
        Some(match name {
            "action" => Self::Action,
            "nonce" => Self::Nonce,
            "nonce_url" => Self::NonceUrl,
            "to" => Self::To,
            "wait" => Self::Wait,
            "seconds" => Self::Seconds,
            "difficulty" => Self::Difficulty,
            "ref" => Self::Reference,
            _ => return None,
        })
    }
}

/// A slot's value and how it is escaped.
#[derive(Debug, Clone, Copy)]
pub(super) enum Value<'a> {
    /// Text escaped for an HTML attribute or element.
    Html(&'a str),
    /// Text percent-encoded as a query value (the output needs no HTML escaping).
    Query(&'a str),
}

impl Value<'_> {
    fn len(self) -> usize {
        match self {
            Self::Html(text) => text
                .bytes()
                .map(|b| html_escape(b).map_or(1, str::len))
                .sum(),
            Self::Query(text) => form_urlencoded::byte_serialize(text.as_bytes())
                .map(str::len)
                .sum(),
        }
    }

    fn write(self, out: &mut Vec<u8>) {
        match self {
            // Nonces and paths seldom hold a byte to escape: copied whole then.
            Self::Html(text) if !text.bytes().any(|b| html_escape(b).is_some()) => {
                out.extend_from_slice(text.as_bytes());
            }
            Self::Html(text) => {
                for byte in text.bytes() {
                    match html_escape(byte) {
                        Some(entity) => out.extend_from_slice(entity.as_bytes()),
                        None => out.push(byte),
                    }
                }
            }
            Self::Query(text) => {
                for piece in form_urlencoded::byte_serialize(text.as_bytes()) {
                    out.extend_from_slice(piece.as_bytes());
                }
            }
        }
    }
}

/// The entity for a byte HTML gives a meaning to in text or a quoted attribute.
fn html_escape(byte: u8) -> Option<&'static str> {
    match byte {
        b'&' => Some("&amp;"),
        b'<' => Some("&lt;"),
        b'>' => Some("&gt;"),
        b'"' => Some("&quot;"),
        b'\'' => Some("&#39;"),
        _ => None,
    }
}

#[derive(Debug, Clone)]
enum Part {
    /// Static text: where it lies in the page's text, and the same deflated on its own.
    Text(Range<usize>, Box<[u8]>),
    Slot(Slot),
}

/// A page's text cut at its slots.
#[derive(Debug, Clone)]
pub(super) struct Template {
    text: String,
    parts: Vec<Part>,
}

impl Template {
    /// Cuts `text` at each `{{name}}`.
    ///
    /// # Panics
    /// On a slot name [`Slot`] does not know: the pages are built in, so that is a bug.
    pub(super) fn new(text: String) -> Self {
        let mut parts = Vec::new();
        let mut at = 0;
        while let Some(open) = text[at..].find("{{").map(|i| at + i) {
            let close = text[open..].find("}}").map(|i| open + i);
            let close = close.unwrap_or_else(|| panic!("an unclosed slot at byte {open}"));
            let name = &text[open + 2..close];
            let slot = Slot::named(name).unwrap_or_else(|| panic!("no slot {{{{{name}}}}}"));
            parts.push(Part::Text(at..open, Box::default()));
            parts.push(Part::Slot(slot));
            at = close + 2;
        }
        parts.push(Part::Text(at..text.len(), Box::default()));
        parts.retain(|part| !matches!(part, Part::Text(range, _) if range.is_empty()));
        for part in &mut parts {
            if let Part::Text(range, deflated) = part {
                *deflated = deflate_alone(&text.as_bytes()[range.clone()]);
            }
        }
        Self { text, parts }
    }

    /// The page with each slot's value, in one buffer of exactly its size.
    pub(super) fn render<'a>(&self, value: impl Fn(Slot) -> Value<'a>) -> Bytes {
        let len = self.parts.iter().map(|part| match part {
            Part::Text(range, _) => range.len(),
            Part::Slot(slot) => value(*slot).len(),
        });
        let mut out = Vec::with_capacity(len.sum());
        for part in &self.parts {
            match part {
                Part::Text(range, _) => out.extend_from_slice(self.part(range)),
                Part::Slot(slot) => value(*slot).write(&mut out),
            }
        }
        debug_assert_eq!(out.len(), out.capacity());
        Bytes::from(out)
    }

    /// The page gzipped: the static text as deflated once, each slot's value stored.
    pub(super) fn render_gzip<'a>(&self, value: impl Fn(Slot) -> Value<'a>) -> Bytes {
        let len = self.parts.iter().map(|part| match part {
            Part::Text(_, deflated) => deflated.len(),
            Part::Slot(slot) => stored_len(value(*slot).len()),
        });
        let mut member = Member::with_capacity(FRAME_LEN + len.sum::<usize>());
        for part in &self.parts {
            match part {
                Part::Text(range, deflated) => member.part(self.part(range), deflated),
                Part::Slot(slot) => {
                    let value = value(*slot);
                    member.value(value.len(), |out| value.write(out));
                }
            }
        }
        let out = member.finish();
        debug_assert_eq!(out.len(), out.capacity());
        Bytes::from(out)
    }

    fn part(&self, range: &Range<usize>) -> &[u8] {
        &self.text.as_bytes()[range.clone()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_filled_and_escaped_for_their_context() {
        let template = Template::new("<a href=\"{{action}}?to={{to}}\">{{wait}}</a>".into());
        let page = template.render(|slot| match slot {
            Slot::Action => Value::Html("/x\"<&>'"),
            Slot::To => Value::Query("/a b?c=d&e"),
            _ => Value::Html("5"),
        });
        assert_eq!(
            &page[..],
            b"<a href=\"/x&quot;&lt;&amp;&gt;&#39;?to=%2Fa+b%3Fc%3Dd%26e\">5</a>"
        );
    }

    #[test]
    fn text_without_slots_is_one_part() {
        let template = Template::new("plain".into());
        assert_eq!(template.parts.len(), 1);
        assert_eq!(&template.render(|_| Value::Html(""))[..], b"plain");
    }

    /// `bytes` gunzipped.
    fn gunzip(bytes: &[u8]) -> Vec<u8> {
        use std::io::Read as _;
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(bytes)
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    #[test]
    fn the_gzipped_page_is_the_page() {
        let text = "<p>{{wait}} {{seconds}}</p>".repeat(20) + "<a href=\"?to={{to}}\">x</a>";
        let template = Template::new(text);
        let long = "é/".repeat(40_000); // past one stored block, escaped
        for (wait, to) in [("5", "/a b"), ("", ""), ("&<>", long.as_str())] {
            let value = |slot| match slot {
                Slot::To => Value::Query(to),
                _ => Value::Html(wait),
            };
            let gzipped = template.render_gzip(value);
            assert_eq!(gunzip(&gzipped), template.render(value), "{wait:?}");
        }
    }

    #[test]
    fn a_gzipped_page_is_smaller() {
        let template = Template::new("<p>the same text again </p>".repeat(50) + "{{wait}}");
        let value = |_| Value::Html("7");
        let gzipped = template.render_gzip(value);
        assert!(
            gzipped.len() * 10 < template.render(value).len(),
            "{}",
            gzipped.len()
        );
    }

    #[test]
    #[should_panic(expected = "no slot")]
    fn an_unknown_slot_is_a_bug() {
        Template::new("{{nope}}".into());
    }
}
