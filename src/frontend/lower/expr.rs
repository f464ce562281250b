//! Expressions: side effects become instructions and control flow, what remains is a
//! side-effect-free IR expression or lvalue.
//!
//! The core is [`Lower::operand`], which yields either an lvalue (not yet read) or a value. From
//! it, `rvalue` reads lvalues and decays arrays and functions, `lvalue` insists on a location,
//! `effect` evaluates for side effects only (no temporaries for discarded results), and `cond`
//! lowers a controlling expression straight into branches (short-circuit included).

use super::builder::FnBuilder;
use super::literal;
use super::scope::Binding;
use super::{LResult, Lower};
use crate::frontend::ast::{BinOp as A, ExprId, ExprKind, UnOp as U};
use crate::ir::types::{IntKind, TypeKind};
use crate::ir::*;

/// An evaluated expression: a location, or a value.
#[derive(Clone, Debug)]
pub(crate) enum Operand {
    Lv(Lval, TypeId),
    Rv(Expr, TypeId),
}

impl Operand {
    pub fn ty(&self) -> TypeId {
        match self {
            Operand::Lv(_, t) | Operand::Rv(_, t) => *t,
        }
    }
}

impl Lower<'_, '_> {
    pub fn fb(&mut self) -> &mut FnBuilder {
        if self.fb.is_none() {
            // File-scope code (initializers) gets a builder whose instructions become the
            // global's initializer; see `Lower::with_scratch_builder`.
            let name = self.intern("<file-scope>");
            self.fb = Some(FnBuilder::new(name));
        }
        self.fb.as_mut().expect("builder exists")
    }

    pub fn emit(&mut self, i: Instr) {
        self.fb().emit(i);
    }

    /// Evaluates the non-constant array bounds of the type just built (C11 6.7.6.2p5: a VLA's
    /// size expression is evaluated when the declaration or type name is), each into a
    /// temporary, so the variables they read are read there.
    pub fn vla_bound_reads(&mut self, loc: Loc) {
        for e in std::mem::take(&mut self.st.vla_bounds) {
            if self.fb.is_none() {
                continue;
            }
            if let Ok((v, ty)) = self.rvalue(e) {
                let t = self.temp(ty);
                self.store(Lval::var(t), ty, v, loc, false);
            }
        }
    }

    /// A fresh temporary: a local, or an internal global inside a static initializer.
    pub fn temp(&mut self, ty: TypeId) -> VarRef {
        let ty = self.types().unqualified(ty);
        if self.static_init {
            let name = self.fresh_anon("init");
            let loc = Loc::default();
            let g = Global {
                name,
                ty,
                kind: GlobalKind::Global,
                linkage: Linkage::Internal,
                flags: VarFlags::default(),
                defined: true,
                init: Vec::new(),
                loc,
            };
            return VarRef::Global(self.push_global(g));
        }
        let name = self.fb().unique_name("tmp");
        let name = self.intern(&name);
        VarRef::Local(self.fb().add_local(Local {
            name,
            ty,
            kind: LocalKind::Temp,
            flags: VarFlags::default(),
        }))
    }

    /// The type of `e` as `typeof` sees it (no decay); nothing is emitted.
    pub fn type_of_expr(&mut self, e: ExprId) -> TypeId {
        let saved = self.fb.take();
        let saved_static = std::mem::replace(&mut self.static_init, false);
        let saved_probing = std::mem::replace(&mut self.probing, true);
        let ty = match self.operand(e) {
            Ok(o) => o.ty(),
            Err(_) => self.types().unknown(),
        };
        self.probing = saved_probing;
        self.static_init = saved_static;
        self.fb = saved;
        ty
    }

    pub fn rvalue(&mut self, e: ExprId) -> LResult<(Expr, TypeId)> {
        let o = self.operand(e)?;
        Ok(self.read(o))
    }

