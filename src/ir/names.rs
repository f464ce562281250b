//! Program-wide interned names, shared by all units lowered in parallel.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use dashmap::DashMap;
use rustc_hash::FxBuildHasher;
use serde::{Deserialize, Serialize};

use super::Name;

/// A concurrent string interner: units lowered on different threads agree on every [`Name`].
///
/// Resolving a name is an index into an append-only vector, without a lock or a hash: the
/// analyses resolve names millions of times per run (printing bodies for cache keys, matching
/// entry families, naming points-to nodes). Interning looks the string up in a sharded map
/// first and takes a lock only to add a new one, so ids are dense and in order of addition.
pub struct Names {
    ids: DashMap<Arc<str>, Name, FxBuildHasher>,
    strings: boxcar::Vec<Arc<str>>,
    adding: Mutex<()>,
    /// Runs of strings interned together ([`Names::intern_run`]), by their text.
    runs: DashMap<Box<str>, Run, FxBuildHasher>,
}

/// The names of a run of strings, and each string's length (the text alone does not say where
/// one string ends).
struct Run {
    lens: Box<[u32]>,
    names: Box<[Name]>,
}

impl Default for Names {
    fn default() -> Self {
        Self::new()
    }
}

impl Names {
    pub fn new() -> Self {
        Names {
            ids: DashMap::with_hasher(FxBuildHasher),
            strings: boxcar::Vec::new(),
            adding: Mutex::new(()),
            runs: DashMap::with_hasher(FxBuildHasher),
        }
    }

    /// Interns the strings `range` of `strings` into `out` (as long as the range), as one run:
    /// a run met before — the same strings, in another unit — is one lookup instead of one per
    /// string. Kernel units repeat the names of the headers they share (tens of thousands
    /// each): interning them one by one was half of loading a cached unit. `None` if the range
    /// is not in the table.
    pub fn intern_run(
        &self,
        strings: &StringTable<'_>,
        range: std::ops::Range<usize>,
        out: &mut [Name],
    ) -> Option<()> {
        let text = strings.text_of(range.clone())?;
        let lens = || range.clone().map(|i| strings.len_of(i));
        if let Some(run) = self.runs.get(text) {
            if run.names.len() == out.len() && run.lens.iter().copied().eq(lens().flatten()) {
                out.copy_from_slice(&run.names);
                return Some(());
            }
        }
        for (name, i) in out.iter_mut().zip(range.clone()) {
            *name = self.intern(strings.get(i)?);
        }
        let run = Run {
            lens: lens().collect::<Option<_>>()?,
            names: out.into(),
        };
        self.runs.insert(text.into(), run);
        Some(())
    }

    pub fn intern(&self, s: &str) -> Name {
        if let Some(n) = self.ids.get(s) {
            return *n;
        }
        let _adding = self.adding.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = self.ids.get(s) {
            return *n;
        }
        let s: Arc<str> = s.into();
        // Pushes happen under the lock, so the index is the number of names before this one.
        let index = self.strings.push(s.clone());
        let name = Name(u32::try_from(index).expect("fewer than 2^32 names"));
        self.ids.insert(s, name);
        name
    }

    /// The string of a name this interner made.
    ///
    /// # Panics
    /// On a name of another interner beyond this one's end (a bug, like indexing a slice).
    pub fn get(&self, n: Name) -> &str {
        &self.strings[n.0 as usize]
    }

    pub fn len(&self) -> usize {
        self.strings.count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Strings kept as one text and the end of each: how a unit's names are cached (decoding a
/// `Vec<String>` allocated once per name — tens of thousands per kernel unit, on every run).
/// Serialized as the text and each string's length: lengths are short, where ends grow past
/// the one-byte integers of the cache's encoding.
///
/// Decoded from bytes that outlive it (a cached unit's mapped entry), the text is borrowed from
/// them, not copied: the defconfig's units hold 687 MB of names, which every warm run read
/// into fresh memory before.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StringTable<'a> {
    text: Cow<'a, str>,
    ends: Vec<u32>,
}

/// [`StringTable`]'s serialized form.
#[derive(Serialize, Deserialize)]
struct StoredTable<'a> {
    #[serde(borrow)]
    text: Cow<'a, str>,
    lens: Vec<u32>,
}

impl Serialize for StringTable<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let lens: Vec<u32> = (self.ends.iter())
            .scan(0, |start, &end| Some(end - std::mem::replace(start, end)))
            .collect();
        StoredTable {
            text: Cow::Borrowed(&self.text),
            lens,
        }
        .serialize(s)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for StringTable<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let StoredTable { text, lens } = Deserialize::deserialize(d)?;
        let ends = (lens.into_iter())
            .scan(0u32, |end, len| {
                *end = end.saturating_add(len);
                Some(*end)
            })
            .collect();
        Ok(StringTable { text, ends })
    }
}

