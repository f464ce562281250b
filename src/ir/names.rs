//! Program-wide interned names, shared by all units lowered in parallel.

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
        }
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StringTable {
    text: String,
    ends: Vec<u32>,
}

impl Serialize for StringTable {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let lens: Vec<u32> = (self.ends.iter())
            .scan(0, |start, &end| Some(end - std::mem::replace(start, end)))
            .collect();
        (&self.text, lens).serialize(s)
    }
}

impl<'de> Deserialize<'de> for StringTable {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (text, lens): (String, Vec<u32>) = Deserialize::deserialize(d)?;
        let ends = (lens.into_iter())
            .scan(0u32, |end, len| {
                *end = end.saturating_add(len);
                Some(*end)
            })
            .collect();
        Ok(StringTable { text, ends })
    }
}

impl StringTable {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The `i`-th string (`None` out of range, or if the table is not well formed).
    pub fn get(&self, i: usize) -> Option<&str> {
        let start = match i {
            0 => 0,
            _ => *self.ends.get(i - 1)? as usize,
        };
        self.text.get(start..*self.ends.get(i)? as usize)
    }
}

impl<'s> FromIterator<&'s str> for StringTable {
    fn from_iter<I: IntoIterator<Item = &'s str>>(strings: I) -> Self {
        let mut table = StringTable::default();
        for s in strings {
            table.text.push_str(s);
            table.ends.push(table.text.len() as u32);
        }
        table
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
    fn a_string_table_gives_back_its_strings() {
        let table: StringTable = ["f", "", "äb", "x"].into_iter().collect();
        assert_eq!(table.len(), 4);
        let back: Vec<Option<&str>> = (0..5).map(|i| table.get(i)).collect();
        assert_eq!(back, [Some("f"), Some(""), Some("äb"), Some("x"), None]);
        let broken = StringTable {
            text: "äb".into(),
            ends: vec![1, 3],
        };
        assert_eq!(broken.get(0), None, "not on a character boundary");
        let bytes = bincode::serialize(&table).unwrap();
        assert_eq!(bincode::deserialize::<StringTable>(&bytes).unwrap(), table);
    }
}
