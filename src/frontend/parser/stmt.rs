//! Statements, block items and GNU asm statements.

use super::decl::DeclOrFunc;
use super::{PResult, Parser};
use crate::frontend::ast::*;
use crate::frontend::token::{Kw, Span, TokenKind, P};

impl Parser<'_> {
    /// `{ block-item* }`. `new_scope` is false for a function body, whose scope is the parameters'.
    pub(crate) fn compound_statement(&mut self, new_scope: bool) -> PResult<StmtId> {
        let lo = self.expect(P::LBrace)?.span.lo;
        if new_scope {
            self.push_scope();
        }
        let result = self.block_items();
        if new_scope {
            self.pop_scope();
        }
        let items = result?;
        let list = self.ast.stmt_lists.push_list(items);
        Ok(self.stmt(StmtKind::Compound(list), lo))
    }

    fn block_items(&mut self) -> PResult<Vec<StmtId>> {
        let mut items = Vec::new();
        while !self.eat(P::RBrace) {
            if self.peek().kind == TokenKind::Eof {
                return self.fail("`}`");
            }
            items.push(self.block_item()?);
        }
        Ok(items)
    }

    fn block_item(&mut self) -> PResult<StmtId> {
        let lo = self.peek().span.lo;
        match self.peek().kind {
            TokenKind::Kw(Kw::Label) => {
                self.bump();
                let mut names = Vec::new();
                loop {
                    names.push(self.expect_ident()?.0);
                    if !self.eat(P::Comma) {
                        break;
                    }
                }
                self.expect(P::Semi)?;
                let list = self.ast.syms.push_list(names);
                return Ok(self.stmt(StmtKind::LocalLabels(list), lo));
            }
            TokenKind::Kw(Kw::StaticAssert) => {
                let sa = self.static_assert()?;
                let id = self.ast.static_asserts.alloc(sa);
                return Ok(self.stmt(StmtKind::StaticAssert(id), lo));
            }
            _ => {}
        }
        // Leading attributes belong to a declaration, or to a null statement (`fallthrough`).
        let mut attrs = Vec::new();
        self.attributes(&mut attrs)?;
        if !attrs.is_empty() && self.eat(P::Semi) {
            return Ok(self.stmt(StmtKind::Expr(None), lo));
        }
        if self.starts_declaration() {
            let kind = match self.declaration_with_attrs(false, attrs)? {
                DeclOrFunc::Decl(d) => StmtKind::Decl(d),
                DeclOrFunc::Func(f) => StmtKind::Function(f),
            };
            return Ok(self.stmt(kind, lo));
        }
        self.statement()
    }

    /// Whether a block item starting here is a declaration rather than a statement.
    fn starts_declaration(&mut self) -> bool {
        let mut n = 0;
        while self.peek_at(n).kind == TokenKind::Kw(Kw::Extension) {
            n += 1;
        }
        let t = self.peek_at(n);
        if t.kind == TokenKind::Ident {
            // `T:` is a label even when `T` names a type.
            return self.is_typedef_name(t.sym)
                && self.peek_at(n + 1).kind != TokenKind::Punct(P::Colon);
        }
        self.starts_decl_specs(t) && t.kind != TokenKind::Kw(Kw::Extension)
    }

    pub(crate) fn statement(&mut self) -> PResult<StmtId> {
        self.nested(|p| p.statement_inner())
    }

    fn statement_inner(&mut self) -> PResult<StmtId> {
        let t = self.peek();
        let lo = t.span.lo;
        let kind = match t.kind {
            TokenKind::Punct(P::LBrace) => return self.compound_statement(true),
            TokenKind::Punct(P::Semi) => {
                self.bump();
                StmtKind::Expr(None)
            }
            TokenKind::Ident if self.peek_at(1).kind == TokenKind::Punct(P::Colon) => {
                self.bump();
                self.bump();
                let mut attrs = Vec::new();
                self.attributes(&mut attrs)?;
                let body = self.labeled_body()?;
                StmtKind::Labeled(t.sym, body)
            }
            TokenKind::Kw(Kw::Attribute) | TokenKind::Punct(P::LBracket) => {
                let mut attrs = Vec::new();
                self.attributes(&mut attrs)?;
                if attrs.is_empty() {
                    return self.fail("statement");
                }
                return self.statement();
            }
            TokenKind::Kw(Kw::StaticAssert) => {
                let sa = self.static_assert()?;
                StmtKind::StaticAssert(self.ast.static_asserts.alloc(sa))
            }
            TokenKind::Kw(kw) => match self.keyword_statement(kw)? {
                Some(kind) => kind,
                None => self.expression_statement()?,
            },
            _ => self.expression_statement()?,
        };
        Ok(self.stmt(kind, lo))
    }

    fn expression_statement(&mut self) -> PResult<StmtKind> {
        let e = self.expr()?;
        self.expect(P::Semi)?;
        Ok(StmtKind::Expr(Some(e)))
    }

    /// The statement after a label: a label may also end a block or precede a declaration.
    fn labeled_body(&mut self) -> PResult<StmtId> {
        if self.at(P::RBrace) {
            let lo = self.peek().span.lo;
            return Ok(self.ast.stmts.alloc(Stmt {
                kind: StmtKind::Expr(None),
                span: Span::new(lo, lo),
            }));
        }
        if self.starts_declaration() {
            return self.block_item();
        }
        self.statement()
    }

    fn keyword_statement(&mut self, kw: Kw) -> PResult<Option<StmtKind>> {
        let kind = match kw {
            Kw::If => {
                self.bump();
                let cond = self.paren_expr()?;
                let then = self.statement()?;
                let els = if self.eat_kw(Kw::Else) {
                    Some(self.statement()?)
                } else {
                    None
                };
                StmtKind::If(cond, then, els)
            }
            Kw::Switch => {
                self.bump();
                let cond = self.paren_expr()?;
                StmtKind::Switch(cond, self.statement()?)
            }
            Kw::While => {
                self.bump();
                let cond = self.paren_expr()?;
                StmtKind::While(cond, self.statement()?)
            }
            Kw::Do => {
                self.bump();
                let body = self.statement()?;
                if !self.eat_kw(Kw::While) {
                    return self.fail("`while`");
                }
                let cond = self.paren_expr()?;
                self.expect(P::Semi)?;
                StmtKind::DoWhile(body, cond)
            }
            Kw::For => {
                self.bump();
                self.push_scope();
                let r = self.for_statement();
                self.pop_scope();
                StmtKind::For(self.ast.fors.alloc(r?))
            }
            Kw::Goto => {
                self.bump();
                let kind = if self.eat(P::Star) {
                    StmtKind::GotoComputed(self.expr()?)
                } else {
                    StmtKind::Goto(self.expect_ident()?.0)
                };
                self.expect(P::Semi)?;
                kind
            }
            Kw::Continue | Kw::Break => {
                self.bump();
                self.expect(P::Semi)?;
                if kw == Kw::Break {
                    StmtKind::Break
                } else {
                    StmtKind::Continue
                }
            }
            Kw::Return => {
                self.bump();
                let value = if self.at(P::Semi) {
                    None
                } else {
                    Some(self.expr()?)
                };
                self.expect(P::Semi)?;
                StmtKind::Return(value)
            }
            Kw::Case => {
                self.bump();
                let value = self.conditional_expr()?;
                let hi = if self.eat(P::Ellipsis) {
                    Some(self.conditional_expr()?)
                } else {
                    None
                };
                self.expect(P::Colon)?;
                StmtKind::Case(value, hi, self.labeled_body()?)
            }
            Kw::Default => {
                self.bump();
                self.expect(P::Colon)?;
                StmtKind::Default(self.labeled_body()?)
            }
            Kw::Asm => {
                let asm = self.asm_statement()?;
                self.expect(P::Semi)?;
                StmtKind::Asm(asm)
            }
            _ => return Ok(None),
        };
        Ok(Some(kind))
    }

    fn for_statement(&mut self) -> PResult<ForStmt> {
        self.expect(P::LParen)?;
        let lo = self.peek().span.lo;
        let init = if self.eat(P::Semi) {
            None
        } else if self.at_kw(Kw::StaticAssert) {
            let sa = self.static_assert()?;
            let id = self.ast.static_asserts.alloc(sa);
            Some(self.stmt(StmtKind::StaticAssert(id), lo))
        } else if self.starts_declaration() {
            let d = match self.declaration_or_function(false)? {
                DeclOrFunc::Decl(d) => StmtKind::Decl(d),
                DeclOrFunc::Func(f) => StmtKind::Function(f),
            };
            Some(self.stmt(d, lo))
        } else {
            let kind = self.expression_statement()?;
            Some(self.stmt(kind, lo))
        };
        let cond = if self.at(P::Semi) {
            None
        } else {
            Some(self.expr()?)
        };
        self.expect(P::Semi)?;
        let step = if self.at(P::RParen) {
            None
        } else {
            Some(self.expr()?)
        };
        self.expect(P::RParen)?;
        let body = self.statement()?;
        Ok(ForStmt {
            init,
            cond,
            step,
            body,
        })
    }

    fn paren_expr(&mut self) -> PResult<ExprId> {
        self.expect(P::LParen)?;
        let e = self.expr()?;
        self.expect(P::RParen)?;
        Ok(e)
    }

    /// `asm [volatile|inline|goto]* ( template [: outputs [: inputs [: clobbers [: labels]]]] )`.
    fn asm_statement(&mut self) -> PResult<AsmId> {
        self.bump();
        let (mut volatile, mut goto, mut inline) = (false, false, false);
        loop {
            match self.peek().kind {
                TokenKind::Kw(Kw::Volatile) => volatile = true,
                TokenKind::Kw(Kw::Goto) => goto = true,
                TokenKind::Kw(Kw::Inline) => inline = true,
                _ => break,
            }
            self.bump();
        }
        self.expect(P::LParen)?;
        let template = self.string_literals()?;
        let (mut outputs, mut inputs, mut clobbers, mut labels) = (vec![], vec![], vec![], vec![]);
        if self.eat(P::Colon) {
            outputs = self.asm_operands()?;
            if self.eat(P::Colon) {
                inputs = self.asm_operands()?;
                if self.eat(P::Colon) {
                    while self.peek().kind == TokenKind::Str {
                        clobbers.push(self.string_literals()?);
                        if !self.eat(P::Comma) {
                            break;
                        }
                    }
                    if self.eat(P::Colon) {
                        while self.peek().kind == TokenKind::Ident {
                            labels.push(self.expect_ident()?.0);
                            if !self.eat(P::Comma) {
                                break;
                            }
                        }
                    }
                }
            }
        }
        self.expect(P::RParen)?;
        let asm = AsmStmt {
            volatile,
            goto,
            inline,
            template,
            outputs: self.ast.asm_operands.push_list(outputs),
            inputs: self.ast.asm_operands.push_list(inputs),
            clobbers: self.ast.spans.push_list(clobbers),
            labels: self.ast.syms.push_list(labels),
        };
        Ok(self.ast.asms.alloc(asm))
    }

    fn asm_operands(&mut self) -> PResult<Vec<AsmOperand>> {
        let mut ops = Vec::new();
        while matches!(
            self.peek().kind,
            TokenKind::Str | TokenKind::Punct(P::LBracket)
        ) {
            let name = if self.eat(P::LBracket) {
                let (n, _) = self.expect_ident()?;
                self.expect(P::RBracket)?;
                Some(n)
            } else {
                None
            };
            let constraint = self.string_literals()?;
            let expr = self.paren_expr()?;
            ops.push(AsmOperand {
                name,
                constraint,
                expr,
            });
            if !self.eat(P::Comma) {
                break;
            }
        }
        Ok(ops)
    }

    fn stmt(&mut self, kind: StmtKind, lo: u32) -> StmtId {
        let span = self.span_from(lo);
        self.ast.stmts.alloc(Stmt { kind, span })
    }
}
