//! What a card's form reads of a horse's past, kept small and beside the horse, so that a
//! card's form costs the same however long the log and a replay reads nothing back for
//! it: its [`Career`], every run it made summed.
//!
//! It is exact. A career holds the newest entry it counted: a card dated after it reads
//! the career alone; one dated at or before it (a past card, a backfill) reads the horse's
//! entries. A result's runs are counted in and an amended or retracted one's counted out;
//! only where that takes away one of the newest six or the newest run taken part in, and
//! older ones would take its place, is the career worked out again from the entries.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::docs::cards::Record;
use crate::horse_runs::Run;

/// The newest entries the figures show.
pub(crate) const LAST: usize = 6;
/// The newest entries a career keeps: the six the figures show, and ten more, so that a
/// card of the date of the horse's newest runs (another race that day) reads the
/// career without them.
const KEPT: usize = 16;

/// Runs, wins and places, as a career keeps them.
pub(crate) type Tally = [u32; 3];

/// `run` counted into (`by` 1) or out of (`by` -1) a tally, if it took part.
fn tally(t: &mut Tally, run: &Run, by: i64) {
    if !run.took_part() {
        return;
    }
    for (n, counts) in t.iter_mut().zip([true, run.won(), run.placed()]) {
        if counts {
            *n = u32::try_from((i64::from(*n) + by).max(0)).unwrap_or(0);
        }
    }
}

/// A tally as served.
pub(crate) fn record(t: Option<&Tally>) -> Record {
    let [runs, wins, places] = t.copied().unwrap_or_default();
    Record { runs, wins, places }
}

/// An entry's place in a horse's form: date, race number, venue.
type Place = (String, i64, String);

/// A horse's runs summed, from every form entry it has.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Career {
    /// The newest entry counted.
    pub(crate) newest: Option<Place>,
    /// Entries counted, withdrawals included.
    pub(crate) entries: u32,
    /// Races it took part in.
    pub(crate) runs: u32,
    /// The newest entries, oldest first: the newest 16 or fewer, none left out between
    /// them.
    pub(crate) last: Vec<Kept>,
    /// The date of the newest race it took part in.
    pub(crate) last_ran: Option<String>,
    /// Runs, wins and places at each racecourse, over each distance, on each going.
    pub(crate) course: BTreeMap<String, Tally>,
    pub(crate) distance: BTreeMap<i64, Tally>,
    pub(crate) going: BTreeMap<String, Tally>,
    /// Wins by racecourse and distance.
    pub(crate) wins_at: Vec<(String, i64, u32)>,
}

fn place(run: &Run) -> Place {
    (run.date.clone(), run.race_number, run.venue.clone())
}

/// One of a career's newest entries, what counting it out again needs: where, the
/// distance, the going, the position and the status. A tuple, so that a career's record
/// stays short (it is read for every runner of a card and written for every runner of a
/// result).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct Kept(pub(crate) Place, i64, String, Option<i64>, Option<String>);

impl Kept {
    fn of(run: &Run) -> Kept {
        Kept(
            place(run),
            run.distance,
            run.going.clone(),
            run.position,
            run.status.clone(),
        )
    }

    /// Its figure in form figures.
    pub(crate) fn figure(&self) -> char {
        crate::horse_runs::figure(self.4.as_deref(), self.3)
    }

    /// The run it keeps, with what a career counts of it.
    pub(crate) fn run(&self) -> Run {
        let (date, race_number, venue) = self.0.clone();
        Run {
            date,
            venue,
            race_number,
            distance: self.1,
            position: self.3,
            win_odds: None,
            jockey: String::new(),
            status: self.4.clone(),
            going: self.2.clone(),
            class: None,
            trainer: String::new(),
            draw: None,
            horse_name: String::new(),
        }
    }
}

impl Career {
    /// The career of `runs`, oldest first.
    pub(crate) fn of(runs: &[Run]) -> Career {
        let mut c = Career::default();
        for run in runs {
            c.add(run);
        }
        c
    }

