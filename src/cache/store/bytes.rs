//! An entry file's bytes as a read hands them out: mapped when the file is large, read into
//! memory when it is small.
//!
//! Why map: a warm run of the whole kernel reads 3.4 GB of cached units, once each. Read into
//! a fresh buffer, every byte is copied and every buffer page is new memory the kernel must
//! zero first (on the VMs measured here, 1.3–1.9 s of system time per GB); mapped, the pages
//! are the page cache's own.
//!
//! Why it is sound: an entry file is never written in place — [`super::Store`] writes a
//! temporary file and renames it over the entry, and removes entries by unlinking them — so
//! the bytes of a mapped entry cannot change while they are mapped (a rename or an unlink
//! leaves the mapped inode as it was). Only something outside relay truncating a file inside
//! the cache directory could take mapped pages away; the cache directory is relay's alone
//! (it carries a `CACHEDIR.TAG`, and `relay` refuses to use a directory that is not its own).

use std::fs;
use std::io::{self, Read};
use std::ops::Deref;
use std::path::Path;

/// Files at least this long are mapped. Most entries are a few KB, which one `read` copies
/// more cheaply than a mapping's system calls and page faults would give them.
const MAP_FROM: u64 = 256 << 10;

/// A whole entry file (header included).
pub enum FileBytes {
    Read(Vec<u8>),
    Mapped(memmap2::Mmap),
}

impl FileBytes {
    /// The file at `path`, mapped if it is large; `whole`: the caller reads every byte (to
    /// verify the checksum), so a mapping's pages are faulted in at once.
    pub fn read(path: &Path, whole: bool) -> io::Result<FileBytes> {
        let mut file = fs::File::open(path)?;
        let len = file.metadata()?.len();
        if len >= MAP_FROM {
            let mut options = memmap2::MmapOptions::new();
            if whole {
                options.populate();
            }
            // SAFETY: entry files are never modified in place (see the module documentation),
            // so the mapped bytes stay what they were when mapped.
            if let Ok(map) = unsafe { options.map(&file) } {
                if !whole {
                    // The reader asks for the parts it reads ([`Payload::will_need`]): no
                    // reading around the pages it touches, which would read the rest.
                    let _ = map.advise(memmap2::Advice::Random);
                }
                return Ok(FileBytes::Mapped(map));
            }
        }
        let mut bytes = Vec::with_capacity(len as usize);
        file.read_to_end(&mut bytes)?;
        Ok(FileBytes::Read(bytes))
    }
}

impl Deref for FileBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Read(bytes) => bytes,
            FileBytes::Mapped(map) => map,
        }
    }
}

/// An entry's payload: its file's bytes past the header (verified, but for
/// [`super::Store::read_parts`]).
pub struct Payload(pub(super) FileBytes, pub(super) usize);

impl Payload {
    /// Tells the kernel that `range` of the payload is about to be read: a mapped entry read
    /// in parts has its read-ahead turned off ([`FileBytes::read`]), so each part it needs is
    /// read in one request, ahead of the reader, instead of page by page as it faults. Only
    /// advice: nothing happens for bytes already in memory, or if the kernel declines.
    pub fn will_need(&self, range: std::ops::Range<usize>) {
        if let FileBytes::Mapped(map) = &self.0 {
            let end = range.end.min(self.len());
            if range.start < end {
                let _ = map.advise_range(
                    memmap2::Advice::WillNeed,
                    self.1 + range.start,
                    end - range.start,
                );
            }
        }
    }
}

impl Deref for Payload {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.0[self.1..]
    }
}

impl PartialEq for Payload {
    fn eq(&self, other: &Payload) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for Payload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Payload({} bytes)", self.len())
    }
}
