//! Google's robots.txt test cases, continued: the Google-only ones (`GoogleOnly_*`: index
//! pages, long lines, the documentation's examples) and those of the line parser (line
//! endings, byte order marks, valid tokens, paths and escaping).

use super::{allowed, check, path_of, FOO_DISALLOW_ALL};
use crate::robots::{RobotsTxt, Verdict};

#[test]
fn google_only_system_test() {
    assert!(allowed("", "FooBot", ""), "an empty file allows everything");
    assert!(allowed(FOO_DISALLOW_ALL, "", ""), "an empty agent: allowed");
    assert!(
        !allowed(FOO_DISALLOW_ALL, "FooBot", ""),
        "an empty URL is `/`"
    );
    assert!(allowed("", "", ""));
}

#[test]
fn google_only_accept_user_agent_up_to_first_space() {
    let robots = "User-Agent: *\nDisallow: /\nUser-Agent: Foo Bar\nAllow: /x/\nDisallow: /\n";
    let url = "http://foo.bar/x/y";
    check(robots, &[("Foo", url, true), ("Foo Bar", url, false)]);
    assert_eq!(
        RobotsTxt::parse(robots.as_bytes())
            .tokens()
            .collect::<Vec<_>>(),
        ["foo"]
    );
}

#[test]
fn google_only_index_html_is_directory() {
    check(
        "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n",
        &[
            ("foobot", "http://foo.com/allowed-slash/", true),
            ("foobot", "http://foo.com/allowed-slash/index.htm", false),
            ("foobot", "http://foo.com/allowed-slash/index.html", true),
            ("foobot", "http://foo.com/anyother-url", false),
        ],
    );
}

#[test]
fn google_only_line_too_long() {
    const MAX_LINE: usize = 2083 * 8;
    let (allow, disallow) = ("allow: ", "disallow: ");
    let long = |fill: char, prefix: &str| {
        let max = MAX_LINE - "/x/".len() - prefix.len() + 1;
        let mut line = String::from("/x/");
        while line.len() < max {
            line.push(fill);
        }
        line
    };
    let longline = long('a', disallow);
    let robots = format!("user-agent: FooBot\n{disallow}{longline}/qux\n");
    check(
        &robots,
        &[
            ("FooBot", "http://foo.bar/fux", true),
            ("FooBot", &format!("http://foo.bar{longline}/fux"), false),
        ],
    );
    let (a, b) = (long('a', allow), long('b', allow));
    let robots = format!("user-agent: FooBot\ndisallow: /\n{allow}{a}/qux\n{allow}{b}/qux\n");
    check(
        &robots,
        &[
            ("FooBot", "http://foo.bar/", false),
            ("FooBot", &format!("http://foo.bar{a}/qux"), true),
            ("FooBot", &format!("http://foo.bar{b}/fux"), true),
        ],
    );
}

#[test]
fn google_only_documentation_checks() {
    let foo = |allow: &str| format!("user-agent: FooBot\ndisallow: /\nallow: {allow}\n");
    for fish in ["/fish", "/fish*"] {
        check(
            &foo(fish),
            &[
                ("FooBot", "http://foo.bar/bar", false),
                ("FooBot", "http://foo.bar/fish", true),
                ("FooBot", "http://foo.bar/fish.html", true),
                ("FooBot", "http://foo.bar/fish/salmon.html", true),
                ("FooBot", "http://foo.bar/fishheads", true),
                ("FooBot", "http://foo.bar/fishheads/yummy.html", true),
                ("FooBot", "http://foo.bar/fish.html?id=anything", true),
                ("FooBot", "http://foo.bar/Fish.asp", false),
                ("FooBot", "http://foo.bar/catfish", false),
                ("FooBot", "http://foo.bar/?id=fish", false),
            ],
        );
    }
    check(
        &foo("/fish/"),
        &[
            ("FooBot", "http://foo.bar/bar", false),
            ("FooBot", "http://foo.bar/fish/", true),
            ("FooBot", "http://foo.bar/fish/salmon", true),
            ("FooBot", "http://foo.bar/fish/?salmon", true),
            ("FooBot", "http://foo.bar/fish/salmon.html", true),
            ("FooBot", "http://foo.bar/fish/?id=anything", true),
            ("FooBot", "http://foo.bar/fish", false),
            ("FooBot", "http://foo.bar/fish.html", false),
            ("FooBot", "http://foo.bar/Fish/Salmon.html", false),
        ],
    );
    check(
        &foo("/*.php"),
        &[
            ("FooBot", "http://foo.bar/bar", false),
            ("FooBot", "http://foo.bar/filename.php", true),
            ("FooBot", "http://foo.bar/folder/filename.php", true),
            (
                "FooBot",
                "http://foo.bar/folder/filename.php?parameters",
                true,
            ),
            ("FooBot", "http://foo.bar//folder/any.php.file.html", true),
            ("FooBot", "http://foo.bar/filename.php/", true),
            ("FooBot", "http://foo.bar/index?f=filename.php/", true),
            ("FooBot", "http://foo.bar/php/", false),
            ("FooBot", "http://foo.bar/index?php", false),
            ("FooBot", "http://foo.bar/windows.PHP", false),
        ],
    );
    check(
        &foo("/*.php$"),
        &[
            ("FooBot", "http://foo.bar/bar", false),
            ("FooBot", "http://foo.bar/filename.php", true),
            ("FooBot", "http://foo.bar/folder/filename.php", true),
            ("FooBot", "http://foo.bar/filename.php?parameters", false),
            ("FooBot", "http://foo.bar/filename.php/", false),
            ("FooBot", "http://foo.bar/filename.php5", false),
            ("FooBot", "http://foo.bar/php/", false),
            ("FooBot", "http://foo.bar/filename?php", false),
            ("FooBot", "http://foo.bar/aaaphpaaa", false),
            ("FooBot", "http://foo.bar//windows.PHP", false),
        ],
    );
    check(
        &foo("/fish*.php"),
        &[
            ("FooBot", "http://foo.bar/bar", false),
            ("FooBot", "http://foo.bar/fish.php", true),
            (
                "FooBot",
                "http://foo.bar/fishheads/catfish.php?parameters",
                true,
            ),
            ("FooBot", "http://foo.bar/Fish.PHP", false),
        ],
    );
}

