//! Lowering: syntax tree → IR, one translation unit at a time.
//!
//! The unit is parsed declaration by declaration ([`crate::frontend::parse_streaming`]); each
//! external declaration is lowered while its tree exists and then dropped. What must outlive a
//! declaration — types, the scoped symbol tables, globals, functions — lives in [`UnitState`].
//!
//! Split by topic: `ty` (C types from specifiers and declarators), `decl` (declarations and
//! function definitions), `init` (initializers), `expr` (expressions, lvalues, conditions),
//! `stmt` (statements into a CFG), `consteval` (integer constant expressions), `literal`.

mod arith;
mod builder;
mod consteval;
mod control;
mod decl;
mod expr;
mod init;
pub mod literal;
mod scope;
mod stmt;
mod ty;

use rustc_hash::FxHashMap;

use super::ast::{Ast, ExternalDecl};
use super::intern::{Interner, Sym};
use super::linemap::LineMap;
use super::token::Span;
use super::{parse_streaming, Diagnostic, ItemView};
use crate::ir::names::Names;
use crate::ir::*;
use builder::FnBuilder;
use scope::Scopes;

/// A lowered unit plus what the parse reported.
pub struct LowerOutput {
    pub unit: UnitIr,
    pub parse_errors: Vec<Diagnostic>,
    pub external_decls: usize,
    pub function_definitions: usize,
}

/// Parses and lowers one unit.
pub fn lower_unit(name: String, text: &str, names: &Names) -> LowerOutput {
    lower_unit_with(name, text, names, |_| {})
}

/// Parses and lowers one unit, showing each external declaration to `on_item` first.
pub fn lower_unit_with(
    name: String,
    text: &str,
    names: &Names,
    mut on_item: impl FnMut(&ItemView<'_>),
) -> LowerOutput {
    let mut st = UnitState::new(names, name.clone());
    let mut builtins_bound = false;
    let mut function_definitions = 0;
    let summary = parse_streaming(name, text, |item| {
        on_item(item);
        if matches!(item.item, ExternalDecl::Function(_)) {
            function_definitions += 1;
        }
        let mut lower = Lower::new(item, &mut st);
        if !builtins_bound {
            lower.bind_builtin_typedefs();
            builtins_bound = true;
        }
        lower.external_decl(item.item);
    });
    st.unit.files = summary.linemap.files().to_vec();
    LowerOutput {
        unit: st.unit,
        parse_errors: summary.errors,
        external_decls: summary.external_decls,
        function_definitions,
    }
}

/// What persists across the external declarations of one unit.
pub(crate) struct UnitState<'n> {
    pub names: &'n Names,
    pub unit: UnitIr,
    pub scopes: Scopes,
    /// Index into `unit.declared_functions` by name.
    declared: FxHashMap<Name, usize>,
    /// External-linkage and file-scope static globals by name (tentative definitions merge).
    file_globals: FxHashMap<Name, GlobalId>,
    strings: FxHashMap<String, StrId>,
    /// Counter for synthetic names (anonymous members, temporaries of file-scope literals).
    anon: u32,
    /// Array bounds of the type just built that are not constants (a VLA's `n` in
    /// `int a[n]` or `sizeof(int[n])`): evaluated where the type is, so their reads are
    /// accesses ([`Lower::vla_bound_reads`]).
    pub vla_bounds: Vec<super::ast::ExprId>,
}

impl<'n> UnitState<'n> {
    fn new(names: &'n Names, name: String) -> Self {
        UnitState {
            names,
            unit: UnitIr {
                name,
                ..Default::default()
            },
            scopes: Scopes::new(),
            declared: FxHashMap::default(),
            file_globals: FxHashMap::default(),
            strings: FxHashMap::default(),
            anon: 0,
            vla_bounds: Vec::new(),
        }
    }
}

/// Lowering of one external declaration: the tree being read plus the unit's state.
pub(crate) struct Lower<'a, 'n> {
    pub ast: &'a Ast,
    pub interner: &'a Interner,
    pub linemap: &'a LineMap,
    pub text: &'a str,
    pub st: &'a mut UnitState<'n>,
    /// The function being lowered, if any.
    pub fb: Option<FnBuilder>,
    /// While lowering the initializer of a static-storage variable: temporaries become globals.
    pub static_init: bool,
    /// The enclosing function's builder, set aside while a static local's initializer is lowered
    /// (its `&&label`s still name that function's blocks).
    pub outer_fb: Option<FnBuilder>,
    /// While computing a type (`typeof`, `sizeof`, `__auto_type`): lower without side effects
    /// on the unit (no address-taken marks, no globals for temporaries).
    pub probing: bool,
    /// Set when `__builtin_constant_p` of a non-constant folded to 0: GCC may still find it
    /// constant after inlining, so a branch on the result is not folded ([`Lower::branch_constant`]).
    pub guessed_constant_p: bool,
}

