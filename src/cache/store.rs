//! A content-addressed blob store in a directory, safe to share between processes.
//!
//! Layout: `DIR/<kind>/<first 2 hex digits of the key>/<the other 62>`, plus `DIR/CACHEDIR.TAG`
//! (which marks the directory as a cache: backup tools skip it, and `relay` refuses to use or
//! clear a non-empty directory without it) and `DIR/.gitignore`.
//!
//! An entry file is a fixed header followed by the payload (integers little-endian):
//!
//! | bytes  | field                                   |
//! |--------|-----------------------------------------|
//! | 0..4   | magic `RLYC`                            |
//! | 4..8   | format version ([`FORMAT_VERSION`])     |
//! | 8..16  | payload length                          |
//! | 16..48 | the entry's key                         |
//! | 48..64 | XXH3-128 checksum of the payload        |
//! | 64..   | payload                                 |
//!
//! The entries of the kinds in [`super::COMPRESSED`] hold their payload compressed
//! (`compress.rs`): the length and checksum are the stored bytes', and reads hand out the
//! decompressed payload.
//!
//! Reads verify all of it: an entry that is truncated, corrupted, of another format version or
//! stored under another key is reported once on stderr, deleted and treated as a miss. The
//! checksum only has to catch accidents (a torn write, a flipped bit), not an adversary — keys,
//! which name contents, are BLAKE3 — and a warm run of the kernel reads ~4 GB of entries:
//! XXH3 checks them about five times faster than BLAKE3 did.
//! Writes go to a unique temporary file in the entry's directory and are renamed
//! over the entry, so readers see either no entry or a whole one, and concurrent writers of one
//! key both succeed (the last rename wins; both wrote the same value).

use std::collections::HashSet;
use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use bincode::Options;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::FORMAT_VERSION;

mod bytes;
mod compress;

pub(crate) use self::compress::{compress, decompress, LEVEL as COMPRESSION_LEVEL};
mod dir;
use bytes::FileBytes;
pub use bytes::Payload;
use dir::only_cache_files;
pub use dir::{stats_of, EntryFile};

const MAGIC: &[u8; 4] = b"RLYC";
/// The size of an entry's header.
pub const HEADER_LEN: usize = 64;
const TAG_FILE: &str = "CACHEDIR.TAG";
const TAG: &str = "Signature: 8a477f597d28d172789f06886806bc55\n\
                   # This file is a cache directory tag created by relay (a static race detector).\n\
                   # For information about cache directory tags see https://bford.info/cachedir/\n";
const TEMP_PREFIX: &str = ".tmp-";
/// Where a header holds the entry's key.
const KEY_RANGE: std::ops::Range<usize> = 16..48;

/// A 256-bit content key (BLAKE3).
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct Key(pub [u8; 32]);

impl Key {
    /// The key in lowercase hexadecimal (64 digits).
    pub fn hex(&self) -> String {
        self.to_string()
    }

    /// The key spelled by 64 hexadecimal digits (either case), as [`Key::hex`] writes it.
    pub fn from_hex(hex: &str) -> Option<Key> {
        let digits = hex.as_bytes();
        if digits.len() != 64 || !digits.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        let mut key = [0u8; 32];
        for (byte, pair) in key.iter_mut().zip(digits.chunks_exact(2)) {
            let pair = std::str::from_utf8(pair).ok()?;
            *byte = u8::from_str_radix(pair, 16).ok()?;
        }
        Some(Key(key))
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({self})")
    }
}

/// Builds a [`Key`] from everything a value depends on. Every key starts with the format version,
/// the relay version and a fingerprint of the running executable (its size and modification
/// time), so a rebuilt or upgraded relay never reads values computed by another build. Each
/// component is length-prefixed: `("ab", "c")` and `("a", "bc")` give different keys.
#[derive(Clone)]
pub struct KeyBuilder(blake3::Hasher);

impl KeyBuilder {
    /// A key for a value of `kind` computed by this build of relay.
    pub fn new(kind: &str) -> Self {
        Self::with_versions(kind, env!("CARGO_PKG_VERSION"), build_fingerprint())
    }

    /// A key as another relay version or build would compute it (for tests and tools).
    pub fn with_versions(kind: &str, relay_version: &str, build: &[u8]) -> Self {
        let mut b = KeyBuilder(blake3::Hasher::new());
        b.bytes(b"relay cache key")
            .u64(FORMAT_VERSION.into())
            .str(relay_version)
            .bytes(build)
            .str(kind);
        b
    }

