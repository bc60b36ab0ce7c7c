//! The key space of the read-model tree. Everything lives in one sled tree so that a batch
//! of changes and the checkpoint commit together: a single atomic `apply_batch`, or beside
//! readers a record at a time behind the store's gate (`kv.rs`).
//!
//! Keys are `kind \0 part \0 part ...`. Dates, race numbers and horse numbers are validated
//! and hold no `\0`; a venue is free text, so it is always the last part, which keeps every
//! key unambiguous: a scan of a date's or a race's keys reads the venue as the rest.

pub(crate) mod analysis;
pub(crate) mod doc;
pub(crate) mod kinds;
mod parts;
pub(crate) mod scope;
pub(crate) mod versions;

use parts::{key, race, split_at_sep, SEP, YEAR_LEN};

use doc::DocKey;

/// The last stream sequence whose effects are in the tree.
pub const CHECKPOINT: &[u8] = b"meta\0checkpoint";

/// While a bulk load writes a batch in steps, the checkpoint it reaches: its records are
/// in a redo file beside the store until they are all in the tree (`load_steps.rs`).
pub const LOAD_STEPS: &[u8] = b"meta\0load_steps";

/// While a commit is written beside readers a record at a time, every write of it: the
/// store writes them again when it opens, if a crash cut the commit short (`kv.rs`).
pub const BESIDE_READERS: &[u8] = b"meta\0beside_readers";

/// Which stream the read models were built from: its name and when it was created.
pub const STREAM: &[u8] = b"meta\0stream";

/// The stream sequence of the latest `OddsUpdated` applied.
pub const ODDS_SEQ: &[u8] = b"meta\0odds_seq";

/// Prefix of the current-odds records.
pub const ODDS_PREFIX: &[u8] = b"odds\0";

/// Prefix of the dead-letter records, ordered by stream sequence.
pub const DEAD_PREFIX: &[u8] = b"dead\0";

/// A chunk of the odds journal (`journal.rs`): moves of race `race_number` of `date` a
/// batch applied, the first at stream sequence `first`, so that a race's chunks read in
/// the order they went live, and one race's are read without another's.
pub fn odds_chunk(date: &str, race_number: u8, first: u64) -> Vec<u8> {
    let mut k = odds_race_moves(date, race_number);
    k.extend_from_slice(&first.to_be_bytes());
    k
}

/// The prefix of a date's odds journal.
pub fn odds_moves_of(date: &str) -> Vec<u8> {
    let mut k = key(&[b"oj", date.as_bytes()]);
    k.push(SEP);
    k
}

/// The prefix of the odds journal of race `race_number` of `date`: the date's prefix, then
/// the race number as one byte (a date's races follow one another in number order).
pub fn odds_race_moves(date: &str, race_number: u8) -> Vec<u8> {
    let mut k = odds_moves_of(date);
    k.push(race_number);
    k
}

/// The count of a chunk of the odds journal (`journal.rs`): how many moves of its race
/// came before it, and how many it holds, under the chunk's date, race number and first
/// sequence, so that a race's moves after any point are counted from two of these and one
/// chunk, not by reading every chunk.
pub fn odds_chunk_count(date: &str, race_number: u8, first: u64) -> Vec<u8> {
    let mut k = odds_race_counts(date, race_number);
    k.extend_from_slice(&first.to_be_bytes());
    k
}

/// The prefix of the chunk counts of race `race_number` of `date`.
pub fn odds_race_counts(date: &str, race_number: u8) -> Vec<u8> {
    let mut k = key(&[b"on", date.as_bytes()]);
    k.push(SEP);
    k.push(race_number);
    k
}