    /// Reads an operand: lvalues are loaded, arrays decay to pointers, functions to addresses.
    pub fn read(&mut self, o: Operand) -> (Expr, TypeId) {
        match o {
            Operand::Lv(lv, ty) => match self.types().kind(ty).clone() {
                TypeKind::Array { elem, .. } => {
                    // Decay takes the array's address.
                    self.mark_address_taken(&lv);
                    (Expr::StartOf(Box::new(lv)), self.types().pointer_to(elem))
                }
                _ => {
                    let t = self.types().unqualified(ty);
                    (Expr::Load(Box::new(lv)), t)
                }
            },
            Operand::Rv(e, ty) => match self.types().kind(ty).clone() {
                TypeKind::Array { elem, .. } => (e, self.types().pointer_to(elem)),
                TypeKind::Function { .. } => (e, self.types().pointer_to(ty)),
                _ => (e, ty),
            },
        }
    }

    pub fn lvalue(&mut self, e: ExprId) -> LResult<(Lval, TypeId)> {
        match self.operand(e)? {
            Operand::Lv(lv, ty) => Ok((lv, ty)),
            Operand::Rv(v, ty) => {
                // A struct value (call result, statement expression): spill it to name its parts.
                let t = self.temp(ty);
                let loc = self.loc(self.ast.exprs[e].span.lo);
                self.emit(Instr::Assign {
                    dst: Lval::var(t),
                    src: v,
                    loc,
                });
                Ok((Lval::var(t), ty))
            }
        }
    }

    pub fn operand(&mut self, e: ExprId) -> LResult<Operand> {
        let expr = self.ast.exprs[e];
        let lo = expr.span.lo;
        let loc = self.loc(lo);
        Ok(match expr.kind {
            ExprKind::Ident(s) => self.identifier(s, lo)?,
            ExprKind::Number => {
                let text = self.span_text(expr.span);
                let parsed = if literal::is_float(text) {
                    literal::float_literal(text).map(|(v, k)| (Const::Float(v), k))
                } else {
                    literal::int_literal(text).map(|(v, k)| (Const::Int(v), k))
                };
                match parsed {
                    Some((c, kind)) => {
                        let ty = self.types().intern(kind, Quals::default());
                        Operand::Rv(Expr::Const(c), ty)
                    }
                    None => return self.fail(lo, format!("malformed number `{text}`")),
                }
            }
            ExprKind::Char => {
                let v = literal::char_literal(self.span_text(expr.span));
                let ty = self.types().int();
                Operand::Rv(Expr::Const(Const::Int(v)), ty)
            }
            ExprKind::Str => {
                let s = literal::string_literals(self.span_text(expr.span));
                let len = s.chars().count() as u64 + 1;
                let id = self.string(s);
                let ch = self.types().intern(
                    TypeKind::Int {
                        kind: IntKind::Char,
                        signed: true,
                    },
                    Quals::default(),
                );
                let ty = self.types().intern(
                    TypeKind::Array {
                        elem: ch,
                        len: Some(len),
                    },
                    Quals::default(),
                );
                Operand::Rv(Expr::Const(Const::Str(id)), ty)
            }
            ExprKind::Unary(op, a) => self.unary(op, a, loc)?,
            ExprKind::Binary(A::LogAnd | A::LogOr, ..) => self.logical_value(e, loc)?,
            ExprKind::Binary(A::Comma, a, b) => {
                self.effect(a)?;
                self.operand(b)?
            }
            ExprKind::Binary(op, a, b) => {
                let (x, tx) = self.rvalue(a)?;
                let (y, ty) = self.rvalue(b)?;
                let (v, t) = self.binary(op, x, tx, y, ty);
                Operand::Rv(v, t)
            }
            ExprKind::Assign(op, a, b) => self.assign(op, a, b, loc, true)?,
            ExprKind::Cond(c, t, f) => self.conditional_value(c, t, f, loc)?,
            ExprKind::Call(callee, args) => self.call(callee, args, loc, true)?,
            ExprKind::Member(base, field) => {
                let (lv, ty) = self.lvalue(base)?;
                self.member(lv, ty, field, lo)?
            }
            ExprKind::Arrow(base, field) => {
                let (p, pty) = self.rvalue(base)?;
                let pointee = self.pointee_or_unknown(pty, lo);
                self.member(Lval::mem(p), pointee, field, lo)?
            }
            ExprKind::Index(a, b) => self.index(a, b, lo)?,
            ExprKind::Cast(tn, a) => {
                let t = self.type_name(tn);
                let (v, _) = self.rvalue(a)?;
                Operand::Rv(Expr::Cast(t, Box::new(v)), t)
            }
            ExprKind::BuiltinCast(tn, a) => {
                let t = self.type_name(tn);
                let (v, _) = self.rvalue(a)?;
                Operand::Rv(Expr::Cast(t, Box::new(v)), t)
            }
            ExprKind::CompoundLiteral(tn, init) => {
                let t = self.type_name(tn);
                let (lv, t) = self.compound_literal(t, init, loc)?;
                Operand::Lv(lv, t)
            }
            ExprKind::SizeofType(tn) => {
                let t = self.type_name(tn);
                self.size_operand(Expr::SizeOf(t))
            }
            ExprKind::SizeofExpr(a) => {
                let t = self.type_of_expr(a);
                self.size_operand(Expr::SizeOf(t))
            }
            ExprKind::AlignofType(tn) => {
                let t = self.type_name(tn);
                self.size_operand(Expr::AlignOf(t))
            }
            ExprKind::AlignofExpr(a) => {
                let t = self.type_of_expr(a);
                self.size_operand(Expr::AlignOf(t))
            }
            ExprKind::Offsetof(tn, path) => {
                let v = self.offset_of(tn, path);
                self.size_operand(v.map_or(Expr::Unknown, |v| Expr::Const(Const::Int(v))))
            }
            ExprKind::StmtExpr(body) => self.statement_expression(body)?,
            ExprKind::LabelAddr(l) => {
                let owner = match self.outer_fb.as_mut() {
                    Some(outer) => outer,
                    None => self.fb(),
                };
                let b = owner.label(l);
                owner.address_taken_labels.push(b);
                let void = self.types().void();
                let vp = self.types().pointer_to(void);
                Operand::Rv(Expr::Label(b), vp)
            }
            ExprKind::Generic(..) => match self.generic_choice(e) {
                Some(chosen) => self.operand(chosen)?,
                None => return self.fail(lo, "no _Generic association matches"),
            },
            ExprKind::VaArg(ap, tn) => {
                let t = self.type_name(tn);
                let (ap, _) = self.rvalue(ap)?;
                let tmp = self.temp(t);
                let callee = Expr::Func(FuncRef::Named {
                    name: self.intern("__builtin_va_arg"),
                    internal: false,
                });
                let dst = Some(Lval::var(tmp));
                self.emit(Instr::Call {
                    dst,
                    callee,
                    args: vec![ap],
                    loc,
                });
                Operand::Lv(Lval::var(tmp), t)
            }
            ExprKind::TypesCompatible(a, b) => {
                let (a, b) = (self.type_name(a), self.type_name(b));
                let (a, b) = (self.types().unqualified(a), self.types().unqualified(b));
                let int = self.types().int();
                Operand::Rv(Expr::Const(Const::Int((a == b) as i128)), int)
            }
        })
    }