    pub fn bytes(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.update(&(bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
        self
    }

    pub fn str(&mut self, s: &str) -> &mut Self {
        self.bytes(s.as_bytes())
    }

    /// [`KeyBuilder::bytes`] of the `len` bytes `reader` gives; fails if it gives another
    /// number (a file that changed while it was read).
    pub fn bytes_from(
        &mut self,
        len: u64,
        reader: &mut impl std::io::Read,
    ) -> std::io::Result<&mut Self> {
        self.0.update(&len.to_le_bytes());
        let mut buf = vec![0u8; 1 << 16];
        let mut read = 0u64;
        loop {
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    self.0.update(&buf[..n]);
                    read += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if read != len {
            return Err(std::io::Error::other(format!(
                "read {read} bytes, expected {len}"
            )));
        }
        Ok(self)
    }

    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.0.update(&v.to_le_bytes());
        self
    }

    /// Another key (e.g. of a value this one is computed from).
    pub fn key(&mut self, k: &Key) -> &mut Self {
        self.0.update(&k.0);
        self
    }

    pub fn finish(&self) -> Key {
        Key(*self.0.finalize().as_bytes())
    }
}

/// Identifies this build of relay (version, executable, cache format), as its keys do: for
/// entries that say which build wrote them.
pub fn build_id() -> [u8; 32] {
    KeyBuilder::new("build").finish().0
}

/// Identifies the running executable: a hash of its size and modification time (empty when it
/// cannot be found).
fn build_fingerprint() -> &'static [u8] {
    static ID: OnceLock<[u8; 32]> = OnceLock::new();
    ID.get_or_init(|| {
        let mut h = blake3::Hasher::new();
        if let Ok(meta) = std::env::current_exe().and_then(fs::metadata) {
            h.update(&meta.len().to_le_bytes());
            if let Ok(d) = meta.modified().map(|t| t.duration_since(UNIX_EPOCH)) {
                h.update(&d.unwrap_or_default().as_nanos().to_le_bytes());
            }
        }
        *h.finalize().as_bytes()
    })
}

/// Why an entry was not trusted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Corruption {
    #[error("truncated: {0} bytes, shorter than the header")]
    Truncated(usize),
    #[error("not a relay cache entry")]
    BadMagic,
    #[error("format version {found}, expected {expected}")]
    Version { found: u32, expected: u32 },
    #[error("payload is {actual} bytes, header says {header}")]
    Length { header: u64, actual: u64 },
    #[error("stored under another key")]
    KeyMismatch,
    #[error("checksum mismatch")]
    Checksum,
    #[error("unreadable: {0}")]
    Unreadable(String),
    #[error("cannot decode: {0}")]
    Decode(String),
}

/// Entries and bytes of one kind.
#[derive(serde::Serialize, Debug, Clone, Default, PartialEq, Eq)]
pub struct KindStats {
    pub kind: String,
    pub entries: u64,
    /// Bytes on disk, headers included.
    pub bytes: u64,
}

/// What a cache directory holds.
#[derive(serde::Serialize, Debug, Clone, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub dir: String,
    /// By kind name.
    pub kinds: Vec<KindStats>,
    pub entries: u64,
    pub bytes: u64,
    /// Temporary files of writes in progress, or left by killed processes.
    pub temp_files: u64,
}

/// A cache directory. Shareable between threads (`&Store` is `Sync`) and processes.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    /// Entries already reported as corrupt by this process.
    reported: Mutex<HashSet<PathBuf>>,
    corrupt: AtomicUsize,
    write_warned: AtomicBool,
    counter: AtomicU64,
    /// Bytes of entries this process wrote.
    written: AtomicU64,
    /// When this process opened the cache: entries written since are never collected by it
    /// ([`super::gc`]), whoever wrote them.
    opened: SystemTime,
}

impl Store {
    /// Opens the cache in `dir`, creating it if needed. Refuses a non-empty directory that is not
    /// a relay cache.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Store> {
        let dir = dir.into();
        if dir.exists() {
            if !dir.is_dir() {
                bail!("cache {} is not a directory", dir.display());
            }
            if !dir.join(TAG_FILE).exists() && !only_cache_files(&dir)? {
                bail!(
                    "{} is not empty and not a relay cache (no {TAG_FILE}); refusing to use it",
                    dir.display()
                );
            }
        } else {
            fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create cache {}", dir.display()))?;
        }
        let store = Store {
            dir,
            reported: Mutex::new(HashSet::new()),
            corrupt: AtomicUsize::new(0),
            write_warned: AtomicBool::new(false),
            counter: AtomicU64::new(0),
            written: AtomicU64::new(0),
            opened: SystemTime::now(),
        };
        for (name, text) in [(TAG_FILE, TAG), (".gitignore", "*\n")] {
            let path = store.dir.join(name);
            if !path.exists() {
                store
                    .write_atomic(&store.dir, &path, &[text.as_bytes()])
                    .with_context(|| format!("cannot initialise cache {}", store.dir.display()))?;
            }
        }
        Ok(store)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the entry `kind`/`key` lives.
    pub fn entry_path(&self, kind: &str, key: &Key) -> PathBuf {
        let hex = key.hex();
        self.dir.join(kind).join(&hex[..2]).join(&hex[2..])
    }

