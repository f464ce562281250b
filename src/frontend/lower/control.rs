//! Expressions that become control flow or calls: conditions (short-circuit into branches),
//! `&&`/`||` and `?:` as values, evaluation for effect only, and calls (with the GNU builtins that
//! are not calls: `__builtin_expect`, `__builtin_constant_p`, `__builtin_choose_expr`).

use super::expr::Operand;
use super::scope::Binding;
use super::{LResult, Lower};
use crate::frontend::ast::{self, BinOp as A, ExprId, ExprKind, UnOp as U};
use crate::ir::types::TypeKind;
use crate::ir::*;

impl Lower<'_, '_> {
    pub(crate) fn logical_value(&mut self, e: ExprId, loc: Loc) -> LResult<Operand> {
        let int = self.types().int();
        let t = self.temp(int);
        let (yes, no, join) = (
            self.fb().new_block(),
            self.fb().new_block(),
            self.fb().new_block(),
        );
        self.cond(e, yes, no)?;
        for (b, v) in [(yes, 1), (no, 0)] {
            self.fb().start(b);
            self.emit(Instr::Assign {
                dst: Lval::var(t),
                src: Expr::Const(Const::Int(v)),
                loc,
            });
            self.fb().goto(join);
        }
        self.fb().start(join);
        Ok(Operand::Lv(Lval::var(t), int))
    }

    pub(crate) fn conditional_value(
        &mut self,
        c: ExprId,
        t: Option<ExprId>,
        f: ExprId,
        loc: Loc,
    ) -> LResult<Operand> {
        let (yes, no, join) = (
            self.fb().new_block(),
            self.fb().new_block(),
            self.fb().new_block(),
        );
        // GNU `c ?: f` yields `c` itself when it is non-zero.
        let gnu_value = match t {
            Some(_) => {
                self.cond(c, yes, no)?;
                None
            }
            None => {
                let (v, ty) = self.rvalue(c)?;
                let tmp = self.temp(ty);
                self.emit(Instr::Assign {
                    dst: Lval::var(tmp),
                    src: v,
                    loc,
                });
                let test = Expr::Load(Box::new(Lval::var(tmp)));
                self.fb().terminate(Terminator::Branch {
                    cond: test,
                    then: yes,
                    els: no,
                    loc,
                });
                Some((Expr::Load(Box::new(Lval::var(tmp))), ty))
            }
        };
        self.fb().start(yes);
        let a = match (gnu_value, t) {
            (Some(v), _) => v,
            (None, Some(t)) => {
                let o = self.operand(t)?;
                self.read(o)
            }
            (None, None) => (Expr::Unknown, self.types().unknown()),
        };
        // The result's type depends on both arms; the second is lowered below, so the
        // temporary takes the first arm's type now and the joined type once both are known
        // (probing the second arm's type would lower it twice: exponential in nested `?:`).
        let is_void = matches!(self.types().kind(a.1), TypeKind::Void);
        let result = (!is_void).then(|| self.temp(a.1));
        if let Some(r) = result {
            self.emit(Instr::Assign {
                dst: Lval::var(r),
                src: a.0,
                loc,
            });
        }
        self.fb().goto(join);
        self.fb().start(no);
        let (b, b_ty) = self.rvalue(f)?;
        if let Some(r) = result {
            self.emit(Instr::Assign {
                dst: Lval::var(r),
                src: b,
                loc,
            });
        }
        self.fb().goto(join);
        self.fb().start(join);
        let a_null = t.is_some_and(|t| self.is_null_pointer_constant(t));
        let b_null = self.is_null_pointer_constant(f);
        let result_ty = self.conditional_type((a.1, a_null), (b_ty, b_null));
        Ok(match result {
            Some(r) => {
                let unqualified = self.types().unqualified(result_ty);
                self.set_var_type(r, unqualified);
                Operand::Lv(Lval::var(r), result_ty)
            }
            None => Operand::Rv(Expr::Const(Const::Int(0)), result_ty),
        })
    }

