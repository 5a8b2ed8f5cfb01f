use super::{allow_reaches, normalise, Pattern};

fn matches(pattern: &str, path: &str) -> bool {
    Pattern::new(pattern).is_some_and(|p| p.matches(&normalise(path)))
}

#[test]
fn the_normal_form_of_rfc_9309_section_2_2_2() {
    // RFC 9309 §2.2.2's table, and the proxy's spelling of the same bytes.
    for (written, normal) in [
        ("/foo/bar?baz=quz", "/foo/bar?baz=quz"),
        (
            "/foo/bar?baz=https%3A%2F%2Ffoo.bar",
            "/foo/bar?baz=https%3A%2F%2Ffoo.bar",
        ),
        ("/foo/bar/ツ", "/foo/bar/%E3%83%84"),
        ("/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84"),
        ("/foo/bar/%e3%83%84", "/foo/bar/%E3%83%84"),
        ("/foo/bar/%62%61%7A", "/foo/bar/baz"),
        ("/%aa", "/%AA"),
        ("/a%2fb", "/a%2Fb"),
        ("/a b|c", "/a%20b%7Cc"),
        ("/100%", "/100%"),
        ("/%zz", "/%zz"),
        ("/*.php$", "/*.php$"),
    ] {
        assert_eq!(normalise(written), normal, "{written}");
    }
    assert!(matches!(
        normalise("/plain/path?q=1"),
        std::borrow::Cow::Borrowed(_)
    ));
}

#[test]
fn stars_and_a_final_dollar() {
    assert!(matches("/", "/"));
    assert!(matches("/", "/abc"));
    assert!(!matches("/abc", "/"));
    assert!(matches("/*/*/tree/master", "/google/robotstxt/tree/master"));
    assert!(matches(
        "/*/*/tree/master",
        "/google/robotstxt/tree/master/index.html"
    ));
    assert!(matches(
        "/*/*/tree/master$",
        "/google/robotstxt/tree/master"
    ));
    assert!(!matches(
        "/*/*/tree/master$",
        "/google/robotstxt/tree/master/abc"
    ));
    assert!(!matches("/*/*/tree/master", "/google/robotstxt/tree/abc"));
    assert!(matches("*", "/anything"));
    assert!(matches("/a**b", "/a-b"));
    assert!(matches("/a*$", "/a/b/c"));
    assert!(matches("/a$b", "/a$b"), "a `$` inside is literal");
    assert!(
        !matches("/ab*ba$", "/aba"),
        "the last piece does not overlap an earlier one"
    );
    assert!(matches("/ab*ba$", "/abba"));
    assert!(matches("/fish*.php", "/fishheads/catfish.php?parameters"));
    assert!(!matches("/fish*.php", "/Fish.PHP"));
    assert_eq!(Pattern::new(""), None);
    assert_eq!(Pattern::new("/*.php$").map(|p| p.priority()), Some(7));
}

#[test]
fn a_long_path_costs_one_pass_per_piece() {
    let path = format!("/{}", "a".repeat(64 * 1024));
    let pattern = Pattern::new(&format!("/{}b", "*a".repeat(1000))).unwrap();
    assert!(!pattern.matches(&path));
}

#[test]
fn reaching_a_prefix() {
    let reaches = |pattern: &str, prefix: &str| Pattern::new(pattern).unwrap().reaches(prefix);
    assert!(reaches("/trap/", "/trap/"));
    assert!(reaches("/trap/deeper", "/trap/"));
    assert!(reaches("/tr", "/trap/"), "shorter, but it matches the trap");
    assert!(!reaches("/other", "/trap/"));
    assert!(reaches("/*/public", "/trap/"));
    assert!(reaches("/t*x", "/trap/"));
    assert!(!reaches("/x*", "/trap/"));
    assert!(!reaches("/tr$", "/trap/"));
    assert!(reaches("/trap/x$", "/trap/"));
}

#[test]
fn an_allow_reaches_a_disallowed_prefix_only_when_at_least_as_long() {
    assert!(allow_reaches("/trap/", "/trap/"), "a tie: Allow wins");
    assert!(allow_reaches("/trap/x", "/trap/"));
    assert!(
        allow_reaches("/*/public", "/trap/"),
        "9 octets over the trap's 6"
    );
    assert!(
        !allow_reaches("/*/x", "/trap/"),
        "4 octets: the Disallow wins"
    );
    assert!(!allow_reaches("/*/public", "/trap/much-longer/"));
    assert!(
        !allow_reaches("/tr", "/trap/"),
        "shorter: the Disallow wins"
    );
    assert!(!allow_reaches("/other/", "/trap/"));
    assert!(!allow_reaches("", "/trap/"));
}
