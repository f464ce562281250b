//! Recursive-descent parser for preprocessed GNU C.
//!
//! One [`Parser`] reads one translation unit. It keeps a scoped typedef table (so a parameter or
//! local named `T` hides typedef `T`), recovers from a syntax error by skipping to the next
//! external declaration, and never panics: deep nesting grows the stack on demand (`stacker`) up to
//! a fixed bound, past which the declaration is reported and skipped.
//!
//! The grammar is split by topic: `decl` (specifiers, declarators, initializers, records, enums,
//! attributes), `stmt` (statements, asm) and `expr` (expressions and GNU builtins).

mod attr;
mod decl;
mod declarator;
mod expr;
mod init;
mod stmt;

use std::collections::VecDeque;

use super::ast::{Ast, ExternalDecl};
use super::intern::{Interner, Sym};
use super::lexer::Lexer;
use super::token::{Kw, Span, Token, TokenKind, P};

/// A syntax error at a byte offset of the preprocessed text.
#[derive(Clone, Debug)]
pub struct SyntaxError {
    pub offset: u32,
    pub message: String,
}

/// Marker for a failed parse; the diagnostic has already been recorded.
#[derive(Debug)]
pub struct Failed;

pub type PResult<T> = Result<T, Failed>;

/// Nesting bound for expressions, statements, declarators and initializers.
const MAX_DEPTH: u32 = 4000;

/// Names the compiler predeclares as types.
const BUILTIN_TYPEDEFS: &[&str] = &["__builtin_va_list", "__int128_t", "__uint128_t", "bool"];

pub struct ParseOutput {
    pub ast: Ast,
    pub interner: Interner,
    pub errors: Vec<SyntaxError>,
    /// External declarations that parsed cleanly.
    pub external_decls: usize,
}

/// Parses a whole translation unit into one tree.
pub fn parse(src: &str) -> ParseOutput {
    let mut p = Parser::new(src);
    while let Some(item) = p.next_item() {
        if let Ok(item) = item {
            p.ast.items.push(item);
        }
    }
    p.finish()
}

/// A parser over one translation unit. Besides [`parse`], it can be driven one external
/// declaration at a time ([`Parser::next_item`]) with the tree cleared in between, so memory stays
/// proportional to the largest declaration rather than to the unit.
pub struct Parser<'a> {
    lexer: Lexer<'a>,
    interner: Interner,
    ast: Ast,
    lookahead: VecDeque<Token>,
    /// End offset of the last consumed token.
    prev_hi: u32,
    /// Unclosed `{` consumed since the current external declaration began.
    brace_depth: i32,
    /// `is_typedef[sym]`: whether the innermost declaration of `sym` in scope is a typedef.
    is_typedef: Vec<bool>,
    /// Previous values of `is_typedef` entries changed in open scopes, restored on scope exit.
    undo: Vec<(Sym, bool)>,
    scope_marks: Vec<usize>,
    depth: u32,
    errors: Vec<SyntaxError>,
    external_decls: usize,
}

impl<'a> Parser<'a> {
    pub fn new(src: &'a str) -> Self {
        let mut p = Parser {
            lexer: Lexer::new(src),
            interner: Interner::with_keywords(),
            ast: Ast::default(),
            lookahead: VecDeque::with_capacity(8),
            prev_hi: 0,
            brace_depth: 0,
            is_typedef: Vec::new(),
            undo: Vec::new(),
            scope_marks: Vec::new(),
            depth: 0,
            errors: Vec::new(),
            external_decls: 0,
        };
        for name in BUILTIN_TYPEDEFS {
            let sym = p.interner.intern(name);
            p.declare(sym, true);
        }
        p
    }

    /// Parses the next external declaration into the tree: `None` at the end of input,
    /// `Some(Err(Failed))` when it was skipped (its diagnostic is in [`Parser::errors`]).
    pub fn next_item(&mut self) -> Option<PResult<ExternalDecl>> {
        loop {
            self.brace_depth = 0;
            if self.peek().kind == TokenKind::Eof {
                return None;
            }
            match self.external_decl() {
                Ok(Some(item)) => {
                    self.external_decls += 1;
                    return Some(Ok(item));
                }
                Ok(None) => continue,
                Err(Failed) => {
                    self.recover();
                    return Some(Err(Failed));
                }
            }
        }
    }

    pub fn ast(&self) -> &Ast {
        &self.ast
    }

    pub fn interner(&self) -> &Interner {
        &self.interner
    }

    pub fn errors(&self) -> &[SyntaxError] {
        &self.errors
    }

    /// Drops the nodes parsed so far (keeping allocations); ids from before are invalid after.
    pub fn clear_tree(&mut self) {
        self.ast.clear();
    }

    pub fn finish(self) -> ParseOutput {
        ParseOutput {
            ast: self.ast,
            interner: self.interner,
            errors: self.errors,
            external_decls: self.external_decls,
        }
    }

    fn external_decl(&mut self) -> PResult<Option<ExternalDecl>> {
        match self.peek().kind {
            TokenKind::Punct(P::Semi) => {
                self.bump();
                Ok(None)
            }
            TokenKind::Kw(Kw::Asm) => Ok(Some(self.toplevel_asm()?)),
            TokenKind::Kw(Kw::StaticAssert) => {
                Ok(Some(ExternalDecl::StaticAssert(self.static_assert()?)))
            }
            _ => Ok(Some(self.declaration_or_function(true)?.into_external())),
        }
    }

