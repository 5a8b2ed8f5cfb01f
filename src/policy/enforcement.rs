//! Whether a policy (or a rate limit service limit) acts on what it finds or only counts it:
//! one word end to end, from the config's `shadow` to the store's take mode.

use crate::limiter::Mode;

/// What a policy does with what it finds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Enforcement {
    /// It refuses (or denies, allows, challenges) as it says.
    #[default]
    Enforce,
    /// It counts what it would do and never does it (`shadow = true`, `shadow_mode: true`).
    Shadow,
}

impl Enforcement {
    /// `Shadow` when `shadow` (the config's flag), else `Enforce`.
    pub fn shadow_if(shadow: bool) -> Self {
        match shadow {
            true => Self::Shadow,
            false => Self::Enforce,
        }
    }

    /// Whether it only counts.
    pub fn is_shadow(self) -> bool {
        self == Self::Shadow
    }

    /// Whether it acts.
    pub fn enforces(self) -> bool {
        self == Self::Enforce
    }

    /// The take mode of a bucket under it: part of the request's all-or-nothing set, or
    /// decided on its own.
    pub fn mode(self) -> Mode {
        match self {
            Self::Enforce => Mode::Enforce,
            Self::Shadow => Mode::Shadow,
        }
    }
}
