//! The challenge pages: HTML readable without CSS or JavaScript, with one static inline style
//! and (for `pow`) one static inline script that the Content-Security-Policy allows by hash.
//! Every per-request value goes into an HTML attribute or a URL, escaped for it.

use base64::Engine as _;
use bytes::Bytes;
use sha2::{Digest, Sha256};

use super::encoding::Coding;
use super::template::{Slot, Template, Value};
use crate::identity::ChallengeKind;

/// The layout every page shares.
const PAGE: &str = include_str!("assets/page.html");
/// The inline style.
const STYLE: &str = include_str!("assets/page.css");
/// The `refresh` page's reload (in the head).
const REFRESH_HEAD: &str = include_str!("assets/refresh-head.html");
/// The `refresh` page's text and link.
const REFRESH_BODY: &str = include_str!("assets/refresh.html");
/// The `pow` page's text, progress line and script.
const POW_BODY: &str = include_str!("assets/pow.html");
/// The `pow` page's inline script as it ships: `assets/pow.js` minified by build.rs.
const POW_SCRIPT: &str = include_str!(concat!(env!("OUT_DIR"), "/pow.min.js"));
/// The attributes the `pow` script reads its challenge from.
const POW_ATTRIBUTES: &str = concat!(
    r#" data-nonce="{{nonce}}" data-difficulty="{{difficulty}}""#,
    r#" data-action="{{action}}" data-to="{{to}}""#
);

/// The values a request fills into a challenge page.
#[derive(Debug, Clone, Copy)]
pub struct PageInput<'a> {
    /// Where the solution goes, a path (e.g. `/.floodgate/challenge`).
    pub action: &'a str,
    /// The signed nonce, base64url text (`[A-Za-z0-9_.-]`, at most 200 bytes).
    pub nonce: &'a str,
    /// The original path and query to return to, already checked
    /// ([`return_target`](super::return_target)); percent-encoded into the page.
    pub target: &'a str,
    /// `refresh` only: seconds before the page reloads itself.
    pub wait_s: u32,
    /// The request id, shown as the reference to quote (escaped into the page).
    pub reference: &'a str,
}

/// The challenge pages, rendered once per config: static bytes around the few values a
/// request fills in.
#[derive(Debug, Clone)]
pub struct Pages {
    refresh: Template,
    pow: Template,
    csp: String,
}

impl Pages {
    /// The pages and their Content-Security-Policy.
    pub fn new() -> Self {
        Self {
            refresh: Template::new(page(REFRESH_HEAD, "", REFRESH_BODY)),
            pow: Template::new(page("", POW_ATTRIBUTES, POW_BODY)),
            csp: format!(
                "default-src 'none'; script-src '{}'; style-src '{}'; base-uri 'none'; \
                 form-action 'self'; frame-ancestors 'none'",
                csp_hash(POW_SCRIPT),
                csp_hash(STYLE)
            ),
        }
    }

    /// The page for a `kind` challenge with the request's values, escaped for their places,
    /// encoded with `coding`.
    pub fn render(&self, kind: ChallengeKind, input: &PageInput<'_>, coding: Coding) -> Bytes {
        let (template, difficulty) = match kind {
            // No policy asks for a token: a page for one is the plainest page.
            ChallengeKind::Refresh | ChallengeKind::PrivacyPass => (&self.refresh, 0),
            ChallengeKind::Pow { difficulty } => (&self.pow, difficulty),
        };
        let mut wait = itoa::Buffer::new();
        let wait = wait.format(input.wait_s);
        let mut bits = itoa::Buffer::new();
        let bits = bits.format(difficulty);
        let value = |slot| match slot {
            Slot::Action => Value::Html(input.action),
            Slot::Nonce => Value::Html(input.nonce),
            Slot::NonceUrl => Value::Query(input.nonce),
            Slot::To => Value::Query(input.target),
            Slot::Wait => Value::Html(wait),
            Slot::Seconds => Value::Html(if input.wait_s == 1 {
                "second"
            } else {
                "seconds"
            }),
            Slot::Difficulty => Value::Html(bits),
            Slot::Reference => Value::Html(input.reference),
        };
        match coding {
            Coding::Identity => template.render(value),
            Coding::Gzip => template.render_gzip(value),
        }
    }

    /// The `Content-Security-Policy` every page is served with: nothing but the page's own
    /// inline script and style, by hash.
    pub fn content_security_policy(&self) -> &str {
        &self.csp
    }
}