    /// The type of `c ? a : b` from its arms (C11 6.5.15): a null pointer constant takes the
    /// other arm's pointer type, `void *` wins over other pointers, numbers get the usual
    /// arithmetic conversions, anything else is the first arm's type.
    fn conditional_type(
        &mut self,
        (a, a_null): (TypeId, bool),
        (b, b_null): (TypeId, bool),
    ) -> TypeId {
        let b = match self.types().kind(b).clone() {
            TypeKind::Array { elem, .. } => self.types().pointer_to(elem),
            TypeKind::Function { .. } => self.types().pointer_to(b),
            _ => b,
        };
        let (pa, pb) = (self.types().pointee(a), self.types().pointee(b));
        match (pa, pb) {
            (Some(_), Some(_)) if a_null => b,
            (Some(_), Some(_)) if b_null => a,
            (Some(x), Some(_)) if matches!(self.types().kind(x), TypeKind::Void) => a,
            (Some(_), Some(y)) if matches!(self.types().kind(y), TypeKind::Void) => b,
            (Some(_), _) => a,
            (None, Some(_)) => b,
            _ if self.types().is_arithmetic(a) && self.types().is_arithmetic(b) => self.arith(a, b),
            _ => a,
        }
    }

    /// An integer constant 0, possibly cast to `void *`.
    fn is_null_pointer_constant(&mut self, e: ExprId) -> bool {
        match self.ast.exprs[e].kind {
            ExprKind::Cast(tn, inner) => {
                let t = self.type_name(tn);
                let to_void_ptr = self
                    .types()
                    .pointee(t)
                    .is_some_and(|p| matches!(self.types().kind(p), TypeKind::Void));
                to_void_ptr && self.const_eval(inner) == Some(0)
            }
            ExprKind::Number | ExprKind::Char | ExprKind::Binary(..) | ExprKind::Unary(..) => {
                self.const_eval(e) == Some(0)
            }
            _ => false,
        }
    }

    /// A call; `want_value` asks for the result in a temporary.
    pub fn call(
        &mut self,
        callee: ExprId,
        args: ast::List<ExprId>,
        loc: Loc,
        want_value: bool,
    ) -> LResult<Operand> {
        let arg_ids = self.ast.expr_lists.get(args).to_vec();
        if let ExprKind::Ident(s) = self.ast.exprs[callee].kind {
            if let Some(o) = self.transparent_builtin(s, &arg_ids)? {
                return Ok(o);
            }
        }
        let target = match self.ast.exprs[callee].kind {
            ExprKind::Ident(s) if self.st.scopes.lookup(s).is_none() => self.implicit_function(s),
            _ => self.operand(callee)?,
        };
        let (callee_expr, fty) = self.read(target);
        let fn_ty = self.types().pointee(fty).unwrap_or(fty);
        let ret = match self.types().kind(fn_ty) {
            TypeKind::Function { ret, .. } => *ret,
            _ => self.types().unknown(),
        };
        let mut argv = Vec::with_capacity(arg_ids.len());
        for a in arg_ids {
            argv.push(self.rvalue(a)?.0);
        }
        let is_void = matches!(self.types().kind(ret), TypeKind::Void);
        let dst = (want_value && !is_void).then(|| self.temp(ret));
        self.emit(Instr::Call {
            dst: dst.map(Lval::var),
            callee: callee_expr,
            args: argv,
            loc,
        });
        Ok(match dst {
            Some(t) => Operand::Lv(Lval::var(t), ret),
            None => Operand::Rv(Expr::Const(Const::Int(0)), ret),
        })
    }

