//! A mutable walker over the IR: every expression, lvalue, variable reference, source location, type
//! id and record id of a function or a global, in a fixed order.
//!
//! Implement [`VisitMut`] (every hook defaults to doing nothing) and call one of the `walk_*`
//! functions, or use the closure helpers [`for_each_expr_mut`] and [`for_each_loc_mut`].
//!
//! Order: an instruction or terminator visits its `loc` first, then its lvalues and expressions
//! left to right (`Assign`: `dst`, `src`; `Call`: `dst`, `callee`, `args`; `Asm`: `outputs`,
//! `inputs`). A node's hook runs before its children are walked (pre-order), so a hook that
//! replaces the node has the replacement's children walked. An lvalue visits [`VisitMut::lval`],
//! then its host (`var` for `Host::Var`, the address expression for `Host::Mem`), then its
//! offsets in order (`record` for `.field`, the expression for `[index]`).
//!
//! Types: [`VisitMut::type_id`] sees the type of `Cast`, `SizeOf` and `AlignOf` (after the
//! expression's own hook, before its operand), a function's type and its locals' types (in order,
//! after the function's `loc`, before its blocks) and a global's type (after its `loc`).
//! [`VisitMut::record_id`] sees the record of every `.field` offset. Names are not visited.

use super::{
    Block, Expr, Function, Global, Host, Instr, Loc, Lval, Offset, RecordId, Terminator, TypeId,
    VarRef,
};

/// Hooks called by the `walk_*` functions.
pub trait VisitMut {
    /// Every expression, before its children.
    fn expr(&mut self, _e: &mut Expr) {}
    /// Every lvalue, before its host and offsets.
    fn lval(&mut self, _lv: &mut Lval) {}
    /// Every variable used as an lvalue host.
    fn var(&mut self, _v: &mut VarRef) {}
    /// Every source location (function, global, instruction, terminator).
    fn loc(&mut self, _l: &mut Loc) {}
    /// Every type id: of a function, local or global, and in `Cast`, `SizeOf`, `AlignOf`.
    fn type_id(&mut self, _t: &mut TypeId) {}
    /// Every record id of a `.field` offset (`RecordId(u32::MAX)` when the lowering did not know
    /// the record).
    fn record_id(&mut self, _r: &mut RecordId) {}
}

pub fn walk_expr_mut<V: VisitMut + ?Sized>(v: &mut V, e: &mut Expr) {
    v.expr(e);
    match e {
        Expr::Load(lv) | Expr::AddrOf(lv) | Expr::StartOf(lv) => walk_lval_mut(v, lv),
        Expr::Unary(_, a) => walk_expr_mut(v, a),
        Expr::Cast(t, a) => {
            v.type_id(t);
            walk_expr_mut(v, a);
        }
        Expr::Binary(_, a, b) => {
            walk_expr_mut(v, a);
            walk_expr_mut(v, b);
        }
        Expr::SizeOf(t) | Expr::AlignOf(t) => v.type_id(t),
        Expr::Const(_) | Expr::Func(_) | Expr::Label(_) | Expr::Unknown => {}
    }
}

pub fn walk_lval_mut<V: VisitMut + ?Sized>(v: &mut V, lv: &mut Lval) {
    v.lval(lv);
    match &mut lv.host {
        Host::Var(var) => v.var(var),
        Host::Mem(e) => walk_expr_mut(v, e),
    }
    for off in &mut lv.offsets {
        match off {
            Offset::Field { record, .. } => v.record_id(record),
            Offset::Index(e) => walk_expr_mut(v, e),
        }
    }
}

pub fn walk_instr_mut<V: VisitMut + ?Sized>(v: &mut V, i: &mut Instr) {
    match i {
        Instr::Assign { dst, src, loc } => {
            v.loc(loc);
            walk_lval_mut(v, dst);
            walk_expr_mut(v, src);
        }
        Instr::Call {
            dst,
            callee,
            args,
            loc,
        } => {
            v.loc(loc);
            if let Some(d) = dst {
                walk_lval_mut(v, d);
            }
            walk_expr_mut(v, callee);
            for a in args {
                walk_expr_mut(v, a);
            }
        }
        Instr::Asm {
            outputs,
            inputs,
            loc,
            ..
        } => {
            v.loc(loc);
            for o in outputs {
                walk_lval_mut(v, o);
            }
            for e in inputs {
                walk_expr_mut(v, e);
            }
        }
    }
}

pub fn walk_terminator_mut<V: VisitMut + ?Sized>(v: &mut V, t: &mut Terminator) {
    match t {
        Terminator::Goto(_) | Terminator::Unreachable => {}
        Terminator::Branch { cond: e, loc, .. }
        | Terminator::Switch { value: e, loc, .. }
        | Terminator::IndirectGoto { target: e, loc, .. } => {
            v.loc(loc);
            walk_expr_mut(v, e);
        }
        Terminator::Return { value, loc } => {
            v.loc(loc);
            if let Some(e) = value {
                walk_expr_mut(v, e);
            }
        }
    }
}

pub fn walk_block_mut<V: VisitMut + ?Sized>(v: &mut V, b: &mut Block) {
    for i in &mut b.instrs {
        walk_instr_mut(v, i);
    }
    walk_terminator_mut(v, &mut b.term);
}

/// The function's `loc`, its type, its locals' types, then its blocks in order.
pub fn walk_function_mut<V: VisitMut + ?Sized>(v: &mut V, f: &mut Function) {
    v.loc(&mut f.loc);
    v.type_id(&mut f.ty);
    for l in &mut f.locals {
        v.type_id(&mut l.ty);
    }
    for b in &mut f.blocks {
        walk_block_mut(v, b);
    }
}

/// The global's `loc`, its type, then its initializer instructions in order.
pub fn walk_global_mut<V: VisitMut + ?Sized>(v: &mut V, g: &mut Global) {
    v.loc(&mut g.loc);
    v.type_id(&mut g.ty);
    for i in &mut g.init {
        walk_instr_mut(v, i);
    }
}

struct ExprFn<F>(F);
impl<F: FnMut(&mut Expr)> VisitMut for ExprFn<F> {
    fn expr(&mut self, e: &mut Expr) {
        (self.0)(e)
    }
}

struct LocFn<F>(F);
impl<F: FnMut(&mut Loc)> VisitMut for LocFn<F> {
    fn loc(&mut self, l: &mut Loc) {
        (self.0)(l)
    }
}

/// Calls `f` on every expression of the function body (pre-order).
pub fn for_each_expr_mut(func: &mut Function, f: impl FnMut(&mut Expr)) {
    walk_function_mut(&mut ExprFn(f), func)
}

/// Calls `f` on every source location of the function (its own and every instruction's and
/// terminator's).
pub fn for_each_loc_mut(func: &mut Function, f: impl FnMut(&mut Loc)) {
    walk_function_mut(&mut LocFn(f), func)
}

/// Calls `f` on every expression of the global's initializer (pre-order).
pub fn for_each_global_expr_mut(g: &mut Global, f: impl FnMut(&mut Expr)) {
    walk_global_mut(&mut ExprFn(f), g)
}
