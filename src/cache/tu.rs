//! The `tu` cache kind: one translation unit parsed and lowered to IR.
//!
//! The key is a hash of the unit's name (locations in a unit without line markers are reported
//! under it) and its preprocessed text, on top of the relay version and build that every key has.
//! Lowering has no options today; any that appear must be added to [`unit_key`].
//!
//! [`Name`]s are program-wide interned ids, numbered in whatever order the parallel units reach
//! the interner, so a unit's IR cannot be stored with them. A cached unit is lowered with its own
//! interner instead and stored with that interner's strings ([`CachedUnit::names`]); loading it
//! interns the strings into the program's [`Names`] and renames every `Name` in the unit. The
//! driver takes the same path for a unit it has just lowered, so a cold and a warm run link the
//! same units.
//!
//! A kernel unit holds thousands of `static inline` definitions from headers, and the linker
//! keeps one copy of each (the one in the unit with the lowest index). Each definition is
//! therefore encoded on its own, and a small second entry (kind [`COPIES_KIND`]) lists the
//! unit's `static` definitions by name and text hash: the driver reads those first and tells
//! each unit which bodies a unit before it holds too ([`duplicate_copies`]), so those are never
//! decoded, renamed or linked — the linker counts them as copies ([`SkippedCopy`]).

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::store::{Key, KeyBuilder};
use crate::frontend::linemap::Location;
use crate::frontend::lower::LowerOutput;
use crate::frontend::{Diagnostic, FunctionInfo};
use crate::ir::names::{Names, StringTable};
use crate::ir::rename::{rename_unit, InternOnUse};
use crate::ir::{Function, Linkage, Name, UnitIr};
use crate::link::{SkippedCopies, SkippedCopy};

/// The kind name of a unit's list of `static` definitions ([`UnitCopies`]), stored with the unit
/// under the same key.
pub const COPIES_KIND: &str = "tu-copies";

/// The kind name of cached units.
pub const KIND: &str = "tu";

/// The key of a unit named `tu` whose preprocessed text is `text` (as read: bytes that are
/// not UTF-8 are hashed as they are).
pub fn unit_key(tu: &str, text: &[u8]) -> Key {
    KeyBuilder::new(KIND).str(tu).bytes(text).finish()
}

/// [`unit_key`] of a preprocessed file and its size, read through a small buffer: probing
/// every unit of a re-run hashes gigabytes of text, which need not be held.
pub fn file_key(tu: &str, path: &std::path::Path) -> std::io::Result<(Key, u64)> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let mut k = KeyBuilder::new(KIND);
    k.str(tu);
    k.bytes_from(len, &mut file)?;
    Ok((k.finish(), len))
}

/// A source location, as stored (the front end's own type is not deserializable).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
struct CachedLocation {
    file: String,
    line: u32,
    col: u32,
}

impl From<Location> for CachedLocation {
    fn from(l: Location) -> Self {
        CachedLocation {
            file: l.file,
            line: l.line,
            col: l.col,
        }
    }
}

impl From<CachedLocation> for Location {
    fn from(l: CachedLocation) -> Self {
        Location {
            file: l.file,
            line: l.line,
            col: l.col,
        }
    }
}

/// Everything the driver reports about a unit, with the unit's IR under its own names.
#[derive(Serialize, Deserialize)]
pub struct CachedUnit {
    /// The unit's interner: `Name(i)` in `unit` is `names.get(i)`.
    names: StringTable,
    /// The unit's IR without its function definitions (`unit.functions` is empty;
    /// `unit.function_hashes` is not).
    unit: UnitIr,
    /// Each function definition's name and linkage, in order.
    heads: Vec<(Name, Linkage)>,
    /// The function definitions, each encoded on its own, one after the other: the `i`-th ends
    /// at `body_ends[i]`.
    #[serde(with = "serde_bytes")]
    bodies: Vec<u8>,
    body_ends: Vec<u64>,
    external_decls: usize,
    function_definitions: usize,
    /// Syntax errors (one per skipped declaration), in order.
    parse_errors: Vec<(CachedLocation, String)>,
    /// File-scope function definitions, in order ([`Listed`], encoded: decoded only when asked
    /// for — `relay parse --list-functions` —, a kernel unit lists thousands).
    #[serde(with = "serde_bytes")]
    functions: Vec<u8>,
}

/// What [`CachedUnit::functions`] encodes.
type Listed = Vec<(String, CachedLocation)>;

/// A unit ready for the linker: its IR under the program's names.
pub struct LoadedUnit {
    pub unit: UnitIr,
    /// The definitions left out of `unit.functions` because an earlier unit holds them too.
    pub skipped: SkippedCopies,
    pub external_decls: usize,
    pub function_definitions: usize,
    pub parse_errors: Vec<Diagnostic>,
    pub functions: Vec<FunctionInfo>,
}

impl CachedUnit {
    /// A unit just lowered with its own interner `names` (every file-scope function definition
    /// listed in `functions`).
    pub fn from_lowered(names: &Names, out: LowerOutput, functions: Vec<FunctionInfo>) -> Self {
        let mut unit = out.unit;
        let definitions = std::mem::take(&mut unit.functions);
        let heads = definitions.iter().map(|f| (f.name, f.linkage)).collect();
        let mut bodies = Vec::new();
        let mut body_ends = Vec::with_capacity(definitions.len());
        for f in &definitions {
            // Encoding IR cannot fail: it has no maps with non-string keys and no sequences
            // of unknown length.
            bodies.extend(super::store::encode(f).expect("IR encodes"));
            body_ends.push(bodies.len() as u64);
        }
        CachedUnit {
            names: (0..names.len())
                .map(|i| names.get(Name(i as u32)))
                .collect(),
            unit,
            heads,
            bodies,
            body_ends,
            external_decls: out.external_decls,
            function_definitions: out.function_definitions,
            parse_errors: out
                .parse_errors
                .into_iter()
                .map(|d| (d.location.into(), d.message))
                .collect(),
            functions: super::store::encode(
                &functions
                    .into_iter()
                    .map(|f| (f.name, f.location.into()))
                    .collect::<Listed>(),
            )
            .expect("a function list encodes"),
        }
    }