#[test]
fn google_only_documentation_order_of_precedence() {
    let foo = |rules: &str| format!("user-agent: FooBot\n{rules}");
    check(
        &foo("allow: /p\ndisallow: /\n"),
        &[("FooBot", "http://example.com/page", true)],
    );
    check(
        &foo("allow: /folder\ndisallow: /folder\n"),
        &[("FooBot", "http://example.com/folder/page", true)],
    );
    check(
        &foo("allow: /page\ndisallow: /*.htm\n"),
        &[("FooBot", "http://example.com/page.htm", false)],
    );
    check(
        &foo("allow: /$\ndisallow: /\n"),
        &[
            ("FooBot", "http://example.com/", true),
            ("FooBot", "http://example.com/page.html", false),
        ],
    );
}

#[test]
fn id_lines_numbers_are_counted_correctly() {
    // The C++ test counts directives; here, the rules they make hold whatever the line
    // endings: `foo` allows `/some/path` only implicitly, `bar` disallows everything.
    for eol in ["\n", "\r\n", "\r"] {
        let robots = [
            "User-Agent: foo",
            "Allow: /some/path",
            "User-Agent: bar",
            "",
            "",
            "Disallow: /",
        ]
        .join(eol);
        for robots in [robots.clone(), format!("{robots}{eol}")] {
            check(
                &robots,
                &[
                    ("bar", "http://foo.bar/x", false),
                    ("foo", "http://foo.bar/x", true),
                ],
            );
        }
    }
    let mixed = "User-Agent: foo\nAllow: /some/path\r\nUser-Agent: bar\n\r\n\nDisallow: /";
    check(mixed, &[("bar", "http://foo.bar/x", false)]);
}

#[test]
fn id_utf8_byte_order_mark_is_skipped() {
    let body = b"User-Agent: foo\nDisallow: /AnyValue\n";
    for bom in [&b"\xEF\xBB\xBF"[..], b"\xEF\xBB", b"\xEF"] {
        let file = RobotsTxt::parse(&[bom, body].concat());
        assert_eq!(
            file.verdict(Some("foo"), "/AnyValue"),
            Verdict::Disallowed,
            "{bom:?}"
        );
    }
    // A broken mark makes the first line garbage; a mark later is garbage on its line.
    let broken = RobotsTxt::parse(b"\xEF\x11\xBFUser-Agent: foo\nDisallow: /AnyValue\n");
    assert_eq!(broken.verdict(Some("foo"), "/AnyValue"), Verdict::Allowed);
    let middle = RobotsTxt::parse(b"User-Agent: foo\n\xEF\xBB\xBFDisallow: /AnyValue\n");
    assert_eq!(middle.verdict(Some("foo"), "/AnyValue"), Verdict::Allowed);
}

#[test]
fn id_verify_valid_user_agents_to_obey() {
    use crate::robots::is_product_token;
    for valid in ["Foobot", "Foobot-Bar", "Foo_Bar"] {
        assert!(is_product_token(valid), "{valid}");
    }
    for invalid in ["", "ツ", "Foobot*", " Foobot ", "Foobot/2.1", "Foobot Bar"] {
        assert!(!is_product_token(invalid), "{invalid}");
    }
}

#[test]
fn test_get_path_params_query() {
    // The proxy hands over the target's path and query; a full URL's are what
    // Google's GetPathParamsQuery extracts (fragment dropped).
    for (url, path) in [
        ("", ""),
        ("http://www.example.com", "/"),
        ("http://www.example.com/", "/"),
        ("http://www.example.com/a", "/a"),
        (
            "http://www.example.com/a/b?c=http://d.e/",
            "/a/b?c=http://d.e/",
        ),
        (
            "http://www.example.com/a/b?c=d&e=f#fragment",
            "/a/b?c=d&e=f",
        ),
    ] {
        assert_eq!(path_of(url), path, "{url}");
    }
}

#[test]
fn test_maybe_escape_pattern() {
    use crate::robots::pattern::normalise;
    for (pattern, escaped) in [
        ("http://www.example.com", "http://www.example.com"),
        ("/a/b/c", "/a/b/c"),
        ("á", "%C3%A1"),
        ("%aa", "%AA"),
    ] {
        assert_eq!(normalise(pattern), escaped, "{pattern}");
    }
}
