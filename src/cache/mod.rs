//! The on-disk cache: a content-addressed blob store ([`Store`]) and what relay keeps in it.
//!
//! Every value is stored under a [`Key`]: a hash of everything the value depends on, always
//! including the relay version, this build of relay and [`FORMAT_VERSION`] (see [`KeyBuilder`]).
//! A value is therefore never updated in place: a changed input is a new key, and stale entries
//! are never read again; [`gc`] removes those no recent run names (`relay cache clear` all).
//!
//! Kinds of entry:
//! - `tu` ([`tu`]): one translation unit parsed and lowered to IR, with its syntax errors and
//!   file-scope function list, keyed by its name and preprocessed text.
//! - `summary`, `summary-meta` and their packs `summary-meta-pack`, `summary-steps` and
//!   `summary-step-pack` ([`summaries`]): the summaries of each call-graph SCC, keyed by the
//!   SCC's bodies, its callees' summaries and the analysis context ([`fingerprint`]), and the
//!   steps of collapsed SCCs' fixpoints.
//! - `findings` and `run` ([`findings`]): the warnings of an analysis before filters, keyed by
//!   everything the analysis depended on but where lines are ([`relocate`]), and which of them
//!   the latest run saved.
//! - `file-status` ([`file_status`]): the status each preprocessed input file had when its unit
//!   key was computed, so that a re-run hashes only the files whose status changed.
//! - `inputs` ([`inputs`]): which findings a run with exactly these input units, arguments and
//!   models computed, with the front end's messages.
//! - `unit-list` and `gc-state` ([`gc`]): the units of the latest runs of the front end, and
//!   when to collect the units and summaries no recent run names.

pub mod class_deps;
pub mod classes;
pub mod file_status;
pub mod findings;
pub mod fingerprint;
pub mod gc;
pub mod inputs;
pub mod labels;
pub mod relocate;
pub mod store;
pub mod summaries;
pub mod tu;

pub use store::{CacheStats, Corruption, Key, KeyBuilder, KindStats, Store, HEADER_LEN};

/// The version of the cache's file format and of every value stored in it. Bump it when the
/// header or the serialized form of a cached value changes.
pub const FORMAT_VERSION: u32 = 9;

/// The kinds whose entries are stored compressed (large values, read whole; see
/// `store/compress.rs`).
pub const COMPRESSED: &[&str] = &[
    summaries::KIND,
    summaries::PACK,
    summaries::PREVIOUS,
    findings::FINDINGS,
    findings::PAIRS,
];

/// The cache directory used when none is given: `.relay-cache` in the current directory.
pub const DEFAULT_DIR: &str = ".relay-cache";
