//! Calls of functions without a body: the points-to effects of a library model, and what an
//! unknown external (no body, no model) may do with the memory it is handed.

use super::{Handed, Solver};
use crate::ir::*;
use crate::link::Program;
use crate::models::{CallbackRun, Model};
use crate::pta::Origin;

impl Solver<'_> {
    /// The points-to effects of a modelled call; a model may combine several. Lock, atomic,
    /// join and `pure` models have none.
    pub(super) fn external(
        &mut self,
        f: FuncId,
        g: FuncId,
        m: &Model,
        dst: Option<&Lval>,
        args: &[Expr],
        loc: Loc,
    ) {
        let arg = |s: &mut Self, i: usize| args.get(i).and_then(|a| s.val(f, a));
        for cb in &m.callbacks {
            if let Some(routine) = arg(self, cb.arg) {
                let lam = self.lam_of(routine, cb.args.len());
                for k in 0..cb.args.len() {
                    let Some(v) = cb.actual_for(k).and_then(|i| arg(self, i)) else {
                        continue;
                    };
                    let formal = lam.args.get(k).copied().unwrap_or(lam.rest);
                    self.assign(formal, v);
                    if cb.run != CallbackRun::Sync {
                        // Another thread (or a signal) will read it.
                        self.p.thread_args.push(v);
                    }
                }
                if cb.run != CallbackRun::Sync {
                    let record = args
                        .get(cb.arg)
                        .and_then(|a| crate::pta::signature::pointee_record(self.program, f, a));
                    self.handed.push(Handed {
                        node: routine,
                        record,
                        via: g,
                        caller: f,
                        loc,
                        registry: cb.loop_name.clone(),
                    });
                }
            }
        }
        if let Some(alloc) = &m.alloc {
            self.p.stats.allocation_sites += 1;
            let site = self.node(Origin::Alloc(f, loc));
            if let Some(v) = alloc.copies_arg.and_then(|i| arg(self, i)) {
                self.join(site, v);
            }
            if let Some(d) = dst {
                let l = self.loc(f, d);
                self.assign(l, site);
            }
        }
        if let Some(out) = &m.alloc_out {
            self.p.stats.allocation_sites += 1;
            let site = self.node(Origin::Alloc(f, loc));
            if let Some(p) = arg(self, out.arg) {
                self.assign(p, site);
            }
        }
        if let Some(copy) = &m.copy {
            let (dv, sv) = (arg(self, copy.dst), arg(self, copy.src));
            if let (Some(dv), Some(sv)) = (dv, sv) {
                let (dt, st) = (self.pts(dv), self.pts(sv));
                self.join(dt, st);
            }
            // The result is the destination (memcpy returns dst).
            if let (Some(res), Some(dv)) = (dst, dv) {
                let l = self.loc(f, res);
                self.assign(l, dv);
            }
        }
        if let Some(i) = m.returns_arg {
            if let (Some(res), Some(v)) = (dst, arg(self, i)) {
                let l = self.loc(f, res);
                self.assign(l, v);
            }
        }
        if m.va_arg {
            // The variadic arguments of the enclosing function.
            if let (Some(d), true) = (dst, f.index() < self.program.functions.len()) {
                let rest = self.lam_of(self.p.function_node(f), 0).rest;
                let l = self.loc(f, d);
                let (lt, rt) = (self.pts(l), self.pts(rest));
                self.join(lt, rt);
            }
        }
        if let Some(tc) = &m.thread_create {
            self.p.stats.thread_creations += 1;
            let routine = arg(self, tc.start);
            let value = tc.arg.and_then(|i| arg(self, i));
            if let Some(v) = value {
                self.p.thread_args.push(v);
            }
            if let Some(r) = routine {
                let lam = self.lam_of(r, 1);
                if let Some(v) = value {
                    // A start routine declared with no parameter takes the value in `rest`.
                    let formal = lam.args.first().copied().unwrap_or(lam.rest);
                    self.assign(formal, v);
                }
            }
        }
    }

    /// The memory an unknown external sees: what its pointer arguments point to, it may keep
    /// and hand back later — as its result, or from another call. All of it is one class, the
    /// unknown code's memory, which other threads may reach: an access through `getS()->f` is
    /// compared with accesses to every object the program handed to unknown code (and only
    /// those: a pointer nobody passed out cannot come back).
    pub(super) fn unknown_memory(
        &mut self,
        f: FuncId,
        g: FuncId,
        dst: Option<&Lval>,
        args: &[Expr],
    ) {
        let world = match self.world {
            Some(w) => w,
            None => {
                let w = self.node(Origin::Fresh);
                self.p.thread_args.push(w);
                self.world = Some(w);
                // A function pointer unknown code hands back calls unknown code: whatever is
                // passed to it is handed to unknown code, and what it returns comes from there.
                let lam = self.lam_of(w, 0);
                for slot in [lam.rest, lam.ret] {
                    let held = self.pts(slot);
                    self.join(held, w);
                }
                // What the objects unknown code holds point to, it holds too.
                let held = self.pts(w);
                self.join(held, w);
                w
            }
        };
        for a in args {
            if points_to_data(self.program, f, a) {
                if let Some(v) = self.val(f, a) {
                    self.join(v, world);
                }
                if let Some(r) = self.argument_record(f, a) {
                    self.handed_records.push(r);
                }
            }
        }
        let returns_data = match self
            .program
            .types
            .kind(self.program.functions[g.index()].ty)
        {
            // A function pointer it returns is unknown code (its signature is unknown memory's).
            crate::ir::types::TypeKind::Function { ret, .. } => {
                self.program.types.pointee(*ret).is_some()
                    || pointer_sized_integer(&self.program.types, *ret)
            }
            _ => false,
        };
        if let (Some(d), true) = (dst, returns_data) {
            let l = self.loc(f, d);
            self.assign(l, world);
        }
    }

    /// Unknown code handed a record reaches what its members point to (by type, in the
    /// field-based mode, where a member's node is shared by every object of its record). Done
    /// after the callbacks are bound: which functions unknown code may call back is decided by
    /// the members' declared types (`typed_reach`), not by the classes this widens.
    pub(super) fn members_to_unknown_memory(&mut self) {
        let Some(world) = self.world else {
            return;
        };
        let mut records = std::mem::take(&mut self.handed_records);
        records.sort_unstable();
        records.dedup();
        for r in records {
            self.members_to_world(r, world);
        }
    }
}

