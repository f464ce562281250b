//! The nodes whose points-to class each function's analysis asked for ([`crate::reads`]),
//! kept for the summaries store: it keys an SCC without the partition and checks the answers
//! instead.

use std::sync::Mutex;

use crate::ir::FuncId;

/// By function: the nodes its analyses (every step of a fixpoint) asked about so far. Empty,
/// and nothing recorded, without a store.
#[derive(Default)]
pub(super) struct ReadLog(Vec<Mutex<Vec<u32>>>);

impl ReadLog {
    pub(super) fn new(functions: usize) -> ReadLog {
        ReadLog((0..functions).map(|_| Mutex::default()).collect())
    }

    /// Runs `work` (an analysis of `f`, or of its SCC), noting what it read as `f`'s.
    pub(super) fn run<R>(&self, f: FuncId, work: impl FnOnce() -> R) -> R {
        let Some(log) = self.0.get(f.index()) else {
            return work();
        };
        let (result, read) = crate::reads::recording(work);
        let mut log = log.lock().unwrap_or_else(|e| e.into_inner());
        log.extend(read);
        // Each step of a recursive SCC asks about much the same nodes again.
        if log.len() > 4096 {
            log.sort_unstable();
            log.dedup();
        }
        result
    }

    /// The nodes the analyses of each of `functions` asked about so far.
    pub(super) fn each(&self, functions: &[FuncId]) -> Vec<(FuncId, Vec<u32>)> {
        let each = functions.iter().filter_map(|&f| {
            let mut read = self.logged(f)?;
            read.sort_unstable();
            read.dedup();
            Some((f, read))
        });
        each.collect()
    }

    /// The nodes the analyses of `functions` asked about so far.
    pub(super) fn of(&self, functions: &[FuncId]) -> Vec<u32> {
        let mut read: Vec<u32> = functions
            .iter()
            .filter_map(|&f| self.logged(f))
            .flatten()
            .collect();
        read.sort_unstable();
        read.dedup();
        read
    }

    /// `f`'s log as it is (repeats possible).
    fn logged(&self, f: FuncId) -> Option<Vec<u32>> {
        let log = self.0.get(f.index())?;
        Some(log.lock().unwrap_or_else(|e| e.into_inner()).clone())
    }

    /// Forgets what the analyses of `functions` read (their SCC is done).
    pub(super) fn clear(&self, functions: &[FuncId]) {
        for log in functions.iter().filter_map(|f| self.0.get(f.index())) {
            *log.lock().unwrap_or_else(|e| e.into_inner()) = Vec::new();
        }
    }
}
