//! The forms' CSRF tokens, as a signed double submit: the page sets a random cookie and
//! puts into the form an HMAC of it, with the time, under a secret every replica shares.
//! A post is taken only with the cookie and a token of that cookie younger than two
//! hours; a page of another site can set neither.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The cookie's name.
pub const COOKIE: &str = "racing_form";
/// How long a form may be left open before it is submitted.
const MAX_AGE_SECS: i64 = 2 * 3600;

/// Signs and checks tokens.
#[derive(Clone)]
pub struct Csrf {
    secret: [u8; 32],
}

/// Why a post was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// No cookie or no token, or they do not belong together.
    Missing,
    /// A genuine token, too old.
    Stale,
}

impl Csrf {
    /// Tokens under `secret`.
    pub fn new(secret: [u8; 32]) -> Csrf {
        Csrf { secret }
    }

    /// A fresh cookie value.
    pub fn cookie() -> String {
        format!("{:032x}", rand::random::<u128>())
    }

    /// The token of `cookie` at `now` (unix seconds): `<now>.<hex hmac>`.
    pub fn token(&self, cookie: &str, now: i64) -> String {
        format!("{now}.{}", self.mac(cookie, now))
    }

    fn mac(&self, cookie: &str, at: i64) -> String {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.secret)
            .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
        mac.update(cookie.as_bytes());
        mac.update(b".");
        mac.update(at.to_string().as_bytes());
        crate::keys::digest::hex(&mac.finalize().into_bytes())
    }

    /// Whether `token` was made for `cookie` within the last two hours of `now`.
    pub fn check(
        &self,
        cookie: Option<&str>,
        token: Option<&str>,
        now: i64,
    ) -> Result<(), Refusal> {
        let (Some(cookie), Some(token)) = (cookie, token) else {
            return Err(Refusal::Missing);
        };
        let Some((at, mac)) = token.split_once('.') else {
            return Err(Refusal::Missing);
        };
        let Ok(at) = at.parse::<i64>() else {
            return Err(Refusal::Missing);
        };
        let expected = self.mac(cookie, at);
        let equal: bool = subtle::ConstantTimeEq::ct_eq(expected.as_bytes(), mac.as_bytes()).into();
        if !equal {
            return Err(Refusal::Missing);
        }
        if now - at > MAX_AGE_SECS || at > now + 60 {
            return Err(Refusal::Stale);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_holds_for_its_cookie_for_two_hours() {
        let csrf = Csrf::new([7; 32]);
        let token = csrf.token("cookie-a", 1_000_000);
        assert_eq!(
            csrf.check(Some("cookie-a"), Some(&token), 1_000_100),
            Ok(())
        );
        assert_eq!(
            csrf.check(Some("cookie-b"), Some(&token), 1_000_100),
            Err(Refusal::Missing)
        );
        assert_eq!(
            csrf.check(None, Some(&token), 1_000_100),
            Err(Refusal::Missing)
        );
        assert_eq!(
            csrf.check(Some("cookie-a"), None, 1_000_100),
            Err(Refusal::Missing)
        );
        assert_eq!(
            csrf.check(Some("cookie-a"), Some(&token), 1_000_000 + 2 * 3600 + 1),
            Err(Refusal::Stale)
        );
        let other = Csrf::new([8; 32]).token("cookie-a", 1_000_000);
        assert_eq!(
            csrf.check(Some("cookie-a"), Some(&other), 1_000_100),
            Err(Refusal::Missing)
        );
    }
}
