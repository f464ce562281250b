//! Expressions: precedence climbing over casts, unary and postfix operators, and the GNU
//! builtins that take type names (`__builtin_offsetof`, `__builtin_va_arg`, ...).

use super::{PResult, Parser};
use crate::frontend::ast::*;
use crate::frontend::token::{Kw, Span, TokenKind, P};

impl Parser<'_> {
    /// expression: assignment-expressions separated by commas.
    pub(crate) fn expr(&mut self) -> PResult<ExprId> {
        self.chain(|p| {
            let mut e = p.assign_expr()?;
            while p.at(P::Comma) {
                p.deepen()?;
                p.bump();
                let rhs = p.assign_expr()?;
                e = p.binary(BinOp::Comma, e, rhs);
            }
            Ok(e)
        })
    }

    pub(crate) fn assign_expr(&mut self) -> PResult<ExprId> {
        let lhs = self.conditional_expr()?;
        let op = match self.peek().kind {
            TokenKind::Punct(p) => match assign_op(p) {
                Some(op) => op,
                None => return Ok(lhs),
            },
            _ => return Ok(lhs),
        };
        self.bump();
        let rhs = self.nested(|p| p.assign_expr())?;
        let span = self.ast.exprs[lhs].span.to(self.ast.exprs[rhs].span);
        Ok(self.ast.exprs.alloc(Expr {
            kind: ExprKind::Assign(op, lhs, rhs),
            span,
        }))
    }

    pub(crate) fn conditional_expr(&mut self) -> PResult<ExprId> {
        let cond = self.binary_expr(1)?;
        if !self.eat(P::Question) {
            return Ok(cond);
        }
        let then = if self.at(P::Colon) {
            None
        } else {
            Some(self.nested(|p| p.expr())?)
        };
        self.expect(P::Colon)?;
        let els = self.nested(|p| p.conditional_expr())?;
        let span = self.ast.exprs[cond].span.to(self.ast.exprs[els].span);
        Ok(self.ast.exprs.alloc(Expr {
            kind: ExprKind::Cond(cond, then, els),
            span,
        }))
    }

    /// Binary operators of precedence `min_prec` and tighter.
    fn binary_expr(&mut self, min_prec: u8) -> PResult<ExprId> {
        self.chain(|p| {
            let mut lhs = p.cast_expr()?;
            loop {
                let (op, prec) = match p.peek().kind {
                    TokenKind::Punct(t) => match binary_op(t) {
                        Some((op, prec)) if prec >= min_prec => (op, prec),
                        _ => return Ok(lhs),
                    },
                    _ => return Ok(lhs),
                };
                p.deepen()?;
                p.bump();
                let rhs = p.binary_expr(prec + 1)?;
                lhs = p.binary(op, lhs, rhs);
            }
        })
    }

    fn binary(&mut self, op: BinOp, lhs: ExprId, rhs: ExprId) -> ExprId {
        let span = self.ast.exprs[lhs].span.to(self.ast.exprs[rhs].span);
        self.ast.exprs.alloc(Expr {
            kind: ExprKind::Binary(op, lhs, rhs),
            span,
        })
    }

    pub(crate) fn cast_expr(&mut self) -> PResult<ExprId> {
        self.nested(|p| {
            if p.at(P::LParen) && p.starts_type_name(1) {
                let lo = p.bump().span.lo;
                let ty = p.type_name()?;
                p.expect(P::RParen)?;
                if p.at(P::LBrace) {
                    let lit = p.compound_literal(lo, ty)?;
                    return p.postfix(lit);
                }
                let operand = p.cast_expr()?;
                return Ok(p.expr_from(lo, ExprKind::Cast(ty, operand)));
            }
            p.unary_expr()
        })
    }

    fn compound_literal(&mut self, lo: u32, ty: TypeNameId) -> PResult<ExprId> {
        let init = self.braced_initializer()?;
        Ok(self.expr_from(lo, ExprKind::CompoundLiteral(ty, init)))
    }

    fn unary_expr(&mut self) -> PResult<ExprId> {
        let t = self.peek();
        let lo = t.span.lo;
        let op = match t.kind {
            TokenKind::Punct(P::PlusPlus) => Some((UnOp::PreInc, false)),
            TokenKind::Punct(P::MinusMinus) => Some((UnOp::PreDec, false)),
            TokenKind::Punct(P::Amp) => Some((UnOp::AddrOf, true)),
            TokenKind::Punct(P::Star) => Some((UnOp::Deref, true)),
            TokenKind::Punct(P::Plus) => Some((UnOp::Plus, true)),
            TokenKind::Punct(P::Minus) => Some((UnOp::Neg, true)),
            TokenKind::Punct(P::Tilde) => Some((UnOp::BitNot, true)),
            TokenKind::Punct(P::Bang) => Some((UnOp::Not, true)),
            TokenKind::Kw(Kw::Real) => Some((UnOp::Real, true)),
            TokenKind::Kw(Kw::Imag) => Some((UnOp::Imag, true)),
            _ => None,
        };
        if let Some((op, takes_cast)) = op {
            self.bump();
            let operand = if takes_cast {
                self.cast_expr()?
            } else {
                self.nested(|p| p.unary_expr())?
            };
            return Ok(self.expr_from(lo, ExprKind::Unary(op, operand)));
        }
        match t.kind {
            TokenKind::Punct(P::AmpAmp) => {
                self.bump();
                let (label, _) = self.expect_ident()?;
                Ok(self.expr_from(lo, ExprKind::LabelAddr(label)))
            }
            TokenKind::Kw(Kw::Extension) => {
                self.bump();
                self.cast_expr()
            }
            TokenKind::Kw(kw @ (Kw::Sizeof | Kw::Alignof)) => {
                self.bump();
                let sizeof = kw == Kw::Sizeof;
                if self.at(P::LParen) && self.starts_type_name(1) {
                    let paren = self.bump().span.lo;
                    let ty = self.type_name()?;
                    self.expect(P::RParen)?;
                    if self.at(P::LBrace) {
                        let lit = self.compound_literal(paren, ty)?;
                        let operand = self.postfix(lit)?;
                        let kind = if sizeof {
                            ExprKind::SizeofExpr(operand)
                        } else {
                            ExprKind::AlignofExpr(operand)
                        };
                        return Ok(self.expr_from(lo, kind));
                    }
                    let kind = if sizeof {
                        ExprKind::SizeofType(ty)
                    } else {
                        ExprKind::AlignofType(ty)
                    };
                    return Ok(self.expr_from(lo, kind));
                }
                let operand = self.nested(|p| p.unary_expr())?;
                let kind = if sizeof {
                    ExprKind::SizeofExpr(operand)
                } else {
                    ExprKind::AlignofExpr(operand)
                };
                Ok(self.expr_from(lo, kind))
            }
            _ => {
                let e = self.primary_expr()?;
                self.postfix(e)
            }
        }
    }

    fn postfix(&mut self, e: ExprId) -> PResult<ExprId> {
        self.chain(|p| p.postfix_chain(e))
    }

    fn postfix_chain(&mut self, mut e: ExprId) -> PResult<ExprId> {
        let lo = self.ast.exprs[e].span.lo;
        loop {
            if matches!(
                self.peek().kind,
                TokenKind::Punct(
                    P::LBracket | P::LParen | P::Dot | P::Arrow | P::PlusPlus | P::MinusMinus
                )
            ) {
                self.deepen()?;
            }
            let kind = match self.peek().kind {
                TokenKind::Punct(P::LBracket) => {
                    self.bump();
                    let index = self.expr()?;
                    self.expect(P::RBracket)?;
                    ExprKind::Index(e, index)
                }
                TokenKind::Punct(P::LParen) => {
                    self.bump();
                    let mut args = Vec::new();
                    while !self.at(P::RParen) {
                        args.push(self.assign_expr()?);
                        if !self.eat(P::Comma) {
                            break;
                        }
                    }
                    self.expect(P::RParen)?;
                    ExprKind::Call(e, self.ast.expr_lists.push_list(args))
                }
                TokenKind::Punct(P::Dot) => {
                    self.bump();
                    ExprKind::Member(e, self.expect_ident()?.0)
                }
                TokenKind::Punct(P::Arrow) => {
                    self.bump();
                    ExprKind::Arrow(e, self.expect_ident()?.0)
                }
                TokenKind::Punct(P::PlusPlus) => {
                    self.bump();
                    ExprKind::Unary(UnOp::PostInc, e)
                }
                TokenKind::Punct(P::MinusMinus) => {
                    self.bump();
                    ExprKind::Unary(UnOp::PostDec, e)
                }
                _ => return Ok(e),
            };
            e = self.expr_from(lo, kind);
        }
    }

    fn primary_expr(&mut self) -> PResult<ExprId> {
        let t = self.peek();
        let lo = t.span.lo;
        let kind = match t.kind {
            TokenKind::Ident if !self.is_typedef_name(t.sym) => {
                self.bump();
                ExprKind::Ident(t.sym)
            }
            TokenKind::Number => {
                self.bump();
                ExprKind::Number
            }
            TokenKind::Char => {
                self.bump();
                ExprKind::Char
            }
            TokenKind::Str => {
                self.string_literals()?;
                ExprKind::Str
            }
            TokenKind::Punct(P::LParen) if self.peek_at(1).kind == TokenKind::Punct(P::LBrace) => {
                self.bump();
                let body = self.compound_statement(true)?;
                self.expect(P::RParen)?;
                ExprKind::StmtExpr(body)
            }
            TokenKind::Punct(P::LParen) => {
                self.bump();
                let inner = self.expr()?;
                self.expect(P::RParen)?;
                // The parentheses belong to the operand: `(*p).f` is located at its `(`. Literals
                // keep their own span: their value is read from it.
                let inner_expr = &mut self.ast.exprs[inner];
                if !matches!(
                    inner_expr.kind,
                    ExprKind::Number | ExprKind::Char | ExprKind::Str
                ) {
                    inner_expr.span = Span::new(lo, self.prev_hi);
                }
                return Ok(inner);
            }
            TokenKind::Kw(Kw::Generic) => self.generic_selection()?,
            TokenKind::Kw(Kw::BuiltinOffsetof) => {
                self.bump();
                self.expect(P::LParen)?;
                let ty = self.type_name()?;
                self.expect(P::Comma)?;
                let mut path = vec![Designator::Field(self.expect_ident()?.0)];
                loop {
                    if self.eat(P::Dot) {
                        path.push(Designator::Field(self.expect_ident()?.0));
                    } else if self.at(P::LBracket) {
                        path.push(self.index_designator()?);
                    } else {
                        break;
                    }
                }
                self.expect(P::RParen)?;
                ExprKind::Offsetof(ty, self.ast.designators.push_list(path))
            }
            TokenKind::Kw(Kw::BuiltinVaArg) => {
                let (ap, ty) = self.builtin_args(Self::assign_expr, Self::type_name)?;
                ExprKind::VaArg(ap, ty)
            }
            TokenKind::Kw(Kw::BuiltinTypesCompatibleP) => {
                let (a, b) = self.builtin_args(Self::type_name, Self::type_name)?;
                ExprKind::TypesCompatible(a, b)
            }
            TokenKind::Kw(Kw::BuiltinConvertVector) => {
                let (e, ty) = self.builtin_args(Self::assign_expr, Self::type_name)?;
                ExprKind::BuiltinCast(ty, e)
            }
            TokenKind::Kw(Kw::BuiltinBitCast) => {
                let (ty, e) = self.builtin_args(Self::type_name, Self::assign_expr)?;
                ExprKind::BuiltinCast(ty, e)
            }
            _ => return self.fail("expression"),
        };
        Ok(self.expr_from(lo, kind))
    }

    /// `builtin(first, second)` for the GNU builtins whose operands are types or expressions.
    fn builtin_args<A, B>(
        &mut self,
        first: impl FnOnce(&mut Self) -> PResult<A>,
        second: impl FnOnce(&mut Self) -> PResult<B>,
    ) -> PResult<(A, B)> {
        self.bump();
        self.expect(P::LParen)?;
        let a = first(self)?;
        self.expect(P::Comma)?;
        let b = second(self)?;
        self.expect(P::RParen)?;
        Ok((a, b))
    }

    /// `_Generic(controlling, type: expr, ..., default: expr)`.
    fn generic_selection(&mut self) -> PResult<ExprKind> {
        self.bump();
        self.expect(P::LParen)?;
        let controlling = self.assign_expr()?;
        let mut assocs = Vec::new();
        while self.eat(P::Comma) {
            let ty = if self.eat_kw(Kw::Default) {
                None
            } else {
                Some(self.type_name()?)
            };
            self.expect(P::Colon)?;
            let expr = self.assign_expr()?;
            assocs.push(GenericAssoc { ty, expr });
        }
        self.expect(P::RParen)?;
        Ok(ExprKind::Generic(
            controlling,
            self.ast.generic_assocs.push_list(assocs),
        ))
    }

    fn expr_from(&mut self, lo: u32, kind: ExprKind) -> ExprId {
        let span = self.span_from(lo);
        self.ast.exprs.alloc(Expr { kind, span })
    }
}

