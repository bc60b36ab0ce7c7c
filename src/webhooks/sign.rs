//! Standard Webhooks 1.0 signatures: an endpoint's secret (`whsec_` and base64 of 32
//! random bytes), the `v1,` HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` each
//! delivery carries for every secret in use, and their check as a receiver makes it (the
//! rules of the `standardwebhooks` package: headers by lower-case name, a timestamp within
//! five minutes of now either way, any `v1` signature of the list matching, compared in
//! constant time).

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use base64::engine::DecodePaddingMode;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// What every secret's text starts with.
pub const SECRET_PREFIX: &str = "whsec_";

/// Bytes of a secret this service makes: within the 24 to 64 the specification allows.
const SECRET_BYTES: usize = 32;

/// Base64 as a receiver reads it: padded or not, its last symbol's spare bits ignored.
const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// How far a delivery's `webhook-timestamp` may be from the receiver's clock, either way.
pub const TOLERANCE_SECS: i64 = 5 * 60;

/// An endpoint's signing secret.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Secret {
    /// A new secret from the operating system's generator.
    pub fn generate() -> Secret {
        let bytes: [u8; SECRET_BYTES] = rand::random();
        Secret(bytes.to_vec())
    }

    /// A secret from its text, `whsec_` then base64 (with or without its padding, as the
    /// `standardwebhooks` package reads it); `None` for anything else or an empty one.
    pub fn parse(text: &str) -> Option<Secret> {
        let encoded = text.strip_prefix(SECRET_PREFIX).unwrap_or(text);
        let bytes = LENIENT.decode(encoded).ok()?;
        (!bytes.is_empty()).then_some(Secret(bytes))
    }

    /// Its text: `whsec_` then base64.
    pub fn text(&self) -> String {
        format!("{SECRET_PREFIX}{}", STANDARD.encode(&self.0))
    }

    /// The `v1,` signature of a delivery with this secret.
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        format!("v1,{}", STANDARD.encode(self.mac(id, timestamp, body)))
    }

    fn mac(&self, id: &str, timestamp: i64, body: &[u8]) -> [u8; 32] {
        // HMAC takes a key of any length.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        mac.finalize().into_bytes().into()
    }
}

