//! The `file-status` kind: which preprocessed inputs are unchanged since their unit key was
//! computed, told by their file status instead of by hashing their text again.
//!
//! A re-run must find the few units that changed among all the inputs. Hashing every
//! preprocessed file to find them read 6.5 GB on the kernel defconfig (~2.5 s, nearly all of a
//! run where nothing changed). So each run records, per input file, the status it had when it
//! was hashed — size, modification and change times, inode and device — with the unit key the
//! text gave; a later run whose file has that very status takes the recorded key.
//!
//! The assumption is the one git's index and make rely on: writing a file gives it a new
//! change time (`ctime`, which no program can set back, unlike the modification time that
//! `touch -r` or `cp -p` restore). A change within the clock tick of the read that recorded
//! the status would keep that status, so a status is recorded only when both times are at
//! least [`SETTLED`] before the read started (git's "racily clean" entries are hashed again
//! for the same reason). `--rehash-inputs` hashes every input whatever its status.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::{Key, KeyBuilder, Store};

pub const KIND: &str = "file-status";

/// How long before a read a file must have last changed for its status to be recorded.
pub const SETTLED: Duration = Duration::from_secs(2);

/// What a file's status says of its content: equal statuses, equal content (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStatus {
    size: u64,
    /// Modification and change times, in nanoseconds since the Unix epoch.
    modified: i128,
    changed: i128,
    inode: u64,
    device: u64,
}

impl FileStatus {
    /// The status of the file at `path`; `None` if it cannot be read, or on a system without
    /// change times.
    pub fn of(path: &Path) -> Option<FileStatus> {
        let meta = std::fs::metadata(path).ok()?;
        Self::from_metadata(&meta)
    }

    #[cfg(unix)]
    fn from_metadata(meta: &std::fs::Metadata) -> Option<FileStatus> {
        use std::os::unix::fs::MetadataExt;
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        Some(FileStatus {
            size: meta.size(),
            modified: ns(meta.mtime(), meta.mtime_nsec()),
            changed: ns(meta.ctime(), meta.ctime_nsec()),
            inode: meta.ino(),
            device: meta.dev(),
        })
    }

    #[cfg(not(unix))]
    fn from_metadata(_: &std::fs::Metadata) -> Option<FileStatus> {
        None
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// Last changed at least [`SETTLED`] before `read_at` (module docs).
    fn settled_before(&self, read_at: SystemTime) -> bool {
        let Ok(at) = read_at.duration_since(UNIX_EPOCH) else {
            return false;
        };
        let last = self.modified.max(self.changed);
        last <= at.as_nanos() as i128 - SETTLED.as_nanos() as i128
    }
}

/// One input file as a run found it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Recorded {
    /// The unit's name (part of its key).
    name: String,
    status: FileStatus,
    key: [u8; 32],
}

/// The statuses recorded by earlier runs, and those this run records.
#[derive(Debug)]
pub struct FileStatuses {
    /// By absolute path.
    known: FxHashMap<PathBuf, Recorded>,
    /// Recorded by this run.
    new: Mutex<Vec<(PathBuf, Recorded)>>,
    /// When this run started reading inputs.
    read_at: SystemTime,
    /// Whether a recorded status stands for the content (`false`: `--rehash-inputs`).
    trusted: bool,
}

/// The one entry of the kind: the statuses of every input any run with this cache read.
fn entry_key() -> Key {
    KeyBuilder::new(KIND).finish()
}

impl FileStatuses {
    /// The statuses `store` keeps; with `trusted` false, none is used but this run's are
    /// recorded.
    pub fn load(store: &Store, trusted: bool) -> FileStatuses {
        let read_at = SystemTime::now();
        let known: Vec<(PathBuf, Recorded)> =
            store.get_value(KIND, &entry_key()).unwrap_or_default();
        FileStatuses {
            known: known.into_iter().collect(),
            new: Mutex::new(Vec::new()),
            read_at,
            trusted,
        }
    }

