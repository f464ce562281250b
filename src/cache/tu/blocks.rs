//! A cached unit's bodies, stored compressed in blocks of adjacent bodies.
//!
//! Why blocks, and how big: on the whole kernel a unit holds thousands of definitions of ~134
//! bytes on average (header `static inline`s), and a warm run decodes ~5 % of their bytes —
//! the rest are copies an earlier unit holds ([`super::duplicate_copies`]), never read from
//! disk. zstd compresses a body on its own 1.3 times; blocks of ~16 KB compress 3.2 times
//! (1.54 GB → 0.48 GB on the defconfig), and a warm run then decompresses the blocks holding a
//! body it decodes: ~10 % of the bytes. A block also ends where the definitions' linkage
//! changes: a unit's external definitions are never copies, its header `static inline`s mostly
//! are, so mixed blocks would be decompressed for few bodies (16 KB blocks cut at linkage
//! changes touch 161 MB of the defconfig's bodies, against 210 MB cut by size alone).
//!
//! A block's checksum is that of its stored bytes: a damaged block fails before it is
//! decompressed, and a block that holds only skipped copies is never checked, nor read.

use std::ops::Range;

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

use crate::cache::store::{Corruption, COMPRESSION_LEVEL};
use crate::ir::Linkage;

/// A block is ended once it holds this many bytes of encoded bodies.
const BLOCK_BYTES: usize = 16 * 1024;

/// Where a unit's blocks lie: one entry per block, in order.
#[derive(Serialize, Deserialize, Default, Debug, PartialEq, Eq)]
pub(super) struct BlockIndex {
    /// Where each block's stored bytes end among the stored blocks.
    #[serde(with = "super::words")]
    ends: Vec<u64>,
    /// One past the index of each block's last body.
    #[serde(with = "super::words")]
    bodies: Vec<u64>,
    /// The checksum (XXH3-64) of each block's stored bytes.
    #[serde(with = "super::words")]
    sums: Vec<u64>,
}

/// Encoded bodies, gathered into blocks and compressed ([`BlockWriter::finish`]).
pub(super) struct BlockWriter {
    compressor: zstd::bulk::Compressor<'static>,
    stored: Vec<u8>,
    /// The encoded bodies of the block being filled.
    block: Vec<u8>,
    linkage: Option<Linkage>,
    bodies: u64,
    index: BlockIndex,
}

impl BlockWriter {
    pub(super) fn new() -> std::io::Result<Self> {
        Ok(BlockWriter {
            compressor: zstd::bulk::Compressor::new(COMPRESSION_LEVEL)?,
            stored: Vec::new(),
            block: Vec::new(),
            linkage: None,
            bodies: 0,
            index: BlockIndex::default(),
        })
    }

    /// Adds the next body, encoded, of a definition with `linkage`.
    pub(super) fn push(&mut self, body: &[u8], linkage: Linkage) -> std::io::Result<()> {
        if self.block.len() >= BLOCK_BYTES || self.linkage.is_some_and(|l| l != linkage) {
            self.end_block()?;
        }
        self.linkage = Some(linkage);
        self.block.extend_from_slice(body);
        self.bodies += 1;
        Ok(())
    }

    fn end_block(&mut self) -> std::io::Result<()> {
        if self.bodies == self.index.bodies.last().copied().unwrap_or(0) {
            return Ok(());
        }
        let stored = self.compressor.compress(&self.block)?;
        self.index.sums.push(xxh3_64(&stored));
        self.stored.extend_from_slice(&stored);
        self.index.ends.push(self.stored.len() as u64);
        self.index.bodies.push(self.bodies);
        self.block.clear();
        Ok(())
    }

    /// The stored blocks, one after the other, and where they lie.
    pub(super) fn finish(mut self) -> std::io::Result<(Vec<u8>, BlockIndex)> {
        self.end_block()?;
        Ok((self.stored, self.index))
    }
}

/// One block of a unit as [`blocks`] walks them.
pub(super) struct Block {
    /// Its stored bytes' range among the stored blocks (`usize::MAX` for an end that does not
    /// fit: out of range).
    pub stored: Range<usize>,
    /// The indices of its bodies.
    pub bodies: Range<usize>,
    /// Its bytes' range among the unit's encoded bodies, one after the other (the offsets of
    /// `body_ends`).
    pub raw: Range<usize>,
    /// Its index.
    pub index: usize,
}

/// The unit's blocks, given where each encoded body ends among all of them (`body_ends`).
/// Ends that are out of range give ranges that are, for the reader to report.
pub(super) fn blocks<'a>(
    index: &'a BlockIndex,
    body_ends: &'a [u64],
) -> impl Iterator<Item = Block> + 'a {
    let (mut stored_start, mut first) = (0usize, 0usize);
    index
        .ends
        .iter()
        .zip(&index.bodies)
        .enumerate()
        .map(move |(i, (&end, &last))| {
            let end = offset(end);
            let last = offset(last);
            let raw_start = first
                .checked_sub(1)
                .map_or(Some(0), |b| end_of(body_ends, b));
            let raw_end = last.checked_sub(1).and_then(|b| end_of(body_ends, b));
            Block {
                stored: std::mem::replace(&mut stored_start, end)..end,
                bodies: std::mem::replace(&mut first, last)..last,
                raw: raw_start.unwrap_or(usize::MAX)..raw_end.unwrap_or(usize::MAX),
                index: i,
            }
        })
}

