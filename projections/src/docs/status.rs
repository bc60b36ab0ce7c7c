//! A race's status as the documents' schemas name it (feature `openapi`).

use std::borrow::Cow;

/// The schema of a race's `status` in the documents: one of the feed's words
/// ([`racing_events::RaceStatus`]), listed from the same list the feed is validated by.
pub struct RaceStatusName;

impl utoipa::PartialSchema for RaceStatusName {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        let words = racing_events::RaceStatus::ALL.map(racing_events::RaceStatus::as_str);
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(words))
            .description(Some(
                "Where the race stands: `open` (betting open), `suspended` (betting stopped \
                 for a while), `off` (started), `finished` (run; result to come or in), \
                 `abandoned` (will not be run), `void` (run but declared void).",
            ))
            .into()
    }
}

impl utoipa::ToSchema for RaceStatusName {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("RaceStatus")
    }
}
