//! The filter in front of the applied ids' runs: Bloom filters in layers ("scalable"), each
//! new one twice the size of the one before, so that however many ids a store holds, all
//! but about [`TARGET_FALSE_POSITIVES`] of new ids are ruled out without a disk read.
//!
//! One filter of a fixed size climbs with its ids: 32 MiB let through about 11% of new ids
//! at 50 M ids and 58% at 100 M, each a look-up in every run. Here, once the newest layer
//! holds as many ids as keep it within its share of the target, a new layer takes the
//! next ids; layer `i`'s share is half of layer `i - 1`'s, so the shares add up to less
//! than the target. An id is in the filter if any layer holds it. The layers stop growing
//! at the most bytes the store is given; past that the newest fills up, and
//! [`Filter::false_positive_rate`] says how far.

use fastbloom::BloomFilter;

/// Hash functions of each layer: near the best for the first layer (11 bits an id at its
/// 0.5%). The layers after it (13 to 16 bits an id) would need up to 6% fewer bits with 9
/// to 11; one count for all keeps one format.
pub(super) const HASHES: u32 = 7;

/// How a saved filter's bits were made. A filter saved in another format (another
/// `fastbloom` release, another hash) is not loaded: it is built again from the runs.
/// `saved_filter_format_is_stable` fails when the bits of a filter change. Every layer
/// uses the same hash: a false positive in one layer and in another are then more often
/// the same id, which makes their sum a looser bound, never a wrong one.
pub(super) const FILTER_FORMAT: &str = "fastbloom 0.17, xxh3-64 of the big-endian id";

/// The share of new ids that all layers together let through, at most, while they may
/// grow: the first layer's share is half of it, each next layer's half of the one before.
pub(super) const TARGET_FALSE_POSITIVES: f64 = 0.01;

/// The filter's hash of an id: one stable 64-bit hash, from which `fastbloom` derives the
/// bits to set.
pub(super) fn hash(id: u128) -> u64 {
    xxhash_rust::xxh3::xxh3_64(&id.to_be_bytes())
}

/// The layers, oldest first; ids go into the newest.
pub(super) struct Filter {
    layers: Vec<Layer>,
    /// Most 64-bit words all the layers may take.
    most_words: usize,
}

struct Layer {
    bits: BloomFilter,
    /// Ids inserted; for a layer loaded as saved, estimated from the bits it has set.
    ids: u64,
    /// Ids it takes before it lets through more than its share of new ids.
    capacity: u64,
}

impl Layer {
    fn new(bits: BloomFilter, index: usize) -> Layer {
        let share =
            TARGET_FALSE_POSITIVES / f64::powi(2.0, i32::try_from(index + 1).unwrap_or(i32::MAX));
        let k = f64::from(bits.num_hashes());
        let m = bits.num_bits() as f64;
        // A classic Bloom filter of m bits and k hashes lets through (fill)^k of new ids,
        // its fill 1 - e^(-kn/m) after n ids: solved for n at the share.
        let capacity = -(m / k) * (1.0 - share.powf(1.0 / k)).ln();
        Layer {
            bits,
            ids: 0,
            capacity: capacity as u64,
        }
    }

    /// The share of its bits set, estimated from its ids.
    fn fill(&self) -> f64 {
        let (k, m) = (
            f64::from(self.bits.num_hashes()),
            self.bits.num_bits() as f64,
        );
        1.0 - (-k * self.ids as f64 / m).exp()
    }

    /// The share of new ids it lets through, estimated.
    fn false_positive_rate(&self) -> f64 {
        self.fill()
            .powi(i32::try_from(self.bits.num_hashes()).unwrap_or(i32::MAX))
    }
}

impl Filter {
    /// An empty filter: one layer of `first_bytes`, growing up to `most_bytes` in all.
    pub(super) fn new(first_bytes: usize, most_bytes: usize) -> Filter {
        let first = (first_bytes / 8).max(1);
        Filter {
            layers: vec![Layer::new(
                BloomFilter::with_num_bits(first * 64).hashes(HASHES),
                0,
            )],
            most_words: (most_bytes / 8).max(first),
        }
    }