    /// The entry's payload, verified, without side effects: `Ok(None)` when there is no entry.
    /// A compressed kind's payload comes decompressed.
    pub fn read(&self, kind: &str, key: &Key) -> Result<Option<Payload>, Corruption> {
        let Some(file) = self.read_file(kind, key)? else {
            return Ok(None);
        };
        if !compress::compressed(kind) {
            return Ok(Some(Payload(file, HEADER_LEN)));
        }
        let payload = compress::decompress(&file[HEADER_LEN..])?;
        Ok(Some(Payload(FileBytes::Read(payload), 0)))
    }

    /// The entry's payload with its header checked but not the payload's checksum: for a value
    /// that carries checksums of its own parts, so that a reader who needs some of them reads
    /// (and pages in) only those — a cached unit's bodies ([`super::tu`]). A mapped entry has
    /// the kernel's read-ahead off: the caller asks for each part it is about to read
    /// ([`Payload::will_need`]). The caller checks what it reads and [`Store::invalidate`]s the
    /// entry when that fails. `Ok(None)` when there is no entry.
    pub fn read_parts(&self, kind: &str, key: &Key) -> Result<Option<Payload>, Corruption> {
        debug_assert!(!compress::compressed(kind), "{kind} is stored compressed");
        let Some(file) = self.open_file(kind, key, false)? else {
            return Ok(None);
        };
        if file.len() < HEADER_LEN {
            return Err(Corruption::Truncated(file.len()));
        }
        check_header(&file[..HEADER_LEN], key, (file.len() - HEADER_LEN) as u64)?;
        Ok(Some(Payload(file, HEADER_LEN)))
    }

    /// The entry's payload, or `None` on a miss. A corrupt entry is reported, deleted and missed.
    pub fn get(&self, kind: &str, key: &Key) -> Option<Payload> {
        match self.read(kind, key) {
            Ok(v) => v,
            Err(c) => {
                self.invalidate(kind, key, &c);
                None
            }
        }
    }

