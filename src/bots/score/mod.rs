//! The bot score: which [`Signal`](crate::identity::Signal)s a request shows (`signals.rs`),
//! judged against browsers' published fingerprints (`published.rs`, by the family the
//! User-Agent claims: `families.rs`) and hosting networks (`hosting.rs`), and the capped sum
//! of their weights (`weights.rs`). It becomes the request's `Traits.score`, which
//! `match.min_score` and `match.max_score` read in the gate. Worked out only when something
//! asks (docs/src/scoring.md).

mod families;
mod hosting;
mod published;
pub mod refresh;
mod signals;
mod weights;

pub use families::{Family, MAX_SCAN};

/// Whether `user_agent` claims a browser (Chromium-based, Firefox or Safari).
pub fn claims_browser(user_agent: &[u8]) -> bool {
    families::family_of(user_agent).is_some()
}
pub use hosting::HostingNetworks;
pub use published::{Published, PublishedError};
pub use weights::{default_weight, Weights};

use crate::identity::{Score, Signals, Traits, MAX_SCORE};
use http::HeaderMap;
use std::sync::Arc;

/// What `[bots.score]` sets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScoreSettings {
    /// The signals' weights (`weights`, over the defaults).
    pub weights: Weights,
    /// Networks added to the shipped hosting list (`hosting_asns`).
    pub hosting_asns: Vec<u32>,
    /// Browsers' fingerprints as `floodgate bots update` last wrote them (`bots.ranges_dir`),
    /// instead of the shipped lists.
    pub published: Option<Arc<Published>>,
}

/// Works out requests' scores.
#[derive(Debug, Clone)]
pub struct Scorer {
    weights: Weights,
    published: Published,
    hosting: HostingNetworks,
}

impl Scorer {
    /// A scorer with the shipped lists and what `settings` adds.
    pub fn new(settings: &ScoreSettings) -> Self {
        Self {
            weights: settings.weights,
            published: match &settings.published {
                Some(updated) => Published::clone(updated),
                None => Published::shipped(),
            },
            hosting: HostingNetworks::shipped_and(&settings.hosting_asns),
        }
    }

    /// The score of a request with `headers` from the sender `traits` describes: the signals
    /// it shows whose weight is above 0, and their weights' sum, at most 100.
    pub fn score(&self, traits: &Traits, headers: &HeaderMap) -> Score {
        let lists = signals::Lists {
            published: &self.published,
            hosting: &self.hosting,
        };
        let shown = signals::shown(traits, headers, &lists);
        let mut kept = Signals::default();
        let mut sum = 0u16;
        for signal in shown.iter() {
            let weight = self.weights.of(signal);
            if weight > 0 {
                kept = kept.with(signal);
                sum += u16::from(weight);
            }
        }
        Score {
            value: sum.min(u16::from(MAX_SCORE)) as u8,
            signals: kept,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::Signal;

    #[test]
    fn the_score_is_the_capped_sum_of_the_weights_above_zero() {
        let headers: HeaderMap = [(
            http::header::USER_AGENT,
            "Mozilla/5.0 HeadlessChrome/156.0 Chrome/156.0"
                .parse()
                .unwrap(),
        )]
        .into_iter()
        .collect();
        let traits = Traits {
            ja4: Some("t13d181100_85036bcba153_d41ae481755e".parse().unwrap()),
            asn: Some(16509),
            ..Traits::default()
        };
        let scorer = Scorer::new(&ScoreSettings::default());
        let score = scorer.score(&traits, &headers);
        assert_eq!(
            score.signals.to_string(),
            "ua-tls-mismatch,missing-browser-headers,headless,hosting-network"
        );
        assert_eq!(score.value, 100, "50 + 20 + 40 + 20, capped");
        let settings = ScoreSettings {
            weights: Weights::default()
                .with(Signal::Headless, 0)
                .with(Signal::UaTlsMismatch, 10),
            hosting_asns: Vec::new(),
            published: None,
        };
        let score = Scorer::new(&settings).score(&traits, &headers);
        assert_eq!(
            score.signals.to_string(),
            "ua-tls-mismatch,missing-browser-headers,hosting-network"
        );
        assert_eq!(score.value, 50);
    }
}
