//! What the schema says of single fields, where the types derive their schema: the
//! patterns of their strings, a field present but possibly `null`, the status values, and
//! the odds entry's rule. Below the types, so that both they and `schema` read it.

use std::borrow::Cow;
use std::marker::PhantomData;

use schemars::generate::SchemaGenerator;
use schemars::{JsonSchema, Schema};
use serde_json::json;

use crate::values::RaceStatus;

/// `horse_no`: 1 to 32 of `A-Z a-z 0-9 _ -`, starting with a letter or digit.
pub(crate) const HORSE_NO: &str = "^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$";
/// Text that is not only white space (names, venues, reasons).
pub(crate) const TEXT: &str = r"\S";
/// `YYYY-MM-DD`, years 1000 to 9999; that the day exists (no 31 June) only the service checks.
pub(crate) const DATE: &str = "^[1-9][0-9]{3}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$";
/// `m:ss.cc`, seconds below 60.
pub(crate) const FINISH_TIME: &str = r"^[0-9]{1,3}:[0-5][0-9]\.[0-9]{2}$";
/// An official code such as `PU` or `WV-A`: upper case, up to 8 characters.
pub(crate) const STATUS_CODE: &str = "^[A-Z][A-Z0-9-]{0,7}$";
/// `import_type`: 1 to 8 upper-case letters.
pub(crate) const IMPORT_TYPE: &str = "^[A-Z]{1,8}$";
/// `lbw`: 1 to 8 characters of `0-9 A-Z - /`.
pub(crate) const LBW: &str = "^[0-9A-Z/-]{1,8}$";
/// `occurred_at`: RFC 3339, `YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)`.
pub(crate) const OCCURRED_AT: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$";

/// A field that must be present and may be `null` (a result runner's `position`,
/// `finish_time`, `win_odds` and `status`): an `Option` would be optional.
pub(crate) struct Nullable<T>(PhantomData<T>);

impl<T: JsonSchema> JsonSchema for Nullable<T> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        format!("Nullable_{}", T::schema_name()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        Option::<T>::json_schema(generator)
    }
}

/// `RaceStatusChanged.status`: one of [`RaceStatus::ALL`].
pub(crate) fn race_status(schema: &mut Schema) {
    let words: Vec<&str> = RaceStatus::ALL.iter().map(|s| s.as_str()).collect();
    schema.insert("enum".to_owned(), json!(words));
}

/// An odds entry gives a win price, a place price or both (v1.2).
pub(crate) fn win_or_place(schema: &mut Schema) {
    schema.insert(
        "anyOf".to_owned(),
        json!([{ "required": ["win_odds"] }, { "required": ["place_odds"] }]),
    );
}
