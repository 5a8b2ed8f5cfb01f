//! `floodgate bots update`'s part for the score: the browsers' JA4s FoxIO's mapping
//! (ja4plus-mapping.csv, at the shipped list's `ja4_url`) names, added to the shipped lists
//! and written whole as `DIR/browsers.toml`, which `bots.ranges_dir` reads instead of the
//! shipped file. The HTTP/2 lists are the shipped ones (no published database to read).

use super::families::Family;
use super::published::{File, SHIPPED};
use super::{Published, PublishedError};
use crate::identity::Ja4;

/// The file's name in the ranges directory.
pub const BROWSERS_FILE: &str = "browsers.toml";

/// The lists after reading `mapping`: the shipped ones with every browser JA4 it names added
/// (Application `Chromium Browser`, or naming Chrome, Firefox or Safari), dated `today`; the
/// text of the file and how many JA4s were added.
pub fn merged(mapping: &str, today: &str) -> Result<(String, usize), PublishedError> {
    let mut file: File = toml::from_str(SHIPPED)?;
    let mut added = 0;
    for (family, ja4) in mapping.lines().skip(1).filter_map(browser_row) {
        let list = match family {
            Family::Chromium => &mut file.chromium.ja4,
            Family::Firefox => &mut file.firefox.ja4,
            Family::Safari => &mut file.safari.ja4,
        };
        if !list.contains(&ja4) {
            list.push(ja4);
            added += 1;
        }
    }
    file.updated = today.to_owned();
    file.sources.push(format!(
        "{} (read by floodgate bots update, {today})",
        file.ja4_url
    ));
    let text = toml::to_string(&file).map_err(|e| PublishedError::Write(e.to_string()))?;
    let header = "# Browsers' published fingerprints, written by `floodgate bots update` \
                  (docs/src/scoring.md).\n";
    let text = format!("{header}{text}");
    Published::read(&text)?;
    Ok((text, added))
}

/// The browser family and JA4 of one row of the mapping (`Application,Library,Device,OS,ja4,…`)
/// if it names a browser and a TLS-over-TCP JA4.
fn browser_row(row: &str) -> Option<(Family, String)> {
    let mut cells = row.split(',');
    let application = cells.next()?;
    let ja4 = cells.nth(3)?.trim();
    let family = match application {
        a if a.contains("Chromium") || a.contains("Chrome") => Family::Chromium,
        a if a.contains("Firefox") => Family::Firefox,
        a if a.contains("Safari") => Family::Safari,
        _ => return None,
    };
    let ja4: Ja4 = ja4.parse().ok()?;
    ja4.as_str()
        .starts_with('t')
        .then(|| (family, ja4.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPPING: &str = "Application,Library,Device,OS,ja4,ja4s,ja4h,ja4x,ja4t,ja4tscan,Notes
,Python,,,t13d181000_85036bcba153_d41ae481755e,,,,,,
Chromium Browser,,,,t13d1516h2_8daaf6152771_02713d6af862,,,,,,
Chromium Browser,,,,q13d0312h3_55b375c5d22e_06cda9e17597,,,,,,
Chromium Browser,,,,t13d1517h2_8daaf6152771_aaaaaaaaaaaa,,,,,,
Firefox 150,,,,t13d1717h2_5b57614c22b0_bbbbbbbbbbbb,,,,,,
Sliver Agent,,,,t13d190900_9dc949149365_97f8aa674fd9,t130200_1301_a56c5b993250,,,,,
";

    #[test]
    fn the_browser_ja4s_of_the_mapping_are_added_and_the_file_reads_back() {
        let (text, added) = merged(MAPPING, "2026-12-01").unwrap();
        assert_eq!(
            added, 2,
            "the new Chromium and Firefox values; QUIC and non-browsers not"
        );
        let published = Published::read(&text).unwrap();
        assert_eq!(published.updated, "2026-12-01");
        assert!(text.contains("t13d1717h2_5b57614c22b0_bbbbbbbbbbbb"));
        assert!(!text.contains("9dc949149365"));
        assert!(text.contains("ja4plus-mapping.csv (read by floodgate bots update, 2026-12-01)"));
    }
}
