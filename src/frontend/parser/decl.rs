//! Declarations: specifiers, initializers, struct/union/enum bodies, attributes and function
//! definitions (including K&R and GNU nested ones); declarators are in `declarator.rs`.

use super::declarator::DeclaratorKind;
use super::{PResult, Parser};
use crate::frontend::ast::*;
use crate::frontend::intern::Sym;
use crate::frontend::token::{Kw, Span, Token, TokenKind, P};

pub(crate) enum DeclOrFunc {
    Decl(DeclId),
    Func(FuncId),
}

impl DeclOrFunc {
    pub(crate) fn into_external(self) -> ExternalDecl {
        match self {
            DeclOrFunc::Decl(d) => ExternalDecl::Decl(d),
            DeclOrFunc::Func(f) => ExternalDecl::Function(f),
        }
    }
}

impl Parser<'_> {
    /// Whether `t` can begin declaration specifiers.
    pub(crate) fn starts_decl_specs(&self, t: Token) -> bool {
        match t.kind {
            TokenKind::Kw(k) => {
                matches!(
                    k,
                    Kw::Typedef
                        | Kw::Extern
                        | Kw::Static
                        | Kw::Auto
                        | Kw::Register
                        | Kw::ThreadLocal
                        | Kw::Inline
                        | Kw::Noreturn
                        | Kw::Constexpr
                        | Kw::Alignas
                        | Kw::Attribute
                        | Kw::Extension
                ) || Self::starts_type_keyword(k)
            }
            TokenKind::Ident => self.is_typedef_name(t.sym),
            _ => false,
        }
    }

    /// Keywords that can begin a type name (specifiers and qualifiers).
    fn starts_type_keyword(k: Kw) -> bool {
        matches!(
            k,
            Kw::Void
                | Kw::Char
                | Kw::Short
                | Kw::Int
                | Kw::Long
                | Kw::Float
                | Kw::Double
                | Kw::Signed
                | Kw::Unsigned
                | Kw::Bool
                | Kw::Complex
                | Kw::Imaginary
                | Kw::Int128
                | Kw::Float128
                | Kw::Float80
                | Kw::Ibm128
                | Kw::Float16
                | Kw::Bf16
                | Kw::Float32
                | Kw::Float64
                | Kw::Float32x
                | Kw::Float64x
                | Kw::Float128x
                | Kw::Decimal32
                | Kw::Decimal64
                | Kw::Decimal128
                | Kw::Struct
                | Kw::Union
                | Kw::Enum
                | Kw::Typeof
                | Kw::TypeofUnqual
                | Kw::AutoType
                | Kw::Const
                | Kw::Volatile
                | Kw::Restrict
                | Kw::Atomic
                | Kw::SegGs
                | Kw::SegFs
        )
    }

    /// Whether the token after `(` begins a type name (cast, compound literal, `sizeof(T)`).
    pub(crate) fn starts_type_name(&mut self, n: usize) -> bool {
        let t = self.peek_at(n);
        match t.kind {
            TokenKind::Kw(Kw::Attribute) => true,
            TokenKind::Kw(Kw::Extension) => self.starts_type_name(n + 1),
            TokenKind::Kw(k) => Self::starts_type_keyword(k) || k == Kw::Alignas,
            TokenKind::Ident => self.is_typedef_name(t.sym),
            _ => false,
        }
    }

    /// A declaration at file or block scope, or a function definition (nested ones at block scope).
    pub(crate) fn declaration_or_function(&mut self, file_scope: bool) -> PResult<DeclOrFunc> {
        self.declaration_with_attrs(file_scope, Vec::new())
    }

    pub(crate) fn declaration_with_attrs(
        &mut self,
        file_scope: bool,
        leading_attrs: Vec<Attribute>,
    ) -> PResult<DeclOrFunc> {
        let lo = self.peek().span.lo;
        let specs = self.decl_specs(leading_attrs)?;
        if self.eat(P::Semi) {
            let declarators = self.ast.init_declarators.push_list([]);
            let span = self.span_from(lo);
            return Ok(DeclOrFunc::Decl(self.ast.decls.alloc(Declaration {
                specs,
                declarators,
                span,
            })));
        }
        if specs.ty == TypeSpec::None
            && specs.storage == Storage::None
            && specs.quals.0 == 0
            && !file_scope
        {
            return self.fail("declaration specifiers");
        }
        let mut first = self.declarator(DeclaratorKind::Named)?;
        if let Some(&Derived::Function { kr_names, .. }) = first.function_params(&self.ast) {
            let t = self.peek();
            let kr_decls_follow = file_scope
                && !kr_names.is_empty()
                && t.kind != TokenKind::Kw(Kw::Attribute)
                && self.starts_decl_specs(t);
            if t.kind == TokenKind::Punct(P::LBrace) || kr_decls_follow {
                return self
                    .function_definition(lo, specs, first)
                    .map(DeclOrFunc::Func);
            }
        }
        let is_typedef = specs.storage == Storage::Typedef;
        let mut items = Vec::new();
        loop {
            self.declarator_tail(&mut first)?;
            if let Some(name) = first.name {
                self.declare(name, is_typedef);
            }
            let init = if self.eat(P::Assign) {
                Some(self.initializer()?)
            } else {
                None
            };
            items.push(InitDeclarator {
                declarator: first,
                init,
            });
            if !self.eat(P::Comma) {
                break;
            }
            first = self.declarator(DeclaratorKind::Named)?;
        }
        self.expect(P::Semi)?;
        let declarators = self.ast.init_declarators.push_list(items);
        let span = self.span_from(lo);
        Ok(DeclOrFunc::Decl(self.ast.decls.alloc(Declaration {
            specs,
            declarators,
            span,
        })))
    }

    /// `asm("label")` and attributes after a declarator.
    pub(super) fn declarator_tail(&mut self, d: &mut Declarator) -> PResult<()> {
        let mut attrs = self.ast.attrs.get(d.attrs).to_vec();
        let before = attrs.len();
        self.attributes(&mut attrs)?;
        if self.at_kw(Kw::Asm) {
            self.bump();
            let lo = self.peek().span.lo;
            self.expect(P::LParen)?;
            self.string_literals()?;
            self.expect(P::RParen)?;
            d.asm_label = Some(self.span_from(lo));
            self.attributes(&mut attrs)?;
        }
        if attrs.len() != before {
            d.attrs = self.ast.attrs.push_list(attrs);
        }
        d.span = self.span_from(d.span.lo);
        Ok(())
    }

    fn function_definition(
        &mut self,
        lo: u32,
        specs: DeclSpecs,
        declarator: Declarator,
    ) -> PResult<FuncId> {
        if let Some(name) = declarator.name {
            self.declare(name, false);
        }
        self.push_scope();
        let result = self.function_body(lo, specs, declarator);
        self.pop_scope();
        result
    }

    fn function_body(
        &mut self,
        lo: u32,
        specs: DeclSpecs,
        declarator: Declarator,
    ) -> PResult<FuncId> {
        if let Some(&Derived::Function {
            params, kr_names, ..
        }) = declarator.function_params(&self.ast)
        {
            let names: Vec<Sym> = self
                .ast
                .params
                .get(params)
                .iter()
                .filter_map(|p| p.declarator.name)
                .collect();
            for name in names
                .into_iter()
                .chain(self.ast.syms.get(kr_names).to_vec())
            {
                self.declare(name, false);
            }
        }
        let mut kr = Vec::new();
        while !self.at(P::LBrace) {
            match self.declaration_or_function(false)? {
                DeclOrFunc::Decl(d) => kr.push(d),
                DeclOrFunc::Func(_) => return self.fail("K&R parameter declaration"),
            }
        }
        let kr_decls = self.ast.decl_lists.push_list(kr);
        let body = self.compound_statement(false)?;
        let span = self.span_from(lo);
        Ok(self.ast.functions.alloc(FunctionDef {
            specs,
            declarator,
            kr_decls,
            body,
            span,
        }))
    }

    // ---- specifiers --------------------------------------------------------------------------

    pub(crate) fn decl_specs(&mut self, mut attrs: Vec<Attribute>) -> PResult<DeclSpecs> {
        let lo = self.peek().span.lo;
        let mut s = DeclSpecs::default();
        let mut base = 0u32;
        let mut quals = 0u16;
        let mut seen_type = false;
        loop {
            let t = self.peek();
            let kw = match t.kind {
                TokenKind::Kw(k) => k,
                TokenKind::Ident if !seen_type && base == 0 && self.is_typedef_name(t.sym) => {
                    self.bump();
                    s.ty = TypeSpec::Typedef(t.sym);
                    seen_type = true;
                    continue;
                }
                TokenKind::Punct(P::LBracket) if self.at_std_attribute() => {
                    self.attributes(&mut attrs)?;
                    continue;
                }
                _ => break,
            };
            let bit = base_type_bit(kw, base);
            if bit != 0 {
                self.bump();
                base |= bit;
                seen_type = true;
                continue;
            }
            match kw {
                Kw::Typedef => s.storage = Storage::Typedef,
                Kw::Extern => s.storage = Storage::Extern,
                Kw::Static => s.storage = Storage::Static,
                Kw::Auto => s.storage = Storage::Auto,
                Kw::Register => s.storage = Storage::Register,
                Kw::ThreadLocal => quals |= Quals::THREAD_LOCAL,
                Kw::Inline => quals |= Quals::INLINE,
                Kw::Noreturn => quals |= Quals::NORETURN,
                Kw::Constexpr => quals |= Quals::CONSTEXPR,
                Kw::Extension => {}
                Kw::Attribute => {
                    self.attributes(&mut attrs)?;
                    continue;
                }
                Kw::Atomic if self.peek_at(1).kind == TokenKind::Punct(P::LParen) => {
                    self.bump();
                    self.bump();
                    s.ty = TypeSpec::Atomic(self.type_name()?);
                    self.expect(P::RParen)?;
                    seen_type = true;
                    continue;
                }
                Kw::Alignas => {
                    self.bump();
                    s.align = Some(self.alignas_operand()?);
                    continue;
                }
                Kw::Struct | Kw::Union if !seen_type => {
                    s.ty = TypeSpec::Record(self.nested(|p| p.record_spec())?);
                    seen_type = true;
                    continue;
                }
                Kw::Enum if !seen_type => {
                    s.ty = TypeSpec::Enum(self.enum_spec()?);
                    seen_type = true;
                    continue;
                }
                Kw::Typeof | Kw::TypeofUnqual if !seen_type => {
                    self.bump();
                    s.unqual = kw == Kw::TypeofUnqual;
                    s.ty = self.typeof_operand()?;
                    seen_type = true;
                    continue;
                }
                Kw::AutoType if !seen_type => {
                    s.ty = TypeSpec::Auto;
                    seen_type = true;
                }
                _ => match qualifier_bit(kw) {
                    0 => break,
                    q => quals |= q,
                },
            }
            self.bump();
        }
        if base != 0 {
            s.ty = TypeSpec::Base(BaseType(base));
        }
        s.quals = Quals(quals);
        s.attrs = self.ast.attrs.push_list(attrs);
        s.span = self.span_from(lo);
        Ok(s)
    }

    /// `(type-name)` or `(expression)` after `typeof`.
    fn typeof_operand(&mut self) -> PResult<TypeSpec> {
        self.expect(P::LParen)?;
        let ty = if self.starts_type_name(0) {
            TypeSpec::TypeofType(self.type_name()?)
        } else {
            TypeSpec::TypeofExpr(self.expr()?)
        };
        self.expect(P::RParen)?;
        Ok(ty)
    }

    /// `_Alignas(type-name)` becomes the expression `_Alignof(type-name)`.
    fn alignas_operand(&mut self) -> PResult<ExprId> {
        let lo = self.expect(P::LParen)?.span.lo;
        let kind = if self.starts_type_name(0) {
            ExprKind::AlignofType(self.type_name()?)
        } else {
            let e = self.expr()?;
            self.expect(P::RParen)?;
            return Ok(e);
        };
        self.expect(P::RParen)?;
        let span = self.span_from(lo);
        Ok(self.ast.exprs.alloc(Expr { kind, span }))
    }

    pub(crate) fn type_name(&mut self) -> PResult<TypeNameId> {
        let t = self.peek();
        if !self.starts_decl_specs(t) {
            return self.fail("type name");
        }
        let specs = self.decl_specs(Vec::new())?;
        let declarator = self.declarator(DeclaratorKind::Abstract)?;
        Ok(self.ast.type_names.alloc(TypeName { specs, declarator }))
    }

    fn record_spec(&mut self) -> PResult<RecordId> {
        let lo = self.peek().span.lo;
        let kind = if self.bump().kind == TokenKind::Kw(Kw::Union) {
            RecordKind::Union
        } else {
            RecordKind::Struct
        };
        let mut attrs = Vec::new();
        self.attributes(&mut attrs)?;
        let tag = self.optional_tag();
        self.attributes(&mut attrs)?;
        let mut fields = None;
        if self.eat(P::LBrace) {
            let mut list = Vec::new();
            while !self.eat(P::RBrace) {
                if self.eat(P::Semi) {
                    continue;
                }
                if self.at_kw(Kw::StaticAssert) {
                    self.static_assert()?;
                    continue;
                }
                list.push(self.field_decl()?);
            }
            fields = Some(self.ast.fields.push_list(list));
            self.attributes(&mut attrs)?;
        } else if tag.is_none() {
            return self.fail("struct or union tag or `{`");
        }
        let attrs = self.ast.attrs.push_list(attrs);
        let span = self.span_from(lo);
        Ok(self.ast.records.alloc(RecordSpec {
            kind,
            tag,
            fields,
            attrs,
            span,
        }))
    }

    fn optional_tag(&mut self) -> Option<Sym> {
        let t = self.peek();
        (t.kind == TokenKind::Ident).then(|| {
            self.bump();
            t.sym
        })
    }

    fn field_decl(&mut self) -> PResult<FieldDecl> {
        let lo = self.peek().span.lo;
        let t = self.peek();
        if !self.starts_decl_specs(t) && !self.at_std_attribute() {
            return self.fail("member declaration");
        }
        let specs = self.decl_specs(Vec::new())?;
        let mut list = Vec::new();
        if !self.at(P::Semi) {
            loop {
                let mut declarator = if self.at(P::Colon) {
                    Declarator {
                        span: Span::new(self.peek().span.lo, self.peek().span.lo),
                        ..Default::default()
                    }
                } else {
                    self.declarator(DeclaratorKind::Named)?
                };
                let bit_width = if self.eat(P::Colon) {
                    Some(self.conditional_expr()?)
                } else {
                    None
                };
                self.declarator_tail(&mut declarator)?;
                list.push(FieldDeclarator {
                    declarator,
                    bit_width,
                });
                if !self.eat(P::Comma) {
                    break;
                }
            }
        }
        self.expect(P::Semi)?;
        let declarators = self.ast.field_declarators.push_list(list);
        Ok(FieldDecl {
            specs,
            declarators,
            span: self.span_from(lo),
        })
    }

    fn enum_spec(&mut self) -> PResult<EnumId> {
        let lo = self.bump().span.lo;
        let mut attrs = Vec::new();
        self.attributes(&mut attrs)?;
        let tag = self.optional_tag();
        self.attributes(&mut attrs)?;
        let underlying = if self.eat(P::Colon) {
            Some(self.type_name()?)
        } else {
            None
        };
        let mut enumerators = None;
        if self.eat(P::LBrace) {
            let mut list = Vec::new();
            while !self.eat(P::RBrace) {
                let (name, span) = self.expect_ident()?;
                let mut ignored = Vec::new();
                self.attributes(&mut ignored)?;
                let value = if self.eat(P::Assign) {
                    Some(self.conditional_expr()?)
                } else {
                    None
                };
                // Enumerators are ordinary identifiers: they hide typedefs of the same name.
                self.declare(name, false);
                list.push(Enumerator {
                    name,
                    value,
                    span: self.span_from(span.lo),
                });
                if !self.eat(P::Comma) {
                    self.expect(P::RBrace)?;
                    break;
                }
            }
            enumerators = Some(self.ast.enumerators.push_list(list));
            self.attributes(&mut attrs)?;
        } else if tag.is_none() {
            return self.fail("enum tag or `{`");
        }
        let attrs = self.ast.attrs.push_list(attrs);
        let span = self.span_from(lo);
        Ok(self.ast.enums.alloc(EnumSpec {
            tag,
            underlying,
            enumerators,
            attrs,
            span,
        }))
    }

    // ---- attributes --------------------------------------------------------------------------

    // ---- initializers ------------------------------------------------------------------------

    pub(crate) fn static_assert(&mut self) -> PResult<StaticAssert> {
        let lo = self.bump().span.lo;
        self.expect(P::LParen)?;
        let cond = self.conditional_expr()?;
        let message = if self.eat(P::Comma) {
            Some(self.string_literals()?)
        } else {
            None
        };
        self.expect(P::RParen)?;
        self.expect(P::Semi)?;
        Ok(StaticAssert {
            cond,
            message,
            span: self.span_from(lo),
        })
    }

    /// One or more adjacent string literals.
    pub(crate) fn string_literals(&mut self) -> PResult<Span> {
        let lo = self.peek().span.lo;
        if self.peek().kind != TokenKind::Str {
            return self.fail("string literal");
        }
        while self.peek().kind == TokenKind::Str {
            self.bump();
        }
        Ok(self.span_from(lo))
    }

    pub(crate) fn toplevel_asm(&mut self) -> PResult<ExternalDecl> {
        self.bump();
        while matches!(self.peek().kind, TokenKind::Kw(Kw::Volatile | Kw::Inline)) {
            self.bump();
        }
        let span = self.skip_balanced()?;
        self.expect(P::Semi)?;
        Ok(ExternalDecl::Asm(span))
    }
}

