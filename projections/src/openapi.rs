//! The OpenAPI schema of each document the API serves, derived from the type that renders
//! it (the form's, whose JSON `FormDoc` writes itself, is checked against rendered forms by
//! the API's tests), each under the name the API description gives it.

/// A horse's profile.
pub type Profile = crate::docs::profile::ProfileDoc<'static>;
/// A horse's form.
pub type Form = crate::docs::form::FormJson;
/// The results of a date.
pub type ResultsByDate = crate::docs::results::ResultsDoc<'static>;
/// The result of one race.
pub type RaceResult = crate::docs::results::SingleRace<'static>;
/// The race card of a date.
pub type RaceCard = crate::docs::cards::CardDoc<'static>;
/// One race of a date's card, as the card lists it.
pub type CardRace = crate::docs::cards::CardRace<'static>;
/// The current odds of a race.
pub type RaceOdds = crate::docs::odds::OddsDoc<'static>;
/// A page of a race's odds history.
pub type OddsHistory = crate::pages::OddsHistory<'static>;
/// A jockey's or a trainer's record.
pub type PersonRecord = crate::people::docs::PersonDoc;
/// Every jockey.
pub type JockeyList = crate::people::docs::JockeyList;
/// Every trainer.
pub type TrainerList = crate::people::docs::TrainerList;
/// The records of a horse, a jockey or a trainer by condition.
pub type Analysis = crate::analysis::AnalysisDoc;
