//! GNU `__attribute__((...))` and C23 `[[...]]` attribute lists, and balanced-token skipping.

use super::{PResult, Parser};
use crate::frontend::ast::*;
use crate::frontend::token::{Kw, Span, TokenKind, P};

impl Parser<'_> {
    /// Any run of `__attribute__((...))` and C23 `[[...]]`, appended to `out`.
    pub(crate) fn attributes(&mut self, out: &mut Vec<Attribute>) -> PResult<()> {
        loop {
            if self.eat_kw(Kw::Attribute) {
                self.expect(P::LParen)?;
                self.expect(P::LParen)?;
                self.attribute_list(out, P::RParen)?;
                self.expect(P::RParen)?;
                self.expect(P::RParen)?;
            } else if self.at_std_attribute() {
                self.bump();
                self.bump();
                self.attribute_list(out, P::RBracket)?;
                self.expect(P::RBracket)?;
                self.expect(P::RBracket)?;
            } else {
                return Ok(());
            }
        }
    }

    /// At a C23 `[[` attribute specifier.
    pub(crate) fn at_std_attribute(&mut self) -> bool {
        self.at(P::LBracket) && self.peek_at(1).kind == TokenKind::Punct(P::LBracket)
    }

    /// `name`, `name(args)`, `ns::name(args)`, separated by commas, possibly empty.
    fn attribute_list(&mut self, out: &mut Vec<Attribute>, close: P) -> PResult<()> {
        while !self.at(close) {
            if self.eat(P::Comma) {
                continue;
            }
            let t = self.peek();
            if !matches!(t.kind, TokenKind::Ident | TokenKind::Kw(_)) {
                return self.fail("attribute name");
            }
            self.bump();
            let mut name = t.sym;
            if self.at(P::Colon) && self.peek_at(1).kind == TokenKind::Punct(P::Colon) {
                self.bump();
                self.bump();
                let t = self.peek();
                if !matches!(t.kind, TokenKind::Ident | TokenKind::Kw(_)) {
                    return self.fail("attribute name");
                }
                self.bump();
                name = t.sym;
            }
            let args = if self.at(P::LParen) {
                Some(self.skip_balanced()?)
            } else {
                None
            };
            out.push(Attribute {
                name,
                args,
                span: self.span_from(t.span.lo),
            });
        }
        Ok(())
    }

    /// Skips a parenthesised, bracketed or braced token sequence, returning its span.
    pub(crate) fn skip_balanced(&mut self) -> PResult<Span> {
        let lo = self.peek().span.lo;
        let mut stack = Vec::new();
        loop {
            let t = self.bump();
            match t.kind {
                TokenKind::Punct(P::LParen) => stack.push(P::RParen),
                TokenKind::Punct(P::LBracket) => stack.push(P::RBracket),
                TokenKind::Punct(P::LBrace) => stack.push(P::RBrace),
                TokenKind::Punct(p @ (P::RParen | P::RBracket | P::RBrace))
                    if stack.pop() != Some(p) =>
                {
                    return self.error_at(t.span.lo, format!("unbalanced `{}`", p.as_str()));
                }
                TokenKind::Eof => return self.fail("closing bracket"),
                _ => {}
            }
            if stack.is_empty() {
                return Ok(self.span_from(lo));
            }
        }
    }
}
