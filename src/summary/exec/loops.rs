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
        let succs = |b: usize| block_successors(blocks, b);
        let preds = predecessors(blocks);
        let reach = |from: usize, next: &dyn Fn(usize) -> Vec<usize>| {
            reachable(blocks.len(), vec![from], next, None)
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
        let succs = |x: usize| block_successors(blocks, x);
        reachable(blocks.len(), succs(b), &succs, None)[b]
    }

    /// Whether `&a[i].f…` (`e`), evaluated in `block`, names a different element each time the
    /// block runs: `i` is a local (not address-taken), the blocks on cycles through `block`
    /// assign it exactly once, by a nonzero constant step (`i = i + 1`), and every cycle
    /// through `block` passes that step. (An outer loop that resets `i` assigns it twice.)
    pub(super) fn distinct_slot(&self, e: &Expr, block: usize) -> bool {
        let Some(i) = slot_index(e) else { return false };
        if self
            .body
            .locals
            .get(i.index())
            .is_none_or(|l| l.flags.address_taken)
        {
            return false;
        }
        let blocks = &self.body.blocks;
        let succs = |b: usize| block_successors(blocks, b);
        let preds = predecessors(blocks);
        // Reachable from `block`'s successors, never entering `cut`.
        let from_block = |cut| reachable(blocks.len(), succs(block), &succs, cut);
        let forward = from_block(None);
        if !forward[block] {
            return false;
        }
        // The blocks on a cycle through `block`: reachable from it and reaching it.
        let backward = reachable(
            blocks.len(),
            preds[block].clone(),
            &|x| preds[x].clone(),
            None,
        );
        let on_cycle = |b: usize| forward[b] && backward[b];
        let mut steps = Vec::new();
        for b in (0..blocks.len()).filter(|&b| on_cycle(b)) {
            for instr in &blocks[b].instrs {
                match instr {
                    Instr::Assign { dst, src, .. } if assigns_local(dst, i) => {
                        if !constant_step(src, i) {
                            return false;
                        }
                        steps.push(b);
                    }
                    Instr::Call { dst: Some(d), .. } if assigns_local(d, i) => return false,
                    Instr::Asm { outputs, .. } if outputs.iter().any(|o| assigns_local(o, i)) => {
                        return false
                    }
                    _ => {}
                }
            }
        }
        match steps.as_slice() {
            [b] if *b == block => true,
            [b] => !from_block(Some(*b))[block],
            _ => false,
        }
    }
}

/// The successors of block `b` that are blocks of the body.
fn block_successors(blocks: &[Block], b: usize) -> Vec<usize> {
    dataflow::successors(&blocks[b].term)
        .into_iter()
        .map(|s| s.index())
        .filter(|&s| s < blocks.len())
        .collect()
}

fn predecessors(blocks: &[Block]) -> Vec<Vec<usize>> {
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); blocks.len()];
    for b in 0..blocks.len() {
        for s in block_successors(blocks, b) {
            preds[s].push(b);
        }
    }
    preds
}

/// The blocks reached from `starts` (included) along `next`, never entering `cut`.
fn reachable(
    n: usize,
    starts: Vec<usize>,
    next: &dyn Fn(usize) -> Vec<usize>,
    cut: Option<usize>,
) -> Vec<bool> {
    let mut seen = vec![false; n];
    let mut stack = starts;
    while let Some(x) = stack.pop() {
        if x < n && Some(x) != cut && !std::mem::replace(&mut seen[x], true) {
            stack.extend(next(x));
        }
    }
    seen
}

/// The local `i` of `&a[i]` or `&a[i].f…` (casts aside): an array variable indexed by a
/// local, then only members.
fn slot_index(e: &Expr) -> Option<LocalId> {
    let (Expr::AddrOf(lv) | Expr::StartOf(lv)) = e.strip_casts() else {
        return None;
    };
    let Host::Var(_) = lv.host else { return None };
    let (Offset::Index(idx), rest) = lv.offsets.split_first()? else {
        return None;
    };
    if !rest.iter().all(|o| matches!(o, Offset::Field { .. })) {
        return None;
    }
    let mut idx = idx.as_ref();
    while let Expr::Cast(_, inner) = idx {
        idx = inner;
    }
    match idx {
        Expr::Load(lv) if lv.offsets.is_empty() => match lv.host {
            Host::Var(VarRef::Local(l)) => Some(l),
            _ => None,
        },
        _ => None,
    }
}

fn assigns_local(dst: &Lval, i: LocalId) -> bool {
    matches!(dst.host, Host::Var(VarRef::Local(l)) if l == i) && dst.offsets.is_empty()
}

/// `i + c`, `c + i` or `i - c` with a nonzero constant `c` (casts aside).
fn constant_step(src: &Expr, i: LocalId) -> bool {
    let is_i = |e: &Expr| {
        matches!(e.strip_casts(), Expr::Load(lv)
            if lv.offsets.is_empty() && matches!(lv.host, Host::Var(VarRef::Local(l)) if l == i))
    };
    let nonzero = |e: &Expr| matches!(e.strip_casts(), Expr::Const(Const::Int(c)) if *c != 0);
    match src.strip_casts() {
        Expr::Binary(BinOp::Add, a, b) => (is_i(a) && nonzero(b)) || (nonzero(a) && is_i(b)),
        Expr::Binary(BinOp::Sub, a, b) => is_i(a) && nonzero(b),
        _ => false,
    }
}
