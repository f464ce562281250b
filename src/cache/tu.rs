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
//!
//! Nor are their bytes read: a whole kernel's cached units held 1.5 GB of bodies, 95 % of them
//! header copies. An entry's payload is the unit without its bodies (the *head*), with a
//! checksum of its own, then the bodies compressed in blocks of adjacent ones, each
//! block with its own checksum ([`blocks`]), then the list of the unit's functions, which only
//! `--list-functions` reads ([`encode_entry`]). The driver maps it without the store's checksum
//! of the whole payload ([`crate::cache::Store::read_parts`]), with the kernel's read-ahead off;
//! [`load_entry`] asks for the head and the runs of blocks holding a body it decodes
//! ([`Payload::will_need`]) and checks only those, so the pages of blocks of skipped copies are
//! never read from disk.
//!
//! Why the bodies are compressed: the defconfig's units were 3.7 GB of the cache's 5.3 GB, 1.5
//! GB of it bodies, which compressed in blocks (zstd's fastest level) take a third of that.

use anyhow::Result;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::{xxh3_128, xxh3_64};

use self::blocks::{BlockIndex, BlockReader, BlockWriter};
use super::store::{Corruption, Key, KeyBuilder, Payload};
use crate::frontend::linemap::Location;
use crate::frontend::lower::LowerOutput;
use crate::frontend::{Diagnostic, FunctionInfo};
use crate::ir::names::{Names, StringTable};
use crate::ir::rename::{rename_unit, InternOnUse};
use crate::ir::{Function, Linkage, Name, UnitIr};
use crate::link::{SkippedCopies, SkippedCopy};

mod blocks;
mod copies;

pub use self::copies::{duplicate_copies, CopyId, UnitCopies};

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
pub struct CachedUnit<'a> {
    /// The unit's interner: `Name(i)` in `unit` is `names.get(i)`. Borrowed from the entry's
    /// bytes when loaded ([`StringTable`]).
    #[serde(borrow)]
    names: StringTable<'a>,
    /// The unit's IR without its function definitions and their hashes (`unit.functions` and
    /// `unit.function_hashes` are empty).
    unit: UnitIr,
    /// Each function definition's name and linkage, in order.
    heads: Vec<(Name, Linkage)>,
    /// Each function definition's text hash (`UnitIr::function_hashes`) and where it ends
    /// among the bodies (each encoded on its own, one after the other). Stored as words, not
    /// varints ([`words`]).
    #[serde(with = "words")]
    function_hashes: Vec<u64>,
    #[serde(with = "words")]
    body_ends: Vec<u64>,
    /// The bodies' blocks, stored after this head in the entry ([`encode_entry`]).
    blocks: BlockIndex,
    external_decls: usize,
    function_definitions: usize,
    /// Syntax errors (one per skipped declaration), in order.
    parse_errors: Vec<(CachedLocation, String)>,
    /// The checksum of the file-scope function definitions' list ([`Listed`], stored
    /// compressed after the last block): read and decoded only when asked for — `relay parse --list-functions`.
    /// A kernel unit lists thousands, with their files: in the head it was a quarter of the
    /// bytes every warm run read.
    listing_sum: u64,
}

/// A `Vec<u64>` stored as one byte string of little-endian words. bincode would store each as
/// a varint: a branchy decode per element (a kernel's warm run decodes 35 million of these),
/// and 9 bytes for a hash.
mod words {
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(words: &[u64], s: S) -> Result<S::Ok, S::Error> {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        s.serialize_bytes(&bytes)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
        let bytes = serde_bytes::ByteBuf::deserialize(d)?;
        if bytes.len() % 8 != 0 {
            return Err(D::Error::custom(format!(
                "{} bytes of 8-byte words",
                bytes.len()
            )));
        }
        Ok(bytes
            .chunks_exact(8)
            .map(|c| {
                let mut w = [0u8; 8];
                w.copy_from_slice(c);
                u64::from_le_bytes(w)
            })
            .collect())
    }
}

/// What the listing after a unit's bodies encodes ([`CachedUnit::listing_sum`]).
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

