//! A horse's profile document.

use serde::Serialize;

use super::json::to_json;

/// A horse's profile, these fields in this order: origin, colour, sex, age, trainer,
/// owner, stakes and record (its seconds and thirds where the feed gave them), then
/// pedigree, import type, ratings and season stakes where the feed gave them (a field not
/// given is left out).
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = Profile, examples(json!({
    "horse_no": "E271", "horse_name": "GOLDEN SIXTY", "country_of_origin": "AUS",
    "colour": "Bay", "sex": "Gelding", "age": 9, "trainer": "F C Lor",
    "owner": "Stewart Leung", "total_stakes": 150218500, "starts": 32, "wins": 27,
    "places": 29, "seconds": 2, "thirds": 0, "sire": "Street Cry", "dam": "Clinque",
    "dam_sire": "Casual Lies",
    "import_type": "PPG", "current_rating": 126, "season_start_rating": 131,
    "season_stakes": 12500000
}))))]
pub struct ProfileDoc<'a> {
    /// Brand number, the same value as in the path.
    horse_no: &'a str,
    /// Registered name.
    horse_name: &'a str,
    /// Short country code, e.g. `NZ`, `AUS`, `IRE`.
    country_of_origin: &'a str,
    /// Coat colour, e.g. `Bay`, `Chestnut`.
    colour: &'a str,
    /// e.g. `Gelding`, `Horse`, `Mare`.
    sex: &'a str,
    /// Age in years.
    age: i64,
    /// Current trainer.
    trainer: &'a str,
    /// Current owner.
    owner: &'a str,
    /// Career prize money in whole Hong Kong dollars (HK$).
    total_stakes: i64,
    /// Career starts.
    starts: i64,
    /// Career wins.
    wins: i64,
    /// Deprecated (served on in `/api/v1`; `docs/api.md`, Versions and deprecation):
    /// career places as the feed gave them. From feed v1.3 the finishes in the first
    /// three, wins included (`wins + seconds + thirds`), as `places` means everywhere
    /// else; a feeder of an earlier version may have counted only seconds and thirds.
    /// Read `wins`, `seconds` and `thirds`.
    #[cfg_attr(feature = "openapi", schema(deprecated))]
    places: i64,
    /// Career seconds. Left out where the feed did not give them.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false, minimum = 0))]
    seconds: Option<i64>,
    /// Career thirds. Left out where the feed did not give them.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false, minimum = 0))]
    thirds: Option<i64>,
    /// Sire's name. Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    sire: Option<&'a str>,
    /// Dam's name. Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    dam: Option<&'a str>,
    /// Name of the dam's sire. Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    dam_sire: Option<&'a str>,
    /// How the horse came to Hong Kong: `PP` (private purchase), `PPG` (private purchase
    /// griffin), `ISG` (international sale griffin), `VIS` (visiting); 1 to 8 upper-case
    /// letters. Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, pattern = "^[A-Z]{1,8}$")
    )]
    import_type: Option<&'a str>,
    /// Current handicap rating, 0 to 200. Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, minimum = 0, maximum = 200)
    )]
    current_rating: Option<i64>,
    /// Handicap rating at the start of the season, 0 to 200. Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, minimum = 0, maximum = 200)
    )]
    season_start_rating: Option<i64>,
    /// Prize money this season in whole Hong Kong dollars (HK$). Left out where the feed did not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false, minimum = 0))]
    season_stakes: Option<i64>,
}

/// Renders a horse profile document: the profile's fields, in their order.
pub(crate) fn render_profile(p: &racing_events::HorseProfile) -> Vec<u8> {
    to_json(&ProfileDoc {
        horse_no: &p.horse_no,
        horse_name: &p.horse_name,
        country_of_origin: &p.country_of_origin,
        colour: &p.colour,
        sex: &p.sex,
        age: p.age,
        trainer: &p.trainer,
        owner: &p.owner,
        total_stakes: p.total_stakes,
        starts: p.starts,
        wins: p.wins,
        places: p.places,
        seconds: p.seconds,
        thirds: p.thirds,
        sire: p.sire.as_deref(),
        dam: p.dam.as_deref(),
        dam_sire: p.dam_sire.as_deref(),
        import_type: p.import_type.as_deref(),
        current_rating: p.current_rating,
        season_start_rating: p.season_start_rating,
        season_stakes: p.season_stakes,
    })
}
