//! Fuzz `parse_envelope`: it must never panic, and whatever it accepts must
//! survive a round trip through the serialiser unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mindgate_protocol::{ParseResult, parse_envelope};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match parse_envelope(text) {
        ParseResult::Ok(env) => {
            let again = parse_envelope(&env.to_json());
            assert_eq!(again, ParseResult::Ok(env), "round trip of {text:?}");
        }
        ParseResult::UnknownType(env) => {
            let again = parse_envelope(&env.to_json());
            assert_eq!(again, ParseResult::UnknownType(env), "round trip of {text:?}");
        }
        ParseResult::VersionMismatch { received } => assert_ne!(received, 1),
        ParseResult::Invalid { reason, .. } => assert!(!reason.is_empty()),
    }
});