    /// Skips to the end of the broken external declaration: a `;` or a closing `}` at brace
    /// depth zero. File scope is restored first.
    fn recover(&mut self) {
        self.pop_scopes_to(0);
        self.depth = 0;
        loop {
            let t = self.peek();
            match t.kind {
                TokenKind::Eof => return,
                TokenKind::Punct(P::Semi) if self.brace_depth <= 0 => {
                    self.bump();
                    return;
                }
                TokenKind::Punct(P::RBrace) => {
                    self.bump();
                    if self.brace_depth <= 0 {
                        self.eat(P::Semi);
                        return;
                    }
                }
                _ => {
                    self.bump();
                }
            }
        }
    }

    // ---- tokens ------------------------------------------------------------------------------

    fn fill(&mut self, n: usize) {
        while self.lookahead.len() <= n {
            let t = self.lexer.next_token(&mut self.interner);
            self.lookahead.push_back(t);
        }
    }

    fn peek(&mut self) -> Token {
        self.fill(0);
        self.lookahead[0]
    }

    fn peek_at(&mut self, n: usize) -> Token {
        self.fill(n);
        self.lookahead[n]
    }

    fn bump(&mut self) -> Token {
        self.fill(0);
        let t = self.lookahead.pop_front().unwrap_or(Token {
            kind: TokenKind::Eof,
            sym: Sym(u32::MAX),
            span: Span::new(self.prev_hi, self.prev_hi),
        });
        match t.kind {
            TokenKind::Punct(P::LBrace) => self.brace_depth += 1,
            TokenKind::Punct(P::RBrace) => self.brace_depth -= 1,
            TokenKind::Eof => return t,
            _ => {}
        }
        self.prev_hi = t.span.hi;
        t
    }

    fn at(&mut self, p: P) -> bool {
        self.peek().kind == TokenKind::Punct(p)
    }

    fn at_kw(&mut self, k: Kw) -> bool {
        self.peek().kind == TokenKind::Kw(k)
    }

    fn eat(&mut self, p: P) -> bool {
        let hit = self.at(p);
        if hit {
            self.bump();
        }
        hit
    }

    fn eat_kw(&mut self, k: Kw) -> bool {
        let hit = self.at_kw(k);
        if hit {
            self.bump();
        }
        hit
    }

    fn expect(&mut self, p: P) -> PResult<Token> {
        if self.at(p) {
            Ok(self.bump())
        } else {
            self.fail(&format!("`{}`", p.as_str()))
        }
    }

    fn expect_ident(&mut self) -> PResult<(Sym, Span)> {
        let t = self.peek();
        if t.kind == TokenKind::Ident {
            self.bump();
            Ok((t.sym, t.span))
        } else {
            self.fail("identifier")
        }
    }

    /// Records "expected X, found Y" at the next token and fails.
    fn fail<T>(&mut self, expected: &str) -> PResult<T> {
        let t = self.peek();
        let found = match t.kind {
            TokenKind::Ident | TokenKind::Kw(_) => format!("`{}`", self.interner.get(t.sym)),
            k => k.describe(),
        };
        self.error_at(t.span.lo, format!("expected {expected}, found {found}"))
    }

    fn error_at<T>(&mut self, offset: u32, message: String) -> PResult<T> {
        self.errors.push(SyntaxError { offset, message });
        Err(Failed)
    }

    /// Span from `lo` to the end of the last consumed token.
    fn span_from(&self, lo: u32) -> Span {
        Span::new(lo, self.prev_hi.max(lo))
    }

    /// Runs `f`, a loop that builds a chain of nodes (`a + b + …`, `x[0][1]…`, `a, b, …`),
    /// each link one level deeper than the last ([`Parser::deepen`]): the tree is as deep as
    /// the chain is long, and every later stage walks it recursively.
    fn chain<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        let base = self.depth;
        let r = f(self);
        self.depth = base;
        r
    }

    /// One more link of a [`Parser::chain`].
    fn deepen(&mut self) -> PResult<()> {
        if self.depth >= MAX_DEPTH {
            let lo = self.peek().span.lo;
            return self.error_at(lo, format!("nesting deeper than {MAX_DEPTH} levels"));
        }
        self.depth += 1;
        Ok(())
    }

    /// Runs `f` one nesting level deeper, growing the stack when needed.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.depth >= MAX_DEPTH {
            let lo = self.peek().span.lo;
            return self.error_at(lo, format!("nesting deeper than {MAX_DEPTH} levels"));
        }
        self.depth += 1;
        let r = stacker::maybe_grow(128 * 1024, 4 * 1024 * 1024, || f(self));
        self.depth -= 1;
        r
    }

    // ---- typedef scopes ----------------------------------------------------------------------

    fn is_typedef_name(&self, sym: Sym) -> bool {
        self.is_typedef
            .get(sym.0 as usize)
            .copied()
            .unwrap_or(false)
    }

    fn declare(&mut self, sym: Sym, is_typedef: bool) {
        let i = sym.0 as usize;
        if i >= self.is_typedef.len() {
            self.is_typedef.resize(i + 1, false);
        }
        if !self.scope_marks.is_empty() {
            self.undo.push((sym, self.is_typedef[i]));
        }
        self.is_typedef[i] = is_typedef;
    }

    fn push_scope(&mut self) {
        self.scope_marks.push(self.undo.len());
    }

    fn pop_scope(&mut self) {
        if let Some(mark) = self.scope_marks.pop() {
            for (sym, old) in self.undo.drain(mark..).rev() {
                self.is_typedef[sym.0 as usize] = old;
            }
        }
    }

    fn pop_scopes_to(&mut self, depth: usize) {
        while self.scope_marks.len() > depth {
            self.pop_scope();
        }
    }
}

#[cfg(test)]
mod tests;