    /// Counts `run` out: whether the career is still exact (else it is to be worked out
    /// again from the entries).
    pub(crate) fn remove(&mut self, run: &Run) -> bool {
        let at = place(run);
        self.entries = self.entries.saturating_sub(1);
        let mut exact = true;
        if let Some(i) = self.last.iter().position(|k| k.0 == at) {
            self.last.remove(i);
            // An older entry would take its place among the newest six.
            exact &= self.last.len() as u32 >= self.entries.min(LAST as u32);
        }
        if self.newest.as_ref() == Some(&at) {
            self.newest = self.last.last().map(|k| k.0.clone());
            exact &= self.newest.is_some() || self.entries == 0;
        }
        if !run.took_part() {
            return exact;
        }
        self.runs = self.runs.saturating_sub(1);
        if self.last_ran.as_ref() == Some(&run.date) {
            // The newest taken part in, of those left: among the newest six if any is.
            self.last_ran = self
                .last
                .iter()
                .filter(|k| crate::horse_runs::took_part(k.4.as_deref()))
                .map(|k| k.0 .0.clone())
                .max();
            exact &= self.last_ran.is_some() || self.runs == 0;
        }
        for t in [
            self.course.get_mut(&run.venue),
            self.distance.get_mut(&run.distance),
            self.going.get_mut(&run.going),
        ]
        .into_iter()
        .flatten()
        {
            tally(t, run, -1);
        }
        self.course.retain(|_, t| t[0] > 0);
        self.distance.retain(|_, t| t[0] > 0);
        self.going.retain(|_, t| t[0] > 0);
        if run.won() {
            for at in self
                .wins_at
                .iter_mut()
                .filter(|(v, d, _)| *v == run.venue && *d == run.distance)
            {
                at.2 = at.2.saturating_sub(1);
            }
            self.wins_at.retain(|(.., wins)| *wins > 0);
        }
        exact
    }

    /// Counts `run` in.
    pub(crate) fn add(&mut self, run: &Run) {
        let at = place(run);
        self.entries += 1;
        if self.newest.as_ref().is_none_or(|n| *n < at) {
            self.newest = Some(at.clone());
        }
        let took_part = run.took_part();
        // The entries kept are the newest, with none left out between them: an entry
        // older than the oldest kept, where older ones are not kept either (an amended
        // or backfilled result of an old date), may be older than those too.
        let all_kept = self.last.len() as u32 + 1 >= self.entries;
        if all_kept || self.last.first().is_some_and(|oldest| oldest.0 < at) {
            self.last.push(Kept::of(run));
            self.last.sort();
            if self.last.len() > KEPT {
                self.last.remove(0);
            }
        }
        if !took_part {
            return;
        }
        self.runs += 1;
        if self.last_ran.as_ref().is_none_or(|d| *d < run.date) {
            self.last_ran = Some(run.date.clone());
        }
        tally(self.course.entry(run.venue.clone()).or_default(), run, 1);
        tally(self.distance.entry(run.distance).or_default(), run, 1);
        if !run.going.is_empty() {
            tally(self.going.entry(run.going.clone()).or_default(), run, 1);
        }
        if run.won() {
            match self
                .wins_at
                .iter_mut()
                .find(|(v, d, _)| *v == run.venue && *d == run.distance)
            {
                Some(at) => at.2 += 1,
                None => self.wins_at.push((run.venue.clone(), run.distance, 1)),
            }
            self.wins_at.sort();
        }
    }

    /// Whether every run counted is dated before `date`: then it is the career as of
    /// `date`.
    pub(crate) fn before(&self, date: &str) -> bool {
        self.newest.as_ref().is_none_or(|(d, ..)| d.as_str() < date)
    }

    /// The career as of `date`: without the runs dated on or after it, where they are
    /// among those it keeps and it stays exact without them; `None` where the entries
    /// must say.
    pub(crate) fn as_of(&self, date: &str) -> Option<Cow<'_, Career>> {
        if self.before(date) {
            return Some(Cow::Borrowed(self));
        }
        // Every entry on or after the date is kept where an older one is.
        let oldest_kept = self.last.first()?;
        if oldest_kept.0 .0.as_str() >= date && self.entries as usize > self.last.len() {
            return None;
        }
        let later: Vec<Run> = self
            .last
            .iter()
            .filter(|k| k.0 .0.as_str() >= date)
            .map(Kept::run)
            .collect();
        let mut c = self.clone();
        for run in &later {
            if !c.remove(run) {
                return None;
            }
        }
        Some(Cow::Owned(c))
    }
}
