//! Initializers: a variable's initializer becomes assignments to its parts (C11 6.7.9).
//!
//! A braced list fills its object member by member (or element by element); a designator moves
//! the position; an expression for an aggregate member of another type starts brace elision, which
//! fills that member from the following items of the same list. GNU range designators
//! (`[lo ... hi] = v`) assign every element of the range. Members an initializer does not name are
//! not assigned (their implicit zeroing is not modelled).

use super::builder::FnBuilder;
use super::expr::Operand;
use super::LResult;
use super::Lower;
use crate::frontend::ast::{Designator, ExprId, ExprKind, InitId, InitItem, Initializer};
use crate::ir::types::TypeKind;
use crate::ir::*;

/// Range designators wider than this assign only their bounds.
const MAX_RANGE: i128 = 4096;

impl Lower<'_, '_> {
    /// Assigns the initializer `init` to `dst` (of type `ty`) in the current function. Returns
    /// the extent: elements used, for completing `T x[] = ...`.
    pub fn initialize(&mut self, dst: Lval, ty: TypeId, init: InitId, loc: Loc) -> LResult<usize> {
        match self.ast.inits[init] {
            Initializer::Expr(e) => self.init_expr(dst, ty, e, loc),
            Initializer::List(items, _) => {
                let items = self.ast.init_items.get(items).to_vec();
                if !self.is_aggregate(ty) {
                    // `int x = { 1 };`
                    return match items.first() {
                        Some(first) => self.initialize(dst, ty, first.init, loc),
                        None => Ok(0),
                    };
                }
                let mut pos = 0;
                Ok(self.fill(&dst, ty, &items, &mut pos, true, loc))
            }
        }
    }

    fn init_expr(&mut self, dst: Lval, ty: TypeId, e: ExprId, loc: Loc) -> LResult<usize> {
        let is_string = matches!(self.ast.exprs[e].kind, ExprKind::Str);
        if is_string && self.is_array(ty) {
            // `char s[] = "..."` copies the characters (and sizes the array).
            let (v, sty) = match self.operand(e)? {
                Operand::Rv(v, t) => (v, t),
                Operand::Lv(lv, t) => (Expr::Load(Box::new(lv)), t),
            };
            self.emit(Instr::Assign { dst, src: v, loc });
            let len = match self.types().kind(sty) {
                TypeKind::Array { len: Some(n), .. } => *n as usize,
                _ => 0,
            };
            return Ok(len);
        }
        let folds = self.static_init
            && self.types().is_integer(ty)
            && matches!(
                self.ast.exprs[e].kind,
                ExprKind::Cond(..)
                    | ExprKind::Binary(
                        crate::frontend::ast::BinOp::LogAnd | crate::frontend::ast::BinOp::LogOr,
                        ..
                    )
            );
        // A static initializer is a constant: fold what would otherwise become control flow.
        let src = match folds.then(|| self.const_eval(e)).flatten() {
            Some(v) => Expr::Const(Const::Int(v)),
            None => self.rvalue(e)?.0,
        };
        self.emit(Instr::Assign { dst, src, loc });
        Ok(1)
    }

    /// Fills the aggregate `dst` from `items[*pos..]`. `braced` is false during brace elision:
    /// then filling stops when the aggregate is full or at a designator (which belongs to the
    /// enclosing braced list). Returns the extent (one past the highest position filled).
    fn fill(
        &mut self,
        dst: &Lval,
        ty: TypeId,
        items: &[InitItem],
        pos: &mut usize,
        braced: bool,
        loc: Loc,
    ) -> usize {
        let (mut cursor, mut extent) = (0usize, 0usize);
        while let Some(item) = items.get(*pos).copied() {
            let designators = self.ast.designators.get(item.designators).to_vec();
            if !designators.is_empty() {
                if !braced {
                    break;
                }
                *pos += 1;
                let Ok((targets, next)) = self.designated(dst, ty, &designators, loc) else {
                    continue;
                };
                for (target, tty) in targets {
                    let _ = self.init_part(target, tty, item.init, loc);
                }
                cursor = next;
                extent = extent.max(cursor);
                continue;
            }
            let Some((part, pty, next)) = self.part_at(dst, ty, cursor) else {
                if !braced {
                    break;
                }
                // Excess initializers: GCC warns and ignores them.
                *pos += 1;
                continue;
            };
            match self.ast.inits[item.init] {
                Initializer::Expr(e) if self.needs_elision(pty, e) => {
                    let before = *pos;
                    self.fill(&part, pty, items, pos, false, loc);
                    if *pos == before {
                        // The part takes no scalar (an empty struct): the expression is dropped
                        // rather than tried against every following part (a huge array of
                        // them never ends). Every iteration consumes an item.
                        *pos += 1;
                    }
                }
                _ => {
                    *pos += 1;
                    let _ = self.initialize(part, pty, item.init, loc);
                }
            }
            cursor = next;
            extent = extent.max(cursor);
            if !braced && self.is_full(ty, cursor) {
                break;
            }
        }
        extent
    }

