//! A generic forward dataflow engine over a function's CFG, in the style of rustc's dataflow
//! framework: an analysis names its domain (a [`JoinSemiLattice`]), the state at the entry, and
//! transfer functions for instructions and for the edges out of a terminator; [`solve`] runs a
//! worklist to the fixpoint and returns the state at the entry of every block. A later pass
//! ("visiting the results") replays the transfer functions from those entry states to observe
//! every program point; that is how guarded accesses are collected from the lockset fixpoint.
//!
//! Edge transfer functions are what make conditional locking work: a `Branch` on the result of
//! `pthread_mutex_trylock` gives its two successors different states.

use crate::ir::{Block, BlockId, Function, Instr, Terminator};

/// A join semi-lattice: `join` computes the least upper bound in place and says whether `self`
/// changed. The engine starts every block but the entry at `bottom` (unreachable).
pub trait JoinSemiLattice: Clone {
    fn join(&mut self, other: &Self) -> bool;
}

pub trait Analysis {
    type Domain: JoinSemiLattice;

    /// The state at no program point (unreachable code); `join(bottom, x) == x`.
    fn bottom(&self) -> Self::Domain;

    /// The state at the function's entry.
    fn entry_state(&self) -> Self::Domain;

    /// The effect of one instruction.
    fn apply_instr(&self, state: &mut Self::Domain, instr: &Instr);

    /// The state flowing along the edge from `block` (whose instructions have been applied to
    /// `state`) to its `succ_index`-th successor, in the order of [`successors`]. The default
    /// passes the state through unchanged.
    fn apply_edge(
        &self,
        state: &Self::Domain,
        _block: usize,
        _term: &Terminator,
        _succ_index: usize,
    ) -> Self::Domain {
        state.clone()
    }

    /// Called when a block has been re-entered `bound` times without the fixpoint being reached:
    /// the analysis must jump to a state from which the iteration terminates (its top, or a
    /// widening). The default does nothing (for analyses of finite height).
    fn widen(&self, _state: &mut Self::Domain) {}
}

/// The successors of a terminator, in a fixed order (`Branch`: then, else).
pub fn successors(term: &Terminator) -> Vec<BlockId> {
    match term {
        Terminator::Goto(b) => vec![*b],
        Terminator::Branch { then, els, .. } => vec![*then, *els],
        Terminator::Switch { cases, default, .. } => cases
            .iter()
            .map(|c| c.target)
            .chain(std::iter::once(*default))
            .collect(),
        Terminator::IndirectGoto { targets, .. } => targets.clone(),
        Terminator::Return { .. } | Terminator::Unreachable => Vec::new(),
    }
}

/// The fixpoint: the state at the entry of each block (`bottom` for unreachable blocks), and
/// whether some block needed widening.
pub struct Results<D> {
    pub entry: Vec<D>,
    pub widened: bool,
}

/// How often a block may grow before [`Analysis::widen`] is applied to it.
pub const WIDEN_AFTER: u32 = 64;

/// Runs `analysis` on `func` to the fixpoint, visiting blocks in reverse post-order.
pub fn solve<A: Analysis>(analysis: &A, func: &Function) -> Results<A::Domain> {
    let n = func.blocks.len();
    let mut entry: Vec<A::Domain> = (0..n).map(|_| analysis.bottom()).collect();
    let mut widened = false;
    if n == 0 {
        return Results { entry, widened };
    }
    let order = reverse_post_order(&func.blocks);
    let mut rank = vec![usize::MAX; n];
    for (i, b) in order.iter().enumerate() {
        rank[*b] = i;
    }
    entry[0] = analysis.entry_state();
    let mut growth = vec![0u32; n];
    // Worklist keyed by RPO rank, so a loop body is finished before its exit is revisited.
    let mut pending = std::collections::BTreeSet::new();
    pending.insert(0usize);
    while let Some(r) = pending.pop_first() {
        let b = order[r];
        let mut state = entry[b].clone();
        let block = &func.blocks[b];
        for instr in &block.instrs {
            analysis.apply_instr(&mut state, instr);
        }
        for (i, succ) in successors(&block.term).into_iter().enumerate() {
            let s = succ.index();
            if s >= n || rank[s] == usize::MAX {
                continue;
            }
            let out = analysis.apply_edge(&state, b, &block.term, i);
            if entry[s].join(&out) {
                growth[s] += 1;
                if growth[s] > WIDEN_AFTER {
                    analysis.widen(&mut entry[s]);
                    widened = true;
                }
                pending.insert(rank[s]);
            }
        }
    }
    Results { entry, widened }
}

