//! The cache directory as a whole: walking a kind's entries, pruning, moving, statistics,
//! clearing.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};

use super::{
    check_kind, CacheStats, Key, KindStats, Store, HEADER_LEN, KEY_RANGE, TAG_FILE, TEMP_PREFIX,
};

/// An entry's file, as a walk of its kind's directory found it.
#[derive(Debug)]
pub struct EntryFile {
    pub path: PathBuf,
    /// The key its name spells (`None`: a name that is not one).
    pub key: Option<Key>,
    pub modified: SystemTime,
    pub bytes: u64,
}

impl Store {
    /// Entries and bytes per kind.
    pub fn stats(&self) -> Result<CacheStats> {
        stats_of(&self.dir)
    }

    /// Keeps the `keep` most recently written entries of `kind` and removes the others (for kinds
    /// whose old entries are rarely useful and large, like saved findings). Returns how many
    /// were removed. Errors (e.g. a concurrent removal) are ignored: pruning is best effort.
    pub fn prune(&self, kind: &str, keep: usize) -> usize {
        let mut entries = self.entries(kind);
        entries.sort_by(|a, b| (b.modified, &b.path).cmp(&(a.modified, &a.path)));
        entries
            .iter()
            .skip(keep)
            .filter(|e| fs::remove_file(&e.path).is_ok())
            .count()
    }

    /// The entry files of `kind` (temporary files left out), in no particular order. What
    /// cannot be read (a directory or file removed meanwhile) is skipped.
    pub fn entries(&self, kind: &str) -> Vec<EntryFile> {
        let mut entries = Vec::new();
        if check_kind(kind).is_err() {
            return entries;
        }
        let Ok(shards) = fs::read_dir(self.dir.join(kind)) else {
            return entries;
        };
        for shard in shards.flatten() {
            let Ok(files) = fs::read_dir(shard.path()) else {
                continue;
            };
            let prefix = shard.file_name().to_string_lossy().into_owned();
            for f in files.flatten() {
                let name = f.file_name().to_string_lossy().into_owned();
                if name.starts_with(TEMP_PREFIX) {
                    continue;
                }
                if let Ok(meta) = f.metadata() {
                    entries.push(EntryFile {
                        path: f.path(),
                        key: Key::from_hex(&format!("{prefix}{name}")),
                        modified: meta.modified().unwrap_or(UNIX_EPOCH),
                        bytes: meta.len(),
                    });
                }
            }
        }
        entries
    }

    /// Moves the entry `from` to `to` (kind and key; replacing what is there), if there is
    /// one: its header is given the new key, its payload kept as it is. A damaged entry is
    /// removed, not moved.
    pub fn rekey(&self, from: (&str, &Key), to: (&str, &Key)) -> Result<()> {
        let source = self.entry_path(from.0, from.1);
        let file = match self.read_file(from.0, from.1) {
            Ok(Some(file)) => file,
            Ok(None) => return Ok(()),
            Err(_) => {
                let _ = fs::remove_file(&source);
                return Ok(());
            }
        };
        let mut header = [0u8; HEADER_LEN];
        header.copy_from_slice(&file[..HEADER_LEN]);
        header[KEY_RANGE].copy_from_slice(&to.1 .0);
        self.write_entry(to.0, to.1, &header, &file[HEADER_LEN..])?;
        match fs::remove_file(&source) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                Err(e).with_context(|| format!("cannot remove cache entry {}", source.display()))
            }
            _ => Ok(()),
        }
    }

    /// Removes every entry (and leftover temporary file); returns what was there.
    pub fn clear(&self) -> Result<CacheStats> {
        let stats = self.stats()?;
        for kind in &stats.kinds {
            let path = self.dir.join(&kind.kind);
            match fs::remove_dir_all(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot remove {}", path.display()))
                }
            }
        }
        Ok(stats)
    }
}

/// True if `dir` holds nothing but what [`Store::open`] itself writes first.
pub(super) fn only_cache_files(dir: &Path) -> Result<bool> {
    for e in fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let name = e?.file_name();
        let name = name.to_string_lossy();
        if name != TAG_FILE && name != ".gitignore" && !name.starts_with(TEMP_PREFIX) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// What the cache in `dir` holds (an absent directory holds nothing).
pub fn stats_of(dir: &Path) -> Result<CacheStats> {
    let mut stats = CacheStats {
        dir: dir.display().to_string(),
        ..Default::default()
    };
    if !dir.exists() {
        return Ok(stats);
    }
    let read = |p: &Path| fs::read_dir(p).with_context(|| format!("cannot read {}", p.display()));
    for kind in read(dir)? {
        let kind = kind?;
        let name = kind.file_name().to_string_lossy().into_owned();
        if !kind.file_type()?.is_dir() || check_kind(&name).is_err() {
            continue;
        }
        let mut ks = KindStats {
            kind: name,
            ..Default::default()
        };
        for shard in read(&kind.path())? {
            let shard = shard?;
            if !shard.file_type()?.is_dir() {
                continue;
            }
            for entry in read(&shard.path())? {
                let entry = entry?;
                // An entry may be replaced or removed by another process while we look.
                let Ok(meta) = entry.metadata() else { continue };
                if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
                    stats.temp_files += 1;
                } else if meta.is_file() {
                    ks.entries += 1;
                    ks.bytes += meta.len();
                }
            }
        }
        stats.entries += ks.entries;
        stats.bytes += ks.bytes;
        stats.kinds.push(ks);
    }
    stats.kinds.sort_by(|a, b| a.kind.cmp(&b.kind));
    Ok(stats)
}
