use super::*;

#[test]
fn ranges_files_are_counted_and_bad_ones_refused() {
    let good = br#"{"creationTime":"2026-11-27T00:00:00","prefixes":[{"ipv4Prefix":"66.249.64.0/27"},{"ipv6Prefix":"2001:4860:4801:10::/64"}]}"#;
    assert_eq!(prefixes_in(good), Ok(2));
    for bad in [
        &br#"<html>"#[..],
        br#"{"prefixes":[]}"#,
        br#"{"prefixes":[{"ipv4Prefix":"66.249.64.0/33"}]}"#,
        br#"{"prefixes":[{"ipv4Prefix":"2001:db8::/32"}]}"#,
        br#"{"prefixes":[{"ipv4Prefix":"1.2.3.0/24","ipv6Prefix":"2001:db8::/32"}]}"#,
        br#"{"prefixes":[{}]}"#,
        br#"{"ranges":[]}"#,
    ] {
        assert!(
            prefixes_in(bad).is_err(),
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
}

#[test]
fn a_file_is_replaced_whole_with_mode_0644() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("floodgate-update-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let body = br#"{"prefixes":[{"ipv4Prefix":"192.0.2.0/24"}]}"#;
    std::fs::write(dir.join("x.json"), "old").unwrap();
    let written = store(&dir, "x.json", body).unwrap();
    assert_eq!(
        written,
        Written {
            prefixes: 1,
            bytes: body.len()
        }
    );
    assert_eq!(std::fs::read(dir.join("x.json")).unwrap(), body);
    let mode = std::fs::metadata(dir.join("x.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o644);
    assert!(store(&dir, "x.json", b"garbage").is_err());
    assert_eq!(
        std::fs::read(dir.join("x.json")).unwrap(),
        body,
        "the old file stays"
    );
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(left.len(), 1, "no temporary file is left behind");
    std::fs::remove_dir_all(&dir).unwrap();
}