impl CachedUnit<'_> {
    /// A unit just lowered with its own interner `names` (every file-scope function definition
    /// listed in `functions`), and its stored bodies (blocks) followed by that list. Fails only
    /// if zstd cannot compress (out of memory).
    pub fn from_lowered(
        names: &Names,
        out: LowerOutput,
        functions: Vec<FunctionInfo>,
    ) -> std::io::Result<(Self, Vec<u8>)> {
        let mut unit = out.unit;
        let definitions = std::mem::take(&mut unit.functions);
        let function_hashes = std::mem::take(&mut unit.function_hashes);
        let heads = definitions.iter().map(|f| (f.name, f.linkage)).collect();
        let mut writer = BlockWriter::new()?;
        let mut body_ends = Vec::with_capacity(definitions.len());
        let mut raw = 0u64;
        for f in &definitions {
            // Encoding IR cannot fail: it has no maps with non-string keys and no sequences
            // of unknown length.
            let body = super::store::encode(f).expect("IR encodes");
            writer.push(&body, f.linkage)?;
            raw += body.len() as u64;
            body_ends.push(raw);
        }
        let (mut stored, blocks) = writer.finish()?;
        let listing = super::store::compress(
            &super::store::encode(
                &functions
                    .into_iter()
                    .map(|f| (f.name, f.location.into()))
                    .collect::<Listed>(),
            )
            .expect("a function list encodes"),
        )?;
        let listing_sum = xxh3_64(&listing);
        stored.extend(listing);
        let cached = CachedUnit {
            names: (0..names.len())
                .map(|i| names.get(Name(i as u32)))
                .collect(),
            unit,
            heads,
            function_hashes,
            body_ends,
            blocks,
            external_decls: out.external_decls,
            function_definitions: out.function_definitions,
            parse_errors: out
                .parse_errors
                .into_iter()
                .map(|d| (d.location.into(), d.message))
                .collect(),
            listing_sum,
        };
        Ok((cached, stored))
    }

    /// The `static` definitions of this unit by name and text hash: what [`duplicate_copies`]
    /// compares across units.
    pub fn copies(&self) -> UnitCopies {
        let functions = self
            .heads
            .iter()
            .zip(&self.function_hashes)
            .enumerate()
            .filter(|(_, ((_, linkage), _))| *linkage == Linkage::Internal)
            .filter_map(|(i, ((name, _), &hash))| {
                let name = self.names.get(name.0 as usize)?;
                Some((i as u32, CopyId::new(name, hash)))
            })
            .collect();
        UnitCopies { functions }
    }

    /// The unit's blocks, each with whether it holds a body not at the (ascending) indices
    /// `skip`.
    fn blocks_needed<'a>(
        &'a self,
        skip: &'a [u32],
    ) -> impl Iterator<Item = (blocks::Block, bool)> + 'a {
        let mut skip = skip.iter().map(|&i| i as usize).peekable();
        blocks::blocks(&self.blocks, &self.body_ends).map(move |block| {
            let mut skipped = 0;
            while let Some(i) = skip.next_if(|&i| i < block.bodies.end) {
                skipped += usize::from(i >= block.bodies.start);
            }
            let needed = skipped < block.bodies.len();
            (block, needed)
        })
    }

    /// Where the parts [`Self::into_program`] reads with `skip` and `list_functions` lie among
    /// the bytes after the head (its blocks and function list): runs of adjacent parts, in
    /// order. Out-of-range ends are left to `into_program` to report.
    fn parts_read(&self, skip: &[u32], list_functions: bool) -> Vec<std::ops::Range<usize>> {
        let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
        let mut add = |part: std::ops::Range<usize>| match runs.last_mut() {
            Some(run) if run.end == part.start => run.end = part.end,
            _ => runs.push(part),
        };
        for (block, needed) in self.blocks_needed(skip) {
            if needed && block.stored.start <= block.stored.end {
                add(block.stored);
            }
        }
        if list_functions {
            add(blocks::blocks_end(&self.blocks)..usize::MAX);
        }
        runs
    }

    /// The unit under the program's `names`, its definitions decoded from `stored` (the bytes
    /// after the head) but those at the (ascending) indices `skip`, with its function list if
    /// `list_functions`. Fails only on an entry that does not describe a unit (a name out of
    /// range, a type table that is not hash-consed, a block that fails its checksum or does not
    /// decompress, a body that does not decode, a function list that does not decode).
    pub fn into_program(
        self,
        stored: &[u8],
        names: &Names,
        skip: &[u32],
        list_functions: bool,
    ) -> Result<LoadedUnit> {
        let (functions, function_hashes, skipped) = self.decode_bodies(stored, skip)?;
        let listed = match list_functions {
            true => self.listing(stored)?,
            false => Vec::new(),
        };
        let mut unit = self.unit;
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
            functions: listed
                .into_iter()
                .map(|(name, location)| FunctionInfo {
                    name,
                    location: location.into(),
                })
                .collect(),
        })
    }

    /// The definitions not at the (ascending) indices `skip`, decoded from the blocks in
    /// `stored` that hold one (with their hashes), and the skipped ones as copies (under the
    /// unit's names).
    fn decode_bodies(&self, stored: &[u8], skip: &[u32]) -> Result<Decoded> {
        let n = self.body_ends.len();
        anyhow::ensure!(
            self.heads.len() == n && self.function_hashes.len() == n,
            "{} function heads, {} bodies, {} hashes",
            self.heads.len(),
            n,
            self.function_hashes.len()
        );
        anyhow::ensure!(
            blocks::covers(&self.blocks, n),
            "the blocks do not hold the {n} bodies"
        );
        let mut reader = BlockReader::new()?;
        let (mut functions, mut kept_hashes, mut skipped) = (Vec::new(), Vec::new(), Vec::new());
        let mut skips = skip.iter().map(|&i| i as usize).peekable();
        for (block, needed) in self.blocks_needed(skip) {
            let bytes = match needed {
                true => Some(reader.read(&self.blocks, &block, stored)?),
                false => None,
            };
            for i in block.bodies.clone() {
                if skips.next_if_eq(&i).is_some() {
                    skipped.push(SkippedCopy {
                        name: self.heads[i].0,
                        hash: self.function_hashes[i],
                    });
                    continue;
                }
                let start = i
                    .checked_sub(1)
                    .map_or(0, |b| blocks::offset(self.body_ends[b]));
                let end = blocks::offset(self.body_ends[i]);
                let body = bytes
                    .zip(start.checked_sub(block.raw.start))
                    .zip(end.checked_sub(block.raw.start))
                    .and_then(|((bytes, start), end)| bytes.get(start..end))
                    .ok_or_else(|| anyhow::anyhow!("body {i} out of range"))?;
                functions.push(super::store::decode::<Function>(body)?);
                kept_hashes.push(self.function_hashes[i]);
            }
        }
        Ok((functions, kept_hashes, skipped))
    }

    /// The function list stored after the blocks in `stored`, checked.
    fn listing(&self, stored: &[u8]) -> Result<Listed, Corruption> {
        let bytes = stored
            .get(blocks::blocks_end(&self.blocks)..)
            .ok_or(Corruption::Truncated(stored.len()))?;
        if xxh3_64(bytes) != self.listing_sum {
            return Err(Corruption::Checksum);
        }
        super::store::decode(&super::store::decompress(bytes)?)
            .map_err(|e| Corruption::Decode(e.to_string()))
    }
}

