//! The fields of a record that name its network's ASN or country, in every vendor's shape:
//! GeoLite2 and DB-IP (`autonomous_system_number`, `country.iso_code`,
//! `registered_country.iso_code`) and IPinfo (`asn = "AS13335"`, `country_code`, and in its
//! older files `country = "US"`). Strings are borrowed from the database: a lookup copies
//! nothing.

use crate::identity::Country;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::marker::PhantomData;

/// The ASN fields of a record; other fields are skipped.
#[derive(Debug, Default, Deserialize)]
pub(super) struct AsnRecord {
    /// GeoLite2-ASN and DB-IP ASN lite: an integer.
    #[serde(default)]
    autonomous_system_number: Option<AsNumber>,
    /// IPinfo: `"AS13335"`.
    #[serde(default)]
    asn: Option<AsNumber>,
}

impl AsnRecord {
    /// The record's autonomous system number, if it names one.
    pub(super) fn number(&self) -> Option<u32> {
        [self.autonomous_system_number, self.asn]
            .into_iter()
            .find_map(|n| n.and_then(|n| n.0))
    }
}

/// The country fields of a record; other fields are skipped.
#[derive(Debug, Default, Deserialize)]
pub(super) struct CountryRecord<'a> {
    /// GeoLite2 and DB-IP: a map with `iso_code`; IPinfo: a name or (older files) a code.
    #[serde(borrow, default)]
    country: Option<Place<'a>>,
    /// IPinfo lite: `"US"`.
    #[serde(borrow, default)]
    country_code: Option<&'a str>,
    /// GeoLite2: where the network is registered, for networks with no `country`.
    #[serde(borrow, default)]
    registered_country: Option<Place<'a>>,
}

impl CountryRecord<'_> {
    /// The first field that holds a two-letter code: `country`, `country_code`, then
    /// `registered_country`.
    pub(super) fn country(&self) -> Option<Country> {
        let country = self.country.and_then(|p| p.0);
        let registered = self.registered_country.and_then(|p| p.0);
        [country, self.country_code, registered]
            .into_iter()
            .flatten()
            // Checked before parsing so a name ("United States") costs no error value.
            .filter(|code| code.len() == 2)
            .find_map(|code| code.parse().ok())
    }
}

/// An autonomous system number written as an integer or as text (`"AS13335"`, `"13335"`);
/// `None` inside when the text is not a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct AsNumber(Option<u32>);

impl<'de> Deserialize<'de> for AsNumber {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(AsNumberVisitor)
    }
}

struct AsNumberVisitor;

impl Visitor<'_> for AsNumberVisitor {
    type Value = AsNumber;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an autonomous system number")
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<AsNumber, E> {
        Ok(AsNumber(u32::try_from(n).ok()))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<AsNumber, E> {
        Ok(AsNumber(u32::try_from(n).ok()))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<AsNumber, E> {
        let digits = match text.get(..2) {
            Some(prefix) if prefix.eq_ignore_ascii_case("as") => &text[2..],
            _ => text,
        };
        Ok(AsNumber(digits.parse().ok()))
    }
}

/// A country field: GeoLite2's map (its `iso_code` kept) or IPinfo's text (kept as is;
/// whether it is a code is decided by [`CountryRecord::country`]).
#[derive(Debug, Clone, Copy, Default)]
struct Place<'a>(Option<&'a str>);

impl<'de: 'a, 'a> Deserialize<'de> for Place<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(PlaceVisitor(PhantomData))
    }
}

struct PlaceVisitor<'a>(PhantomData<&'a str>);

/// The keys of a GeoLite2 country map that matter here.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum PlaceKey {
    IsoCode,
    #[serde(other)]
    Other,
}

impl<'de: 'a, 'a> Visitor<'de> for PlaceVisitor<'a> {
    type Value = Place<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a country: a map with `iso_code`, or a code")
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Place<'a>, E> {
        Ok(Place(Some(text)))
    }

    /// Text that cannot be borrowed (not the case in MaxMind DB files) names nothing.
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Place<'a>, E> {
        Ok(Place(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Place<'a>, A::Error> {
        let mut code = None;
        while let Some(key) = map.next_key::<PlaceKey>()? {
            match key {
                PlaceKey::IsoCode => code = Some(map.next_value::<&'a str>()?),
                PlaceKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Place(code))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asn(json: &str) -> Option<u32> {
        serde_json::from_str::<AsnRecord>(json).unwrap().number()
    }

    fn country(json: &str) -> Option<String> {
        let record: CountryRecord<'_> = serde_json::from_str(json).unwrap();
        record.country().map(|c| c.to_string())
    }

    #[test]
    fn asns_are_read_from_every_vendors_field() {
        assert_eq!(asn(r#"{"autonomous_system_number": 64500}"#), Some(64500));
        assert_eq!(asn(r#"{"asn": "AS13335", "as_name": "x"}"#), Some(13335));
        assert_eq!(asn(r#"{"asn": "as15169"}"#), Some(15169));
        assert_eq!(asn(r#"{"asn": "15169"}"#), Some(15169));
        assert_eq!(asn(r#"{"asn": ""}"#), None);
        assert_eq!(asn(r#"{"asn": "ASN"}"#), None);
        assert_eq!(asn(r#"{"asn": "AS99999999999"}"#), None);
        assert_eq!(asn(r#"{"autonomous_system_number": -1}"#), None);
        assert_eq!(asn(r#"{"country": {"iso_code": "NL"}}"#), None);
    }

    #[test]
    fn countries_are_read_from_every_vendors_field() {
        let geolite = r#"{"continent": {"code": "EU"}, "country": {"geoname_id": 1,
            "iso_code": "NL", "names": {"en": "Netherlands"}}, "registered_country":
            {"iso_code": "DE"}}"#;
        assert_eq!(country(geolite).as_deref(), Some("NL"));
        let registered = r#"{"registered_country": {"iso_code": "DE"}}"#;
        assert_eq!(country(registered).as_deref(), Some("DE"));
        let ipinfo_lite = r#"{"asn": "AS13335", "country": "United States",
            "country_code": "US", "continent": "North America"}"#;
        assert_eq!(country(ipinfo_lite).as_deref(), Some("US"));
        let ipinfo_older = r#"{"country": "us", "country_name": "United States"}"#;
        assert_eq!(country(ipinfo_older).as_deref(), Some("US"));
        assert_eq!(country(r#"{"autonomous_system_number": 1}"#), None);
        assert_eq!(country(r#"{"country_code": "USA"}"#), None);
    }
}
