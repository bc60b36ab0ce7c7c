//! The version of the store's layout: of its keys and record formats. A store of an
//! older version is not read ([`crate::store::Store::open`] says which it is, and the
//! service rebuilds it from the log), one of a newer version is refused, and so is a
//! snapshot of another layout.

/// Version of the key layout and record formats; a store of another version is rebuilt.
/// 2: a record per horse's form, per batch's applied `event_id`s; no profile record.
/// 3: every document headed by its `ETag`.
/// 4: odds and scratchings per venue where given; odds documents per venue, with `venue`.
/// 5: the odds journal (every applied `OddsUpdated`), no records of ignored odds; applied
///    `event_id`s in sorted runs and a saved filter (`ids.rs`), not a record per batch;
///    the versions of source records and form changes (`history.rs`), the change feed.
/// 6: the full Hong Kong record (feed contract v1.1) in results and form entries: stored
///    results and form changes carry the new fields, and every form entry the race's name,
///    going and class and the runner's trainer; meetings by date, the horse-name index,
///    jockeys' and trainers' rides and documents. (Documents have carried their sequence
///    after the ETag since the history of #15, stored under 5: this bump rebuilds those too.)
/// 7: jockeys' and trainers' rides a record per person and season, beside a summary of
///    their figures by season, in place of one record of every ride of a career.
/// 8: the odds journal in chunks, a record per batch and date (`journal.rs`), in place of
///    a record per move.
/// 9: a horse's form record without its entries' JSON, which its form document holds
///    (`form.rs`): each touched form is written once a batch, not twice.
/// 10: the change feed a record per batch, holding the keys of the documents it changed, in
///    place of a record per document and batch; the changes of a horse's form a record per
///    batch (`form.rs`), in place of a record per change.
/// 11: the versions of a source record a record per batch (`subject_entries.rs`), in place of a
///    record per version.
/// 12: the odds journal's chunks a record per batch and race, in place of per batch and
///    date; the change feed's record of a batch in parts of 64 documents; the horse-name
///    index (`search.rs`).
/// 13: a document without a venue that is the main meeting's an alias of it, not a copy.
/// 14: the versions of a record the values changes replaced, not a copy of every write;
///    the odds journal's chunks and the records of a batch's entries packed (zstd);
///    people's rides a record a ride and their figures a record a season; a horse's
///    names a record a horse and one a date; a horse's form a record per entry and the
///    versions those replaced (`form.rs`), its document's key holding only its head.
/// 15: the race-day journal (`raceday.rs`), a record a status change, scratching, result,
///    card and retraction.
/// 16: a count beside each chunk of the odds journal (the race's moves before it, and its
///    own), so that the moves after a point are counted without reading them.
/// 17: each document rendered at every event that changed it, not once a batch, and the
///    change feed's rows each with its own position in parts of 64 rows, not a record per
///    batch listing its documents at its last position: a store built by a replay answers
///    as one built live. A store of 16 listed a replay's changes at its batches' ends.
/// 18: a tally beside each jockey's and trainer's seasons (their totals, and a digest of
///    each season's figures), of which their record's `ETag` is taken with their newest
///    rides: a result no longer reads every season of its people.
/// 20: a date's results and cards and a race's result are kept as their heads (their
///    `ETag` and sequence), their bodies rendered from the source records when read.
/// 21: the horse-name index's entries hold no name; a horse's newest name is a record of
///    its own, which a new name rewrites, not every entry of the names before it.
/// 22: the race-day journal's order (`raceday.rs`): a record an event under its sequence
///    alone, naming its date: every date's events after a point read in stream order.
/// 23: every instant kept (a status's time, an odds move's `occurred_at` and
///    `published_at`) is in UTC with `Z`, to the millisecond, as it is served.
/// 24: the records of the kinds `keys::KINDS` marks (documents, cards, results, prices,
///    careers, the change feed; the form entries against a dictionary of their own) are
///    stored packed with zstd where that is shorter: a version before it would read them
///    as damaged.
/// 25: a horse's career keeps its newest entries with none left out between them. An
///    amended or backfilled result of an old date could be kept among them while a newer
///    entry was not, and a card's form as of a date before the horse's newest runs then
///    counted it in its figures: a store of 24 may hold such forms.
/// 26: a batch's record of a source record's versions is packed against the value the
///    batch left the record with (`history.rs`), not alone: a version of a card's form
///    keeps what changed. A version before it would read them as damaged.
/// 27: of a record's versions, a run of records packed against the value after them
///    ends with one packed alone (`history/packing.rs`), and each in a run starts with a
///    marker byte: a version before it would read them as damaged, and read a record's
///    versions to its newest for the oldest.
/// 28: a jockey's or a trainer's rides of a date are one record (`people/ride_days.rs`),
///    not a record a ride: a version before it would read a ride as a day cut short.
/// 29: the races a person was in a result of are listed in those records, a ride taken
///    away since with an empty value, not a record each (`px`): a version before it would
///    read such a ride as a ride.
/// 30: a horse's names of a date are a binary record (`search/names.rs`), not JSON: a
///    version before it would read them as damaged.
/// 31: the people's records are packed with zstd where that is shorter (their days of
///    rides, some hundreds of bytes of JSON rides each): a version before it would read
///    them as damaged.
/// 32: how many cards and results give a horse each name is a record a name
///    (`keys::horse_name_count`), not a map in the horse's record: a version before it
///    would read every name but the profile's as taken back.
/// 33: the cards each horse is declared on are read from its names of each date
///    (`cards/entries.rs`), not kept a record a horse and card: a version before it would
///    find no later card for a result to change the form of.
/// 34: a horse's names of each date are kept a record a year (`keys::horse_names_in`),
///    not a record a date: a version before it would find none of them.
/// 35: a name's last character alone makes no entry of the name index (no search is that
///    short): a version before it would leave those it wrote when the name is taken back.
/// 36: a horse's form entries are kept a record a year (`keys::form_year`), not a record
///    an entry: a version before it would find none of them.
/// 37: a race's form record keeps its horses' part alone, the strike rates summed where
///    the card is rendered from each date's rides (`keys::analysis::day_rides`), and the
///    people's recent days are gone: a version before it would serve the strike rates of
///    its records twice, and find no date's rides.
/// 38: a card's head holds the tag of a digest of its parts (`docs/cards.rs`), not its
///    `ETag`: a version before it would find no card's head its body's.
/// 39: each packed kind's records are packed with a dictionary of its own
///    (`dictionaries.rs`): a version before it would unpack none of them.
/// 40: a person's ride records the race's distance, going and class, the draw and the
///    other role's name too (`people/rides.rs`), which their records by condition count
///    from: a version before it would read none of its rides.
pub(crate) const SCHEMA: &[u8] = b"40";
pub(crate) const SCHEMA_KEY: &[u8] = b"meta\0schema";
