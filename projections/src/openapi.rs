//! The OpenAPI schema of each document the API serves, derived from the type that renders
//! it (the form's, whose JSON `FormDoc` writes itself, is checked against rendered forms by
//! the API's tests), each under the name the API description gives it.

/// A horse's profile.
pub type Profile = crate::docs::ProfileDoc<'static>;
/// A horse's form.
pub type Form = crate::docs::FormJson;
/// The results of a date.
pub type ResultsByDate = crate::docs::ResultsDoc<'static>;
/// The result of one race.
pub type RaceResult = crate::docs::SingleRace<'static>;
/// The race card of a date.
pub type RaceCard = crate::docs::CardDoc<'static>;
/// One race of a date's card, as the card lists it.
pub type CardRace = crate::docs::CardRace<'static>;
/// The current odds of a race.
pub type RaceOdds = crate::docs::OddsDoc<'static>;
/// A page of a race's odds history.
pub type OddsHistory = crate::pages::OddsHistory<'static>;
/// A jockey's or a trainer's record.
pub type PersonRecord = crate::people::PersonDoc;
/// Every jockey.
pub type JockeyList = crate::people::JockeyList;
/// Every trainer.
pub type TrainerList = crate::people::TrainerList;
/// The records of a horse, a jockey or a trainer by condition.
pub type Analysis = crate::analysis::AnalysisDoc;
