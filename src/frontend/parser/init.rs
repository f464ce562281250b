//! Initializers: expressions, braced lists, designators (including GNU ranges and the obsolete
//! `field:` form).

use super::{PResult, Parser};
use crate::frontend::ast::*;
use crate::frontend::token::{TokenKind, P};

impl Parser<'_> {
    pub(crate) fn initializer(&mut self) -> PResult<InitId> {
        if self.at(P::LBrace) {
            self.nested(|p| p.braced_initializer())
        } else {
            let e = self.assign_expr()?;
            Ok(self.ast.inits.alloc(Initializer::Expr(e)))
        }
    }

    pub(crate) fn braced_initializer(&mut self) -> PResult<InitId> {
        let lo = self.expect(P::LBrace)?.span.lo;
        let mut items = Vec::new();
        while !self.eat(P::RBrace) {
            let designators = self.designation()?;
            let init = self.initializer()?;
            items.push(InitItem { designators, init });
            if !self.eat(P::Comma) {
                self.expect(P::RBrace)?;
                break;
            }
        }
        let list = self.ast.init_items.push_list(items);
        let span = self.span_from(lo);
        Ok(self.ast.inits.alloc(Initializer::List(list, span)))
    }

    /// `.a[1].b =`, GNU `[lo ... hi] =`, GNU `[i] value` and obsolete `field: value`.
    fn designation(&mut self) -> PResult<List<Designator>> {
        let mut ds = Vec::new();
        if self.peek().kind == TokenKind::Ident
            && self.peek_at(1).kind == TokenKind::Punct(P::Colon)
        {
            let (name, _) = self.expect_ident()?;
            self.bump();
            return Ok(self.ast.designators.push_list([Designator::Field(name)]));
        }
        loop {
            if self.eat(P::Dot) {
                ds.push(Designator::Field(self.expect_ident()?.0));
            } else if self.at(P::LBracket) {
                ds.push(self.index_designator()?);
            } else {
                break;
            }
        }
        if !ds.is_empty()
            && !self.eat(P::Assign)
            && !matches!(
                ds.last(),
                Some(Designator::Index(_) | Designator::Range(..))
            )
        {
            return self.fail("`=`");
        }
        Ok(self.ast.designators.push_list(ds))
    }

    pub(crate) fn index_designator(&mut self) -> PResult<Designator> {
        self.expect(P::LBracket)?;
        let lo = self.conditional_expr()?;
        let d = if self.eat(P::Ellipsis) {
            Designator::Range(lo, self.conditional_expr()?)
        } else {
            Designator::Index(lo)
        };
        self.expect(P::RBracket)?;
        Ok(d)
    }
}
