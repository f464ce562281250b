//! Saved runs in the cache (the layer `relay analyze` wraps around the race stage, and what
//! `relay report` reads): a run's findings are stored (kind [`FINDINGS`]) under a key of
//! everything its analysis depended on (the summaries cache's program key and the entry
//! options), so `relay analyze` with nothing changed reuses them instead of pairing accesses
//! again. The latest run is named by an entry (kind [`KIND`]) with one fixed key for every relay
//! build, so a run saved by another build is found and named in the error instead of looking
//! like no run at all: its payload is a [`Header`] (which build wrote it, and the run's key).

use std::path::Path;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use super::store::{build_id, decode, encode};
use super::{Key, KeyBuilder, Store};
use crate::race::memo::PairMemo;
use crate::race::saved::{RunInfo, SavedRun};

/// The cache entry kind of the latest saved run (a fixed key; it names a [`FINDINGS`] entry).
pub const KIND: &str = "run";
/// The cache entry kind of saved runs, keyed by what their analysis depended on.
pub const FINDINGS: &str = "findings";
/// The cache entry kind naming, per key of what findings depend on but where lines are, the
/// findings saved last under it (a [`FINDINGS`] key): found by a run whose lines moved.
pub const LATEST_AT: &str = "findings-latest";

/// The cache entry kind of the pair stage's results by bucket ([`PairMemo`]): the latest run's,
/// one per setting of the options that change the pair stage.
pub const PAIRS: &str = "pairs";

/// The options a pair memo is kept under: a run with other ones keeps its own. Everything
/// else the buckets' races depend on is in the memo's own context digest, checked before
/// anything is reused.
#[derive(Clone, Copy)]
pub struct PairOptions {
    pub per_access: bool,
    pub type_alias: bool,
    /// The inclusion-based objects (`--inclusion`).
    pub inclusion: bool,
}

impl PairOptions {
    fn key(self) -> Key {
        KeyBuilder::new(PAIRS)
            .u64(u64::from(self.per_access))
            .u64(u64::from(self.type_alias))
            .u64(u64::from(self.inclusion))
            .finish()
    }
}

/// The pair memo the latest run with these options kept; an empty one if there is none (or it
/// does not decode: reported, and missed).
pub fn pair_memo(store: &Store, options: PairOptions) -> PairMemo {
    store.get_value(PAIRS, &options.key()).unwrap_or_default()
}

/// Keeps `memo` for the next run with these options.
pub fn save_pair_memo(store: &Store, options: PairOptions, memo: &PairMemo) -> Result<()> {
    store.put_value(PAIRS, &options.key(), memo)
}

/// The key of the findings saved last under `unplaced` (see [`LATEST_AT`]).
pub fn latest_at(store: &Store, unplaced: &Key) -> Option<Key> {
    store.get_value::<[u8; 32]>(LATEST_AT, unplaced).map(Key)
}

/// Records `key` as the findings saved last under `unplaced`.
pub fn set_latest_at(store: &Store, unplaced: &Key, key: &Key) -> Result<()> {
    store.put_value(LATEST_AT, unplaced, &key.0)
}

/// The latest-run entry: which relay wrote it, and the key of the run (kind [`FINDINGS`]).
#[derive(Serialize, Deserialize)]
struct Header {
    relay_version: String,
    /// [`build_id`] of the relay that wrote it.
    build: [u8; 32],
    run: [u8; 32],
    info: RunInfo,
    times: Vec<(String, f64)>,
}

impl SavedRun {
    /// Keeps the run in `store` under `key` (what the analysis it came from depends on, see
    /// [`SavedRun::find`]) and makes it the latest saved run.
    pub fn save(&self, store: &Store, key: &Key) -> Result<()> {
        store.put_value(FINDINGS, key, self)?;
        self.set_latest(store, key)
    }

    /// Makes this run, stored under `key`, the latest saved run (replacing the previous one).
    /// Its `info` and `times` (which differ between runs reusing the same findings) are kept
    /// with the pointer.
    pub fn set_latest(&self, store: &Store, key: &Key) -> Result<()> {
        let payload = encode(&Header {
            relay_version: env!("CARGO_PKG_VERSION").into(),
            build: build_id(),
            run: key.0,
            info: self.info.clone(),
            times: self.times.clone(),
        })?;
        store.put(KIND, &entry_key(), &payload)
    }

