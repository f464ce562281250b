//! The SCCs' entries of the latest run, packed: one entry of kind `summary-meta-pack` per
//! analysis context holds every SCC's [`StoredScc`] by the SCC's key.
//!
//! A re-run keys every SCC of the program and reads its entry (kind `summary-meta`) to reuse
//! it — on the kernel defconfig 102,530 files of ~300 bytes, opened, checked and decoded one by
//! one, twice when the saved findings are looked for first. The pack is read once instead (30
//! MB); an SCC it lacks is read from its own entry, as before. A lookup is by the SCC's key, so
//! a pack of an older program answers only for what did not change. The run writes the pack
//! again when anything in it changed: an SCC analysed, read from its own entry, or lost.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use rustc_hash::{FxHashMap, FxHashSet};

use super::{StoredScc, META};
use crate::cache::{gc, Key, KeyBuilder, Store};

pub(crate) const PACK: &str = "summary-meta-pack";
/// The packs the contexts had before their latest: kept only as roots of the collection
/// ([`crate::cache::gc`]), so that an edit of a text analysed a few runs ago finds its
/// summaries (each keyed by its context and when it was replaced, [`history_key`]).
pub(crate) const PREVIOUS: &str = "summary-meta-pack-previous";

/// Packs kept before the latest: the most recently replaced, whatever their context (a run in
/// one context mostly follows others in the same).
const HISTORY: usize = 7;

/// Packs of this many contexts are kept (the most recently written).
const KEEP_PACKS: usize = 4;

/// An SCC's entry.
pub(super) type SccEntry = Arc<StoredScc>;

/// The SCCs' entries of one run (see the module documentation).
pub(super) struct Metas {
    /// The pack of the context, read on first use.
    packed: OnceLock<FxHashMap<Key, SccEntry>>,
    /// Per SCC (by index): its key and entry, once this run keyed it (the latest: an SCC
    /// found stored may still be analysed, when a summary it names is missing).
    this_run: Vec<Mutex<Option<(Key, SccEntry)>>>,
    /// Per SCC: a summary of it was lost (its entry is left out of the pack).
    lost: Vec<AtomicBool>,
    /// The pack differs from this run's entries.
    changed: AtomicBool,
}

impl Metas {
    pub(super) fn new(sccs: usize) -> Metas {
        Metas {
            packed: OnceLock::new(),
            this_run: (0..sccs).map(|_| Mutex::new(None)).collect(),
            lost: (0..sccs).map(|_| AtomicBool::new(false)).collect(),
            changed: AtomicBool::new(false),
        }
    }

    /// The entry of the SCC keyed `key`: from the pack, else from its own entry.
    pub(super) fn get(&self, store: &Store, context: &Key, key: &Key) -> Option<SccEntry> {
        let packed = self.packed.get_or_init(|| read_pack(store, context));
        if let Some(entry) = packed.get(key) {
            return Some(entry.clone());
        }
        let entry: StoredScc = store.get_value(META, key)?;
        self.changed.store(true, Ordering::Relaxed);
        Some(Arc::new(entry))
    }

    /// Records the entry of SCC `scc` (keyed `key`) for the pack; `analysed`: computed by this
    /// run (not read).
    pub(super) fn record(&self, scc: usize, key: Key, entry: SccEntry, analysed: bool) {
        if let Some(slot) = self.this_run.get(scc) {
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some((key, entry));
        }
        if analysed {
            self.changed.store(true, Ordering::Relaxed);
        }
    }

    /// A summary of SCC `scc` could not be loaded: its entry is not packed again.
    pub(super) fn lose(&self, scc: usize) {
        if let Some(lost) = self.lost.get(scc) {
            lost.store(true, Ordering::Relaxed);
        }
        self.changed.store(true, Ordering::Relaxed);
    }

    /// Writes this run's entries as the context's pack, if they differ from the pack read.
    pub(super) fn save(&self, store: &Store, context: &Key) {
        if !self.changed.load(Ordering::Relaxed) {
            return;
        }
        let mut recorded: Vec<(Key, SccEntry)> = (self.this_run.iter().zip(&self.lost))
            .filter(|(_, lost)| !lost.load(Ordering::Relaxed))
            .filter_map(|(slot, _)| slot.lock().unwrap_or_else(|e| e.into_inner()).clone())
            .collect();
        recorded.sort_unstable_by_key(|(key, _)| key.0);
        let entries: Vec<(&[u8; 32], &StoredScc)> = recorded
            .iter()
            .map(|(key, entry)| (&key.0, &**entry))
            .collect();
        let pack: gc::Root<_> = (crate::cache::store::build_id(), entries);
        let key = pack_key(context);
        store.warn_unwritten(store.rekey((PACK, &key), (PREVIOUS, &history_key(context))));
        if store.put_value_or_warn(PACK, &key, &pack) {
            store.prune(PACK, KEEP_PACKS);
            store.prune(PREVIOUS, HISTORY);
        }
    }
}

fn pack_key(context: &Key) -> Key {
    KeyBuilder::new(PACK).key(context).finish()
}

/// A key for the context's pack as it is replaced now: unique (the time and the process).
fn history_key(context: &Key) -> Key {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    KeyBuilder::new(PREVIOUS)
        .key(context)
        .u64(now.as_nanos() as u64)
        .u64(std::process::id().into())
        .finish()
}

/// The context's pack (empty if there is none, or it does not decode).
fn read_pack(store: &Store, context: &Key) -> FxHashMap<Key, SccEntry> {
    let (_, entries): gc::Root<Vec<([u8; 32], StoredScc)>> = store
        .get_value(PACK, &pack_key(context))
        .unwrap_or_default();
    entries
        .into_iter()
        .map(|(key, entry)| (Key(key), Arc::new(entry)))
        .collect()
}

/// What the packs kept name — each kept context's latest run and the seven runs before
/// ([`crate::cache::gc`]'s roots):
/// the SCCs' entries and the summaries these refer to, by key. `None` if a pack cannot be
/// read or decoded: what it names is then unknown.
pub(crate) fn packed_keys(store: &Store, done: &mut gc::Collected) -> Option<PackedKeys> {
    let mut keys = PackedKeys::default();
    for kind in [PACK, PREVIOUS] {
        gc::read_roots(store, kind, done, |entries: Vec<([u8; 32], StoredScc)>| {
            for (scc, entry) in entries {
                keys.sccs.insert(scc);
                keys.summaries
                    .extend(entry.functions.iter().map(|f| f.content));
            }
        })?;
    }
    Some(keys)
}

/// See [`packed_keys`].
#[derive(Default)]
pub(crate) struct PackedKeys {
    /// Keys of `summary-meta` entries.
    pub sccs: FxHashSet<[u8; 32]>,
    /// Keys of `summary` entries.
    pub summaries: FxHashSet<[u8; 32]>,
}
