//! Collecting the entries no recent run can use.
//!
//! Entries are never updated in place: an edit makes new keys, and the entries of the text
//! before it stay. Without collection the cache grows with every edit (SQLite's, ~300 MB of
//! summaries of its largest recursive SCC per edit reaching it) and every rebuild of relay
//! (whose keys all differ). Collection removes the entries of the kinds that make up most of
//! it — units (`tu`, `tu-copies`) and summaries (`summary`, `summary-meta`) — that nothing
//! kept names:
//!
//! - a *unit list* (kind `unit-list`) names the units of one run of the front end; the
//!   [`KEEP_UNIT_LISTS`] most recently written are kept (a run rewrites its list, so this is
//!   the units of the latest few distinct sets of inputs);
//! - a *pack* of SCC entries (kind `summary-meta-pack`, the latest run of each of the four
//!   latest analysis contexts, [`super::summaries`]) names the SCCs' entries of that run and
//!   the summaries they refer to; so do the seven packs replaced most recently
//!   (`summary-meta-pack-previous`).
//!
//! That is what a re-run of any of the eight latest runs of a context reads: an edit taken
//! back, or another edit of a text analysed a few runs ago, reuses the summaries of that
//! text. Going back further re-analyses what the edits since re-analysed. The other kinds are
//! small or bounded already: findings and packs are pruned to the latest few, a collapsed
//! SCC's steps are compacted in place.
//!
//! Roots written by another build of relay (a rebuilt or upgraded relay: every key differs)
//! name nothing this build can read: they are removed, and what only they named with them.
//!
//! When: after a run that wrote entries, once the bytes written since the last collection
//! exceed half of what that collection kept (so the cache stays within about 1.5 times what
//! the kept runs use), and on `relay cache gc`. A collection reads the roots and walks the
//! swept kinds' directories: milliseconds on SQLite, about a second on the kernel defconfig.
//! An entry written after this process opened the cache is never removed, so a run sharing the
//! cache with this one keeps what it is writing; a run that began earlier and is still going
//! may find a summary it stored gone, which it treats as a lost summary (analysed again).
//! A root that cannot be read stops the collection: nothing is removed.

use std::time::SystemTime;

use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};

use super::store::{self, build_id};
use super::{summaries, tu, Corruption, Key, KeyBuilder, Store};

/// Kind of the entries naming the units of one run.
pub const UNIT_LISTS: &str = "unit-list";
/// Unit lists kept (the most recently written).
pub const KEEP_UNIT_LISTS: usize = 4;
/// Kind of the one entry holding [`State`].
const STATE: &str = "gc-state";

/// What a collection did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Collected {
    /// Entries (and their bytes) removed.
    pub removed: u64,
    pub removed_bytes: u64,
    /// Entries (and their bytes) of the swept kinds kept.
    pub kept: u64,
    pub kept_bytes: u64,
}

/// Bytes written since the last collection, and what it kept.
#[derive(Default, Serialize, Deserialize)]
struct State {
    written: u64,
    kept_bytes: u64,
}

/// A root's payload: this build's id ([`store::build_id`]), then what it names; a collection
/// reads no further into a root of another build.
pub(crate) type Root<T> = ([u8; 32], T);

/// Records the units of a run of the front end (their keys, [`tu::unit_key`]) as a root.
pub fn record_units(store: &Store, units: &[Key]) {
    let mut key = KeyBuilder::new(UNIT_LISTS);
    key.u64(units.len() as u64);
    for u in units {
        key.key(u);
    }
    let list: Root<Vec<[u8; 32]>> = (build_id(), units.iter().map(|k| k.0).collect());
    if store.put_value_or_warn(UNIT_LISTS, &key.finish(), &list) {
        store.prune(UNIT_LISTS, KEEP_UNIT_LISTS);
    }
}

/// What the roots of `kind` written by this build name (`names` of each decoded root),
/// removing those of other builds (counted in `done`); `None` if one cannot be read or decoded.
pub(crate) fn read_roots<T: serde::de::DeserializeOwned>(
    store: &Store,
    kind: &str,
    done: &mut Collected,
    mut names: impl FnMut(T),
) -> Option<()> {
    let this = build_id();
    for root in store.entries(kind) {
        let Some(key) = root.key else { continue };
        let ours = match store.read(kind, &key) {
            Ok(Some(payload)) if payload.get(..32) == Some(&this[..]) => Some(payload),
            // Another build's, or written with another format of the cache (by another build).
            Ok(Some(_)) | Err(Corruption::Version { .. }) => None,
            // Removed since the walk (pruned by another run): names nothing any more.
            Ok(None) => continue,
            Err(_) => return None,
        };
        let Some(payload) = ours else {
            if std::fs::remove_file(&root.path).is_ok() {
                done.removed += 1;
                done.removed_bytes += root.bytes;
            }
            continue;
        };
        let (_, named): Root<T> = store::decode(&payload).ok()?;
        names(named);
    }
    Some(())
}

