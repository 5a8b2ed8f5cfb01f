//! The identity sources read from what is known of the sender (`asn`, `country`, `bot`,
//! `agent`, `ja4`, `h2fp`).

use super::{Category, Country, Traits};
use std::borrow::Cow;

/// A source read from the sender's [`Traits`](super::Traits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SenderSource {
    /// `asn`: the number of the network announcing the client address.
    Asn,
    /// `country`: the client address's country code.
    Country,
    /// `bot`: the operator of the crawler the request claims to be; nothing for a claim of a
    /// crawler that publishes ranges or reverse-DNS names unless it was verified (a `spoofed`
    /// claim, or one the check could not finish), so an impostor never drains the real
    /// crawler's bucket: the next source decides.
    Bot,
    /// `agent`: the verified signed agent (Web Bot Auth), named by its key directory's host
    /// (`chatgpt.com`): one bucket whatever addresses it uses; nothing unless verified.
    Agent,
    /// `ja4`: the JA4 fingerprint of the client's TLS stack.
    Ja4,
    /// `h2fp`: the HTTP/2 fingerprint of the client's connection (Akamai's format).
    H2fp,
}

impl SenderSource {
    /// Every sender source.
    pub const ALL: [SenderSource; 6] = [
        Self::Asn,
        Self::Country,
        Self::Bot,
        Self::Agent,
        Self::Ja4,
        Self::H2fp,
    ];

    /// The word in config files.
    pub fn word(self) -> &'static str {
        match self {
            Self::Asn => "asn",
            Self::Country => "country",
            Self::Bot => "bot",
            Self::Agent => "agent",
            Self::Ja4 => "ja4",
            Self::H2fp => "h2fp",
        }
    }

    /// This source's value for the sender described by `traits`.
    pub(super) fn value(self, traits: &Traits) -> Option<Cow<'_, [u8]>> {
        match self {
            Self::Asn => traits
                .asn
                .map(|asn| Cow::Owned(asn.to_string().into_bytes())),
            Self::Country => traits
                .country
                .as_ref()
                .map(|c| Cow::Borrowed(c.as_str().as_bytes())),
            // A claim counts once it held (a signed agent's signature, a crawler's ranges or
            // reverse DNS): before, it is the client's to choose.
            Self::Bot => traits
                .bot
                .as_ref()
                .filter(|claim| claim.names_operator())
                .map(|claim| Cow::Borrowed(claim.operator.as_bytes())),
            Self::Agent => traits
                .bot
                .as_ref()
                .filter(|claim| claim.claimed == Category::SignedAgent && claim.verified())
                .map(|claim| Cow::Borrowed(claim.name.as_bytes())),
            Self::Ja4 => traits
                .ja4
                .as_ref()
                .map(|j| Cow::Borrowed(j.as_str().as_bytes())),
            Self::H2fp => traits
                .h2fp
                .as_ref()
                .map(|h| Cow::Borrowed(h.as_str().as_bytes())),
        }
    }

    /// The bytes this source reads from a request whose sender shows `value` (a caller named by
    /// an operator): `AS64500` or `64500`, `nl` or `NL`, the operator's name as written.
    pub(super) fn named_value(self, value: &str) -> Option<Vec<u8>> {
        let value = value.trim();
        match self {
            Self::Asn => {
                let digits = value
                    .strip_prefix("AS")
                    .or_else(|| value.strip_prefix("as"));
                let asn: u32 = digits.unwrap_or(value).parse().ok()?;
                Some(asn.to_string().into_bytes())
            }
            Self::Country => Some(value.parse::<Country>().ok()?.as_str().as_bytes().to_vec()),
            Self::Bot => Some(value.as_bytes().to_vec()),
            Self::Agent => Some(value.to_ascii_lowercase().into_bytes()),
            Self::Ja4 => Some(
                value
                    .parse::<super::Ja4>()
                    .ok()?
                    .as_str()
                    .as_bytes()
                    .to_vec(),
            ),
            Self::H2fp => Some(
                value
                    .parse::<super::H2Fp>()
                    .ok()?
                    .as_str()
                    .as_bytes()
                    .to_vec(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::{BotClaim, Proof, Verification};

    fn signed(verification: Verification) -> Traits {
        Traits {
            bot: Some(BotClaim {
                name: "agent.example".into(),
                operator: "agent.example".into(),
                claimed: Category::SignedAgent,
                verification,
            }),
            ..Traits::default()
        }
    }

    #[test]
    fn a_signed_agent_is_named_only_once_its_signature_held() {
        let verified = signed(Verification::Verified(Proof::Signature));
        for source in [SenderSource::Bot, SenderSource::Agent] {
            assert_eq!(
                source.value(&verified).as_deref(),
                Some(&b"agent.example"[..])
            );
            for verification in [Verification::Unfinished, Verification::Failed] {
                assert_eq!(source.value(&signed(verification)), None, "{source:?}");
            }
        }
    }

    #[test]
    fn h2fp_yields_the_connections_fingerprint_and_names_one_only_if_well_formed() {
        let chrome = "1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p";
        let traits = Traits {
            h2fp: Some(chrome.parse().unwrap()),
            ..Traits::default()
        };
        let value = SenderSource::H2fp.value(&traits).map(Cow::into_owned);
        assert_eq!(value, Some(chrome.as_bytes().to_vec()));
        assert_eq!(SenderSource::H2fp.value(&Traits::default()), None);
        let named = SenderSource::H2fp.named_value(&format!(" {chrome} "));
        assert_eq!(named, Some(chrome.as_bytes().to_vec()));
        assert_eq!(SenderSource::H2fp.named_value("chrome"), None);
    }

    fn googlebot(verification: Verification) -> Traits {
        Traits {
            bot: Some(BotClaim {
                name: "Googlebot".into(),
                operator: "Google".into(),
                claimed: Category::SearchEngine,
                verification,
            }),
            ..Traits::default()
        }
    }

    #[test]
    fn a_crawler_claim_names_its_operator_only_when_verified_or_uncheckable() {
        let bot = |verification| {
            SenderSource::Bot
                .value(&googlebot(verification))
                .map(Cow::into_owned)
        };
        for proof in [Proof::Ranges, Proof::ReverseDns] {
            assert_eq!(bot(Verification::Verified(proof)), Some(b"Google".to_vec()));
        }
        assert_eq!(bot(Verification::Unchecked), Some(b"Google".to_vec()));
        for verification in [Verification::Unfinished, Verification::Failed] {
            assert_eq!(bot(verification), None, "{verification:?}");
        }
    }
}