    /// The run stored under `key` by an earlier analysis with the same inputs, if any (a corrupt
    /// entry is reported and missed).
    pub fn find(store: &Store, key: &Key) -> Option<SavedRun> {
        store.get_value(FINDINGS, key)
    }

    /// The run last saved in the cache directory `dir`. Errors name the directory and say
    /// what to do: no cache or no saved run, a corrupt entry, a run of another relay build.
    pub fn load(dir: &Path) -> Result<SavedRun> {
        let missing = || {
            format!(
                "no saved analysis in {}: run `relay analyze` first",
                dir.display()
            )
        };
        if !dir.is_dir() {
            bail!(missing());
        }
        let store = Store::open(dir)?;
        let corrupt = |why: &dyn std::fmt::Display| {
            format!(
                "the saved analysis in {} is corrupt ({why}): run `relay analyze` again",
                dir.display()
            )
        };
        let payload = match store.read(KIND, &entry_key()) {
            Ok(Some(p)) => p,
            Ok(None) => bail!(missing()),
            Err(c) => bail!(corrupt(&c)),
        };
        let header: Header = match decode(&payload) {
            Ok(h) => h,
            Err(e) => bail!(corrupt(&e)),
        };
        if header.build != build_id() {
            let this = env!("CARGO_PKG_VERSION");
            let which = if header.relay_version == this {
                format!("another build of relay {this}")
            } else {
                format!("relay {} (this is relay {this})", header.relay_version)
            };
            bail!(
                "the saved analysis in {} was made by {which}: run `relay analyze` again",
                dir.display()
            );
        }
        let mut run: SavedRun = match store.read(FINDINGS, &Key(header.run)) {
            Ok(Some(p)) => decode(&p).or_else(|e| bail!(corrupt(&e)))?,
            Ok(None) => bail!(missing()),
            Err(c) => bail!(corrupt(&c)),
        };
        run.info = header.info;
        run.times = header.times;
        Ok(run)
    }
}

/// The key of the latest saved run: the same for every relay version and build.
fn entry_key() -> Key {
    KeyBuilder::with_versions(KIND, "", b"")
        .str("latest")
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::race::saved::tests::run;

    #[test]
    fn save_and_load() {
        let dir = tempfile::tempdir().unwrap();
        let missing = SavedRun::load(&dir.path().join("none")).unwrap_err();
        assert!(format!("{missing:#}").contains("no saved analysis in"));
        let store = Store::open(dir.path()).unwrap();
        let err = SavedRun::load(dir.path()).unwrap_err();
        assert!(format!("{err:#}").contains("run `relay analyze` first"));
        let key = KeyBuilder::new("test").finish();
        run().save(&store, &key).unwrap();
        assert_eq!(SavedRun::load(dir.path()).unwrap(), run());
        assert_eq!(SavedRun::find(&store, &key), Some(run()));
    }

    #[test]
    fn a_run_of_another_relay_is_named_not_decoded() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let write = |version: &str, build: [u8; 32]| {
            let payload = encode(&Header {
                relay_version: version.into(),
                build,
                run: [0; 32],
                info: RunInfo::default(),
                times: Vec::new(),
            })
            .unwrap();
            store.put(KIND, &entry_key(), &payload).unwrap();
            store
                .put(
                    FINDINGS,
                    &Key([0; 32]),
                    b"a layout this relay does not know",
                )
                .unwrap();
            format!("{:#}", SavedRun::load(dir.path()).unwrap_err())
        };
        let err = write("0.0.1", [7; 32]);
        assert!(err.contains("made by relay 0.0.1 (this is relay"), "{err}");
        let err = write(env!("CARGO_PKG_VERSION"), [7; 32]);
        assert!(err.contains("made by another build of relay"), "{err}");
        let err = write(env!("CARGO_PKG_VERSION"), build_id());
        assert!(err.contains("is corrupt"), "{err}");
    }
}