fn assign_op(p: P) -> Option<Option<BinOp>> {
    Some(match p {
        P::Assign => None,
        P::StarEq => Some(BinOp::Mul),
        P::SlashEq => Some(BinOp::Div),
        P::PercentEq => Some(BinOp::Rem),
        P::PlusEq => Some(BinOp::Add),
        P::MinusEq => Some(BinOp::Sub),
        P::ShlEq => Some(BinOp::Shl),
        P::ShrEq => Some(BinOp::Shr),
        P::AmpEq => Some(BinOp::BitAnd),
        P::CaretEq => Some(BinOp::BitXor),
        P::PipeEq => Some(BinOp::BitOr),
        _ => return None,
    })
}

/// Binary operator and precedence (higher binds tighter).
fn binary_op(p: P) -> Option<(BinOp, u8)> {
    Some(match p {
        P::Star => (BinOp::Mul, 10),
        P::Slash => (BinOp::Div, 10),
        P::Percent => (BinOp::Rem, 10),
        P::Plus => (BinOp::Add, 9),
        P::Minus => (BinOp::Sub, 9),
        P::Shl => (BinOp::Shl, 8),
        P::Shr => (BinOp::Shr, 8),
        P::Lt => (BinOp::Lt, 7),
        P::Gt => (BinOp::Gt, 7),
        P::Le => (BinOp::Le, 7),
        P::Ge => (BinOp::Ge, 7),
        P::EqEq => (BinOp::Eq, 6),
        P::Ne => (BinOp::Ne, 6),
        P::Amp => (BinOp::BitAnd, 5),
        P::Caret => (BinOp::BitXor, 4),
        P::Pipe => (BinOp::BitOr, 3),
        P::AmpAmp => (BinOp::LogAnd, 2),
        P::PipePipe => (BinOp::LogOr, 1),
        _ => return None,
    })
}
