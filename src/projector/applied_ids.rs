//! The filter of applied event ids as the projector sees it after each batch: exported as
//! metrics (`racing_applied_ids_*`), and a warning in the log when it may grow no more and
//! lets through more new ids than its target, again at each doubling of that share.

use std::sync::atomic::Ordering;

use racing_projections::{AppliedIdStats, BatchStats};

use super::Projector;

impl Projector {
    /// Exports how the filter of applied ids stands (`racing_applied_ids_*`), and warns
    /// when it may grow no more and lets through more new ids than its target, again at
    /// each doubling of that share: each of them costs a look-up in every run of ids on
    /// disk, which slows the projector (`RACING_ID_FILTER_MAX_MIB` gives it more room).
    pub(super) fn note_applied_ids(&self, batch: &BatchStats) -> anyhow::Result<()> {
        metrics::counter!("racing_applied_ids_run_lookups_total").increment(batch.id_run_lookups);
        metrics::counter!("racing_applied_ids_false_positives_total")
            .increment(batch.id_false_positives);
        let ids = self.parts.read_models.load().applied_id_stats()?;
        metrics::gauge!("racing_applied_ids_filter_layers").set(ids.filter_layers as f64);
        metrics::gauge!("racing_applied_ids_filter_bytes").set(ids.filter_bytes as f64);
        metrics::gauge!("racing_applied_ids_filter_fill_ratio").set(ids.filter_fill);
        metrics::gauge!("racing_applied_ids_filter_false_positive_rate")
            .set(ids.filter_false_positive_rate);
        let level = filter_warning_level(ids.filter_capped, ids.filter_false_positive_rate);
        if self.filter_warned.swap(level, Ordering::Relaxed) < level {
            tracing::warn!(
                ids = ids.ids,
                filter_mib = ids.filter_bytes >> 20,
                false_positive_rate = ids.filter_false_positive_rate,
                "the filter of applied event ids is at its most memory and full: a growing \
                 share of new events needs a disk look-up in every run of ids; raise \
                 RACING_ID_FILTER_MAX_MIB"
            );
        }
        Ok(())
    }
}

/// How far the filter of applied ids is past its target, for its warnings: 0 while it may
/// grow or is within its target; once it may not, 1 up to twice the target, 2 up to four
/// times, and so on.
fn filter_warning_level(capped: bool, false_positive_rate: f64) -> u32 {
    if !capped {
        return 0;
    }
    let times = false_positive_rate / AppliedIdStats::FILTER_TARGET;
    1 + times.log2().max(0.0) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_warns_once_it_may_not_grow_and_again_at_each_doubling() {
        let target = AppliedIdStats::FILTER_TARGET;
        assert_eq!(filter_warning_level(false, 0.9), 0, "it may grow");
        assert_eq!(filter_warning_level(true, target * 0.9), 1);
        assert_eq!(filter_warning_level(true, target * 1.9), 1);
        assert_eq!(filter_warning_level(true, target * 2.1), 2);
        assert_eq!(filter_warning_level(true, target * 4.1), 3);
        assert_eq!(filter_warning_level(true, 1.0), 7);
    }
}
