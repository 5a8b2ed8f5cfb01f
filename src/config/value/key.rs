//! The key a typed value is written under, as a type: its errors name it.

/// A config key (`admin.offenders_top`), named in the errors of the values written under it.
pub(crate) trait Key {
    /// The key as the reference writes it, with its section.
    const NAME: &'static str;
}

/// Declares unit types standing for config keys:
/// `config_keys! { OffendersTop = "admin.offenders_top" }`.
macro_rules! config_keys {
    ($($(#[$doc:meta])* $name:ident = $key:literal),* $(,)?) => {
        $(
            $(#[$doc])*
            #[derive(Debug)]
            pub(crate) struct $name;
            impl $crate::config::value::Key for $name {
                const NAME: &'static str = $key;
            }
        )*
    };
}

pub(crate) use config_keys;
