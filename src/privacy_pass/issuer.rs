//! An issuer whose tokens are taken: its name, its current keys (swapped whole when its
//! directory brings new ones, read without a lock) and the origins its challenges name.

use super::challenge::{ChallengeError, TokenChallenge};
use super::key::IssuerKey;
use arc_swap::ArcSwap;
use std::sync::Arc;

/// A trusted issuer.
#[derive(Debug)]
pub struct Issuer {
    name: Arc<str>,
    keys: ArcSwap<Vec<IssuerKey>>,
    origin_info: String,
}

impl Issuer {
    /// Issuer `name` with `keys` (the first is offered in challenges), whose challenges name
    /// `origins` (none: a token for any origin is asked for). Refused: a name of 0 or over 255
    /// bytes, an origin that is empty or holds a comma or whitespace, origins too long together.
    pub fn new(
        name: &str,
        keys: Vec<IssuerKey>,
        origins: &[String],
    ) -> Result<Self, ChallengeError> {
        if let Some(bad) = origins.iter().find(|o| !is_origin_name(o)) {
            return Err(ChallengeError::OriginName(bad.clone()));
        }
        let origin_info = origins.join(",");
        TokenChallenge::new(name, [0; 32], &origin_info)?;
        Ok(Self {
            name: name.into(),
            keys: ArcSwap::from_pointee(keys),
            origin_info,
        })
    }

    /// The issuer's name.
    pub fn name(&self) -> &Arc<str> {
        &self.name
    }

    /// The `origin_info` of its challenges: the origins, comma-separated.
    pub fn origin_info(&self) -> &str {
        &self.origin_info
    }

    /// Its keys now.
    pub fn keys(&self) -> Arc<Vec<IssuerKey>> {
        self.keys.load_full()
    }

    /// Replaces its keys (a directory refreshed).
    pub fn set_keys(&self, keys: Vec<IssuerKey>) {
        self.keys.store(Arc::new(keys));
    }

    /// The key a challenge offers: the first.
    pub fn offered_key(&self) -> Option<IssuerKey> {
        self.keys.load().first().cloned()
    }

    /// Runs `f` with its key of id `id`, if it has one.
    pub(super) fn with_key<T>(&self, id: &[u8; 32], f: impl FnOnce(&IssuerKey) -> T) -> Option<T> {
        self.keys.load().iter().find(|k| k.key_id() == *id).map(f)
    }

    /// Its challenge for `redemption_context`.
    pub fn challenge(&self, redemption_context: [u8; 32]) -> TokenChallenge {
        TokenChallenge {
            token_type: super::challenge::TOKEN_TYPE,
            issuer_name: self.name.to_string(),
            redemption_context,
            origin_info: self.origin_info.clone(),
        }
    }
}

/// Whether `text` can stand in `origin_info`: a non-empty name of visible ASCII without commas.
fn is_origin_name(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_graphic() && b != b',')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::privacy_pass::test_issuer::TestIssuer;

    fn key(issuer: &TestIssuer) -> IssuerKey {
        IssuerKey::from_token_key(&issuer.token_key()).unwrap()
    }

    #[test]
    fn the_origins_are_joined_and_the_keys_swapped_whole() {
        let origins = ["a.example".to_owned(), "b.example:8443".to_owned()];
        let issuer = Issuer::new("issuer.example", vec![key(&TestIssuer::a())], &origins).unwrap();
        assert_eq!(issuer.origin_info(), "a.example,b.example:8443");
        let challenge = issuer.challenge([3; 32]);
        assert_eq!(
            challenge,
            TokenChallenge::new("issuer.example", [3; 32], "a.example,b.example:8443").unwrap()
        );
        let (a, b) = (key(&TestIssuer::a()), key(&TestIssuer::b()));
        assert_eq!(issuer.offered_key(), Some(a.clone()));
        assert_eq!(
            issuer.with_key(&a.key_id(), |k| k.token_key().len()),
            Some(a.token_key().len())
        );
        issuer.set_keys(vec![b.clone(), a.clone()]);
        assert_eq!(issuer.offered_key(), Some(b.clone()));
        assert!(issuer.with_key(&a.key_id(), |_| ()).is_some());
        issuer.set_keys(vec![]);
        assert_eq!(issuer.offered_key(), None);
        assert!(issuer.with_key(&b.key_id(), |_| ()).is_none());
    }

    #[test]
    fn bad_names_and_origins_are_refused() {
        let long = "i".repeat(256);
        assert_eq!(
            Issuer::new(&long, vec![], &[]).err(),
            Some(ChallengeError::IssuerName(256))
        );
        for bad in ["", "a,b", "a b"] {
            let refused = Issuer::new("i", vec![], &[bad.to_owned()]).err();
            assert_eq!(refused, Some(ChallengeError::OriginName(bad.to_owned())));
        }
        let many: Vec<String> = (0..300).map(|i| format!("{i:0>250}")).collect();
        let refused = Issuer::new("i", vec![], &many).err();
        assert!(
            matches!(refused, Some(ChallengeError::OriginInfo(_))),
            "{refused:?}"
        );
        assert_eq!(Issuer::new("i", vec![], &[]).unwrap().origin_info(), "");
    }
}
