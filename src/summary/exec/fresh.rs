//! Thread-escape, intraprocedurally (the sound counterpart of RELAY's "thread-local
//! allocation" filter; Chord's escaping pairs): a tracked local that holds the only pointer to
//! an object allocated here, not yet stored anywhere or passed to a function, points to memory
//! no other thread can reach. Accesses through it are not shared and are not recorded.
//!
//! The pointer escapes when its value is used other than as the base of a dereference
//! (`p->f`, `*(p + i)`), as an argument of a modelled library function (`memset(p, …)`,
//! `pthread_mutex_init(&p->lock)`; thread creation excepted), or in a branch condition. Joins
//! intersect: a local is fresh only if it is on every path.

use super::{FnAnalysis, State};
use crate::ir::*;

impl FnAnalysis<'_> {
    /// The locals whose value `instr` lets escape, and whether it allocates into its
    /// destination.
    fn escapes(&self, instr: &Instr) -> (Vec<LocalId>, bool) {
        let mut escaped = Vec::new();
        let mut allocates = false;
        match instr {
            Instr::Assign { dst, src, .. } => {
                value_uses(src, false, &mut escaped);
                lval_uses(dst, &mut escaped);
            }
            Instr::Call {
                dst, callee, args, ..
            } => {
                let g = match callee {
                    Expr::Func(FuncRef::Linked(g)) => Some(*g),
                    _ => None,
                };
                let model = g.and_then(|g| self.ctx.model(g));
                allocates = model.is_some_and(|m| m.alloc.is_some());
                // A model keeps its arguments (thread creation excepted); a summarised callee
                // keeps those of its formals that do not escape in it.
                let summary = g.and_then(|g| self.callees.get(g));
                let keeps = |j: usize| match (model, &summary) {
                    (Some(m), _) => m.thread_create.is_none(),
                    (None, Some(s)) => s.formal_escapes.get(j) == Some(&false),
                    (None, None) => false,
                };
                value_uses(callee, false, &mut escaped);
                for (j, a) in args.iter().enumerate() {
                    value_uses(a, keeps(j), &mut escaped);
                }
                if let Some(d) = dst {
                    lval_uses(d, &mut escaped);
                }
            }
            Instr::Asm {
                outputs, inputs, ..
            } => {
                for e in inputs {
                    value_uses(e, false, &mut escaped);
                }
                for o in outputs {
                    lval_uses(o, &mut escaped);
                }
            }
        }
        (escaped, allocates)
    }

    /// For each formal, whether its value may escape the function (stored, passed on to
    /// something that keeps it, returned): flow-insensitive. A caller's fresh object passed to
    /// a formal that does not escape stays fresh, and the callee's accesses through it are
    /// not shared.
    pub(super) fn formal_escapes(&self) -> Vec<bool> {
        let mut escaped = Vec::new();
        for block in &self.body.blocks {
            for instr in &block.instrs {
                escaped.extend(self.escapes(instr).0);
            }
            if let Terminator::Return { value: Some(v), .. } = &block.term {
                value_uses(v, false, &mut escaped);
            }
        }
        self.body
            .params
            .iter()
            .map(|p| {
                let tracked = self
                    .body
                    .locals
                    .get(p.index())
                    .is_some_and(|l| !l.flags.address_taken);
                !tracked || escaped.contains(p)
            })
            .collect()
    }

    /// Updates the fresh locals after `instr` (whose accesses were recorded with the state
    /// before it).
    pub(super) fn update_fresh(&self, st: &mut State, instr: &Instr) {
        let (escaped, allocates) = self.escapes(instr);
        if st.fresh.is_empty() && !allocates {
            return;
        }
        // `j = tmp` (the IR's temporary for `malloc`'s result, maybe cast) moves freshness.
        let moved = match instr {
            Instr::Assign { src, .. } => self.fresh_pointer(st, src),
            _ => false,
        };
        for l in escaped {
            st.fresh.remove(&l);
        }
        let dst = match instr {
            Instr::Assign { dst, .. } => Some(dst),
            Instr::Call { dst, .. } => dst.as_ref(),
            Instr::Asm { .. } => None,
        };
        if let Some(l) = dst.and_then(|d| self.tracked(d)) {
            if moved || (allocates && matches!(instr, Instr::Call { .. })) {
                st.fresh.insert(l);
            } else {
                st.fresh.remove(&l);
            }
        }
    }

    /// Whether `lv` is memory reached through a fresh local (`p->f`, `p[i]`, `*p`).
    pub(super) fn through_fresh(&self, st: &State, lv: &Lval) -> bool {
        match &lv.host {
            Host::Mem(e) => self.fresh_pointer(st, e),
            Host::Var(_) => false,
        }
    }

    /// Whether the expression is a fresh local's value (possibly cast or offset).
    pub(super) fn fresh_pointer(&self, st: &State, e: &Expr) -> bool {
        if st.fresh.is_empty() {
            return false;
        }
        match e {
            Expr::Load(lv) => match (&lv.host, lv.offsets.is_empty()) {
                (Host::Var(VarRef::Local(l)), true) => st.fresh.contains(l),
                _ => false,
            },
            Expr::Cast(_, a) | Expr::Binary(BinOp::Add | BinOp::Sub, a, _) => {
                self.fresh_pointer(st, a)
            }
            _ => false,
        }
    }
}

/// Locals whose value `e` uses; `as_base`: the value is dereferenced (or passed to a model),
/// which does not let it escape.
fn value_uses(e: &Expr, as_base: bool, out: &mut Vec<LocalId>) {
    match e {
        Expr::Load(lv) => {
            if let (Host::Var(VarRef::Local(l)), true, false) =
                (&lv.host, lv.offsets.is_empty(), as_base)
            {
                out.push(*l);
            }
            lval_uses(lv, out);
        }
        Expr::AddrOf(lv) | Expr::StartOf(lv) => lval_uses(lv, out),
        Expr::Unary(_, a) | Expr::Cast(_, a) => value_uses(a, as_base, out),
        Expr::Binary(_, a, b) => {
            value_uses(a, as_base, out);
            value_uses(b, as_base, out);
        }
        _ => {}
    }
}

/// Locals used in computing an lvalue's address: its base pointer is dereferenced.
fn lval_uses(lv: &Lval, out: &mut Vec<LocalId>) {
    if let Host::Mem(e) = &lv.host {
        value_uses(e, true, out);
    }
    for o in &lv.offsets {
        if let Offset::Index(e) = o {
            value_uses(e, false, out);
        }
    }
}