    /// The unit key recorded for the file at `path` named `name`, if it still has the status
    /// it was recorded with.
    pub fn known_key(&self, name: &str, path: &Path, status: &FileStatus) -> Option<Key> {
        if !self.trusted {
            return None;
        }
        let r = self.known.get(&absolute(path))?;
        (r.name == name && r.status == *status).then_some(Key(r.key))
    }

    /// Records that the file at `path` named `name`, with `status` before it was read, has
    /// unit key `key` — if it had settled by then.
    pub fn record(&self, name: &str, path: &Path, status: FileStatus, key: Key) {
        if !status.settled_before(self.read_at) {
            return;
        }
        let path = absolute(path);
        let recorded = Recorded {
            name: name.to_string(),
            status,
            key: key.0,
        };
        if self.known.get(&path) == Some(&recorded) {
            return;
        }
        self.new
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((path, recorded));
    }

    /// Writes the statuses back, when this run recorded new ones (sorted by path), without
    /// those of files that no longer exist.
    pub fn save(self, store: &Store) {
        let new = self.new.into_inner().unwrap_or_else(|p| p.into_inner());
        if new.is_empty() {
            return;
        }
        let mut all = self.known;
        all.retain(|path, _| path.exists());
        all.extend(new);
        let mut all: Vec<(PathBuf, Recorded)> = all.into_iter().collect();
        all.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        store.put_value_or_warn(KIND, &entry_key(), &all);
    }
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::{File, FileTimes};

    /// A file written with modification time `then` (its change time is now).
    fn write_at(path: &Path, text: &str, then: SystemTime) {
        std::fs::write(path, text).unwrap();
        let f = File::options().write(true).open(path).unwrap();
        f.set_times(FileTimes::new().set_modified(then).set_accessed(then))
            .unwrap();
    }

    fn statuses(store: &Store, read_at: SystemTime) -> FileStatuses {
        let mut s = FileStatuses::load(store, true);
        s.read_at = read_at;
        s
    }

    #[test]
    fn a_recorded_status_gives_its_key_until_the_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("cache")).unwrap();
        let path = dir.path().join("u.i");
        let then = SystemTime::now() - Duration::from_secs(3600);
        write_at(&path, "int x;\n", then);
        let key = KeyBuilder::new("test").str("int x;").finish();
        // The change time is now: recorded only by a run that starts later.
        let early = statuses(&store, SystemTime::now());
        let status = FileStatus::of(&path).unwrap();
        early.record("u.i", &path, status, key);
        early.save(&store);
        let later = SystemTime::now() + SETTLED + Duration::from_secs(1);
        assert_eq!(
            statuses(&store, later).known_key("u.i", &path, &status),
            None
        );

        let run = statuses(&store, later);
        run.record("u.i", &path, status, key);
        run.save(&store);
        let next = statuses(&store, later);
        assert_eq!(next.known_key("u.i", &path, &status), Some(key));
        assert_eq!(next.known_key("v.i", &path, &status), None, "another name");
        assert_eq!(
            FileStatuses::load(&store, false).known_key("u.i", &path, &status),
            None
        );

        // A file that is gone is forgotten when the statuses are written again.
        let gone = dir.path().join("gone.i");
        write_at(&gone, "int g;\n", then);
        let run = statuses(&store, later);
        run.record("gone.i", &gone, FileStatus::of(&gone).unwrap(), key);
        run.save(&store);
        assert!(statuses(&store, later).known.contains_key(&absolute(&gone)));
        std::fs::remove_file(&gone).unwrap();
        let run = statuses(&store, later);
        run.record(
            "u.i",
            &path,
            status,
            KeyBuilder::new("test").str("again").finish(),
        );
        run.save(&store);
        let next = statuses(&store, later);
        assert!(!next.known.contains_key(&absolute(&gone)));
        assert_eq!(next.known.len(), 1);

        // Same size, same modification time: the change time still tells (one clock tick
        // later at least).
        std::thread::sleep(Duration::from_millis(50));
        write_at(&path, "int y;\n", then);
        let edited = FileStatus::of(&path).unwrap();
        assert_eq!(edited.size, status.size);
        assert_eq!(edited.modified, status.modified);
        assert_eq!(next.known_key("u.i", &path, &edited), None);
    }
}