/// The definitions not skipped decoded (with their hashes), and the skipped ones as copies
/// (under the unit's names).
type Decoded = (Vec<Function>, Vec<u64>, Vec<SkippedCopy>);

/// A unit entry's payload: the length of the head (8 bytes), its checksum (16), the head (the
/// [`CachedUnit`], bincode), then the blocks and the function list.
///
/// The head is not compressed: every warm run decodes every unit's head (1.6 GB on the
/// defconfig), and decompressing it first cost ~1.8 CPU-s (~1 s) of a 17 s re-run, measured
/// in alternation, for 0.8 GB on disk.
pub fn encode_entry(unit: &CachedUnit, stored: &[u8]) -> Result<Vec<u8>> {
    let head = super::store::encode(unit)?;
    let mut payload = Vec::with_capacity(24 + head.len() + stored.len());
    payload.extend((head.len() as u64).to_le_bytes());
    payload.extend(xxh3_128(&head).to_le_bytes());
    payload.extend(&head);
    payload.extend(stored);
    Ok(payload)
}

/// A payload [`encode_entry`] made, split ([`split_entry`]).
struct Split<'a> {
    /// The head, not yet checked.
    head: &'a [u8],
    sum: &'a [u8; 16],
    /// The blocks, then the function list.
    stored: &'a [u8],
}

/// A payload [`encode_entry`] made, split into its parts. Reads only its first 24 bytes.
fn split_entry(payload: &[u8]) -> Result<Split<'_>, Corruption> {
    let truncated = || Corruption::Truncated(payload.len());
    let (len, rest) = payload.split_first_chunk::<8>().ok_or_else(truncated)?;
    let (sum, rest) = rest.split_first_chunk::<16>().ok_or_else(truncated)?;
    let len = u64::from_le_bytes(*len);
    let head = usize::try_from(len)
        .ok()
        .and_then(|len| rest.get(..len))
        .ok_or(Corruption::Length {
            header: len,
            actual: rest.len() as u64,
        })?;
    Ok(Split {
        head,
        sum,
        stored: &rest[head.len()..],
    })
}

