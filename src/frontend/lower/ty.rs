//! C types from declaration specifiers and declarators; struct, union and enum definitions.

use super::scope::{Binding, Tag};
use super::Lower;
use crate::frontend::ast::{self, BaseType, DeclSpecs, Declarator, Derived, TypeSpec};
use crate::ir::types::{FieldDef, FloatKind, IntKind, RecordKind, TypeKind};
use crate::ir::{Quals, TypeId};

impl Lower<'_, '_> {
    /// The type a declarator gives its name.
    pub fn declared_type(&mut self, specs: &DeclSpecs, d: &Declarator) -> TypeId {
        let base = self.base_type(specs);
        let base = self.apply_type_attributes(base, d.attrs);
        self.apply_declarator(base, d)
    }

    /// The type a type name denotes; in a function, its non-constant array bounds are read
    /// there (`sizeof(int[n])`, `(int (*)[n])p`).
    pub fn type_name(&mut self, tn: ast::TypeNameId) -> TypeId {
        let tn = self.ast.type_names[tn];
        let t = self.declared_type(&tn.specs, &tn.declarator);
        let loc = self.loc(tn.declarator.span.lo);
        self.vla_bound_reads(loc);
        t
    }

    /// The type named by the specifiers, with their qualifiers.
    pub fn base_type(&mut self, specs: &DeclSpecs) -> TypeId {
        let mut quals = convert_quals(specs.quals);
        let t = match specs.ty {
            TypeSpec::None => self.types().int(),
            TypeSpec::Base(b) => {
                let kind = base_kind(b);
                self.types().intern(kind, Quals::default())
            }
            TypeSpec::Typedef(s) => match self.st.scopes.lookup(s) {
                Some(Binding::Typedef(t)) => t,
                _ => {
                    let name = self.interner.get(s).to_string();
                    self.diag(specs.span.lo, format!("unknown type name `{name}`"));
                    self.types().unknown()
                }
            },
            TypeSpec::Record(r) => self.record_type(r),
            TypeSpec::Enum(e) => self.enum_type(e),
            TypeSpec::TypeofType(tn) => self.type_name(tn),
            TypeSpec::TypeofExpr(e) => self.type_of_expr(e),
            TypeSpec::Atomic(tn) => {
                quals.0 |= Quals::ATOMIC;
                self.type_name(tn)
            }
            // `__auto_type`: the declaration supplies the type from its initializer.
            TypeSpec::Auto => self.types().unknown(),
        };
        let t = if specs.unqual {
            self.types().unqualified(t)
        } else {
            t
        };
        let t = self.types().qualified(t, quals);
        self.apply_type_attributes(t, specs.attrs)
    }

    /// Derived types, applied from the base outwards (the declarator lists them from the name).
    pub fn apply_declarator(&mut self, base: TypeId, d: &Declarator) -> TypeId {
        let derived: Vec<Derived> = self.ast.derived.get(d.derived).to_vec();
        let mut t = base;
        for der in derived.iter().rev() {
            t = match *der {
                Derived::Pointer(q) => {
                    let p = self.types().pointer_to(t);
                    self.types().qualified(p, convert_quals(q))
                }
                Derived::Array { size, .. } => {
                    let value = size.and_then(|e| self.const_eval(e));
                    if let (Some(e), None, Some(_), false) = (size, value, &self.fb, self.probing) {
                        self.st.vla_bounds.push(e);
                    }
                    let len = value.and_then(|v| u64::try_from(v).ok());
                    self.types()
                        .intern(TypeKind::Array { elem: t, len }, Quals::default())
                }
                Derived::Function {
                    params,
                    variadic,
                    kr_names,
                } => self.function_type(t, params, variadic, !kr_names.is_empty()),
            };
        }
        t
    }

    fn function_type(
        &mut self,
        ret: TypeId,
        params: ast::List<ast::Param>,
        variadic: bool,
        kr: bool,
    ) -> TypeId {
        let list: Vec<ast::Param> = self.ast.params.get(params).to_vec();
        let is_void = |l: &mut Self, p: &ast::Param| {
            p.declarator.name.is_none()
                && l.ast.derived.get(p.declarator.derived).is_empty()
                && matches!(p.specs.ty, TypeSpec::Base(b) if b.0 == BaseType::VOID)
        };
        let mut tys = Vec::new();
        if !(list.len() == 1 && is_void(self, &list[0])) {
            for p in &list {
                let t = self.declared_type(&p.specs, &p.declarator);
                tys.push(self.adjust_parameter(t));
            }
        }
        let prototyped = !kr && (!list.is_empty() || variadic);
        self.types().intern(
            TypeKind::Function {
                ret,
                params: tys,
                variadic,
                prototyped,
            },
            Quals::default(),
        )
    }

