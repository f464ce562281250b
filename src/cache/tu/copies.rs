//! A unit's `static` definitions by identity (kind [`super::COPIES_KIND`]): what the driver
//! reads of every cached unit before loading any, to tell each unit which bodies a unit before
//! it holds too ([`duplicate_copies`]).
//!
//! Stored as one byte string of fixed 20-byte records, not as bincode's varints: the
//! defconfig's units list 11.4 million definitions, and decoding two 9-byte varints of random
//! hashes each was ~5 % of a warm run's samples.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A `static` definition's identity across units: the hash of its name and its text hash (the
/// linker merges definitions with the same name and text hash).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct CopyId(u64, u64);

impl CopyId {
    pub(super) fn new(name: &str, text_hash: u64) -> Self {
        let h = blake3::hash(name.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&h.as_bytes()[..8]);
        CopyId(u64::from_le_bytes(first), text_hash)
    }
}

/// A unit's `static` definitions: (index among its definitions, identity).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct UnitCopies {
    pub functions: Vec<(u32, CopyId)>,
}

/// The bytes of one stored definition: its index (4, little-endian), then its identity's two
/// words (8 each).
const RECORD: usize = 20;

impl Serialize for UnitCopies {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut bytes = Vec::with_capacity(self.functions.len() * RECORD);
        for (i, CopyId(name, text)) in &self.functions {
            bytes.extend(i.to_le_bytes());
            bytes.extend(name.to_le_bytes());
            bytes.extend(text.to_le_bytes());
        }
        s.serialize_bytes(&bytes)
    }
}

impl<'de> Deserialize<'de> for UnitCopies {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let bytes: &[u8] = serde_bytes::deserialize(d)?;
        if !bytes.len().is_multiple_of(RECORD) {
            return Err(D::Error::custom(format!(
                "{} bytes of {RECORD}-byte records",
                bytes.len()
            )));
        }
        let word = |b: &[u8]| {
            let mut w = [0u8; 8];
            w.copy_from_slice(b);
            u64::from_le_bytes(w)
        };
        let functions = bytes
            .chunks_exact(RECORD)
            .map(|r| {
                let mut i = [0u8; 4];
                i.copy_from_slice(&r[..4]);
                let id = CopyId(word(&r[4..12]), word(&r[12..]));
                (u32::from_le_bytes(i), id)
            })
            .collect();
        Ok(UnitCopies { functions })
    }
}

/// For each unit (by index; `None` for a unit whose copies are not known), the ascending
/// indices of its `static` definitions that a unit with a lower index also holds. The linker
/// keeps the copy of the lowest unit, so those bodies need not be loaded — provided every unit
/// with copies listed here is linked (the driver checks).
pub fn duplicate_copies(units: &[Option<UnitCopies>]) -> Vec<Vec<u32>> {
    let mut seen: rustc_hash::FxHashSet<CopyId> = rustc_hash::FxHashSet::default();
    units
        .iter()
        .map(|copies| {
            let Some(copies) = copies else {
                return Vec::new();
            };
            copies
                .functions
                .iter()
                .filter(|(_, id)| !seen.insert(*id))
                .map(|&(i, _)| i)
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Copies round-trip through the cache's encoding; bytes that are not whole records are
    /// an error, not a panic.
    #[test]
    fn copies_round_trip_and_reject_a_partial_record() {
        let copies = UnitCopies {
            functions: vec![(0, CopyId::new("f", 1)), (7, CopyId(u64::MAX, 0))],
        };
        let bytes = crate::cache::store::encode(&copies).unwrap();
        let back: UnitCopies = crate::cache::store::decode(&bytes).unwrap();
        assert_eq!(back, copies);
        #[derive(Serialize)]
        struct Odd(#[serde(with = "serde_bytes")] Vec<u8>);
        let odd = crate::cache::store::encode(&Odd(vec![1; 21])).unwrap();
        assert!(crate::cache::store::decode::<UnitCopies>(&odd).is_err());
    }

    /// A definition a lower unit holds too (same name and text) is a duplicate; one with the
    /// same name and another text is not.
    #[test]
    fn duplicates_are_those_an_earlier_unit_holds() {
        let unit = |ids: &[(&str, u64)]| {
            Some(UnitCopies {
                functions: (ids.iter().enumerate())
                    .map(|(i, &(name, text))| (i as u32, CopyId::new(name, text)))
                    .collect(),
            })
        };
        let units = [
            unit(&[("a", 1), ("b", 2)]),
            None,
            unit(&[("b", 2), ("a", 9), ("c", 3)]),
        ];
        assert_eq!(duplicate_copies(&units), vec![vec![], vec![], vec![0]]);
    }
}