    fn size_operand(&mut self, e: Expr) -> Operand {
        let ulong = self.types().intern(
            TypeKind::Int {
                kind: IntKind::Long,
                signed: false,
            },
            Quals::default(),
        );
        Operand::Rv(e, ulong)
    }

    fn identifier(&mut self, s: crate::frontend::intern::Sym, lo: u32) -> LResult<Operand> {
        let floor = self.fb.as_ref().map_or(0, |fb| fb.scope_floor);
        match self.st.scopes.lookup_depth(s) {
            Some((
                Binding::Var {
                    var: VarRef::Local(_),
                    ..
                },
                depth,
            )) if depth < floor => {
                let text = self.interner.get(s);
                self.fail(lo, format!("nested function uses `{text}`, a local of its enclosing function (not modelled)"))
            }
            Some((Binding::Typedef(_), _)) => self.fail(lo, "type name used as a value"),
            Some((b, _)) => self.binding_operand(b),
            None => self.undeclared(s, lo),
        }
    }

    fn binding_operand(&mut self, b: Binding) -> LResult<Operand> {
        match b {
            Binding::Var { var, ty } => Ok(Operand::Lv(Lval::var(var), ty)),
            Binding::Func { name, ty, internal } => Ok(Operand::Rv(
                Expr::Func(FuncRef::Named { name, internal }),
                ty,
            )),
            Binding::EnumConst { value, ty } => Ok(Operand::Rv(Expr::Const(Const::Int(value)), ty)),
            Binding::Typedef(_) => Err(super::Unsupported),
        }
    }