/// A record of the race-day journal (`raceday.rs`): a status change, scratching, result,
/// card or retraction of `date`, under its stream sequence, so that a date's read in
/// stream order.
pub fn race_day(date: &str, seq: u64) -> Vec<u8> {
    let mut k = race_days_of(date);
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

/// The prefix of a date's race-day journal.
pub fn race_days_of(date: &str) -> Vec<u8> {
    let mut k = key(&[b"rd", date.as_bytes()]);
    k.push(SEP);
    k
}

/// The prefix of the race-day journal's order: one record an event, under its stream
/// sequence alone, holding its date, so that the events of every date after a point are
/// read in stream order without knowing their dates (`raceday.rs`).
pub const RACE_DAY_ORDER: &[u8] = b"rdo\0";

/// The record of the race-day journal's order for the event at `seq`.
pub fn race_day_order(seq: u64) -> Vec<u8> {
    let mut k = RACE_DAY_ORDER.to_vec();
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

/// The stream sequence of a race-day record's key.
pub fn race_day_seq(key: &[u8]) -> Option<u64> {
    let seq = key.strip_prefix(b"rd\0")?.get(11..19)?;
    Some(u64::from_be_bytes(seq.try_into().ok()?))
}

// The records of applied `event_id`s (`ids.rs`) are `seen` keys: their manifest, the chunks
// of the saved filter and the chunks of the sorted runs. `seen` is the last kind of key and
// `run` its last part, and run numbers only grow, so a new run's chunks are written at the
// end of the tree.

/// The manifest of the applied ids: their runs and their saved filter.
pub const IDS_MANIFEST: &[u8] = b"seen\0manifest";

/// Prefix of the chunks of every saved filter, by generation.
pub const ID_FILTER_PREFIX: &[u8] = b"seen\0filter\0";

/// Prefix of the chunks of every run of applied ids, by run number.
pub const ID_RUN_PREFIX: &[u8] = b"seen\0run\0";

/// Chunk `chunk` of the saved filter of generation `generation`.
pub fn id_filter(generation: u64, chunk: u32) -> Vec<u8> {
    key(&[
        b"seen",
        b"filter",
        &generation.to_be_bytes(),
        &chunk.to_be_bytes(),
    ])
}

/// The chunk of run `run` whose first (smallest) id is `first`: a run's chunks follow
/// one another in id order, so the one that would hold an id is the last at or before
/// `id_run(run, id)`.
pub fn id_run(run: u64, first: u128) -> Vec<u8> {
    key(&[b"seen", b"run", &run.to_be_bytes(), &first.to_be_bytes()])
}

/// The number (a filter's generation, a run's number) of a key under `prefix`
/// ([`ID_FILTER_PREFIX`], [`ID_RUN_PREFIX`]).
pub fn numbered(prefix: &[u8], key: &[u8]) -> Option<u64> {
    let number = key.strip_prefix(prefix)?.get(..8)?;
    Some(u64::from_be_bytes(number.try_into().ok()?))
}

/// What every key of number `number` under `prefix` starts with.
pub fn number_prefix(prefix: &[u8], number: u64) -> Vec<u8> {
    let mut k = prefix.to_vec();
    k.extend_from_slice(&number.to_be_bytes());
    k.push(SEP);
    k
}

/// Whether the versions of the record under `key` are kept when an event changes it: the
/// records an event writes that the documents are rendered from. (A form's entries keep
/// their own past versions: `form.rs`.)
pub fn is_versioned(key: &[u8]) -> bool {
    [
        &b"day\0"[..],
        b"res\0",
        b"card\0",
        b"scr\0",
        STATUS_PREFIX,
        b"doc\0profile\0",
        ODDS_PREFIX,
        b"cf\0",
        b"dr\0",
    ]
    .iter()
    .any(|p| key.starts_with(p))
}

/// The name of a horse's form entry for one race (`form.rs`), in the order of its form:
/// the horse's entries in key order are its form, oldest first (date, race number, then
/// venue: a date holds no `\0`, so `date \0` sorts as the date does). An entry is stored
/// in its year's record ([`form_year`]); its past versions are stored under this name
/// ([`form_entry_past`]).
pub fn form_entry(horse_no: &str, date: &str, race_number: u8, venue: &str) -> Vec<u8> {
    key(&[
        b"fe",
        horse_no.as_bytes(),
        date.as_bytes(),
        &race(race_number),
        venue.as_bytes(),
    ])
}

/// The record of a horse's form entries of the year of `date` (`fe \0 horse \0 YYYY`):
/// a horse's records follow one another in year order, under [`form_entries_of`].
pub fn form_year(horse_no: &str, date: &str) -> Vec<u8> {
    key(&[b"fe", horse_no.as_bytes(), year_of(date).as_bytes()])
}

/// The key of the [`form_year`] record that holds the entry named `entry`
/// ([`form_entry`]), and the rest of the name that the record keeps (the date, race
/// number and venue); `None` for a name that is no form entry's.
pub fn form_entry_in_year(entry: &[u8]) -> Option<(&[u8], &[u8])> {
    let horse = form_entry_horse(entry)?;
    let year = b"fe\0".len() + horse.len() + 1 + YEAR_LEN;
    let rest_of_date = entry.get(year..)?.first();
    let rest = year - YEAR_LEN;
    rest_of_date
        .is_some_and(|b| *b != SEP)
        .then(|| (&entry[..year], &entry[rest..]))
}

/// The year (`YYYY`) a [`form_year`] record's key is of: its last four characters.
pub fn form_year_year(year: &[u8]) -> &[u8] {
    &year[year.len().saturating_sub(YEAR_LEN)..]
}

/// The name ([`form_entry`]) of the entry that the [`form_year`] record `year` keeps as
/// `rest` ([`form_entry_in_year`]).
pub fn form_entry_of_year(year: &[u8], rest: &[u8]) -> Vec<u8> {
    let prefix = year.get(..year.len().saturating_sub(YEAR_LEN));
    [prefix.unwrap_or_default(), rest].concat()
}

/// The prefix of a horse's form records (and of the names of its entries).
pub fn form_entries_of(horse_no: &str) -> Vec<u8> {
    let mut k = key(&[b"fe", horse_no.as_bytes()]);
    k.push(SEP);
    k
}

/// The horse of a form entry's name or record's key, or of the prefix of a horse's.
pub fn form_entry_horse(key: &[u8]) -> Option<&str> {
    let rest = key.strip_prefix(b"fe\0")?;
    let end = rest.iter().position(|b| *b == SEP)?;
    std::str::from_utf8(&rest[..end]).ok()
}

/// A change of a horse's form: a version of the form entry under `entry` that a later
/// event replaced or removed, under the sequence of the event that set it (empty: the
/// entry removed), which `as_of` reads of a form beside its entries. `None` for a key that is no form entry's.
pub fn form_entry_past(entry: &[u8], seq: u64) -> Option<Vec<u8>> {
    let rest = entry.strip_prefix(b"fe\0")?;
    let mut k = Vec::with_capacity(3 + rest.len() + 8);
    k.extend_from_slice(b"fc\0");
    k.extend_from_slice(rest);
    k.extend_from_slice(&seq.to_be_bytes());
    Some(k)
}

/// The prefix of the past versions of a horse's form entries.
pub fn form_pasts_of(horse_no: &str) -> Vec<u8> {
    let mut k = key(&[b"fc", horse_no.as_bytes()]);
    k.push(SEP);
    k
}

/// The prefix of the past versions of the entries that the [`form_year`] record `year`
/// holds; `None` for a key that is no form record's.
pub fn form_pasts_in(year: &[u8]) -> Option<Vec<u8>> {
    let rest = year.strip_prefix(b"fe\0")?;
    Some([&b"fc\0"[..], rest].concat())
}

/// The form entry's key and the sequence of a past version's key.
pub fn parse_form_entry_past(key: &[u8]) -> Option<(Vec<u8>, u64)> {
    let rest = key.strip_prefix(b"fc\0")?;
    let (entry, seq) = rest.split_last_chunk::<8>()?;
    Some(([&b"fe\0"[..], entry].concat(), u64::from_be_bytes(*seq)))
}

/// Prefix of the change feed's records.
pub const CHANGE_PREFIX: &[u8] = b"chg\0";

/// A part of the change feed (`feed.rs`), under the sequence of its last row and that
/// row's index among the rows of its sequence: a page that starts at any row reads from
/// the part that holds it.
pub fn change(seq: u64, index: u32) -> Vec<u8> {
    let mut k = key(&[b"chg", &seq.to_be_bytes()]);
    k.extend_from_slice(&index.to_be_bytes());
    k
}

/// Where the change feed's records after `seq` start.
pub fn changes_after(seq: u64) -> Vec<u8> {
    change(seq.saturating_add(1), 0)
}

/// The sequence and the index of a change feed record's key.
pub fn parse_change(key: &[u8]) -> Option<(u64, u32)> {
    let rest = key.strip_prefix(CHANGE_PREFIX)?;
    let (seq, part) = rest.split_first_chunk::<8>()?;
    Some((
        u64::from_be_bytes(*seq),
        u32::from_be_bytes(part.try_into().ok()?),
    ))
}

/// A dead letter, by the sequence of the message that was refused.
pub fn dead(seq: u64) -> Vec<u8> {
    key(&[b"dead", &seq.to_be_bytes()])
}

/// A declared race card as the feed gave it.
pub fn card(date: &str, race_number: u8, venue: &str) -> Vec<u8> {
    key(&[
        b"card",
        date.as_bytes(),
        &race(race_number),
        venue.as_bytes(),
    ])
}

/// The runners scratched from race `race_number` of `date`: at `venue`, or (`None`, as a
/// v1 feeder names no venue) at every venue of the date.
pub fn scratched(date: &str, race_number: u8, venue: Option<&str>) -> Vec<u8> {
    scoped(b"scr", date, race_number, venue)
}

/// Prefix of the race statuses (`status.rs`).
pub const STATUS_PREFIX: &[u8] = b"rst\0";

/// The status of race `race_number` of `date`: at `venue`, or (`None`) as given without a
/// venue, for the race of that number at every venue of the date. (`rst`, not `status`:
/// `seen` stays the last kind of key.)
pub fn status(date: &str, race_number: u8, venue: Option<&str>) -> Vec<u8> {
    scoped(b"rst", date, race_number, venue)
}

/// The prefix of the status records of `date` (of race `race_number` only, if given).
pub(crate) fn statuses(date: &str, race_number: Option<u8>) -> Vec<u8> {
    match race_number {
        Some(n) => key(&[b"rst", date.as_bytes(), &race(n)]),
        None => key(&[b"rst", date.as_bytes(), b""]),
    }
}

/// The race and venue of a status record's key ([`status`]).
pub(crate) fn parse_status(key: &[u8]) -> Option<(u8, Option<&str>)> {
    let rest = key.strip_prefix(b"rst\0")?;
    let n = std::str::from_utf8(rest.get(11..13)?).ok()?.parse().ok()?;
    match rest.get(13..)? {
        [] => Some((n, None)),
        [SEP, venue @ ..] => Some((n, Some(std::str::from_utf8(venue).ok()?))),
        _ => None,
    }
}

/// `kind \0 date \0 race`, then `\0 venue` for one venue's race. The two never collide:
/// a venue is never empty.
fn scoped(kind: &[u8], date: &str, race_number: u8, venue: Option<&str>) -> Vec<u8> {
    match venue {
        Some(v) => key(&[kind, date.as_bytes(), &race(race_number), v.as_bytes()]),
        None => key(&[kind, date.as_bytes(), &race(race_number)]),
    }
}

/// A race result as the feed last gave it.
pub fn result(date: &str, race_number: u8, venue: &str) -> Vec<u8> {
    key(&[
        b"res",
        date.as_bytes(),
        &race(race_number),
        venue.as_bytes(),
    ])
}

/// Which venues have cards and results on a date, and which races each.
pub fn day(date: &str) -> Vec<u8> {
    key(&[b"day", date.as_bytes()])
}

/// The date, race number and venue (`None`: odds given for every venue) of a
/// current-odds record's key.
pub fn parse_odds(key: &[u8]) -> Option<(&str, u8, Option<&str>)> {
    let rest = key.strip_prefix(ODDS_PREFIX)?;
    let (date, race_number) = (rest.get(..10)?, rest.get(11..13)?);
    let n = std::str::from_utf8(race_number).ok()?.parse().ok()?;
    let venue = match rest.get(13..)? {
        [] => None,
        [SEP, venue @ ..] => Some(std::str::from_utf8(venue).ok()?),
        _ => return None,
    };
    Some((std::str::from_utf8(date).ok()?, n, venue))
}

/// The current odds given for a race: for one venue's race, or (`None`) without a venue,
/// for the race of that number at every venue. A date's races share the prefix
/// `odds \0 date \0`, and a race's records follow one another.
pub fn odds(date: &str, race_number: u8, venue: Option<&str>) -> Vec<u8> {
    scoped(b"odds", date, race_number, venue)
}

// ---- Discovery: the meetings of each date, horses by name, jockeys and trainers. ----
// Records the fold writes and the endpoints read by a scan or by name; none is a
// `DocKey` document (none is in the change feed or answers `as_of`).

/// The meetings of `date` as the meetings endpoint lists them (`meetings.rs`).
pub fn meetings(date: &str) -> Vec<u8> {
    key(&[b"mtg", date.as_bytes()])
}

/// Prefix of the horse-name index's entries of whole names (`search.rs`).
const NAMES_WHOLE: &[u8] = b"hw\0";
/// Prefix of the horse-name index's entries of names read from past their first character.
const NAMES_INNER: &[u8] = b"hx\0";

/// An entry of the horse-name index: `text` (lower case) is how one of the horse's names
/// goes on from one of its characters to its end (`whole`: from its first), so that a scan
/// of the entries that start with a search's text reads the horses whose names contain it
/// (`whole`: start with it), and no other.
pub fn name_index(whole: bool, text: &str, horse_no: &str) -> Vec<u8> {
    let mut k = name_index_of(whole, text);
    k.push(SEP);
    k.extend_from_slice(horse_no.as_bytes());
    k
}

/// What the index entries of names containing `text` (lower case) start with: of those
/// that start with it (`whole`), or of those that contain it past their first character.
pub fn name_index_of(whole: bool, text: &str) -> Vec<u8> {
    let mut k = if whole { NAMES_WHOLE } else { NAMES_INNER }.to_vec();
    k.extend_from_slice(text.as_bytes());
    k
}

/// The horse of an index entry's key: after its last separator (a horse number holds
/// none; a name may).
pub fn parse_name_index(key: &[u8]) -> Option<&str> {
    let rest = key
        .strip_prefix(NAMES_WHOLE)
        .or_else(|| key.strip_prefix(NAMES_INNER))?;
    let at = rest.iter().rposition(|b| *b == SEP)?;
    std::str::from_utf8(&rest[at + 1..]).ok()
}

/// A horse's profile's name and its latest date with a card or a result
/// (`search/names.rs`).
pub fn horse_names(horse_no: &str) -> Vec<u8> {
    key(&[b"hn", horse_no.as_bytes()])
}

/// How many of a horse's cards and results give it `name` (`search/names.rs`): a record a
/// name, so that a card rewrites the count of the name it gives and not those of every
/// name the horse was ever given.
pub fn horse_name_count(horse_no: &str, name: &str) -> Vec<u8> {
    key(&[b"hnc", horse_no.as_bytes(), name.as_bytes()])
}

/// What the keys of every [`horse_name_count`] of a horse start with.
pub fn horse_name_counts(horse_no: &str) -> Vec<u8> {
    key(&[b"hnc", horse_no.as_bytes(), b""])
}

/// A horse's newest name, which a search lists it under (`search/mod.rs`): one record a
/// horse, so that a new name rewrites it and not the index entries of every older name.
pub fn horse_newest(horse_no: &str) -> Vec<u8> {
    key(&[b"hnw", horse_no.as_bytes()])
}

/// The record of what the cards and results of each date of one year give a horse
/// (`search/dated.rs`): the year of `date` (its first four characters), so that a horse's
/// dates of a year share one record.
pub fn horse_names_in(horse_no: &str, date: &str) -> Vec<u8> {
    key(&[b"hd", horse_no.as_bytes(), year_of(date).as_bytes()])
}

/// The year of a date (`YYYY-MM-DD`): its first four characters (all of a shorter one).
pub fn year_of(date: &str) -> &str {
    date.get(..YEAR_LEN).unwrap_or(date)
}

/// What the keys of every [`horse_names_in`] of a horse start with: in year order.
pub fn horse_names_dates(horse_no: &str) -> Vec<u8> {
    key(&[b"hd", horse_no.as_bytes(), b""])
}

/// The year of a [`horse_names_in`] key: after its last separator.
pub fn parse_horse_names_year(key: &[u8]) -> Option<&str> {
    let rest = key.strip_prefix(b"hd\0")?;
    let at = rest.iter().rposition(|b| *b == SEP)?;
    std::str::from_utf8(&rest[at + 1..]).ok()
}

/// The name of one ride of a jockey or a trainer (`role`: `jockey`, `trainer`) by the
/// slug of their name (`people/`): [`person_rides_on`] of its date, then the race number,
/// the venue and the horse, so that a person's rides in the order of their names are
/// their rides oldest first. Not a key of the store: the record of the date holds its
/// rides by what this adds to its key (`people/ride_days.rs`). The venue, free text,
/// stands before the horse number, which holds no separator: the horse is what follows
/// the last one.
pub fn person_ride(
    role: &str,
    id: &str,
    (date, race_number, venue): (&str, u8, &str),
    horse_no: &str,
) -> Vec<u8> {
    let mut k = person_rides(role, id);
    k.extend(key(&[
        date.as_bytes(),
        &race(race_number),
        venue.as_bytes(),
        horse_no.as_bytes(),
    ]));
    k
}

/// The race and the horse of a ride's key: `(date, race number, venue)`, horse number.
pub fn parse_person_ride(key: &[u8]) -> Option<((&str, u8, &str), &str)> {
    let (_role, rest) = split_at_sep(key.strip_prefix(b"ppl\0ride\0")?)?;
    let (_id, rest) = split_at_sep(rest)?;
    let last = rest.iter().rposition(|b| *b == SEP)?;
    let (date, race_number) = (rest.get(..10)?, rest.get(11..13)?);
    let n = std::str::from_utf8(race_number).ok()?.parse().ok()?;
    let venue = std::str::from_utf8(rest.get(14..last)?).ok()?;
    let horse_no = std::str::from_utf8(&rest[last + 1..]).ok()?;
    Some(((std::str::from_utf8(date).ok()?, n, venue), horse_no))
}

/// The prefix of the records of every date a jockey or a trainer rode on, in date order,
/// so that a scan of it from its end reads the newest.
pub fn person_rides(role: &str, id: &str) -> Vec<u8> {
    key(&[b"ppl", b"ride", role.as_bytes(), id.as_bytes(), b""])
}

/// The record of the rides of a jockey or a trainer on one date (`people/ride_days.rs`).
pub fn person_rides_on(role: &str, id: &str, date: &str) -> Vec<u8> {
    let mut k = person_rides(role, id);
    k.extend_from_slice(date.as_bytes());
    k.push(SEP);
    k
}

/// A jockey's or a trainer's figures in one Hong Kong season (`2019/20`): their rides,
/// wins, seconds and thirds, changed by what each result adds or takes away.
pub fn person_season(role: &str, id: &str, season: &str) -> Vec<u8> {
    let mut k = person_seasons(role, id);
    k.extend_from_slice(season.as_bytes());
    k
}

/// The prefix of the figures of every season of a jockey or a trainer.
pub fn person_seasons(role: &str, id: &str) -> Vec<u8> {
    key(&[b"ppl", b"season", role.as_bytes(), id.as_bytes(), b""])
}

/// A jockey's or a trainer's tally: their figures of every season added up, and a digest
/// of each season's, kept as their seasons change (`people/rides.rs`), so that a result
/// takes the tag of their record without reading every season.
pub fn person_tally(role: &str, id: &str) -> Vec<u8> {
    key(&[b"ppl", b"tally", role.as_bytes(), id.as_bytes()])
}

/// The head of a jockey's or a trainer's record: a tag of what the record is made of
/// (which changes exactly when the record does) and the sequence at which it last
/// changed; the record is assembled from their seasons' figures and newest rides when it
/// is read, and sent with the `ETag` of its bytes. (A store written before the heads
/// were kept holds the whole record here, sealed with its `ETag`.)
pub fn person_doc(role: &str, id: &str) -> Vec<u8> {
    key(&[b"ppl", b"doc", role.as_bytes(), id.as_bytes()])
}

/// The head of the list of every jockey (or trainer): the sequence at which the list last
/// changed, after room for an `ETag`; its rows are records of their own
/// ([`person_row`]), and the list is assembled from them when it is read. (A store written
/// before the rows were kept holds the whole list here, sealed with its `ETag`.)
pub fn people_doc(role: &str) -> Vec<u8> {
    key(&[b"ppl", b"all", role.as_bytes()])
}

/// The row of a jockey or a trainer in the list of their role, as served (JSON).
pub fn person_row(role: &str, id: &str) -> Vec<u8> {
    let mut k = person_rows(role);
    k.extend_from_slice(id.as_bytes());
    k
}

/// The prefix of the rows of the list of a role.
pub fn person_rows(role: &str) -> Vec<u8> {
    key(&[b"ppl", b"row", role.as_bytes(), b""])
}

/// Whether the record under `key` is a document sealed with its `ETag` and the sequence
/// it was rendered at: a `DocKey`'s, or a jockey's or trainer's record or list. (The
/// sequence is where a batch ended: two stores that batched the log differently hold
/// the same documents with other sequences; compare them as `answered`.)
pub fn is_sealed(key: &[u8]) -> bool {
    key.starts_with(DocKey::PREFIX)
        || key.starts_with(b"ppl\0doc\0")
        || key.starts_with(b"ppl\0all\0")
}