/// Marker for a construct that could not be lowered; a diagnostic has been recorded.
#[derive(Debug)]
pub(crate) struct Unsupported;

pub(crate) type LResult<T> = Result<T, Unsupported>;

impl<'a, 'n> Lower<'a, 'n> {
    fn new(item: &'a ItemView<'a>, st: &'a mut UnitState<'n>) -> Self {
        Lower {
            ast: item.ast,
            interner: item.interner,
            linemap: item.linemap,
            text: item.text,
            st,
            fb: None,
            static_init: false,
            outer_fb: None,
            guessed_constant_p: false,
            probing: false,
        }
    }

    fn external_decl(&mut self, item: ExternalDecl) {
        match item {
            ExternalDecl::Decl(d) => self.declaration(d),
            ExternalDecl::Function(f) => self.function_definition(f),
            ExternalDecl::Asm(_) | ExternalDecl::StaticAssert(_) => {}
        }
        self.st.scopes.reset_to_file();
    }

    /// Types GCC predeclares: `__builtin_va_list` (x86-64: `struct __va_list_tag[1]`),
    /// `__int128_t`, `__uint128_t`, and `bool` (a keyword in C23, a typedef otherwise).
    fn bind_builtin_typedefs(&mut self) {
        use crate::ir::types::{IntKind, RecordKind, TypeKind};
        let tag = self.intern("__va_list_tag");
        let rec = self.types().new_record(RecordKind::Struct, Some(tag));
        let rec_ty = self.types().intern(TypeKind::Record(rec), Quals::default());
        let va_list = self.types().intern(
            TypeKind::Array {
                elem: rec_ty,
                len: Some(1),
            },
            Quals::default(),
        );
        let i128 = self.types().intern(
            TypeKind::Int {
                kind: IntKind::Int128,
                signed: true,
            },
            Quals::default(),
        );
        let u128 = self.types().intern(
            TypeKind::Int {
                kind: IntKind::Int128,
                signed: false,
            },
            Quals::default(),
        );
        let bool_ty = self.types().intern(TypeKind::Bool, Quals::default());
        for (name, ty) in [
            ("__builtin_va_list", va_list),
            ("__int128_t", i128),
            ("__uint128_t", u128),
            ("bool", bool_ty),
        ] {
            if let Some(sym) = self.interner.lookup(name) {
                self.st.scopes.bind_file(sym, scope::Binding::Typedef(ty));
            }
        }
    }

    pub fn loc(&self, offset: u32) -> Loc {
        let (file, line, col) = self.linemap.resolve(offset);
        Loc { file, line, col }
    }

    pub fn name(&self, s: Sym) -> Name {
        self.st.names.intern(self.interner.get(s))
    }

    pub fn intern(&self, s: &str) -> Name {
        self.st.names.intern(s)
    }

    pub fn span_text(&self, span: Span) -> &'a str {
        self.text
            .get(span.lo as usize..span.hi as usize)
            .unwrap_or("")
    }

    /// Records a lowering problem at `offset`.
    pub fn diag(&mut self, offset: u32, message: impl Into<String>) {
        let loc = self.loc(offset);
        self.st.unit.diagnostics.push(LowerDiagnostic {
            loc,
            message: message.into(),
        });
    }

    pub fn fail<T>(&mut self, offset: u32, message: impl Into<String>) -> LResult<T> {
        self.diag(offset, message);
        Err(Unsupported)
    }

    pub fn types(&mut self) -> &mut TypeTable {
        &mut self.st.unit.types
    }

    pub fn string(&mut self, s: String) -> StrId {
        if let Some(&id) = self.st.strings.get(&s) {
            return id;
        }
        let id = StrId(self.st.unit.strings.len() as u32);
        self.st.unit.strings.push(s.clone());
        self.st.strings.insert(s, id);
        id
    }

    /// Remembers that a function is declared (or implicitly declared by a call) in this unit.
    pub fn declare_function(&mut self, name: Name, ty: TypeId, linkage: Linkage) {
        if !self.st.declared.contains_key(&name) {
            self.st
                .declared
                .insert(name, self.st.unit.declared_functions.len());
            self.st
                .unit
                .declared_functions
                .push(Declared { name, ty, linkage });
        }
    }

    pub fn fresh_anon(&mut self, prefix: &str) -> Name {
        self.st.anon += 1;
        let n = self.st.anon;
        self.intern(&format!("<{prefix}.{n}>"))
    }
}

#[cfg(test)]
mod tests;