/// Blocks reachable from the entry in reverse post-order (iterative DFS).
pub fn reverse_post_order(blocks: &[Block]) -> Vec<usize> {
    let n = blocks.len();
    let mut seen = vec![false; n];
    let mut post = Vec::with_capacity(n);
    let mut stack: Vec<(usize, Vec<BlockId>, usize)> = Vec::new();
    if n > 0 {
        seen[0] = true;
        stack.push((0, successors(&blocks[0].term), 0));
    }
    while let Some((b, succs, next)) = stack.last_mut() {
        if let Some(s) = succs.get(*next).copied() {
            *next += 1;
            let s = s.index();
            if s < n && !seen[s] {
                seen[s] = true;
                stack.push((s, successors(&blocks[s].term), 0));
            }
        } else {
            post.push(*b);
            stack.pop();
        }
    }
    post.reverse();
    post
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Expr, Loc};

    /// Counts instructions along the longest path, saturating at 3: a finite-height lattice.
    #[derive(Clone, PartialEq, Debug)]
    struct Max(Option<u32>);
    impl JoinSemiLattice for Max {
        fn join(&mut self, other: &Self) -> bool {
            let j = match (self.0, other.0) {
                (None, x) | (x, None) => x,
                (Some(a), Some(b)) => Some(a.max(b)),
            };
            let changed = j != self.0;
            self.0 = j;
            changed
        }
    }
    struct CountInstrs;
    impl Analysis for CountInstrs {
        type Domain = Max;
        fn bottom(&self) -> Max {
            Max(None)
        }
        fn entry_state(&self) -> Max {
            Max(Some(0))
        }
        fn apply_instr(&self, s: &mut Max, _: &Instr) {
            s.0 = s.0.map(|n| (n + 1).min(3));
        }
    }

    fn block(instrs: usize, term: Terminator) -> Block {
        let asm = Instr::Asm {
            outputs: vec![],
            inputs: vec![],
            volatile: false,
            loc: Loc::default(),
        };
        Block {
            instrs: vec![asm; instrs],
            term,
        }
    }

    fn func(blocks: Vec<Block>) -> Function {
        Function {
            name: crate::ir::Name(0),
            linkage: crate::ir::Linkage::External,
            ty: crate::ir::TypeId(0),
            params: vec![],
            locals: vec![],
            blocks,
            loc: Loc::default(),
        }
    }

    #[test]
    fn loop_reaches_fixpoint_and_unreachable_stays_bottom() {
        // 0 -> 1; 1 -> (1 | 2); 2 returns; 3 is unreachable.
        let br = Terminator::Branch {
            cond: Expr::Unknown,
            then: BlockId(1),
            els: BlockId(2),
            loc: Loc::default(),
        };
        let ret = Terminator::Return {
            value: None,
            loc: Loc::default(),
        };
        let f = func(vec![
            block(0, Terminator::Goto(BlockId(1))),
            block(1, br),
            block(0, ret.clone()),
            block(5, ret),
        ]);
        let r = solve(&CountInstrs, &f);
        assert_eq!(r.entry[0], Max(Some(0)));
        assert_eq!(r.entry[1], Max(Some(3)));
        assert_eq!(r.entry[2], Max(Some(3)));
        assert_eq!(r.entry[3], Max(None));
        assert!(!r.widened);
        assert_eq!(reverse_post_order(&f.blocks), vec![0, 1, 2]);
    }
}