    /// A filter of saved layers: `words` is theirs one after the other, `layers` the words
    /// of each. Each layer's ids are estimated from its bits (`n = -(m/k) ln(1 - set/m)`).
    pub(super) fn from_saved(
        mut words: Vec<u64>,
        layers: &[u64],
        hashes: u32,
        most_bytes: usize,
    ) -> Option<Filter> {
        if layers.is_empty() || layers.iter().sum::<u64>() != words.len() as u64 {
            return None;
        }
        let mut built = Vec::with_capacity(layers.len());
        for (index, &n) in layers.iter().enumerate().rev() {
            let at = words.len().checked_sub(usize::try_from(n).ok()?)?;
            let bits = words.split_off(at);
            if bits.is_empty() {
                return None;
            }
            let set: u64 = bits.iter().map(|w| u64::from(w.count_ones())).sum();
            let mut layer = Layer::new(BloomFilter::from_vec(bits).hashes(hashes), index);
            let (k, m) = (f64::from(hashes), layer.bits.num_bits() as f64);
            layer.ids = (-(m / k) * (1.0 - set as f64 / m).ln()) as u64;
            built.push(layer);
        }
        built.reverse();
        let first = usize::try_from(layers[0]).ok()?;
        Some(Filter {
            layers: built,
            most_words: (most_bytes / 8).max(first),
        })
    }

    /// Whether some layer may hold `id`.
    pub(super) fn contains(&self, id: u128) -> bool {
        let h = hash(id);
        self.layers.iter().any(|l| l.bits.contains_hash(h))
    }

    /// Adds `id` to the newest layer, and begins a new one once that is at its capacity
    /// (if the most bytes allow one of at least the first layer's size).
    pub(super) fn insert(&mut self, id: u128) {
        let Some(newest) = self.layers.last_mut() else {
            return;
        };
        newest.bits.insert_hash(hash(id));
        newest.ids += 1;
        if newest.ids < newest.capacity {
            return;
        }
        if let Some(words) = self.next_layer_words() {
            let bits = BloomFilter::with_num_bits(words * 64).hashes(HASHES);
            self.layers.push(Layer::new(bits, self.layers.len()));
        }
    }

    /// The words of a new layer, if the most bytes leave room for one: twice the newest,
    /// or what is left, if that is at least the first layer's size.
    fn next_layer_words(&self) -> Option<usize> {
        let newest = self.layers.last()?.bits.as_slice().len();
        let next = (2 * newest).min(self.most_words.saturating_sub(self.words()));
        (next >= self.first_words()).then_some(next)
    }

    fn first_words(&self) -> usize {
        self.layers.first().map_or(0, |l| l.bits.as_slice().len())
    }

    /// 64-bit words of all the layers.
    pub(super) fn words(&self) -> usize {
        self.layers.iter().map(|l| l.bits.as_slice().len()).sum()
    }

    /// The 64-bit words of each layer, oldest first.
    pub(super) fn layer_words(&self) -> Vec<u64> {
        self.layers
            .iter()
            .map(|l| l.bits.as_slice().len() as u64)
            .collect()
    }

    /// Hash functions of the layers.
    pub(super) fn hashes(&self) -> u32 {
        self.layers.first().map_or(HASHES, |l| l.bits.num_hashes())
    }

    /// Up to `most` words of the first `layers` layers, one after the other, from word
    /// `from`: a chunk of a save.
    pub(super) fn chunk(&self, layers: usize, from: usize, most: usize) -> Vec<u64> {
        let mut out = Vec::with_capacity(most);
        let mut skip = from;
        for layer in self.layers.iter().take(layers) {
            let words = layer.bits.as_slice();
            if skip >= words.len() {
                skip -= words.len();
                continue;
            }
            let take = (most - out.len()).min(words.len() - skip);
            out.extend_from_slice(words.get(skip..skip + take).unwrap_or_default());
            skip = 0;
            if out.len() == most {
                break;
            }
        }
        out
    }

    /// Layers.
    pub(super) fn layers(&self) -> usize {
        self.layers.len()
    }

    /// The share of the newest layer's bits set, estimated.
    pub(super) fn fill(&self) -> f64 {
        self.layers.last().map_or(0.0, Layer::fill)
    }

    /// The share of new ids that some layer lets through, estimated.
    pub(super) fn false_positive_rate(&self) -> f64 {
        1.0 - self
            .layers
            .iter()
            .map(|l| 1.0 - l.false_positive_rate())
            .product::<f64>()
    }

    /// Whether the newest layer is past its capacity with no room for another: the share
    /// of new ids let through grows from here with every id.
    pub(super) fn capped(&self) -> bool {
        self.layers.last().is_some_and(|l| l.ids >= l.capacity) && self.next_layer_words().is_none()
    }
}