    fn undeclared(&mut self, s: crate::frontend::intern::Sym, lo: u32) -> LResult<Operand> {
        let text = self.interner.get(s);
        if is_builtin_function(text) {
            return Ok(self.implicit_function(s));
        }
        if matches!(text, "__func__" | "__FUNCTION__" | "__PRETTY_FUNCTION__") {
            let fname = self
                .fb
                .as_ref()
                .map_or(String::new(), |fb| self.st.names.get(fb.name).to_string());
            let len = fname.len() as u64 + 1;
            let id = self.string(fname);
            let ch = self.types().intern(
                TypeKind::Int {
                    kind: IntKind::Char,
                    signed: true,
                },
                Quals(Quals::CONST),
            );
            let ty = self.types().intern(
                TypeKind::Array {
                    elem: ch,
                    len: Some(len),
                },
                Quals::default(),
            );
            return Ok(Operand::Rv(Expr::Const(Const::Str(id)), ty));
        }
        self.fail(lo, format!("undeclared identifier `{text}`"))
    }

    /// A call to an undeclared function declares `int name()` (C89), at file scope.
    pub(crate) fn implicit_function(&mut self, s: crate::frontend::intern::Sym) -> Operand {
        let name = self.name(s);
        let int = self.types().int();
        let ty = self.types().intern(
            TypeKind::Function {
                ret: int,
                params: vec![],
                variadic: false,
                prototyped: false,
            },
            Quals::default(),
        );
        self.st.scopes.bind_file(
            s,
            Binding::Func {
                name,
                ty,
                internal: false,
            },
        );
        self.declare_function(name, ty, Linkage::External);
        Operand::Rv(
            Expr::Func(FuncRef::Named {
                name,
                internal: false,
            }),
            ty,
        )
    }

    fn pointee_or_unknown(&mut self, t: TypeId, lo: u32) -> TypeId {
        match self.types().pointee(t) {
            Some(p) => p,
            None => {
                if !matches!(self.types().kind(t), TypeKind::Unknown) {
                    self.diag(lo, "dereference of a non-pointer");
                }
                self.types().unknown()
            }
        }
    }

    fn member(
        &mut self,
        mut lv: Lval,
        ty: TypeId,
        field: crate::frontend::intern::Sym,
        lo: u32,
    ) -> LResult<Operand> {
        let name = self.name(field);
        let Some(rid) = self.types().as_record(ty) else {
            if matches!(self.types().kind(ty), TypeKind::Unknown) {
                let unknown = self.types().unknown();
                lv.offsets.push(Offset::Field {
                    record: RecordId(u32::MAX),
                    name,
                });
                return Ok(Operand::Lv(lv, unknown));
            }
            return self.fail(
                lo,
                format!("member `{}` of a non-struct", self.interner.get(field)),
            );
        };
        let Some(path) = self.types().find_field(rid, name) else {
            return self.fail(
                lo,
                format!("no member named `{}`", self.interner.get(field)),
            );
        };
        let mut fty = ty;
        for (record, i) in path {
            let f = &self.st.unit.types.record(record).fields[i];
            lv.offsets.push(Offset::Field {
                record,
                name: f.name,
            });
            fty = f.ty;
        }
        let quals = self.types().quals(ty);
        let fty = self.types().qualified(fty, quals);
        Ok(Operand::Lv(lv, fty))
    }

    fn index(&mut self, a: ExprId, b: ExprId, lo: u32) -> LResult<Operand> {
        let oa = self.operand(a)?;
        let (base, idx) = if self.types().is_pointer_like(oa.ty()) || self.is_vector(oa.ty()) {
            (oa, b)
        } else {
            // `i[a]`: the pointer is the second operand.
            let ob = self.operand(b)?;
            let (i, _) = self.read(oa);
            return self.index_with(ob, i, lo);
        };
        let (i, _) = self.rvalue(idx)?;
        self.index_with(base, i, lo)
    }

    fn is_vector(&mut self, t: TypeId) -> bool {
        matches!(self.types().kind(t), TypeKind::Vector { .. })
    }

