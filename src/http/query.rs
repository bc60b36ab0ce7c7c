//! The query string of a request as the handlers take it: each parameter at most once, and
//! each one the endpoint takes; and client text echoed in a message, clipped.

use std::collections::HashMap;

use super::error::ApiError;

/// The query parameter every read of the route table takes besides its own: answer only
/// once the read models hold the log up to this stream sequence (the pipeline checks it
/// and waits, `position.rs`; the handlers leave it be).
pub const MIN_SEQ: &str = "min_seq";

/// The query parameters of a request, each allowed at most once and each one of those
/// the endpoint takes.
pub struct Query(pub HashMap<String, String>);

impl Query {
    /// Parses a raw query string; an unknown or repeated parameter is a 400.
    pub fn parse(raw: Option<&str>, allowed: &[&str]) -> Result<Query, ApiError> {
        let mut params = HashMap::new();
        for (name, value) in form_urlencoded::parse(raw.unwrap_or_default().as_bytes()) {
            if !allowed.contains(&name.as_ref()) {
                let hint = if allowed.is_empty() {
                    "this endpoint takes no query parameters".to_owned()
                } else {
                    format!("allowed: {}", allowed.join(", "))
                };
                return Err(ApiError::BadRequest(format!(
                    "unknown query parameter `{}` ({hint})",
                    clip(&name)
                )));
            }
            if params
                .insert(name.to_string(), value.into_owned())
                .is_some()
            {
                return Err(ApiError::BadRequest(format!(
                    "query parameter `{}` is given more than once",
                    clip(&name)
                )));
            }
        }
        Ok(Query(params))
    }
}

/// Client input echoed in a message, cut to 64 characters.
pub fn clip(s: &str) -> String {
    racing_events::clip(s, 64)
}