/// Whether `e` is a pointer to data (not to a function: callbacks are bound apart).
fn points_to_data(program: &Program, f: FuncId, e: &Expr) -> bool {
    match e {
        Expr::Func(_) => false,
        Expr::AddrOf(lv) | Expr::StartOf(lv) => crate::pta::signature::lval_type(program, f, lv)
            .is_none_or(|t| {
                !matches!(
                    program.types.kind(t),
                    crate::ir::types::TypeKind::Function { .. }
                )
            }),
        Expr::Const(Const::Str(_)) => true,
        _ => crate::pta::signature::expr_type(program, f, e)
            .is_some_and(|t| pointer_to_data(&program.types, t)),
    }
}

/// `long`, `unsigned long`, `intptr_t`: an unknown function may return an address as one,
/// which the program casts back to a pointer.
pub(super) fn pointer_sized_integer(types: &crate::ir::types::TypeTable, t: TypeId) -> bool {
    use crate::ir::types::{IntKind, TypeKind};
    matches!(
        types.kind(t),
        TypeKind::Int {
            kind: IntKind::Long | IntKind::LongLong,
            ..
        }
    )
}

fn pointer_to_data(types: &crate::ir::types::TypeTable, t: TypeId) -> bool {
    types
        .pointee(t)
        .is_some_and(|p| !matches!(types.kind(p), crate::ir::types::TypeKind::Function { .. }))
}