    fn index_with(&mut self, base: Operand, i: Expr, lo: u32) -> LResult<Operand> {
        // GCC subscripts vector rvalues too (`((__v4sf)x)[0]` in xmmintrin.h): the value goes
        // to a temporary first. (Not inside a static initializer, where no code is emitted.)
        let base = match base {
            Operand::Rv(v, ty) if self.is_vector(ty) && !self.static_init => {
                let t = self.temp(ty);
                let loc = self.loc(lo);
                self.emit(Instr::Assign {
                    dst: Lval::var(t),
                    src: v,
                    loc,
                });
                Operand::Lv(Lval::var(t), ty)
            }
            b => b,
        };
        if let Operand::Lv(mut lv, ty) = base.clone() {
            if let TypeKind::Array { elem, .. } | TypeKind::Vector { elem, .. } =
                self.types().kind(ty).clone()
            {
                lv.offsets.push(Offset::Index(Box::new(i)));
                return Ok(Operand::Lv(lv, elem));
            }
        }
        let (p, pty) = self.read(base);
        let elem = self.pointee_or_unknown(pty, lo);
        let addr = Expr::Binary(BinOp::PtrAdd, Box::new(p), Box::new(i));
        Ok(Operand::Lv(Lval::mem(addr), elem))
    }

    fn unary(&mut self, op: U, a: ExprId, loc: Loc) -> LResult<Operand> {
        let lo = self.ast.exprs[a].span.lo;
        Ok(match op {
            U::Deref => {
                let (p, pty) = self.rvalue(a)?;
                let pointee = self.pointee_or_unknown(pty, lo);
                if matches!(self.types().kind(pointee), TypeKind::Function { .. }) {
                    Operand::Rv(p, pointee)
                } else {
                    Operand::Lv(Lval::mem(p), pointee)
                }
            }
            U::AddrOf => match self.operand(a)? {
                Operand::Lv(lv, ty) => {
                    self.mark_address_taken(&lv);
                    let pty = self.types().pointer_to(ty);
                    let e = match lv {
                        // `&*p` is `p`.
                        Lval {
                            host: Host::Mem(p),
                            offsets,
                        } if offsets.is_empty() => *p,
                        lv => Expr::AddrOf(Box::new(lv)),
                    };
                    Operand::Rv(e, pty)
                }
                Operand::Rv(e, ty) => {
                    let pty = self.types().pointer_to(ty);
                    Operand::Rv(e, pty)
                }
            },
            U::Plus | U::Neg | U::BitNot | U::Not => {
                let (v, t) = self.rvalue(a)?;
                let (e, t) = match op {
                    U::Plus => (v, self.promote(t)),
                    U::Neg => (Expr::Unary(UnOp::Neg, Box::new(v)), self.promote(t)),
                    U::BitNot => (Expr::Unary(UnOp::BitNot, Box::new(v)), self.promote(t)),
                    _ => (Expr::Unary(UnOp::LogNot, Box::new(v)), self.types().int()),
                };
                Operand::Rv(e, t)
            }
            U::PreInc | U::PreDec | U::PostInc | U::PostDec => {
                let (lv, ty) = self.lvalue(a)?;
                let post = matches!(op, U::PostInc | U::PostDec);
                let saved = if post {
                    let t = self.temp(ty);
                    self.emit(Instr::Assign {
                        dst: Lval::var(t),
                        src: Expr::Load(Box::new(lv.clone())),
                        loc,
                    });
                    Some(t)
                } else {
                    None
                };
                let new = self.stepped(&lv, ty, matches!(op, U::PreInc | U::PostInc));
                let stored = self.store(lv, ty, new, loc, !post);
                match saved {
                    Some(t) => Operand::Lv(Lval::var(t), ty),
                    None => stored,
                }
            }
            U::Real | U::Imag => self.operand(a)?,
        })
    }

    /// The value `lv ± 1` (pointer-aware).
    pub(crate) fn stepped(&mut self, lv: &Lval, ty: TypeId, up: bool) -> Expr {
        let one = Expr::Const(Const::Int(1));
        let cur = Expr::Load(Box::new(lv.clone()));
        let src = if self.types().pointee(ty).is_some() {
            let d = if up {
                one
            } else {
                Expr::Unary(UnOp::Neg, Box::new(one))
            };
            Expr::Binary(BinOp::PtrAdd, Box::new(cur), Box::new(d))
        } else {
            Expr::Binary(
                if up { BinOp::Add } else { BinOp::Sub },
                Box::new(cur),
                Box::new(one),
            )
        };
        src
    }