    /// A designated part: an expression for an aggregate starts at its first scalar.
    fn init_part(&mut self, target: Lval, ty: TypeId, init: InitId, loc: Loc) -> LResult<usize> {
        if let Initializer::Expr(e) = self.ast.inits[init] {
            if self.needs_elision(ty, e) {
                let (leaf, lty) = self.first_scalar(target, ty);
                return self.init_expr(leaf, lty, e, loc);
            }
        }
        self.initialize(target, ty, init, loc)
    }

    /// Whether an expression initializing a part of type `ty` starts brace elision: `ty` is an
    /// aggregate and the expression is not a value of that type (nor a string for a char array).
    fn needs_elision(&mut self, ty: TypeId, e: ExprId) -> bool {
        if !self.is_aggregate(ty)
            || (self.is_array(ty) && matches!(self.ast.exprs[e].kind, ExprKind::Str))
        {
            return false;
        }
        let et = self.type_of_expr(e);
        self.types().unqualified(et) != self.types().unqualified(ty)
    }

    fn first_scalar(&mut self, mut dst: Lval, mut ty: TypeId) -> (Lval, TypeId) {
        while self.is_aggregate(ty) {
            match self.part_at(&dst, ty, 0) {
                Some((part, pty, _)) => {
                    dst = part;
                    ty = pty;
                }
                None => break,
            }
        }
        (dst, ty)
    }

    fn is_array(&mut self, t: TypeId) -> bool {
        matches!(self.types().kind(t), TypeKind::Array { .. })
    }

    fn is_aggregate(&mut self, t: TypeId) -> bool {
        matches!(
            self.types().kind(t),
            TypeKind::Record(_) | TypeKind::Array { .. } | TypeKind::Vector { .. }
        )
    }

    fn is_full(&mut self, ty: TypeId, cursor: usize) -> bool {
        match self.types().kind(ty).clone() {
            TypeKind::Record(r) => {
                let rec = self.types().record(r);
                rec.kind == crate::ir::types::RecordKind::Union || cursor >= rec.fields.len()
            }
            TypeKind::Array { len, .. } => len.is_some_and(|n| cursor as u64 >= n),
            _ => true,
        }
    }

    /// The `i`-th part of an aggregate: (lvalue, type, position after it).
    fn part_at(&mut self, dst: &Lval, ty: TypeId, i: usize) -> Option<(Lval, TypeId, usize)> {
        let index = |lv: &Lval, i: usize| {
            let mut lv = lv.clone();
            lv.offsets
                .push(Offset::Index(Box::new(Expr::Const(Const::Int(i as i128)))));
            lv
        };
        match self.types().kind(ty).clone() {
            TypeKind::Record(r) => {
                let rec = self.types().record(r);
                if rec.kind == crate::ir::types::RecordKind::Union && i > 0 {
                    return None;
                }
                let f = rec.fields.get(i)?.clone();
                let mut lv = dst.clone();
                lv.offsets.push(Offset::Field {
                    record: r,
                    name: f.name,
                });
                Some((lv, f.ty, i + 1))
            }
            TypeKind::Array { elem, len } => {
                if len.is_some_and(|n| i as u64 >= n) {
                    return None;
                }
                Some((index(dst, i), elem, i + 1))
            }
            TypeKind::Vector { elem, .. } => Some((index(dst, i), elem, i + 1)),
            _ if i == 0 => Some((dst.clone(), ty, 1)),
            _ => None,
        }
    }