    /// Builtins that are not calls: `__builtin_expect(e, v)` is `e` (so a trylock tested through it
    /// stays visible), `__builtin_constant_p` and `__builtin_choose_expr` fold, and
    /// `__builtin_prefetch(p, …)` is a hint without effect on the program (GCC's manual): only its
    /// operands are evaluated (a call would hand `p` to code relay cannot see).
    fn transparent_builtin(
        &mut self,
        s: crate::frontend::intern::Sym,
        args: &[ExprId],
    ) -> LResult<Option<Operand>> {
        if self
            .st
            .scopes
            .lookup(s)
            .is_some_and(|b| !matches!(b, Binding::Func { .. }))
        {
            return Ok(None);
        }
        Ok(match (self.interner.get(s), args) {
            ("__builtin_expect" | "__builtin_expect_with_probability", [e, ..]) => {
                Some(self.operand(*e)?)
            }
            ("__builtin_constant_p", [e]) => {
                let v = self.const_eval(*e).is_some() as i128;
                let int = self.types().int();
                Some(Operand::Rv(Expr::Const(Const::Int(v)), int))
            }
            ("__builtin_prefetch", [_, ..]) => {
                for &a in args {
                    self.effect(a)?;
                }
                let void = self.types().void();
                Some(Operand::Rv(Expr::Const(Const::Int(0)), void))
            }
            ("__builtin_choose_expr", [c, t, f]) => match self.const_eval(*c) {
                Some(0) => Some(self.operand(*f)?),
                Some(_) => Some(self.operand(*t)?),
                None => None,
            },
            _ => None,
        })
    }

    /// Evaluates `e` for its side effects only.
    pub fn effect(&mut self, e: ExprId) -> LResult<()> {
        let expr = self.ast.exprs[e];
        let loc = self.loc(expr.span.lo);
        match expr.kind {
            ExprKind::Call(callee, args) => {
                self.call(callee, args, loc, false)?;
            }
            ExprKind::Unary(op @ (U::PostInc | U::PostDec | U::PreInc | U::PreDec), a) => {
                let (lv, ty) = self.lvalue(a)?;
                let new = self.stepped(&lv, ty, matches!(op, U::PreInc | U::PostInc));
                self.store(lv, ty, new, loc, false);
            }
            ExprKind::Binary(A::Comma, a, b) => {
                self.effect(a)?;
                self.effect(b)?;
            }
            ExprKind::Binary(A::LogAnd | A::LogOr, a, b) => {
                let (rhs, join) = (self.fb().new_block(), self.fb().new_block());
                if matches!(expr.kind, ExprKind::Binary(A::LogAnd, ..)) {
                    self.cond(a, rhs, join)?;
                } else {
                    self.cond(a, join, rhs)?;
                }
                self.fb().start(rhs);
                self.effect(b)?;
                self.fb().start(join);
            }
            ExprKind::Cond(c, Some(t), f) => {
                let (yes, no, join) = (
                    self.fb().new_block(),
                    self.fb().new_block(),
                    self.fb().new_block(),
                );
                self.cond(c, yes, no)?;
                self.fb().start(yes);
                self.effect(t)?;
                self.fb().goto(join);
                self.fb().start(no);
                self.effect(f)?;
                self.fb().start(join);
            }
            ExprKind::Cast(_, a) => self.effect(a)?,
            ExprKind::Assign(op, a, b) => {
                self.assign(op, a, b, loc, false)?;
            }
            _ => {
                self.operand(e)?;
            }
        }
        Ok(())
    }

    /// Lowers a controlling expression into a branch to `yes` or `no`.
    pub fn cond(&mut self, e: ExprId, yes: BlockId, no: BlockId) -> LResult<()> {
        let expr = self.ast.exprs[e];
        match expr.kind {
            ExprKind::Binary(A::LogAnd, a, b) => {
                let mid = self.fb().new_block();
                self.cond(a, mid, no)?;
                self.fb().start(mid);
                self.cond(b, yes, no)
            }
            ExprKind::Binary(A::LogOr, a, b) => {
                let mid = self.fb().new_block();
                self.cond(a, yes, mid)?;
                self.fb().start(mid);
                self.cond(b, yes, no)
            }
            ExprKind::Unary(U::Not, a) => self.cond(a, no, yes),
            ExprKind::Binary(A::Comma, a, b) => {
                self.effect(a)?;
                self.cond(b, yes, no)
            }
            _ => {
                if let Some(v) = self.branch_constant(e) {
                    // The other arm is dead: `FnBuilder::finish` empties it.
                    self.fb().goto(if v != 0 { yes } else { no });
                    return Ok(());
                }
                let (v, _) = self.rvalue(e)?;
                let loc = self.loc(expr.span.lo);
                self.fb().terminate(Terminator::Branch {
                    cond: v,
                    then: yes,
                    els: no,
                    loc,
                });
                Ok(())
            }
        }
    }
}
