//! A runner's lengths behind as the documents give them.

use racing_events::Lbw;

/// `lbw_lengths` of a runner: present exactly when `lbw` is, `null` inside where `lbw` is
/// no number of lengths.
pub(crate) fn lbw_lengths(lbw: Option<&str>) -> Option<Option<f64>> {
    lbw.map(|l| Lbw::parse(l).and_then(|l| l.lengths()))
}
