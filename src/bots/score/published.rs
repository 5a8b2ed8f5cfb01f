//! What browsers publish of themselves (the shipped, dated `browsers.toml`): per family, the
//! cipher hashes of its JA4s and the SETTINGS, WINDOW_UPDATE and pseudo-header order of its
//! HTTP/2 fingerprints. Why those parts: the file's header says.

use super::families::Family;
use crate::identity::{H2Fp, Ja4};
use serde::{Deserialize, Serialize};

/// The shipped lists.
pub(super) const SHIPPED: &str = include_str!("browsers.toml");

/// `browsers.toml` as written.
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct File {
    pub(super) updated: String,
    pub(super) sources: Vec<String>,
    pub(super) ja4_url: String,
    pub(super) chromium: FamilyFile,
    pub(super) firefox: FamilyFile,
    pub(super) safari: FamilyFile,
}

/// One family's lists as written.
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FamilyFile {
    pub(super) ja4: Vec<String>,
    pub(super) h2: Vec<String>,
}

/// Why the lists could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PublishedError {
    /// Not the file's shape.
    #[error("not a browsers file: {0}")]
    Shape(#[from] toml::de::Error),
    /// A JA4 that is not one.
    #[error(transparent)]
    Ja4(#[from] crate::identity::BadJa4),
    /// An HTTP/2 fingerprint that is not one.
    #[error(transparent)]
    H2(#[from] crate::identity::BadH2Fp),
    /// The lists could not be written as a file.
    #[error("cannot write the browsers file: {0}")]
    Write(String),
}

/// The parts of an HTTP/2 fingerprint compared: SETTINGS, WINDOW_UPDATE, pseudo-header order.
type H2Key = (Box<str>, Box<str>, Box<str>);

/// The published fingerprints of each family, by [`Family::index`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// When the lists were last edited.
    pub updated: String,
    cipher_hashes: [Vec<[u8; 12]>; 3],
    h2: [Vec<H2Key>; 3],
}

impl Published {
    /// The lists shipped with Floodgate.
    pub fn shipped() -> Self {
        Self::read(SHIPPED).expect("the shipped browsers.toml is checked by its tests")
    }

    /// The lists in `text`, a browsers file.
    pub fn read(text: &str) -> Result<Self, PublishedError> {
        let file: File = toml::from_str(text)?;
        let families = [&file.chromium, &file.firefox, &file.safari];
        let mut cipher_hashes: [Vec<[u8; 12]>; 3] = Default::default();
        let mut h2: [Vec<H2Key>; 3] = Default::default();
        for (i, family) in families.into_iter().enumerate() {
            for text in &family.ja4 {
                cipher_hashes[i].push(cipher_hash(&text.parse::<Ja4>()?));
            }
            for text in &family.h2 {
                let h2fp: H2Fp = text.parse()?;
                let (settings, window, pseudo) = h2_key(h2fp.as_str());
                h2[i].push((settings.into(), window.into(), pseudo.into()));
            }
        }
        Ok(Self {
            updated: file.updated,
            cipher_hashes,
            h2,
        })
    }

    /// Where `floodgate bots update` reads browsers' JA4s from (FoxIO's mapping).
    pub fn ja4_url() -> String {
        toml::from_str::<File>(SHIPPED).map_or_else(|_| String::new(), |file| file.ja4_url)
    }

    /// Whether `ja4`'s cipher hash is one `family` publishes.
    pub fn ja4_fits(&self, family: Family, ja4: &Ja4) -> bool {
        self.cipher_hashes[family.index()].contains(&cipher_hash(ja4))
    }

    /// Whether `h2fp`'s SETTINGS, WINDOW_UPDATE and pseudo-header order are one `family`
    /// publishes.
    pub fn h2_fits(&self, family: Family, h2fp: &H2Fp) -> bool {
        let (settings, window, pseudo) = h2_key(h2fp.as_str());
        self.h2[family.index()]
            .iter()
            .any(|(s, w, p)| **s == *settings && **w == *window && **p == *pseudo)
    }
}

/// A JA4's middle part (JA4_b, the hash of its sorted cipher suites).
fn cipher_hash(ja4: &Ja4) -> [u8; 12] {
    let mut hash = [0; 12];
    hash.copy_from_slice(&ja4.as_str().as_bytes()[11..23]);
    hash
}

/// An HTTP/2 fingerprint's SETTINGS, WINDOW_UPDATE and pseudo-header order.
fn h2_key(text: &str) -> (&str, &str, &str) {
    let mut parts = text.split('|');
    let settings = parts.next().unwrap_or("");
    let window = parts.next().unwrap_or("");
    let pseudo = parts.nth(1).unwrap_or("");
    (settings, window, pseudo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_lists_read_and_tell_the_families_apart() {
        let published = Published::shipped();
        assert!(!published.updated.is_empty());
        let ja4 = |t: &str| t.parse::<Ja4>().unwrap();
        let chromium_156 = ja4("t13d1517h2_8daaf6152771_02713d6af862");
        let curl = ja4("t13d3112h2_e8f1e7e78f70_0123456789ab");
        let python = ja4("t13d181100_85036bcba153_d41ae481755e");
        assert!(published.ja4_fits(Family::Chromium, &chromium_156));
        assert!(!published.ja4_fits(Family::Firefox, &chromium_156));
        assert!(!published.ja4_fits(Family::Chromium, &curl));
        assert!(!published.ja4_fits(Family::Chromium, &python));
        let h2 = |t: &str| t.parse::<H2Fp>().unwrap();
        let chrome = h2("1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p");
        let with_priority = h2("1:65536;2:0;4:6291456;6:262144|15663105|3:0:0:201|m,a,s,p");
        let curl = h2("3:100;4:10485760;2:0|1048510465|0|m,p,s,a");
        assert!(published.h2_fits(Family::Chromium, &chrome));
        assert!(published.h2_fits(Family::Chromium, &with_priority));
        assert!(!published.h2_fits(Family::Firefox, &chrome));
        assert!(!published.h2_fits(Family::Chromium, &curl));
    }

    #[test]
    fn a_bad_list_is_refused() {
        let bad = "updated = \"x\"\nsources = []\nja4_url = \"\"\n[chromium]\nja4 = [\"junk\"]\nh2 = []\n\
                   [firefox]\nja4 = []\nh2 = []\n[safari]\nja4 = []\nh2 = []";
        assert!(matches!(Published::read(bad), Err(PublishedError::Ja4(_))));
    }
}
