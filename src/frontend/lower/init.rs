//! Initializers: a variable's initializer becomes assignments to its parts.
//!
//! Designators pick the part; without one the next field or element is used. Brace elision
//! (`{1, 2, 3}` for a struct of arrays) is approximated: an expression for an aggregate part
//! initializes that part's first scalar, and the position advances by one part.

use super::builder::FnBuilder;
use super::LResult;
use super::Lower;
use crate::frontend::ast::{Designator, ExprKind, InitId, Initializer};
use crate::ir::types::TypeKind;
use crate::ir::*;

impl Lower<'_, '_> {
    /// Assigns the initializer `init` to `dst` (of type `ty`) in the current function.
    pub fn initialize(&mut self, dst: Lval, ty: TypeId, init: InitId, loc: Loc) -> LResult<()> {
        match self.ast.inits[init] {
            Initializer::Expr(e) => {
                let is_string = matches!(self.ast.exprs[e].kind, ExprKind::Str);
                let src = if self.static_init {
                    match self.const_eval(e) {
                        Some(v) => Expr::Const(Const::Int(v)),
                        None => self.rvalue(e)?.0,
                    }
                } else if is_string && matches!(self.types().kind(ty), TypeKind::Array { .. }) {
                    // `char s[] = "..."` copies the characters.
                    self.operand(e).map(|o| match o {
                        super::expr::Operand::Rv(v, _) => v,
                        super::expr::Operand::Lv(lv, _) => Expr::Load(Box::new(lv)),
                    })?
                } else {
                    self.rvalue(e)?.0
                };
                let dst = self.first_scalar(dst, ty, e);
                self.emit(Instr::Assign { dst, src, loc });
                Ok(())
            }
            Initializer::List(items, _) => {
                let items = self.ast.init_items.get(items).to_vec();
                let mut position = 0usize;
                for item in items {
                    let designators = self.ast.designators.get(item.designators).to_vec();
                    let (part, part_ty, next) = if designators.is_empty() {
                        match self.part_at(&dst, ty, position) {
                            Some(p) => p,
                            None => continue,
                        }
                    } else {
                        self.designated(&dst, ty, &designators, loc)?
                    };
                    position = next;
                    let _ = self.initialize(part, part_ty, item.init, loc);
                }
                Ok(())
            }
        }
    }

    /// For an expression initializing an aggregate with a non-aggregate value (brace elision),
    /// the first scalar inside it; otherwise `dst` itself.
    fn first_scalar(&mut self, mut dst: Lval, ty: TypeId, e: crate::frontend::ast::ExprId) -> Lval {
        let et = self.type_of_expr(e);
        let is_string = matches!(self.ast.exprs[e].kind, ExprKind::Str);
        let mut t = ty;
        loop {
            if self.types().unqualified(t) == self.types().unqualified(et) {
                return dst;
            }
            match self.part_at(&dst, t, 0) {
                Some((part, pt, _)) if self.is_aggregate(t) && !(is_string && self.is_array(t)) => {
                    dst = part;
                    t = pt;
                }
                _ => return dst,
            }
        }
    }

    fn is_array(&mut self, t: TypeId) -> bool {
        matches!(self.types().kind(t), TypeKind::Array { .. })
    }

    fn is_aggregate(&mut self, t: TypeId) -> bool {
        matches!(
            self.types().kind(t),
            TypeKind::Record(_) | TypeKind::Array { .. }
        )
    }

    /// The `i`-th part of an aggregate: (lvalue, type, position after it).
    fn part_at(&mut self, dst: &Lval, ty: TypeId, i: usize) -> Option<(Lval, TypeId, usize)> {
        match self.types().kind(ty).clone() {
            TypeKind::Record(r) => {
                let rec = self.types().record(r);
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
                let mut lv = dst.clone();
                lv.offsets
                    .push(Offset::Index(Box::new(Expr::Const(Const::Int(i as i128)))));
                Some((lv, elem, i + 1))
            }
            _ if i == 0 => Some((dst.clone(), ty, 1)),
            _ => None,
        }
    }

    /// Follows `.a[2].b = ` from `dst`; the position after is relative to the first designator.
    fn designated(
        &mut self,
        dst: &Lval,
        ty: TypeId,
        ds: &[Designator],
        loc: Loc,
    ) -> LResult<(Lval, TypeId, usize)> {
        let mut lv = dst.clone();
        let mut t = ty;
        let mut next = 0;
        for (n, d) in ds.iter().enumerate() {
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
                    for (record, i) in path {
                        let f = self.types().record(record).fields[i].clone();
                        lv.offsets.push(Offset::Field {
                            record,
                            name: f.name,
                        });
                        t = f.ty;
                    }
                }
                Designator::Index(e) | Designator::Range(e, _) => {
                    let i = self.const_eval(e).unwrap_or(0);
                    if n == 0 {
                        next = usize::try_from(i).unwrap_or(0) + 1;
                    }
                    if let Designator::Range(_, hi) = *d {
                        if n == 0 {
                            next = self
                                .const_eval(hi)
                                .and_then(|h| usize::try_from(h).ok())
                                .map_or(next, |h| h + 1);
                        }
                    }
                    lv.offsets
                        .push(Offset::Index(Box::new(Expr::Const(Const::Int(i)))));
                    t = match self.types().kind(t).clone() {
                        TypeKind::Array { elem, .. } => elem,
                        _ => self.types().unknown(),
                    };
                }
            }
        }
        Ok((lv, t, next))
    }

    fn fail_at<T>(&mut self, loc: Loc, message: impl Into<String>) -> LResult<T> {
        self.st.unit.diagnostics.push(LowerDiagnostic {
            loc,
            message: message.into(),
        });
        Err(super::Unsupported)
    }

    /// Lowers a static-storage variable's initializer into its `init` list.
    pub fn global_initializer(&mut self, g: GlobalId, ty: TypeId, init: InitId, loc: Loc) {
        let name = self.st.unit.globals[g.index()].name;
        let scratch = FnBuilder::new(name);
        // A static local: the function's builder is set aside (labels still resolve in it).
        let inside_function = self.fb.is_some() && !self.static_init;
        let saved_outer = if inside_function {
            self.outer_fb.replace(self.fb.take().expect("checked"))
        } else {
            None
        };
        let saved_fb = self.fb.replace(scratch);
        let saved_static = std::mem::replace(&mut self.static_init, true);
        let _ = self.initialize(Lval::var(VarRef::Global(g)), ty, init, loc);
        self.static_init = saved_static;
        let scratch = std::mem::replace(&mut self.fb, saved_fb).expect("scratch builder");
        if inside_function {
            self.fb = std::mem::replace(&mut self.outer_fb, saved_outer);
        }
        let instrs: Vec<Instr> = scratch.blocks.into_iter().flat_map(|b| b.instrs).collect();
        self.st.unit.globals[g.index()].init.extend(instrs);
    }

    /// `(T){...}`: a temporary (a global in static initializers) initialized in place.
    pub fn compound_literal(&mut self, ty: TypeId, init: InitId, loc: Loc) -> LResult<Lval> {
        let t = self.temp(ty);
        if let VarRef::Global(g) = t {
            self.global_initializer(g, ty, init, loc);
        } else {
            self.initialize(Lval::var(t), ty, init, loc)?;
        }
        Ok(Lval::var(t))
    }
}
