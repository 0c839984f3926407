//! API tokens: `Authorization: Bearer <token>`, where the config lists only the
//! token's SHA-256 in hex (`authApiTokens[].sha256`), so a leaked config file does not leak a
//! usable token. This module owns hashing a presented token, comparing it with a configured hash
//! in constant time, and making new tokens for `actiond gen-token`. It must not log a token and
//! must not know headers, users or config files.
//!
//! A plain SHA-256 is enough here (no argon2): a generated token carries 256 random bits, so
//! there is nothing to brute-force, and a check costs microseconds instead of a 19 MiB hash on
//! every scripted request.

use sha2::{Digest, Sha256};

/// Random bytes in a generated token: 256 bits, the strength of the SHA-256 that stores it.
const TOKEN_BYTES: usize = 32;

/// The SHA-256 of `token`'s UTF-8 bytes as 64 lower-case hex digits.
pub fn sha256_hex(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

/// Whether `token` hashes to `sha256_hex_expected` (hex, either case). The digests are compared
/// in constant time, so response times tell a caller nothing about how close a guess came.
pub fn matches(token: &str, sha256_hex_expected: &str) -> bool {
    let actual = sha256_hex(token);
    constant_time_eq_ignore_ascii_case(actual.as_bytes(), sha256_hex_expected.as_bytes())
}

/// A fresh token: 32 random bytes from the operating system as 64 lower-case hex digits. Hex
/// rather than base64, because it survives copy and paste, YAML (Home Assistant's secrets.yaml)
/// and an `Authorization: Bearer` header without quoting: no `-`, `_`, `+` or `/` at the ends
/// of a word. The error says only that the OS could not supply randomness.
pub fn generate() -> Result<String, NoRandomness> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| NoRandomness(e.to_string()))?;
    Ok(hex(&bytes))
}

/// The OS supplied no randomness for a token: its own words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoRandomness(pub String);

impl std::fmt::Display for NoRandomness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no randomness from the OS: {}", self.0)
    }
}

impl std::error::Error for NoRandomness {}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

/// Byte equality whose time depends only on the lengths, never on where the first difference
/// is: every byte pair is visited and the differences are OR-ed together, with no early exit.
/// ASCII letters are folded to lower case first (branch-free for the hex alphabet), so a
/// configured hash written in upper case still matches. The lengths are not secret: a SHA-256
/// is always 64 hex digits.
fn constant_time_eq_ignore_ascii_case(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut diff = 0u8;
    for (x, y) in a.iter().zip(b) {
        diff |= x.to_ascii_lowercase() ^ y.to_ascii_lowercase();
    }
    // `black_box` keeps the optimiser from turning the loop back into a comparison that
    // stops at the first difference.
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    const ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

    #[test]
    fn no_randomness_word_for_word() {
        assert_eq!(
            NoRandomness("errno: 38".into()).to_string(),
            "no randomness from the OS: errno: 38"
        );
    }

    #[test]
    fn sha256_of_abc_is_the_fips_vector() {
        assert_eq!(sha256_hex("abc"), ABC);
        assert_eq!(
            sha256_hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn matches_only_the_right_token() {
        assert!(matches("abc", ABC));
        assert!(matches("abc", &ABC.to_ascii_uppercase()));
        assert!(!matches("abd", ABC));
        assert!(!matches("", ABC));
        // One digit changed at the end, where an early exit would have looked last.
        let mut near = ABC.to_string();
        near.replace_range(63.., "e");
        assert!(!matches("abc", &near));
    }

    #[test]
    fn different_lengths_never_match() {
        assert!(!matches("abc", &ABC[..63]));
        assert!(!matches("abc", &format!("{ABC}0")));
        assert!(!matches("abc", ""));
    }

    #[test]
    fn generated_tokens_are_64_hex_digits_and_differ() {
        let a = generate().expect("token");
        let b = generate().expect("token");
        assert_eq!(a.len(), 64);
        assert!(
            a.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')),
            "{a}"
        );
        assert_ne!(a, b);
        assert!(matches(&a, &sha256_hex(&a)));
    }
}