/// The `webhook-signature` header of a delivery: a `v1,` signature for each secret, space
/// separated (two while an endpoint's old secret is still honoured after a rotation).
pub fn signatures<'a>(
    secrets: impl IntoIterator<Item = &'a Secret>,
    id: &str,
    timestamp: i64,
    body: &[u8],
) -> String {
    secrets
        .into_iter()
        .map(|s| s.sign(id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Why a delivery did not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unverified {
    /// `webhook-id`, `webhook-timestamp` or `webhook-signature` is missing.
    #[error("missing required headers")]
    MissingHeaders,
    /// The timestamp is not a number of seconds.
    #[error("invalid signature headers")]
    BadTimestamp,
    /// Older than the tolerance.
    #[error("message timestamp too old")]
    TooOld,
    /// Newer than the tolerance.
    #[error("message timestamp too new")]
    TooNew,
    /// No `v1` signature of the list matches.
    #[error("no matching signature found")]
    NoMatch,
}

/// Checks a delivery as its receiver would: `headers` by name (any case), `body` as it
/// came, `secret` the endpoint's, `now` the receiver's clock in Unix seconds.
pub fn verify<'h>(
    headers: impl IntoIterator<Item = (&'h str, &'h str)>,
    body: &[u8],
    secret: &Secret,
    now: i64,
) -> Result<(), Unverified> {
    let (mut id, mut timestamp, mut signature) = (None, None, None);
    for (name, value) in headers {
        match name.to_ascii_lowercase().as_str() {
            "webhook-id" => id = Some(value),
            "webhook-timestamp" => timestamp = Some(value),
            "webhook-signature" => signature = Some(value),
            _ => {}
        }
    }
    let (Some(id), Some(timestamp), Some(signature)) = (id, timestamp, signature) else {
        return Err(Unverified::MissingHeaders);
    };
    let at: f64 = timestamp
        .trim()
        .parse()
        .map_err(|_| Unverified::BadTimestamp)?;
    if !at.is_finite() {
        return Err(Unverified::BadTimestamp);
    }
    let at = at.floor() as i64;
    if at < now - TOLERANCE_SECS {
        return Err(Unverified::TooOld);
    }
    if at > now + TOLERANCE_SECS {
        return Err(Unverified::TooNew);
    }
    let expected = secret.mac(id, at, body);
    let matched = signature.split(' ').any(|versioned| {
        let Some(("v1", sig)) = versioned.split_once(',') else {
            return false;
        };
        LENIENT
            .decode(sig)
            .is_ok_and(|sig| bool::from(sig.as_slice().ct_eq(&expected)))
    });
    matched.then_some(()).ok_or(Unverified::NoMatch)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The known answer the `standardwebhooks` package publishes with its tests: this
    /// secret, message id, timestamp and payload give this signature.
    #[test]
    fn a_signature_is_the_standard_webhooks_one() {
        let secret = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").expect("secret");
        let id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            secret.sign(id, 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
        assert_eq!(
            verify(
                [
                    ("Webhook-Id", id),
                    ("webhook-timestamp", "1614265330"),
                    (
                        "webhook-signature",
                        "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
                    )
                ],
                body,
                &secret,
                1614265330 + 60,
            ),
            Ok(())
        );
    }

    #[test]
    fn a_secret_reads_back_from_its_text_and_shows_nothing_in_debug() {
        let secret = Secret::generate();
        let text = secret.text();
        assert!(text.starts_with("whsec_") && text.len() == 6 + 44, "{text}");
        assert_eq!(Secret::parse(&text), Some(secret.clone()));
        assert_eq!(
            Secret::parse(text.trim_end_matches('=')),
            Some(secret.clone())
        );
        assert_eq!(format!("{secret:?}"), "Secret(..)");
        // Unpadded, its last symbol's spare bits set, as the package reads it too.
        assert!(Secret::parse("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS").is_some());
        assert_eq!(Secret::parse("whsec_"), None);
        assert_eq!(Secret::parse("whsec_!!"), None);
    }

    #[test]
    fn a_delivery_is_refused_when_late_early_tampered_or_signed_with_another_secret() {
        let (secret, other) = (Secret::generate(), Secret::generate());
        let (id, at, body) = ("msg_x_7", 1_700_000_000, br#"{"seq":7}"#.as_slice());
        let header = signatures([&other, &secret], id, at, body);
        let check = |sig: &str, at_header: &str, body: &[u8], now: i64| {
            verify(
                [
                    ("webhook-id", id),
                    ("webhook-timestamp", at_header),
                    ("webhook-signature", sig),
                ],
                body,
                &secret,
                now,
            )
        };
        let at_text = at.to_string();
        assert_eq!(check(&header, &at_text, body, at), Ok(()), "either secret");
        assert_eq!(
            check(&header, &at_text, body, at + TOLERANCE_SECS + 1),
            Err(Unverified::TooOld)
        );
        assert_eq!(
            check(&header, &at_text, body, at - TOLERANCE_SECS - 1),
            Err(Unverified::TooNew)
        );
        assert_eq!(
            check(&header, &at_text, br#"{"seq":8}"#, at),
            Err(Unverified::NoMatch)
        );
        let theirs = other.sign(id, at, body);
        assert_eq!(check(&theirs, &at_text, body, at), Err(Unverified::NoMatch));
        assert_eq!(
            check(&header, "yesterday", body, at),
            Err(Unverified::BadTimestamp)
        );
        assert_eq!(
            verify([("webhook-id", id)], body, &secret, at),
            Err(Unverified::MissingHeaders)
        );
    }
}