    /// The `static` definitions of this unit by name and text hash: what [`duplicate_copies`]
    /// compares across units.
    pub fn copies(&self) -> UnitCopies {
        let functions = self
            .heads
            .iter()
            .zip(&self.unit.function_hashes)
            .enumerate()
            .filter(|(_, ((_, linkage), _))| *linkage == Linkage::Internal)
            .filter_map(|(i, ((name, _), &hash))| {
                let name = self.names.get(name.0 as usize)?;
                Some((i as u32, CopyId::new(name, hash)))
            })
            .collect();
        UnitCopies { functions }
    }

    /// The unit under the program's `names`, without the definitions at the (ascending)
    /// indices `skip`, with its function list if `list_functions`. Fails only on an entry that
    /// does not describe a unit (a name out of range, a type table that is not hash-consed, a
    /// body or the function list that does not decode).
    pub fn into_program(
        self,
        names: &Names,
        skip: &[u32],
        list_functions: bool,
    ) -> Result<LoadedUnit> {
        let mut unit = self.unit;
        let (functions, function_hashes, skipped) = decode_bodies(
            &self.heads,
            &self.bodies,
            &self.body_ends,
            &unit.function_hashes,
            skip,
        )?;
        unit.functions = functions;
        unit.function_hashes = function_hashes;
        let map = rename_unit(&mut unit, InternOnUse::new(&self.names, names))?;
        // The rest of the unit is renamed: a skipped copy whose name it did not meet cannot be
        // named by it, and its name is not interned.
        let skipped = SkippedCopies {
            count: skipped.len(),
            named: skipped
                .into_iter()
                .filter_map(|copy| {
                    Some(SkippedCopy {
                        name: map.interned(copy.name)?,
                        hash: copy.hash,
                    })
                })
                .collect(),
        };
        Ok(LoadedUnit {
            unit,
            skipped,
            external_decls: self.external_decls,
            function_definitions: self.function_definitions,
            parse_errors: self
                .parse_errors
                .into_iter()
                .map(|(location, message)| Diagnostic {
                    location: location.into(),
                    message,
                })
                .collect(),
            functions: match list_functions {
                true => super::store::decode::<Listed>(&self.functions)?
                    .into_iter()
                    .map(|(name, location)| FunctionInfo {
                        name,
                        location: location.into(),
                    })
                    .collect(),
                false => Vec::new(),
            },
        })
    }
}

/// The definitions not at the indices `skip` decoded (with their hashes), and the skipped ones
/// as copies (under the unit's names).
type Decoded = (Vec<Function>, Vec<u64>, Vec<SkippedCopy>);

fn decode_bodies(
    heads: &[(Name, Linkage)],
    bodies: &[u8],
    ends: &[u64],
    hashes: &[u64],
    skip: &[u32],
) -> Result<Decoded> {
    anyhow::ensure!(
        heads.len() == ends.len() && hashes.len() == ends.len(),
        "{} function heads, {} bodies, {} hashes",
        heads.len(),
        ends.len(),
        hashes.len()
    );
    let mut skip = skip.iter().copied().peekable();
    let (mut functions, mut kept_hashes, mut skipped) = (Vec::new(), Vec::new(), Vec::new());
    let mut start = 0usize;
    for (i, &end) in ends.iter().enumerate() {
        let end = usize::try_from(end)?;
        let bytes = bodies
            .get(start..end)
            .ok_or_else(|| anyhow::anyhow!("body {i} out of range"))?;
        start = end;
        if skip.next_if_eq(&(i as u32)).is_some() {
            skipped.push(SkippedCopy {
                name: heads[i].0,
                hash: hashes[i],
            });
            continue;
        }
        functions.push(super::store::decode::<Function>(bytes)?);
        kept_hashes.push(hashes[i]);
    }
    Ok((functions, kept_hashes, skipped))
}

/// A `static` definition's identity across units: the hash of its name and its text hash (the
/// linker merges definitions with the same name and text hash).
#[derive(Serialize, Deserialize, Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct CopyId(u64, u64);

impl CopyId {
    fn new(name: &str, text_hash: u64) -> Self {
        let h = blake3::hash(name.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&h.as_bytes()[..8]);
        CopyId(u64::from_le_bytes(first), text_hash)
    }
}

/// A unit's `static` definitions: (index among its definitions, identity).
#[derive(Serialize, Deserialize, Debug, Default)]
pub struct UnitCopies {
    pub functions: Vec<(u32, CopyId)>,
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

    /// The probe hashes a file as it streams it; a unit read whole hashes its bytes: the keys
    /// agree, also on bytes that are not UTF-8 (the text replaces them, the key does not).
    #[test]
    fn a_streamed_file_has_the_key_of_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("u.i");
        let mut text = b"int x; /* \xff\xfe */\n".repeat(10_000);
        text.extend(b"int y;\n");
        std::fs::write(&path, &text).unwrap();
        let (key, len) = file_key("u.i", &path).unwrap();
        assert_eq!(len, text.len() as u64);
        assert_eq!(key, unit_key("u.i", &text));
        assert_ne!(key, unit_key("v.i", &text));
    }
}
