//! Declarators: pointers, the declared name or a nested declarator, array and function
//! suffixes, parameter lists.

use super::decl::qualifier_bit;
use super::{PResult, Parser, MAX_DEPTH};
use crate::frontend::ast::*;
use crate::frontend::intern::Sym;
use crate::frontend::token::{Kw, Span, TokenKind, P};

/// What a declarator may or must name.
#[derive(Copy, Clone, PartialEq, Eq)]
pub(crate) enum DeclaratorKind {
    /// Declarations: a name is required.
    Named,
    /// Type names: no name.
    Abstract,
    /// Parameters: a name is optional.
    Either,
}

/// A declarator being assembled: its type constructors are kept in a local vector until done.
struct DeclaratorParts {
    name: Option<(Sym, Span)>,
    derived: Vec<Derived>,
    attrs: Vec<Attribute>,
}

impl Parser<'_> {
    pub(crate) fn declarator(&mut self, kind: DeclaratorKind) -> PResult<Declarator> {
        let lo = self.peek().span.lo;
        let mut parts = DeclaratorParts {
            name: None,
            derived: Vec::new(),
            attrs: Vec::new(),
        };
        self.declarator_into(&mut parts, kind)?;
        if kind == DeclaratorKind::Named && parts.name.is_none() {
            return self.fail("identifier");
        }
        // Every later stage walks the type recursively, one level per pointer, array or
        // function (C requires at least 12).
        if parts.derived.len() > MAX_DEPTH as usize {
            return self.error_at(
                lo,
                format!("declarator with more than {MAX_DEPTH} pointer, array or function levels"),
            );
        }
        Ok(Declarator {
            name: parts.name.map(|(s, _)| s),
            name_at: parts.name.map_or(lo, |(_, span)| span.lo),
            derived: self.ast.derived.push_list(parts.derived),
            attrs: self.ast.attrs.push_list(parts.attrs),
            asm_label: None,
            span: self.span_from(lo),
        })
    }

    /// pointer* direct-declarator suffix*. The type constructors end up ordered from the name
    /// outwards: the inner declarator's, then the suffixes, then the pointers right to left.
    fn declarator_into(
        &mut self,
        parts: &mut DeclaratorParts,
        kind: DeclaratorKind,
    ) -> PResult<()> {
        self.nested(|p| {
            p.attributes(&mut parts.attrs)?;
            let mut pointers = Vec::new();
            while p.eat(P::Star) {
                pointers.push(p.pointer_quals(&mut parts.attrs)?);
            }
            let t = p.peek();
            let mut inner = Vec::new();
            if t.kind == TokenKind::Ident
                && kind != DeclaratorKind::Abstract
                && parts.name.is_none()
            {
                p.bump();
                parts.name = Some((t.sym, t.span));
            } else if t.kind == TokenKind::Punct(P::LParen) && p.paren_is_nested_declarator(kind) {
                p.bump();
                let mut sub = DeclaratorParts {
                    name: parts.name.take(),
                    derived: Vec::new(),
                    attrs: Vec::new(),
                };
                p.declarator_into(&mut sub, kind)?;
                p.expect(P::RParen)?;
                parts.name = sub.name;
                parts.attrs.extend(sub.attrs);
                inner = sub.derived;
            }
            loop {
                if p.at_std_attribute() {
                    p.attributes(&mut parts.attrs)?;
                } else if p.at(P::LBracket) {
                    inner.push(p.array_suffix()?);
                } else if p.at(P::LParen) {
                    inner.push(p.function_suffix()?);
                } else {
                    break;
                }
            }
            parts.derived.extend(inner);
            parts
                .derived
                .extend(pointers.into_iter().rev().map(Derived::Pointer));
            Ok(())
        })
    }

    /// After `(` in a declarator: a nested declarator, or a parameter list?
    fn paren_is_nested_declarator(&mut self, kind: DeclaratorKind) -> bool {
        if kind == DeclaratorKind::Named {
            return true;
        }
        let t = self.peek_at(1);
        match t.kind {
            TokenKind::Punct(P::Star | P::LParen | P::Caret) => true,
            TokenKind::Punct(P::LBracket) => true,
            TokenKind::Kw(Kw::Attribute) => true,
            // C11 6.7.6.3p11: an identifier that could be a typedef name is one.
            TokenKind::Ident => kind == DeclaratorKind::Either && !self.is_typedef_name(t.sym),
            _ => false,
        }
    }

    fn pointer_quals(&mut self, attrs: &mut Vec<Attribute>) -> PResult<Quals> {
        let mut q = 0;
        loop {
            match self.peek().kind {
                TokenKind::Kw(Kw::Attribute) | TokenKind::Punct(P::LBracket)
                    if !self.at(P::LBracket) || self.at_std_attribute() =>
                {
                    self.attributes(attrs)?
                }
                TokenKind::Kw(k) if qualifier_bit(k) != 0 => {
                    self.bump();
                    q |= qualifier_bit(k);
                }
                _ => return Ok(Quals(q)),
            }
        }
    }

    fn array_suffix(&mut self) -> PResult<Derived> {
        self.expect(P::LBracket)?;
        let mut quals = 0;
        let mut is_static = false;
        loop {
            match self.peek().kind {
                TokenKind::Kw(Kw::Static) => {
                    self.bump();
                    is_static = true;
                }
                TokenKind::Kw(k) if qualifier_bit(k) != 0 => {
                    self.bump();
                    quals |= qualifier_bit(k);
                }
                _ => break,
            }
        }
        let mut vla_star = false;
        let mut size = None;
        if self.at(P::Star) && self.peek_at(1).kind == TokenKind::Punct(P::RBracket) {
            self.bump();
            vla_star = true;
        } else if !self.at(P::RBracket) {
            size = Some(self.assign_expr()?);
        }
        self.expect(P::RBracket)?;
        Ok(Derived::Array {
            size,
            quals: Quals(quals),
            is_static,
            vla_star,
        })
    }

    fn function_suffix(&mut self) -> PResult<Derived> {
        self.expect(P::LParen)?;
        let t = self.peek();
        let next = self.peek_at(1).kind;
        // K&R identifier list: `f(a, b)`.
        if t.kind == TokenKind::Ident
            && !self.is_typedef_name(t.sym)
            && matches!(next, TokenKind::Punct(P::Comma | P::RParen))
        {
            let mut names = Vec::new();
            loop {
                names.push(self.expect_ident()?.0);
                if !self.eat(P::Comma) {
                    break;
                }
            }
            self.expect(P::RParen)?;
            let kr_names = self.ast.syms.push_list(names);
            return Ok(Derived::Function {
                params: List::default(),
                variadic: false,
                kr_names,
            });
        }
        self.push_scope();
        let result = self.parameter_list();
        self.pop_scope();
        let (params, variadic) = result?;
        Ok(Derived::Function {
            params,
            variadic,
            kr_names: List::default(),
        })
    }

    fn parameter_list(&mut self) -> PResult<(List<Param>, bool)> {
        let mut params = Vec::new();
        let mut variadic = false;
        while !self.at(P::RParen) {
            if self.eat(P::Ellipsis) {
                variadic = true;
                break;
            }
            let t = self.peek();
            if !self.starts_decl_specs(t) && !self.at_std_attribute() {
                return self.fail("parameter declaration");
            }
            let specs = self.decl_specs(Vec::new())?;
            let mut declarator = self.declarator(DeclaratorKind::Either)?;
            self.declarator_tail(&mut declarator)?;
            if let Some(name) = declarator.name {
                self.declare(name, false);
            }
            params.push(Param { specs, declarator });
            if !self.eat(P::Comma) {
                break;
            }
        }
        self.expect(P::RParen)?;
        Ok((self.ast.params.push_list(params), variadic))
    }
}