/// The flag a builtin type keyword adds, given the flags so far (`long long` needs them).
fn base_type_bit(k: Kw, so_far: u32) -> u32 {
    match k {
        Kw::Void => BaseType::VOID,
        Kw::Char => BaseType::CHAR,
        Kw::Short => BaseType::SHORT,
        Kw::Int => BaseType::INT,
        Kw::Long if so_far & BaseType::LONG != 0 => BaseType::LONG_LONG,
        Kw::Long => BaseType::LONG,
        Kw::Float => BaseType::FLOAT,
        Kw::Double => BaseType::DOUBLE,
        Kw::Signed => BaseType::SIGNED,
        Kw::Unsigned => BaseType::UNSIGNED,
        Kw::Bool => BaseType::BOOL,
        Kw::Complex => BaseType::COMPLEX,
        Kw::Imaginary => BaseType::IMAGINARY,
        Kw::Int128 => BaseType::INT128,
        Kw::Float128 => BaseType::FLOAT128,
        Kw::Float80 => BaseType::FLOAT80,
        Kw::Ibm128 => BaseType::IBM128,
        Kw::Float16 => BaseType::FLOAT16,
        Kw::Bf16 => BaseType::BF16,
        Kw::Float32 => BaseType::FLOAT32,
        Kw::Float64 => BaseType::FLOAT64,
        Kw::Float32x => BaseType::FLOAT32X,
        Kw::Float64x => BaseType::FLOAT64X,
        Kw::Float128x => BaseType::FLOAT128X,
        Kw::Decimal32 | Kw::Decimal64 | Kw::Decimal128 => BaseType::DECIMAL,
        _ => 0,
    }
}

pub(super) fn qualifier_bit(k: Kw) -> u16 {
    match k {
        Kw::Const => Quals::CONST,
        Kw::Volatile => Quals::VOLATILE,
        Kw::Restrict => Quals::RESTRICT,
        Kw::Atomic => Quals::ATOMIC,
        Kw::SegGs => Quals::SEG_GS,
        Kw::SegFs => Quals::SEG_FS,
        _ => 0,
    }
}