impl StringTable<'_> {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The `i`-th string (`None` out of range, or if the table is not well formed).
    pub fn get(&self, i: usize) -> Option<&str> {
        self.text_of(i..i + 1)
    }

    /// Where the `i`-th string starts in the text.
    fn start(&self, i: usize) -> Option<usize> {
        match i {
            0 => Some(0),
            _ => self.ends.get(i - 1).map(|&e| e as usize),
        }
    }

    /// The strings `range`, one after the other.
    fn text_of(&self, range: std::ops::Range<usize>) -> Option<&str> {
        let end = match range.end {
            0 => 0,
            e => *self.ends.get(e - 1)? as usize,
        };
        self.text.get(self.start(range.start)?..end)
    }

    /// The length of the `i`-th string.
    fn len_of(&self, i: usize) -> Option<u32> {
        self.ends.get(i)?.checked_sub(self.start(i)? as u32)
    }

    /// The strings cut into runs for [`Names::intern_run`], as the end of each: a run ends after
    /// a string whose bytes say so (about one in 32), or at [`MAX_RUN`] strings. Cut by content,
    /// a stretch of strings two tables share (the names of the same headers) is cut into the
    /// same runs in both, wherever it starts.
    pub fn runs(&self) -> Vec<usize> {
        let mut ends = Vec::with_capacity(self.len() / 16 + 1);
        let mut start = 0;
        for i in 0..self.len() {
            let last = self.get(i).is_none_or(ends_run);
            if last || i + 1 - start == MAX_RUN {
                ends.push(i + 1);
                start = i + 1;
            }
        }
        if start < self.len() {
            ends.push(self.len());
        }
        ends
    }
}

/// The longest run [`StringTable::runs`] makes.
const MAX_RUN: usize = 256;

/// Whether a run ends after `s`: a cheap mix of its length and a few of its bytes.
fn ends_run(s: &str) -> bool {
    let b = s.as_bytes();
    let at = |i: usize| u32::from(b.get(i).copied().unwrap_or(0));
    let len = b.len();
    let h = (len as u32)
        .wrapping_mul(31)
        .wrapping_add(at(0).wrapping_mul(7))
        .wrapping_add(at(len / 2).wrapping_mul(17))
        .wrapping_add(at(len.wrapping_sub(1)).wrapping_mul(13));
    (h ^ (h >> 5)) & 31 == 0
}

impl<'s> FromIterator<&'s str> for StringTable<'static> {
    fn from_iter<I: IntoIterator<Item = &'s str>>(strings: I) -> Self {
        let (mut text, mut ends) = (String::new(), Vec::new());
        for s in strings {
            text.push_str(s);
            ends.push(text.len() as u32);
        }
        StringTable {
            text: Cow::Owned(text),
            ends,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_dense_and_shared_across_threads() {
        let names = Names::new();
        let words: Vec<String> = (0..2000).map(|i| format!("w{}", i % 500)).collect();
        let ids: Vec<Vec<Name>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| s.spawn(|| words.iter().map(|w| names.intern(w)).collect()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(ids.windows(2).all(|w| w[0] == w[1]));
        assert_eq!(names.len(), 500);
        for (w, &n) in words.iter().zip(&ids[0]) {
            assert_eq!(names.get(n), w);
            assert!((n.0 as usize) < 500);
        }
    }

    #[test]
    fn runs_are_cut_by_content_and_interned_as_their_strings_are() {
        let shared: Vec<String> = (0..3000).map(|i| format!("name_{i}")).collect();
        let a: StringTable = shared.iter().map(String::as_str).collect();
        // The same strings after others: the runs realign.
        let b: StringTable = ["x", "yy", "zzz"]
            .into_iter()
            .chain(shared.iter().map(String::as_str))
            .collect();
        let (ra, rb) = (a.runs(), b.runs());
        assert_eq!(ra.last(), Some(&a.len()));
        assert!(ra.windows(2).all(|w| w[0] < w[1] && w[1] - w[0] <= MAX_RUN));
        let shifted: Vec<usize> = rb.iter().filter(|&&e| e > 3).map(|e| e - 3).collect();
        let common = ra.iter().filter(|e| shifted.contains(e)).count();
        assert!(
            common + 2 >= ra.len(),
            "runs realign: {common} of {}",
            ra.len()
        );
        let names = Names::new();
        for table in [&a, &b] {
            let mut out = vec![Name(u32::MAX); table.len()];
            let mut start = 0;
            for end in table.runs() {
                names
                    .intern_run(table, start..end, &mut out[start..end])
                    .unwrap();
                start = end;
            }
            for (i, &n) in out.iter().enumerate() {
                assert_eq!(Some(names.get(n)), table.get(i));
            }
        }
        assert_eq!(names.len(), 3003, "each string interned once");
        // The same text cut otherwise is another run.
        let split: StringTable = ["ab", "c"].into_iter().collect();
        let other: StringTable = ["a", "bc"].into_iter().collect();
        let (mut x, mut y) = ([Name(0); 2], [Name(0); 2]);
        names.intern_run(&split, 0..2, &mut x).unwrap();
        names.intern_run(&other, 0..2, &mut y).unwrap();
        assert_eq!([names.get(y[0]), names.get(y[1])], ["a", "bc"]);
        assert_eq!([names.get(x[0]), names.get(x[1])], ["ab", "c"]);
        assert!(
            names.intern_run(&split, 1..3, &mut x).is_none(),
            "past the end"
        );
    }

    #[test]
    fn a_string_table_gives_back_its_strings() {
        let table: StringTable = ["f", "", "äb", "x"].into_iter().collect();
        assert_eq!(table.len(), 4);
        let back: Vec<Option<&str>> = (0..5).map(|i| table.get(i)).collect();
        assert_eq!(back, [Some("f"), Some(""), Some("äb"), Some("x"), None]);
        let broken = StringTable {
            text: Cow::Borrowed("äb"),
            ends: vec![1, 3],
        };
        assert_eq!(broken.get(0), None, "not on a character boundary");
        let bytes = bincode::serialize(&table).unwrap();
        let decoded = bincode::deserialize::<StringTable>(&bytes).unwrap();
        assert_eq!(decoded, table);
        assert!(
            matches!(decoded.text, Cow::Borrowed(_)),
            "the text is borrowed from the bytes"
        );
    }
}