    /// Stores `src` into `lv`. When the value is wanted and `lv` is not a plain local, the value
    /// goes through a temporary (`tmp = v; lv = tmp;`): re-reading `lv` later, after other side
    /// effects, could see another value (and would be a read the program does not make).
    pub(crate) fn store(
        &mut self,
        lv: Lval,
        ty: TypeId,
        src: Expr,
        loc: Loc,
        want_value: bool,
    ) -> Operand {
        if !want_value || self.is_plain_local(&lv) {
            self.emit(Instr::Assign {
                dst: lv.clone(),
                src,
                loc,
            });
            return Operand::Lv(lv, ty);
        }
        if let Expr::Const(_) = src {
            self.emit(Instr::Assign {
                dst: lv,
                src: src.clone(),
                loc,
            });
            return Operand::Rv(src, ty);
        }
        let t = self.temp(ty);
        self.emit(Instr::Assign {
            dst: Lval::var(t),
            src,
            loc,
        });
        self.emit(Instr::Assign {
            dst: lv,
            src: Expr::Load(Box::new(Lval::var(t))),
            loc,
        });
        Operand::Lv(Lval::var(t), ty)
    }

    fn is_plain_local(&self, lv: &Lval) -> bool {
        match (&lv.host, &self.fb) {
            (Host::Var(VarRef::Local(l)), Some(fb)) if lv.offsets.is_empty() => fb
                .locals
                .get(l.index())
                .is_some_and(|local| !local.flags.address_taken),
            _ => false,
        }
    }

    pub fn mark_address_taken(&mut self, lv: &Lval) {
        if self.probing {
            return;
        }
        if let Host::Var(v) = lv.host {
            match v {
                VarRef::Local(l) => {
                    if let Some(fb) = self.fb.as_mut() {
                        if let Some(local) = fb.locals.get_mut(l.index()) {
                            local.flags.address_taken = true;
                        }
                    }
                }
                VarRef::Global(g) => {
                    if let Some(global) = self.st.unit.globals.get_mut(g.index()) {
                        global.flags.address_taken = true;
                    }
                }
            }
        }
    }

    /// Assignment and compound assignment; the operand is the assigned value.
    pub(crate) fn assign(
        &mut self,
        op: Option<A>,
        a: ExprId,
        b: ExprId,
        loc: Loc,
        want_value: bool,
    ) -> LResult<Operand> {
        let (rhs, rty) = self.rvalue(b)?;
        let (lv, ty) = self.lvalue(a)?;
        let src = match op {
            None => rhs,
            Some(op) => {
                let cur = Expr::Load(Box::new(lv.clone()));
                self.binary(op, cur, ty, rhs, rty).0
            }
        };
        Ok(self.store(lv, ty, src, loc, want_value))
    }

    /// The association `_Generic` selects, by the controlling expression's unqualified type.
    pub fn generic_choice(&mut self, e: ExprId) -> Option<ExprId> {
        let ExprKind::Generic(ctrl, assocs) = self.ast.exprs[e].kind else {
            return None;
        };
        let ct = self.type_of_expr(ctrl);
        let ct = match self.types().kind(ct).clone() {
            TypeKind::Array { elem, .. } => self.types().pointer_to(elem),
            TypeKind::Function { .. } => self.types().pointer_to(ct),
            _ => self.types().unqualified(ct),
        };
        let mut default = None;
        for a in self.ast.generic_assocs.get(assocs).to_vec() {
            match a.ty {
                None => default = Some(a.expr),
                Some(tn) => {
                    let t = self.type_name(tn);
                    if self.types().unqualified(t) == ct {
                        return Some(a.expr);
                    }
                }
            }
        }
        default
    }
}

/// GCC builtins may be called without a declaration.
fn is_builtin_function(name: &str) -> bool {
    name.starts_with("__builtin_") || name.starts_with("__atomic_") || name.starts_with("__sync_")
}
