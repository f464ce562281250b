//! The SCC DAG as the scheduler walks it: which SCCs are ready (every callee done), in order
//! of priority, and which SCCs' summaries nothing will read again.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::callgraph::{CallGraph, Scc, SccId};

pub(super) struct Dag<'a> {
    cg: &'a CallGraph,
    callers: Vec<Vec<SccId>>,
    /// The heaviest chain of work from the SCC up to a root (function sizes).
    priority: Vec<u64>,
    /// Callee SCCs not done yet, per SCC: at 0 it is ready.
    pending: Vec<usize>,
    /// Caller SCCs not done yet, per SCC: at 0 its summaries can go (see
    /// [`super::SccAnalysis::keep`]).
    callers_left: Vec<usize>,
    ready: BinaryHeap<(u64, Reverse<u32>)>,
    /// SCCs done whose callers are not released yet.
    finished: Vec<SccId>,
}

impl<'a> Dag<'a> {
    /// The DAG at the start: SCCs without a defined function are done, the leaves to analyse
    /// ready.
    pub fn new(cg: &'a CallGraph) -> Dag<'a> {
        let n = cg.sccs.len();
        let callers = cg.scc_callers();
        // Callers have larger ids.
        let mut priority = vec![0u64; n];
        for i in (0..n).rev() {
            let own: u64 = cg.sccs[i]
                .functions
                .iter()
                .map(|f| u64::from(cg.size[f.index()]) + 1)
                .sum();
            let up = callers[i].iter().map(|c| priority[c.index()]).max();
            priority[i] = own + up.unwrap_or(0);
        }
        let mut dag = Dag {
            cg,
            pending: cg.sccs.iter().map(|s| s.callees.len()).collect(),
            callers_left: callers.iter().map(Vec::len).collect(),
            callers,
            priority,
            ready: BinaryHeap::new(),
            finished: Vec::new(),
        };
        for (i, s) in cg.sccs.iter().enumerate() {
            if !dag.needs_analysis(s) {
                dag.finished.push(SccId(i as u32));
            } else if s.callees.is_empty() {
                dag.ready.push((dag.priority[i], Reverse(i as u32)));
            }
        }
        dag.release();
        dag
    }

    /// Whether the SCC has a defined function to analyse.
    pub fn needs_analysis(&self, s: &Scc) -> bool {
        s.functions.iter().any(|f| self.cg.defined[f.index()])
    }

    /// The ready SCC of highest priority.
    pub fn pop_ready(&mut self) -> Option<SccId> {
        self.ready.pop().map(|(_, Reverse(i))| SccId(i))
    }

    /// Marks `scc` done: its callers whose last callee it was become ready. Returns the SCCs
    /// whose summaries nothing reads any more (their callers are all done, or they have none).
    pub fn done(&mut self, scc: SccId) -> Vec<SccId> {
        let mut unread: Vec<SccId> = self.cg.scc(scc).callees.clone();
        unread.retain(|c| {
            self.callers_left[c.index()] -= 1;
            self.callers_left[c.index()] == 0
        });
        if self.callers[scc.index()].is_empty() {
            unread.push(scc);
        }
        self.finished.push(scc);
        self.release();
        unread
    }

    /// Releases the callers of the finished SCCs (done at once when they need no analysis).
    fn release(&mut self) {
        while let Some(s) = self.finished.pop() {
            for i in 0..self.callers[s.index()].len() {
                let c = self.callers[s.index()][i];
                self.pending[c.index()] -= 1;
                if self.pending[c.index()] == 0 {
                    if self.needs_analysis(self.cg.scc(c)) {
                        self.ready.push((self.priority[c.index()], Reverse(c.0)));
                    } else {
                        self.finished.push(c);
                    }
                }
            }
        }
    }
}
