//! The CFG's loops as the analysis needs them: which thread joins lie in a loop (a join of
//! `t[i]` there joins every slot) and the edges leaving such a loop; whether a block is on a
//! cycle (a thread created there runs more than once).

use super::{ExitJoins, FnAnalysis};
use crate::dataflow;
use crate::ir::*;

impl FnAnalysis<'_> {
    /// Calls of thread-join models that lie on a CFG cycle, and for those that join an array
    /// slot, the edges leaving their loop with the handle argument.
    pub(super) fn find_loop_joins(&self) -> (rustc_hash::FxHashSet<Loc>, ExitJoins) {
        let blocks = &self.body.blocks;
        let joins = |instr: &Instr| match instr {
            Instr::Call {
                callee: Expr::Func(FuncRef::Linked(g)),
                ..
            } => self.ctx.model(*g).is_some_and(|m| m.thread_join.is_some()),
            _ => false,
        };
        if !blocks.iter().flat_map(|b| &b.instrs).any(joins) {
            return Default::default();
        }
        let succs = |b: usize| -> Vec<usize> {
            dataflow::successors(&blocks[b].term)
                .into_iter()
                .map(|s| s.index())
                .filter(|&s| s < blocks.len())
                .collect()
        };
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); blocks.len()];
        for b in 0..blocks.len() {
            for s in succs(b) {
                preds[s].push(b);
            }
        }
        let reach = |from: usize, next: &dyn Fn(usize) -> Vec<usize>| {
            let mut seen = vec![false; blocks.len()];
            let mut stack = vec![from];
            while let Some(x) = stack.pop() {
                if !std::mem::replace(&mut seen[x], true) {
                    stack.extend(next(x));
                }
            }
            seen
        };
        let mut in_loop = rustc_hash::FxHashSet::default();
        let mut exits = ExitJoins::default();
        for (j, block) in blocks.iter().enumerate() {
            for instr in &block.instrs {
                let Instr::Call {
                    callee: Expr::Func(FuncRef::Linked(g)),
                    args,
                    loc,
                    ..
                } = instr
                else {
                    continue;
                };
                let Some(join) = self.ctx.model(*g).and_then(|m| m.thread_join.as_ref()) else {
                    continue;
                };
                // The loop: the blocks on a cycle through the join's block.
                let backward = reach(j, &|x| preds[x].clone());
                if !succs(j).into_iter().any(|s| backward[s]) {
                    continue;
                }
                in_loop.insert(*loc);
                let Some(handle) = args.get(join.handle).filter(|a| super::call::array_slot(a))
                else {
                    continue;
                };
                let forward = reach(j, &succs);
                for b in (0..blocks.len()).filter(|&b| forward[b] && backward[b]) {
                    let raw = dataflow::successors(&blocks[b].term);
                    for (i, s) in raw.into_iter().map(|s| s.index()).enumerate() {
                        if s < blocks.len() && !(forward[s] && backward[s]) {
                            exits.entry((b, i)).or_default().push(handle.clone());
                        }
                    }
                }
            }
        }
        (in_loop, exits)
    }

    /// Whether block `b` lies on a cycle of the CFG (breadth-first search from its successors).
    pub(super) fn in_cycle(&self, b: usize) -> bool {
        let blocks = &self.body.blocks;
        let mut seen = vec![false; blocks.len()];
        let mut stack: Vec<usize> = dataflow::successors(&blocks[b].term)
            .into_iter()
            .map(|s| s.index())
            .collect();
        while let Some(x) = stack.pop() {
            if x == b {
                return true;
            }
            if x >= blocks.len() || std::mem::replace(&mut seen[x], true) {
                continue;
            }
            stack.extend(
                dataflow::successors(&blocks[x].term)
                    .iter()
                    .map(|s| s.index()),
            );
        }
        false
    }
}