fn end_of(body_ends: &[u64], body: usize) -> Option<usize> {
    body_ends.get(body).map(|&e| offset(e))
}

/// Where the last block ends (and what follows the blocks starts): 0 without blocks.
pub(super) fn blocks_end(index: &BlockIndex) -> usize {
    index.ends.last().map_or(0, |&end| offset(end))
}

/// Whether the index describes `bodies` bodies: as many ends, body counts and checksums, each
/// block holding at least one body, and the last ending with the last body.
pub(super) fn covers(index: &BlockIndex, bodies: usize) -> bool {
    index.ends.len() == index.bodies.len()
        && index.sums.len() == index.bodies.len()
        && index.bodies.first().is_none_or(|&b| b > 0)
        && index.bodies.windows(2).all(|w| w[0] < w[1])
        && index.bodies.last().map_or(0, |&b| offset(b)) == bodies
}

/// A stored offset, `usize::MAX` if it does not fit (out of range wherever it is used).
pub(super) fn offset(stored: u64) -> usize {
    usize::try_from(stored).unwrap_or(usize::MAX)
}

/// Decompresses stored blocks into one reused buffer.
pub(super) struct BlockReader {
    decompressor: zstd::bulk::Decompressor<'static>,
    buffer: Vec<u8>,
}

impl BlockReader {
    pub(super) fn new() -> Result<Self, Corruption> {
        Ok(BlockReader {
            decompressor: zstd::bulk::Decompressor::new().map_err(zstd_error)?,
            buffer: Vec::new(),
        })
    }

    /// `block`'s encoded bodies, one after the other, from `stored` (the unit's stored
    /// blocks): checked against `index`'s checksum, then decompressed.
    pub(super) fn read(
        &mut self,
        index: &BlockIndex,
        block: &Block,
        stored: &[u8],
    ) -> Result<&[u8], Corruption> {
        let bytes = stored
            .get(block.stored.clone())
            .ok_or(Corruption::Truncated(stored.len()))?;
        if xxh3_64(bytes) != index.sums[block.index] {
            return Err(Corruption::Decode(format!(
                "block {}: checksum mismatch",
                block.index
            )));
        }
        let len = block.raw.end.checked_sub(block.raw.start).ok_or_else(|| {
            Corruption::Decode(format!("block {}: bodies out of order", block.index))
        })?;
        self.buffer.clear();
        self.buffer
            .try_reserve_exact(len)
            .map_err(|e| Corruption::Decode(format!("block {}: {e}", block.index)))?;
        let written = self
            .decompressor
            .decompress_to_buffer(bytes, &mut self.buffer)
            .map_err(zstd_error)?;
        if written != len {
            return Err(Corruption::Decode(format!(
                "block {}: {written} bytes, expected {len}",
                block.index
            )));
        }
        Ok(&self.buffer)
    }
}

fn zstd_error(e: std::io::Error) -> Corruption {
    Corruption::Decode(format!("zstd: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(bodies: &[(usize, Linkage)]) -> (Vec<u8>, BlockIndex, Vec<u64>) {
        let mut writer = BlockWriter::new().unwrap();
        let mut ends = Vec::new();
        let mut raw = 0u64;
        for (i, &(len, linkage)) in bodies.iter().enumerate() {
            let body = vec![(i % 251) as u8; len];
            writer.push(&body, linkage).unwrap();
            raw += len as u64;
            ends.push(raw);
        }
        let (stored, index) = writer.finish().unwrap();
        (stored, index, ends)
    }

    /// Blocks end past their size and where the linkage changes; each decompresses to its
    /// bodies' bytes; a damaged block fails its checksum, the others still read.
    #[test]
    fn blocks_cut_by_size_and_linkage_read_back() {
        use Linkage::{External, Internal};
        let bodies = [
            (10_000, Internal),
            (10_000, Internal),
            (10_000, Internal),
            (100, External),
            (100, External),
            (50, Internal),
        ];
        let (mut stored, index, ends) = written(&bodies);
        assert!(covers(&index, bodies.len()));
        let walked: Vec<Block> = blocks(&index, &ends).collect();
        let firsts: Vec<Range<usize>> = walked.iter().map(|b| b.bodies.clone()).collect();
        assert_eq!(firsts, vec![0..2, 2..3, 3..5, 5..6]);
        assert_eq!(blocks_end(&index), stored.len());
        let mut reader = BlockReader::new().unwrap();
        for block in &walked {
            let bytes = reader.read(&index, block, &stored).unwrap().to_vec();
            assert_eq!(bytes.len(), block.raw.len());
            let first = block.bodies.start;
            assert_eq!(bytes[0], (first % 251) as u8);
        }
        assert!(stored.len() < 30_250 / 10, "repeated bytes compress");
        stored[walked[1].stored.start] ^= 0xff;
        let damaged = reader.read(&index, &walked[1], &stored).unwrap_err();
        assert!(
            damaged.to_string().contains("block 1: checksum"),
            "{damaged}"
        );
        assert!(reader.read(&index, &walked[2], &stored).is_ok());
    }

    /// A unit without bodies has no block; an index that does not end with the last body does
    /// not cover the unit.
    #[test]
    fn no_bodies_no_blocks() {
        let (stored, index, ends) = written(&[]);
        assert!(stored.is_empty() && covers(&index, 0));
        assert_eq!(blocks(&index, &ends).count(), 0);
        let (_, index, _) = written(&[(5, Linkage::External)]);
        assert!(!covers(&index, 2));
    }
}
