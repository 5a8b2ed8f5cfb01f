//! Whether a reverse-DNS name is under one of a crawler's domains, on label boundaries:
//! `googlebot.com` covers `crawl-1.googlebot.com` and `googlebot.com`, never
//! `evilgooglebot.com`.

/// A DNS name as compared here: lower case, without the root's trailing dot.
pub(crate) fn normal(name: &str) -> String {
    name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase()
}

/// Whether `name` (normalised, see [`normal`]) is `suffix` or a name under it. `suffix` is
/// lower case without a leading dot; a leading or trailing dot is tolerated.
pub fn under_suffix(name: &str, suffix: &str) -> bool {
    let suffix = suffix.trim_matches('.');
    if suffix.is_empty() {
        return false;
    }
    match name.strip_suffix(suffix) {
        Some("") => true,
        Some(rest) => rest.ends_with('.'),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_match_on_label_boundaries() {
        assert!(under_suffix("crawl-1.googlebot.com", "googlebot.com"));
        assert!(under_suffix("googlebot.com", "googlebot.com"));
        assert!(under_suffix("a.b.google.com", "google.com"));
        assert!(under_suffix("crawl-1.googlebot.com", ".googlebot.com"));
        assert!(!under_suffix("evilgooglebot.com", "googlebot.com"));
        assert!(!under_suffix("googlebot.com.evil.net", "googlebot.com"));
        assert!(!under_suffix("com", "googlebot.com"));
        assert!(!under_suffix("crawl-1.googlebot.com", ""));
        assert!(!under_suffix("crawl-1.googlebot.com", "."));
    }

    #[test]
    fn names_are_compared_lower_case_without_the_root_dot() {
        assert_eq!(normal("Crawl-1.GoogleBot.COM."), "crawl-1.googlebot.com");
        assert!(under_suffix(
            &normal("CRAWL.GOOGLEBOT.COM."),
            "googlebot.com"
        ));
    }
}