/// The head [`split_entry`] found, checked against `sum` and decoded.
fn decode_head<'a>(head: &'a [u8], sum: &[u8; 16]) -> Result<CachedUnit<'a>, Corruption> {
    if xxh3_128(head).to_le_bytes() != *sum {
        return Err(Corruption::Checksum);
    }
    super::store::decode(head).map_err(|e| Corruption::Decode(e.to_string()))
}

/// The head of a payload [`encode_entry`] made, checked, and its blocks (checked one by one
/// when read, [`CachedUnit::into_program`]).
#[cfg(test)]
fn decode_entry(payload: &[u8]) -> Result<(CachedUnit<'_>, &[u8]), Corruption> {
    let split = split_entry(payload)?;
    Ok((decode_head(split.head, split.sum)?, split.stored))
}

/// The unit a stored entry holds ([`crate::cache::Store::read_parts`]), under the program's
/// `names`, without its definitions `skip` ([`CachedUnit::into_program`]). The entry's mapping
/// reads nothing ahead: the head, then each run of blocks read, is asked for before it is
/// read ([`Payload::will_need`]), so the pages of blocks of skipped copies are never read.
pub fn load_entry(
    payload: &Payload,
    names: &Names,
    skip: &[u32],
    list_functions: bool,
) -> Result<LoadedUnit, Corruption> {
    let Split { head, sum, stored } = split_entry(payload)?;
    let at = payload.len() - stored.len();
    payload.will_need(0..at);
    let cached = decode_head(head, sum)?;
    for run in cached.parts_read(skip, list_functions) {
        payload.will_need(at.saturating_add(run.start)..at.saturating_add(run.end));
    }
    cached
        .into_program(stored, names, skip, list_functions)
        .map_err(|e| Corruption::Decode(format!("{e:#}")))
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

    /// A block is checked when a body in it is decoded, and only then: a corrupt block of
    /// skipped copies does not stop the unit from loading; decoded, it fails. A corrupt head
    /// fails at once.
    #[test]
    fn only_the_blocks_decoded_are_checked() {
        let own = Names::new();
        // Two blocks: the linkage changes.
        let text = "static int a(int x) { return x + 1; }\nint b(void) { return 2; }\n";
        let out = crate::frontend::lower::lower_unit("u.i".into(), text, &own);
        let (cached, stored) = CachedUnit::from_lowered(&own, out, Vec::new()).unwrap();
        let first = blocks::blocks(&cached.blocks, &cached.body_ends)
            .next()
            .unwrap();
        assert_eq!(first.bodies, 0..1);
        let mut payload = encode_entry(&cached, &stored).unwrap();
        let stored_at = payload.len() - stored.len();
        payload[stored_at + first.stored.end - 1] ^= 0xff;
        let names = Names::new();
        let (head, stored) = decode_entry(&payload).unwrap();
        let loaded = head.into_program(stored, &names, &[0], false).unwrap();
        assert_eq!(loaded.unit.functions.len(), 1);
        assert_eq!(loaded.skipped.count, 1);
        let (head, stored) = decode_entry(&payload).unwrap();
        let Err(failed) = head.into_program(stored, &names, &[], false) else {
            panic!("a corrupt block decoded");
        };
        assert!(
            failed.to_string().contains("block 0: checksum"),
            "{failed:#}"
        );
        payload[stored_at - 1] ^= 0xff;
        assert_eq!(decode_entry(&payload).err(), Some(Corruption::Checksum));
    }

    /// A unit stored and loaded again has the definitions it was lowered with, decoded from
    /// its blocks, with those skipped left out.
    #[test]
    fn a_stored_unit_loads_its_definitions() {
        let own = Names::new();
        let text: String = (0..300)
            .map(|i| format!("static int s{i}(int x) {{ return x + {i}; }}\nint e{i}(void) {{ return s{i}(1); }}\n"))
            .collect();
        let out = crate::frontend::lower::lower_unit("u.i".into(), &text, &own);
        let (cached, stored) = CachedUnit::from_lowered(&own, out, Vec::new()).unwrap();
        let payload = encode_entry(&cached, &stored).unwrap();
        let names = Names::new();
        let (head, stored) = decode_entry(&payload).unwrap();
        let skip: Vec<u32> = (0..600).step_by(2).collect();
        let loaded = head.into_program(stored, &names, &skip, false).unwrap();
        assert_eq!(loaded.skipped.count, 300);
        let defined: Vec<&str> = loaded
            .unit
            .functions
            .iter()
            .map(|f| names.get(f.name))
            .collect();
        let expected: Vec<String> = (0..300).map(|i| format!("e{i}")).collect();
        assert_eq!(defined, expected);
    }

    /// Words round-trip, and a byte string that is not whole words is an error, not a panic.
    #[test]
    fn words_round_trip_and_reject_a_partial_word() {
        #[derive(Serialize, Deserialize, PartialEq, Debug)]
        struct W(#[serde(with = "words")] Vec<u64>);
        let w = W(vec![0, 1, u64::MAX, 0x0102_0304_0506_0708]);
        let bytes = super::super::store::encode(&w).unwrap();
        assert_eq!(super::super::store::decode::<W>(&bytes).unwrap(), w);
        #[derive(Serialize)]
        struct Odd(#[serde(with = "serde_bytes")] Vec<u8>);
        let odd = super::super::store::encode(&Odd(vec![1, 2, 3])).unwrap();
        assert!(super::super::store::decode::<W>(&odd).is_err());
    }

    /// The parts a load reads are the blocks holding a body it decodes, adjacent ones in one
    /// run, and the function list only when asked for.
    #[test]
    fn the_parts_read_leave_out_blocks_of_skipped_bodies() {
        let own = Names::new();
        let text = "static int a(void) { return 1; }\nstatic int b(void) { return 2; }\n\
                    static int c(void) { return 3; }\nint d(void) { return 4; }\n";
        let out = crate::frontend::lower::lower_unit("u.i".into(), text, &own);
        let (cached, stored) = CachedUnit::from_lowered(&own, out, Vec::new()).unwrap();
        let walked: Vec<blocks::Block> =
            blocks::blocks(&cached.blocks, &cached.body_ends).collect();
        let bodies: Vec<_> = walked.iter().map(|b| b.bodies.clone()).collect();
        assert_eq!(
            bodies,
            vec![0..3, 3..4],
            "a block ends where the linkage changes"
        );
        let (first, second) = (walked[0].stored.clone(), walked[1].stored.clone());
        assert_eq!(cached.parts_read(&[], false), vec![0..second.end]);
        assert_eq!(cached.parts_read(&[1], false), vec![0..second.end]);
        assert_eq!(cached.parts_read(&[0, 1, 2], false), vec![second.clone()]);
        assert_eq!(
            cached.parts_read(&[3], true),
            vec![first, second.end..usize::MAX]
        );
        assert!(stored.len() > second.end);
    }

    /// The function list lies after the blocks, outside the head: a unit loads without reading
    /// it, and only a run that lists functions reads and checks it.
    #[test]
    fn the_function_list_is_read_only_when_asked_for() {
        let own = Names::new();
        let text = "int a(int x) { return x + 1; }\n";
        let out = crate::frontend::lower::lower_unit("u.i".into(), text, &own);
        let info = FunctionInfo {
            name: "a".into(),
            location: Location {
                file: "u.i".into(),
                line: 1,
                col: 5,
            },
        };
        let (cached, stored) = CachedUnit::from_lowered(&own, out, vec![info]).unwrap();
        assert!(
            stored.len() > blocks::blocks_end(&cached.blocks),
            "the list follows the blocks"
        );
        let names = Names::new();
        let payload = encode_entry(&cached, &stored).unwrap();
        let (head, stored) = decode_entry(&payload).unwrap();
        let listed = head.into_program(stored, &names, &[], true).unwrap();
        assert_eq!(listed.functions.len(), 1);
        assert_eq!(listed.functions[0].name, "a");
        let mut damaged = payload.clone();
        let last = damaged.len() - 1;
        damaged[last] ^= 0xff;
        let (head, stored) = decode_entry(&damaged).unwrap();
        let loaded = head.into_program(stored, &names, &[], false).unwrap();
        assert_eq!(loaded.unit.functions.len(), 1);
        let (head, stored) = decode_entry(&damaged).unwrap();
        assert!(head.into_program(stored, &names, &[], true).is_err());
    }
}