    /// Array and function parameters are pointers.
    pub fn adjust_parameter(&mut self, t: TypeId) -> TypeId {
        match self.types().kind(t).clone() {
            TypeKind::Array { elem, .. } => self.types().pointer_to(elem),
            TypeKind::Function { .. } => self.types().pointer_to(t),
            _ => t,
        }
    }

    fn record_type(&mut self, rid: ast::RecordId) -> TypeId {
        let spec = self.ast.records[rid];
        let kind = match spec.kind {
            ast::RecordKind::Struct => RecordKind::Struct,
            ast::RecordKind::Union => RecordKind::Union,
        };
        let tag_name = spec.tag.map(|s| self.name(s));
        let record = match (spec.tag, spec.fields) {
            (Some(tag), None) => match self.st.scopes.tag(tag) {
                Some(Tag::Record(r)) => r,
                _ => {
                    let r = self.types().new_record(kind, tag_name);
                    self.st.scopes.bind_tag(tag, Tag::Record(r));
                    r
                }
            },
            (Some(tag), Some(_)) => match self.st.scopes.tag_current(tag) {
                Some(Tag::Record(r)) if !self.types().record(r).complete => r,
                _ => {
                    let r = self.types().new_record(kind, tag_name);
                    self.st.scopes.bind_tag(tag, Tag::Record(r));
                    r
                }
            },
            (None, _) => self.types().new_record(kind, None),
        };
        if let Some(fields) = spec.fields {
            let defs = self.fields(fields);
            let packed = self
                .ast
                .attrs
                .get(spec.attrs)
                .iter()
                .any(|a| self.interner.get(a.name).trim_matches('_') == "packed");
            self.types().complete_record(record, defs, packed);
        }
        self.types()
            .intern(TypeKind::Record(record), Quals::default())
    }

    fn fields(&mut self, fields: ast::List<ast::FieldDecl>) -> Vec<FieldDef> {
        let mut out = Vec::new();
        for f in self.ast.fields.get(fields).to_vec() {
            let base = self.base_type(&f.specs);
            let declarators = self.ast.field_declarators.get(f.declarators).to_vec();
            if declarators.is_empty() {
                // An anonymous struct/union member: its fields are reached directly. Named by
                // its position, so every unit gives one definition the same member names (the
                // linker merges records by them; a per-unit counter kept two `struct s`).
                let name = self.intern(&format!("<anon.{}>", out.len()));
                out.push(FieldDef {
                    name,
                    anonymous: true,
                    ty: base,
                    bit_width: None,
                });
                continue;
            }
            for fd in declarators {
                let ty = self.apply_type_attributes(base, fd.declarator.attrs);
                let ty = self.apply_declarator(ty, &fd.declarator);
                let bit_width = fd
                    .bit_width
                    .and_then(|e| self.const_eval(e))
                    .map(|w| w as u32);
                let name = match fd.declarator.name {
                    Some(s) => self.name(s),
                    None => self.fresh_anon("pad"),
                };
                out.push(FieldDef {
                    name,
                    anonymous: false,
                    ty,
                    bit_width,
                });
            }
        }
        out
    }

    fn enum_type(&mut self, eid: ast::EnumId) -> TypeId {
        let spec = self.ast.enums[eid];
        let tag = spec.tag.map(|s| self.name(s));
        if let (Some(s), None) = (spec.tag, spec.enumerators) {
            if let Some(Tag::Enum(t)) = self.st.scopes.tag(s) {
                return t;
            }
        }
        let ty = self
            .types()
            .intern(TypeKind::Enum { tag }, Quals::default());
        if let Some(s) = spec.tag {
            self.st.scopes.bind_tag(s, Tag::Enum(ty));
        }
        if let Some(list) = spec.enumerators {
            let mut next = 0i128;
            for e in self.ast.enumerators.get(list).to_vec() {
                let value = match e.value {
                    Some(v) => self.const_eval(v).unwrap_or_else(|| {
                        self.diag(e.span.lo, "enumerator value is not an integer constant");
                        next
                    }),
                    None => next,
                };
                self.st
                    .scopes
                    .bind(e.name, Binding::EnumConst { value, ty });
                next = value.wrapping_add(1);
            }
        }
        ty
    }