    /// Follows `.a[2].b = ` from `dst`: the designated parts (several for a range) and the
    /// position after the first designator.
    fn designated(
        &mut self,
        dst: &Lval,
        ty: TypeId,
        ds: &[Designator],
        loc: Loc,
    ) -> LResult<(Vec<(Lval, TypeId)>, usize)> {
        let mut targets = vec![(dst.clone(), ty)];
        let mut next = 0;
        for (n, d) in ds.iter().enumerate() {
            let t = targets[0].1;
            match *d {
                Designator::Field(s) => {
                    let name = self.name(s);
                    let Some(rid) = self.types().as_record(t) else {
                        return self.fail_at(loc, "field designator for a non-struct");
                    };
                    let Some(path) = self.types().find_field(rid, name) else {
                        let text = self.interner.get(s).to_string();
                        return self
                            .fail_at(loc, format!("no member named `{text}` to initialize"));
                    };
                    if n == 0 {
                        next = path[0].1 + 1;
                    }
                    let mut fty = t;
                    let mut offsets = Vec::new();
                    for (record, i) in path {
                        let f = self.types().record(record).fields[i].clone();
                        offsets.push(Offset::Field {
                            record,
                            name: f.name,
                        });
                        fty = f.ty;
                    }
                    for (lv, tty) in &mut targets {
                        lv.offsets.extend(offsets.iter().cloned());
                        *tty = fty;
                    }
                }
                Designator::Index(e) | Designator::Range(e, _) => {
                    let lo = self.const_eval(e).unwrap_or(0);
                    let hi = match *d {
                        Designator::Range(_, h) => self.const_eval(h).unwrap_or(lo),
                        _ => lo,
                    };
                    if n == 0 {
                        next = usize::try_from(hi).unwrap_or(0) + 1;
                    }
                    let elem = match self.types().kind(t).clone() {
                        TypeKind::Array { elem, .. } | TypeKind::Vector { elem, .. } => elem,
                        _ => return self.fail_at(loc, "index designator for a non-array"),
                    };
                    let indices: Vec<i128> = if hi - lo < MAX_RANGE {
                        (lo..=hi).collect()
                    } else {
                        vec![lo, hi]
                    };
                    targets = targets
                        .iter()
                        .flat_map(|(lv, _)| {
                            indices.iter().map(move |&i| {
                                let mut lv = lv.clone();
                                lv.offsets
                                    .push(Offset::Index(Box::new(Expr::Const(Const::Int(i)))));
                                (lv, elem)
                            })
                        })
                        .collect();
                }
            }
        }
        Ok((targets, next))
    }

    fn fail_at<T>(&mut self, loc: Loc, message: impl Into<String>) -> LResult<T> {
        self.st.unit.diagnostics.push(LowerDiagnostic {
            loc,
            message: message.into(),
        });
        Err(super::Unsupported)
    }

    /// Lowers a static-storage variable's initializer into its `init` list; returns the extent.
    pub fn global_initializer(&mut self, g: GlobalId, ty: TypeId, init: InitId, loc: Loc) -> usize {
        let name = self.st.unit.globals[g.index()].name;
        // A static local: the function's builder is set aside (its labels still resolve there).
        let inside_function = self.fb.is_some() && !self.static_init;
        let saved_outer = if inside_function {
            let function = self.fb.take();
            std::mem::replace(&mut self.outer_fb, function)
        } else {
            None
        };
        let saved_fb = self.fb.replace(FnBuilder::new(name));
        let saved_static = std::mem::replace(&mut self.static_init, true);
        let extent = self
            .initialize(Lval::var(VarRef::Global(g)), ty, init, loc)
            .unwrap_or(0);
        self.static_init = saved_static;
        let scratch = std::mem::replace(&mut self.fb, saved_fb);
        if inside_function {
            self.fb = std::mem::replace(&mut self.outer_fb, saved_outer);
        }
        let instrs = scratch
            .into_iter()
            .flat_map(|b| b.blocks)
            .flat_map(|b| b.instrs);
        self.st.unit.globals[g.index()].init.extend(instrs);
        extent
    }

    /// `(T){...}`: a temporary (a global in static initializers) initialized in place.
    pub fn compound_literal(
        &mut self,
        ty: TypeId,
        init: InitId,
        loc: Loc,
    ) -> LResult<(Lval, TypeId)> {
        let t = self.temp(ty);
        let extent = match t {
            VarRef::Global(g) => {
                self.st.unit.globals[g.index()].loc = loc;
                self.global_initializer(g, ty, init, loc)
            }
            VarRef::Local(_) => self.initialize(Lval::var(t), ty, init, loc)?,
        };
        let ty = self.complete_array(ty, extent);
        self.set_var_type(t, ty);
        Ok((Lval::var(t), ty))
    }

    /// `T x[]` with an initializer of `extent` elements is `T x[extent]`.
    pub fn complete_array(&mut self, ty: TypeId, extent: usize) -> TypeId {
        match self.types().kind(ty).clone() {
            TypeKind::Array { elem, len: None } if extent > 0 => {
                let quals = self.types().quals(ty);
                self.types().intern(
                    TypeKind::Array {
                        elem,
                        len: Some(extent as u64),
                    },
                    quals,
                )
            }
            _ => ty,
        }
    }

    pub fn set_var_type(&mut self, v: VarRef, ty: TypeId) {
        match v {
            VarRef::Global(g) => self.st.unit.globals[g.index()].ty = ty,
            VarRef::Local(l) => {
                if let Some(local) = self.fb.as_mut().and_then(|fb| fb.locals.get_mut(l.index())) {
                    local.ty = ty;
                }
            }
        }
    }
}