    /// The entry opened for reading ranges of its payload ([`EntryReader`]): its header's
    /// magic, version, key and length are checked, but not its checksum (that needs the whole
    /// payload), so the caller checks the bytes it reads itself (e.g. against a hash of them it
    /// keeps). `Ok(None)` when there is no entry.
    pub fn entry_reader(&self, kind: &str, key: &Key) -> Result<Option<EntryReader>, Corruption> {
        debug_assert!(!compress::compressed(kind), "{kind} is stored compressed");
        let path = self.entry_path(kind, key);
        let file = match fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Corruption::Unreadable(e.to_string())),
        };
        let size = file.metadata().map_err(unreadable)?.len();
        let payload = size
            .checked_sub(HEADER_LEN as u64)
            .ok_or(Corruption::Truncated(size as usize))?;
        let mut h = [0u8; HEADER_LEN];
        read_at(&file, &mut h, 0).map_err(unreadable)?;
        check_header(&h, key, payload)?;
        // `pread` does not move the file's position; elsewhere reads take turns.
        #[cfg(not(unix))]
        let file = Mutex::new(file);
        Ok(Some(EntryReader { file, payload }))
    }

    /// `len` bytes of the entry's payload from `start`, without reading the rest (see
    /// [`Store::entry_reader`]).
    pub fn read_range(
        &self,
        kind: &str,
        key: &Key,
        start: u64,
        len: u64,
    ) -> Result<Option<Vec<u8>>, Corruption> {
        self.entry_reader(kind, key)?
            .map(|r| r.read(start, len))
            .transpose()
    }

    /// Removes the entry, if it is there (an entry no other entry refers to any more).
    pub fn remove(&self, kind: &str, key: &Key) {
        let _ = fs::remove_file(self.entry_path(kind, key));
    }

    /// The entry decoded from bincode, or `None` on a miss. An entry that is corrupt or does not
    /// decode as a `T` is reported, deleted and missed.
    pub fn get_value<T: DeserializeOwned>(&self, kind: &str, key: &Key) -> Option<T> {
        let payload = self.get(kind, key)?;
        match decode(&payload) {
            Ok(v) => Some(v),
            Err(e) => {
                self.invalidate(kind, key, &Corruption::Decode(e.to_string()));
                None
            }
        }
    }

    /// Stores `payload` under `kind`/`key`, atomically.
    pub fn put(&self, kind: &str, key: &Key, payload: &[u8]) -> Result<()> {
        let compressed;
        let payload = if compress::compressed(kind) {
            compressed = compress::compress(payload).with_context(|| {
                format!(
                    "cannot compress cache entry {}",
                    self.entry_path(kind, key).display()
                )
            })?;
            &compressed[..]
        } else {
            payload
        };
        self.write_entry(kind, key, &header(key, payload), payload)
    }

    /// Writes the entry `kind`/`key` as `header` and `payload` (stored as they are),
    /// atomically, and counts its bytes.
    fn write_entry(&self, kind: &str, key: &Key, header: &[u8], payload: &[u8]) -> Result<()> {
        check_kind(kind)?;
        let path = self.entry_path(kind, key);
        let parent = path.parent().unwrap_or(&self.dir);
        fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
        self.write_atomic(parent, &path, &[header, payload])
            .with_context(|| format!("cannot write cache entry {}", path.display()))?;
        let bytes = (header.len() + payload.len()) as u64;
        self.written.fetch_add(bytes, Ordering::Relaxed);
        Ok(())
    }

    /// Stores `value` encoded with bincode.
    pub fn put_value<T: Serialize + ?Sized>(&self, kind: &str, key: &Key, value: &T) -> Result<()> {
        let bytes = encode(value)?;
        self.put(kind, key, &bytes)
    }

    /// Like [`Store::put_value`], but a failure is only a warning (once per process): a cache
    /// that cannot be written must not fail the run. Whether it was written.
    pub fn put_value_or_warn<T: Serialize + ?Sized>(
        &self,
        kind: &str,
        key: &Key,
        value: &T,
    ) -> bool {
        let written = encode(value).and_then(|bytes| self.put(kind, key, &bytes));
        self.warn_unwritten(written)
    }

    /// Like [`Store::put`], but a failure is only a warning (see [`Store::put_value_or_warn`]).
    pub fn put_or_warn(&self, kind: &str, key: &Key, payload: &[u8]) -> bool {
        self.warn_unwritten(self.put(kind, key, payload))
    }

    /// Warns (once per process) that an entry could not be written, if `written` failed; says
    /// whether it was written.
    pub fn warn_unwritten(&self, written: Result<()>) -> bool {
        let Err(e) = written else { return true };
        if !self.write_warned.swap(true, Ordering::Relaxed) {
            eprintln!("relay: warning: {e:#}; continuing without caching");
        }
        false
    }

    /// Reports a bad entry (once per process and entry) and deletes it.
    pub fn invalidate(&self, kind: &str, key: &Key, why: &Corruption) {
        let path = self.entry_path(kind, key);
        let first = self
            .reported
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(path.clone());
        if first {
            self.corrupt.fetch_add(1, Ordering::Relaxed);
            eprintln!(
                "relay: cache entry {} is corrupt ({why}); recomputing",
                path.display()
            );
        }
        let _ = fs::remove_file(&path);
    }

    /// How many distinct corrupt entries this process has reported.
    pub fn corrupt_entries(&self) -> usize {
        self.corrupt.load(Ordering::Relaxed)
    }

    /// Bytes of entries this process wrote so far.
    pub fn bytes_written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }

    /// When this process opened the cache.
    pub fn opened(&self) -> SystemTime {
        self.opened
    }

    /// The whole entry file, verified (header included).
    fn read_file(&self, kind: &str, key: &Key) -> Result<Option<FileBytes>, Corruption> {
        let Some(file) = self.open_file(kind, key, true)? else {
            return Ok(None);
        };
        verify(&file, key)?;
        Ok(Some(file))
    }

    /// The whole entry file, unchecked ([`FileBytes::read`]; `whole`: every byte will be read).
    fn open_file(
        &self,
        kind: &str,
        key: &Key,
        whole: bool,
    ) -> Result<Option<FileBytes>, Corruption> {
        if check_kind(kind).is_err() {
            return Ok(None);
        }
        match FileBytes::read(&self.entry_path(kind, key), whole) {
            Ok(f) => Ok(Some(f)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Corruption::Unreadable(e.to_string())),
        }
    }

    /// Writes `parts` to a fresh temporary file in `dir` and renames it to `path`.
    fn write_atomic(&self, dir: &Path, path: &Path, parts: &[&[u8]]) -> io::Result<()> {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .subsec_nanos();
        let tmp = dir.join(format!(
            "{TEMP_PREFIX}{}-{}-{nanos:08x}",
            std::process::id(),
            self.counter.fetch_add(1, Ordering::Relaxed)
        ));
        let result = (|| {
            let mut f = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)?;
            for p in parts {
                f.write_all(p)?;
            }
            // No fsync: readers on a running system only ever see whole files (the rename is
            // atomic), and what a crash leaves half-written fails the checksum and is
            // recomputed. Syncing every entry cost seconds on runs that store thousands.
            drop(f);
            fs::rename(&tmp, path)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }
}