/// After a run: collects if the bytes written since the last collection call for it (see the
/// module documentation). `None` when it did not collect (or could not).
pub fn after_run(store: &Store) -> Option<Collected> {
    let written = store.bytes_written();
    if written == 0 {
        return None;
    }
    let key = state_key();
    // No state yet (a new cache, or one from before collection): collect once.
    let state: Option<State> = store.get_value(STATE, &key);
    if let Some(mut state) = state.filter(|s| s.written + written <= s.kept_bytes / 2) {
        state.written += written;
        store.put_value_or_warn(STATE, &key, &state);
        return None;
    }
    collect(store, store.opened())
}

/// Removes the entries of the swept kinds that no root names and that were written before
/// `before`; `None` (nothing removed) if a root could not be read.
pub fn collect(store: &Store, before: SystemTime) -> Option<Collected> {
    let mut done = Collected::default();
    let mut units = FxHashSet::default();
    read_roots(store, UNIT_LISTS, &mut done, |list: Vec<[u8; 32]>| {
        units.extend(list)
    })?;
    let packed = summaries::packed_keys(store, &mut done)?;
    for (kind, live) in [
        (tu::KIND, &units),
        (tu::COPIES_KIND, &units),
        (summaries::KIND, &packed.summaries),
        (summaries::META, &packed.sccs),
    ] {
        sweep(store, kind, live, before, &mut done);
    }
    let state = State {
        written: 0,
        kept_bytes: done.kept_bytes,
    };
    store.put_value_or_warn(STATE, &state_key(), &state);
    Some(done)
}

fn state_key() -> Key {
    KeyBuilder::new(STATE).finish()
}

fn sweep(
    store: &Store,
    kind: &str,
    live: &FxHashSet<[u8; 32]>,
    before: SystemTime,
    done: &mut Collected,
) {
    for entry in store.entries(kind) {
        let named = entry.key.is_some_and(|k| live.contains(&k.0));
        if !named && entry.modified < before && std::fs::remove_file(&entry.path).is_ok() {
            done.removed += 1;
            done.removed_bytes += entry.bytes;
        } else {
            done.kept += 1;
            done.kept_bytes += entry.bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    fn unit(s: &str) -> Key {
        KeyBuilder::new("test unit").str(s).finish()
    }

    /// A cache holding units `a`, `b`, `c`, a list of this build naming `a` and one of another
    /// build naming `b`.
    fn units_and_lists() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        for u in ["a", "b", "c"] {
            store.put(tu::KIND, &unit(u), b"unit").unwrap();
            store.put(tu::COPIES_KIND, &unit(u), b"copies").unwrap();
        }
        record_units(&store, &[unit("a")]);
        let foreign: Root<Vec<[u8; 32]>> = ([7; 32], vec![unit("b").0]);
        let foreign_key = KeyBuilder::new("another build's list").finish();
        store.put_value(UNIT_LISTS, &foreign_key, &foreign).unwrap();
        (dir, store)
    }

    fn present(store: &Store, kind: &str, u: &str) -> bool {
        store.entry_path(kind, &unit(u)).exists()
    }

    #[test]
    fn what_no_root_of_this_build_names_is_removed() {
        let (_dir, store) = units_and_lists();
        let later = SystemTime::now() + Duration::from_secs(1);
        let done = collect(&store, later).unwrap();
        for kind in [tu::KIND, tu::COPIES_KIND] {
            assert!(present(&store, kind, "a"));
            assert!(
                !present(&store, kind, "b"),
                "named only by another build's list"
            );
            assert!(!present(&store, kind, "c"));
        }
        // b and c twice (unit and copies), and the other build's list.
        assert_eq!(done.removed, 5);
        assert_eq!((done.kept, store.entries(UNIT_LISTS).len()), (2, 1));
        // Nothing more to remove.
        assert_eq!(collect(&store, later).unwrap().removed, 0);
    }

    #[test]
    fn entries_written_after_the_start_are_kept() {
        let (_dir, store) = units_and_lists();
        let long_ago = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let done = collect(&store, long_ago).unwrap();
        // Only the other build's list goes: roots are not dated.
        assert_eq!(done.removed, 1);
        assert!(present(&store, tu::KIND, "c"));
    }

    #[test]
    fn a_root_that_cannot_be_decoded_stops_the_collection() {
        let (_dir, store) = units_and_lists();
        let mut broken = build_id().to_vec();
        broken.extend([0xff; 3]);
        let key = KeyBuilder::new("broken list").finish();
        store.put(UNIT_LISTS, &key, &broken).unwrap();
        let later = SystemTime::now() + Duration::from_secs(1);
        assert_eq!(collect(&store, later), None);
        assert!(present(&store, tu::KIND, "c"));
    }

    #[test]
    fn a_run_collects_once_the_runs_since_wrote_half_of_what_was_kept() {
        let (dir, store) = units_and_lists();
        // No state yet: the first run that writes collects (what it wrote is kept).
        let kept = after_run(&store).unwrap().kept_bytes;
        let mut written = 0;
        for run in 0.. {
            let store = Store::open(dir.path()).unwrap();
            store
                .put("other", &unit(&run.to_string()), &[0; 64])
                .unwrap();
            written += store.bytes_written();
            match after_run(&store) {
                None => assert!(written <= kept / 2),
                Some(_) => {
                    assert!(written > kept / 2);
                    break;
                }
            }
        }
    }
}
