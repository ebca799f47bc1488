//! [`string_enum!`](crate::string_enum): a closed vocabulary whose values travel as fixed
//! strings, declared once for every crate that has one (the protocol's node kinds and
//! actions, the memory's kinds, statuses and actors).

/// Declares a `Copy` enum whose every variant is spelled `Variant = "wire"`: serde
/// (de)serialises it as that string, its JSON Schema lists the strings, and it gets
/// `ALL` (every value in declaration order), `as_str`, `parse` (`None` for any other
/// string) and `Display` (the string).
///
/// The calling crate depends on `serde` (with `derive`) and `schemars`.
///
/// ```ignore
/// mindgate_errors::string_enum!(
///     /// Where a gate sits.
///     PausePoint {
///         /// Before the work.
///         Before = "before",
///         /// After it.
///         After = "after",
///     }
/// );
/// assert_eq!(PausePoint::parse("after"), Some(PausePoint::After));
/// ```
#[macro_export]
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $wire:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash,
            ::serde::Serialize, ::serde::Deserialize, ::schemars::JsonSchema,
        )]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $wire)] $variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The string it travels as.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $wire),+ }
            }

            /// Parses the string it travels as; `None` for anything else.
            pub fn parse(text: &str) -> Option<Self> {
                match text { $($wire => Some($name::$variant),)+ _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
