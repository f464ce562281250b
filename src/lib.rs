//! relay: a static data-race detector for C, built the way RELAY (FSE 2007) is.
//!
//! See ARCHITECTURE.md for the pipeline and where each stage lives.

pub mod cache;
pub mod callgraph;
pub mod cli;
pub mod dataflow;
pub mod driver;
pub mod frontend;
pub mod ir;
pub mod link;
pub mod models;
pub mod pipeline;
pub mod progress;
pub mod pta;
pub mod race;
pub mod reads;
pub mod report;
pub mod schedule;
pub mod summary;