    /// GCC's `vector_size(N)` and `mode(M)` change the type they are attached to.
    pub fn apply_type_attributes(&mut self, t: TypeId, attrs: ast::List<ast::Attribute>) -> TypeId {
        let mut t = t;
        for a in self.ast.attrs.get(attrs).to_vec() {
            let name = self.interner.get(a.name).trim_matches('_');
            let arg = a
                .args
                .map(|s| {
                    self.span_text(s)
                        .trim_matches(|c| c == '(' || c == ')' || c == ' ')
                })
                .unwrap_or("");
            match name {
                "vector_size" => {
                    let bytes = literal_u64(arg).unwrap_or(0);
                    t = self
                        .types()
                        .intern(TypeKind::Vector { elem: t, bytes }, Quals::default());
                }
                "mode" => {
                    let signed =
                        !matches!(self.types().kind(t), TypeKind::Int { signed: false, .. });
                    let kind = match arg.trim_matches('_') {
                        "QI" => Some(IntKind::Char),
                        "HI" => Some(IntKind::Short),
                        "SI" => Some(IntKind::Int),
                        "DI" | "word" | "pointer" => Some(IntKind::Long),
                        "TI" => Some(IntKind::Int128),
                        _ => None,
                    };
                    if let Some(kind) = kind {
                        t = self
                            .types()
                            .intern(TypeKind::Int { kind, signed }, Quals::default());
                    }
                }
                _ => {}
            }
        }
        t
    }
}

fn literal_u64(s: &str) -> Option<u64> {
    super::literal::int_literal(s.trim()).and_then(|(v, _)| u64::try_from(v).ok())
}

pub(crate) fn convert_quals(q: ast::Quals) -> Quals {
    let mut out = 0;
    for (from, to) in [
        (ast::Quals::CONST, Quals::CONST),
        (ast::Quals::VOLATILE, Quals::VOLATILE),
        (ast::Quals::RESTRICT, Quals::RESTRICT),
        (ast::Quals::ATOMIC, Quals::ATOMIC),
    ] {
        if q.has(from) {
            out |= to;
        }
    }
    Quals(out)
}

/// The type named by a combination of builtin type keywords.
fn base_kind(b: BaseType) -> TypeKind {
    let has = |f: u32| b.0 & f != 0;
    let float = |k| {
        if has(BaseType::COMPLEX) {
            TypeKind::Complex(k)
        } else {
            TypeKind::Float(k)
        }
    };
    let signed = !has(BaseType::UNSIGNED);
    if has(BaseType::VOID) {
        TypeKind::Void
    } else if has(BaseType::BOOL) {
        TypeKind::Bool
    } else if has(BaseType::FLOAT) || has(BaseType::FLOAT32) {
        float(FloatKind::Float)
    } else if has(BaseType::DOUBLE) && has(BaseType::LONG)
        || has(BaseType::FLOAT80)
        || has(BaseType::FLOAT64X)
    {
        float(FloatKind::LongDouble)
    } else if has(BaseType::DOUBLE) || has(BaseType::FLOAT64) || has(BaseType::FLOAT32X) {
        float(FloatKind::Double)
    } else if has(BaseType::FLOAT128) || has(BaseType::FLOAT128X) || has(BaseType::IBM128) {
        float(FloatKind::Float128)
    } else if has(BaseType::FLOAT16) {
        float(FloatKind::Half)
    } else if has(BaseType::BF16) {
        float(FloatKind::BFloat16)
    } else if has(BaseType::DECIMAL) {
        float(FloatKind::Decimal)
    } else if has(BaseType::CHAR) {
        TypeKind::Int {
            kind: IntKind::Char,
            signed,
        }
    } else if has(BaseType::SHORT) {
        TypeKind::Int {
            kind: IntKind::Short,
            signed,
        }
    } else if has(BaseType::LONG_LONG) {
        TypeKind::Int {
            kind: IntKind::LongLong,
            signed,
        }
    } else if has(BaseType::LONG) {
        TypeKind::Int {
            kind: IntKind::Long,
            signed,
        }
    } else if has(BaseType::INT128) {
        TypeKind::Int {
            kind: IntKind::Int128,
            signed,
        }
    } else if has(BaseType::COMPLEX) {
        TypeKind::Complex(FloatKind::Double)
    } else {
        TypeKind::Int {
            kind: IntKind::Int,
            signed,
        }
    }
}