/// Encodes a value the way the store's typed API does (bincode, variable-length integers).
pub fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
    Ok(bincode::DefaultOptions::new().serialize(value)?)
}

/// Decodes what [`encode`] produced.
pub fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, bincode::Error> {
    bincode::DefaultOptions::new()
        .with_limit(bytes.len() as u64)
        .deserialize(bytes)
}

fn header(key: &Key, payload: &[u8]) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0..4].copy_from_slice(MAGIC);
    h[4..8].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    h[8..16].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    h[KEY_RANGE].copy_from_slice(&key.0);
    h[48..64].copy_from_slice(&checksum(payload));
    h
}

/// The checksum of a payload, as its header holds it.
fn checksum(payload: &[u8]) -> [u8; 16] {
    xxhash_rust::xxh3::xxh3_128(payload).to_le_bytes()
}

/// Checks an entry file against its header and the key it was looked up by.
pub fn verify(file: &[u8], key: &Key) -> Result<(), Corruption> {
    if file.len() < HEADER_LEN {
        return Err(Corruption::Truncated(file.len()));
    }
    let (h, payload) = file.split_at(HEADER_LEN);
    check_header(h, key, payload.len() as u64)?;
    if h[48..64] != checksum(payload) {
        return Err(Corruption::Checksum);
    }
    Ok(())
}

/// Checks a header against the key it was looked up by and the payload's length, not the
/// payload's checksum.
fn check_header(h: &[u8], key: &Key, payload_len: u64) -> Result<(), Corruption> {
    if &h[0..4] != MAGIC {
        return Err(Corruption::BadMagic);
    }
    let found = u32::from_le_bytes([h[4], h[5], h[6], h[7]]);
    if found != FORMAT_VERSION {
        return Err(Corruption::Version {
            found,
            expected: FORMAT_VERSION,
        });
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&h[8..16]);
    let len = u64::from_le_bytes(len);
    if len != payload_len {
        return Err(Corruption::Length {
            header: len,
            actual: payload_len,
        });
    }
    if h[KEY_RANGE] != key.0 {
        return Err(Corruption::KeyMismatch);
    }
    Ok(())
}

/// An entry open for reading ranges of its payload ([`Store::entry_reader`]); shared by
/// threads.
#[derive(Debug)]
pub struct EntryReader {
    #[cfg(unix)]
    file: fs::File,
    #[cfg(not(unix))]
    file: Mutex<fs::File>,
    payload: u64,
}

impl EntryReader {
    /// `len` bytes of the payload from `start`.
    pub fn read(&self, start: u64, len: u64) -> Result<Vec<u8>, Corruption> {
        if start.checked_add(len).is_none_or(|end| end > self.payload) {
            return Err(Corruption::Unreadable(format!(
                "{len} bytes from {start} asked of a {}-byte payload",
                self.payload
            )));
        }
        let mut bytes = vec![0u8; len as usize];
        let at = HEADER_LEN as u64 + start;
        #[cfg(unix)]
        let read = read_at(&self.file, &mut bytes, at);
        #[cfg(not(unix))]
        let read = read_at(
            &self.file.lock().unwrap_or_else(|p| p.into_inner()),
            &mut bytes,
            at,
        );
        read.map_err(unreadable)?;
        Ok(bytes)
    }
}

fn unreadable(e: std::io::Error) -> Corruption {
    Corruption::Unreadable(e.to_string())
}

/// Fills `buf` from `file` at `offset`.
#[cfg(unix)]
fn read_at(file: &fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(not(unix))]
fn read_at(mut file: &fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(buf)
}

fn check_kind(kind: &str) -> Result<()> {
    let ok = !kind.is_empty()
        && !kind.starts_with('.')
        && kind
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if !ok {
        bail!("invalid cache kind {kind:?}");
    }
    Ok(())
}

#[cfg(test)]
mod tests;