impl Default for Pages {
    fn default() -> Self {
        Self::new()
    }
}

/// The layout with a kind's head, `<main>` attributes and body, the style and script in place.
fn page(head: &str, attributes: &str, body: &str) -> String {
    PAGE.replace("{{style}}", STYLE)
        .replace("{{head}}", head)
        .replace("{{attributes}}", attributes)
        .replace("{{body}}", body)
        .replace("{{script}}", POW_SCRIPT)
}

/// A CSP source for inline text: `sha256-` and the base64 of its SHA-256.
fn csp_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const INPUT: PageInput<'static> = PageInput {
        action: "/.floodgate/challenge",
        nonce: "AbC_-9.xyz",
        target: "/a/b?x=1&y=2",
        wait_s: 3,
        reference: "0123456789abcdef0123456789abcdef",
    };

    fn text(kind: ChallengeKind, input: &PageInput<'_>) -> String {
        String::from_utf8(Pages::new().render(kind, input, Coding::Identity).to_vec()).unwrap()
    }

    /// The text between the first `open` and the next `close`.
    fn between<'a>(page: &'a str, open: &str, close: &str) -> &'a str {
        let start = page.find(open).unwrap() + open.len();
        &page[start..start + page[start..].find(close).unwrap()]
    }

    const POW: ChallengeKind = ChallengeKind::Pow { difficulty: 16 };

    #[test]
    fn the_policy_allows_exactly_the_inline_script_and_style_of_the_pages() {
        let pages = Pages::new();
        let csp = pages.content_security_policy();
        for kind in [ChallengeKind::Refresh, POW] {
            let page = text(kind, &INPUT);
            let style = between(&page, "<style>", "</style>");
            assert!(csp.contains(&format!("style-src '{}';", csp_hash(style))));
            assert_eq!(page.matches("<style").count(), 1);
            assert!(
                !page.contains("style="),
                "an inline style attribute needs unsafe-hashes"
            );
        }
        let page = text(POW, &INPUT);
        let script = between(&page, "<script>", "</script>");
        assert!(csp.contains(&format!("script-src '{}';", csp_hash(script))));
        assert_eq!(page.matches("<script").count(), 1);
        assert!(!text(ChallengeKind::Refresh, &INPUT).contains("<script"));
        assert!(csp.starts_with("default-src 'none'; "));
        assert!(csp.ends_with("; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"));
    }

    #[test]
    fn each_page_has_a_language_a_title_noindex_and_nothing_external() {
        for kind in [ChallengeKind::Refresh, POW] {
            let page = text(kind, &INPUT);
            assert!(page.starts_with("<!doctype html>\n<html lang=\"en\">"));
            assert!(!between(&page, "<title>", "</title>").is_empty());
            assert!(page.contains(r#"<meta name="robots" content="noindex, nofollow">"#));
            assert!(page.contains("<h1>") && page.contains("<main"));
            for external in [
                "src=", "<img", "<link", "http://", "https://", "@import", "url(",
            ] {
                assert!(!page.contains(external), "{kind}: {external}");
            }
        }
    }

    #[test]
    fn the_refresh_page_reloads_and_links_to_the_same_well_formed_url() {
        let page = text(ChallengeKind::Refresh, &INPUT);
        let url = "/.floodgate/challenge?nonce=AbC_-9.xyz&amp;to=%2Fa%2Fb%3Fx%3D1%26y%3D2";
        let refresh = format!(r#"<meta http-equiv="refresh" content="3; url={url}">"#);
        assert!(page.contains(&refresh), "{page}");
        assert!(page.contains(&format!(r#"<a href="{url}">Continue</a>"#)));
        assert!(page.contains("continues by itself in 3 seconds."));
        let one = PageInput { wait_s: 1, ..INPUT };
        assert!(text(ChallengeKind::Refresh, &one).contains("by itself in 1 second."));
        let query = url.split_once('?').unwrap().1.replace("&amp;", "&");
        let pairs: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
        assert_eq!(
            pairs,
            [
                ("nonce".into(), INPUT.nonce.into()),
                ("to".into(), INPUT.target.into())
            ]
        );
    }

    #[test]
    fn the_pow_page_hands_its_script_the_challenge_in_attributes() {
        let page = text(POW, &INPUT);
        let attributes = concat!(
            r#"<main id="challenge" data-nonce="AbC_-9.xyz" data-difficulty="16""#,
            r#" data-action="/.floodgate/challenge" data-to="%2Fa%2Fb%3Fx%3D1%26y%3D2">"#
        );
        assert!(page.contains(attributes), "{page}");
        assert!(page.contains("<noscript>") && page.contains(r#"<p id="progress" hidden>"#));
        assert!(!page.contains("http-equiv"));
    }

    #[test]
    fn each_page_shows_the_reference_to_quote() {
        for kind in [ChallengeKind::Refresh, POW] {
            let page = text(kind, &INPUT);
            let shown = "<small>Reference: <code>0123456789abcdef0123456789abcdef</code></small>";
            assert!(page.contains(shown), "{kind}: {page}");
        }
    }

    #[test]
    fn no_value_breaks_out_of_its_place() {
        let hostile = r#""><script>alert(1)</script>'&"#;
        let input = PageInput {
            action: hostile,
            nonce: hostile,
            target: hostile,
            wait_s: 1,
            reference: hostile,
        };
        for kind in [ChallengeKind::Refresh, POW] {
            let page = text(kind, &input);
            assert!(!page.contains(hostile) && !page.contains("alert(1)</script>"));
            assert!(!page.contains("'&") && !page.contains("\"><"));
            assert!(page.contains("&quot;&gt;&lt;script&gt;") || page.contains("%22%3E%3Cscript"));
        }
        let page = text(POW, &input);
        assert!(page.contains(r#"data-to="%22%3E%3Cscript%3Ealert%281%29%3C%2Fscript%3E%27%26">"#));
    }

    #[test]
    fn a_gzipped_page_is_the_page() {
        use std::io::Read as _;
        let pages = Pages::new();
        for kind in [ChallengeKind::Refresh, POW] {
            let plain = pages.render(kind, &INPUT, Coding::Identity);
            let gzipped = pages.render(kind, &INPUT, Coding::Gzip);
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(&gzipped[..])
                .read_to_end(&mut out)
                .unwrap();
            assert_eq!(out, plain, "{kind}");
            assert!(gzipped.len() < plain.len(), "{kind}");
        }
    }

    #[test]
    fn the_pow_page_is_small_its_script_minified() {
        // Every byte is sent with every page of a flood (issue 72: 8,768 bytes then).
        assert!(!POW_SCRIPT.contains("//") && !POW_SCRIPT.contains("\n  "));
        let source = include_str!("assets/pow.js");
        assert!(
            POW_SCRIPT.len() * 5 < source.len() * 3,
            "{}",
            POW_SCRIPT.len()
        );
        let pages = Pages::new();
        let plain = pages.render(POW, &INPUT, Coding::Identity).len();
        let gzipped = pages.render(POW, &INPUT, Coding::Gzip).len();
        // Issue 75 added the reference line (a 32-digit id): about 85 bytes.
        assert!(
            plain <= 5_200 && gzipped <= 2_800,
            "{plain} bytes, {gzipped} gzipped"
        );
    }

    #[test]
    fn the_static_text_holds_no_stray_slot() {
        for text in [STYLE, POW_SCRIPT] {
            assert!(
                !text.contains("{{") && !text.contains("</"),
                "closes its element early"
            );
        }
        for kind in [ChallengeKind::Refresh, POW] {
            assert!(!text(kind, &INPUT).contains("{{"));
        }
    }

    #[test]
    fn the_shipped_script_agrees_with_the_server_when_node_is_installed() {
        let Ok(node) = std::process::Command::new("node").arg("--version").output() else {
            eprintln!("node is not installed: the script is not run");
            return;
        };
        assert!(node.status.success());
        let nonce = "AbC_-9.xyz".repeat(7); // 70 bytes: a midstate, then one block
        let script = format!(
            "const p = require({path:?});\
             console.log(p.sha256hex('abc:0'), new p.Search({nonce:?}, 8).run(1e6));",
            // The script as it ships, minified.
            path = concat!(env!("OUT_DIR"), "/pow.min.js"),
        );
        let out = std::process::Command::new("node")
            .args(["-e", &script])
            .output()
            .unwrap();
        let out = String::from_utf8(out.stdout).unwrap();
        let (known, solution) = out.trim().split_once(' ').unwrap();
        assert_eq!(
            known,
            "5f36efce86f68877cee18fda5637abb2a1bb409f4326cc741fdf13200aa26980"
        );
        assert!(crate::challenge::solved(&nonce, solution, 8), "{solution}");
        let n: u64 = solution.parse().unwrap();
        assert!((0..n).all(|m| !crate::challenge::solved(&nonce, &m.to_string(), 8)));
    }
}
