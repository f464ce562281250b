//! Payloads of the kinds that hold large values read whole ([`crate::cache::COMPRESSED`]) are
//! stored compressed with zstd at its fastest level.
//!
//! Why: a saved run of SQLite's analysis is 53 MB of bincode, and the summaries of its largest
//! recursive SCC hundreds of MB — mostly call chains and sites repeated from summary to summary,
//! which compress ten and three times. Compressing at level 1 costs ~0.1 s per 50 MB here and
//! decompressing less; the kinds left out are read in parts (a cached unit's bodies, the
//! summaries of a collapsed SCC's step packs: their readers map the file and take ranges) or
//! are small.
//!
//! The header's length and checksum are those of the stored (compressed) bytes: a torn or
//! damaged entry fails the checksum before anything is decompressed, and a payload that does
//! not decompress is corrupt like one that does not decode.

use super::Corruption;

/// The compression level: zstd's fastest but the negative ones, which give up much of the
/// ratio.
pub(crate) const LEVEL: i32 = 1;

/// Whether entries of `kind` are stored compressed.
pub(super) fn compressed(kind: &str) -> bool {
    crate::cache::COMPRESSED.contains(&kind)
}

pub(crate) fn compress(payload: &[u8]) -> std::io::Result<Vec<u8>> {
    zstd::bulk::compress(payload, LEVEL)
}

pub(crate) fn decompress(stored: &[u8]) -> Result<Vec<u8>, Corruption> {
    zstd::stream::decode_all(stored).map_err(|e| Corruption::Decode(format!("zstd: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_damage() {
        let payload: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let stored = compress(&payload).unwrap();
        assert!(stored.len() < payload.len() / 4);
        assert_eq!(decompress(&stored).unwrap(), payload);
        assert!(matches!(
            decompress(&stored[..stored.len() / 2]),
            Err(Corruption::Decode(_))
        ));
    }
}
