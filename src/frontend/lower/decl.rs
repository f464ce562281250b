//! Declarations (file-scope and block-scope variables, functions, typedefs) and function
//! definitions.

use std::hash::Hasher;

use super::builder::FnBuilder;
use super::scope::Binding;
use super::Lower;
use crate::frontend::ast::{self, DeclId, Derived, FuncId, InitDeclarator, Storage, TypeSpec};
use crate::frontend::intern::Sym;
use crate::ir::types::TypeKind;
use crate::ir::*;

impl Lower<'_, '_> {
    pub fn declaration(&mut self, d: DeclId) {
        let decl = self.ast.decls[d];
        if self.ast.init_declarators.get(decl.declarators).is_empty() {
            // `struct s {...};`, `enum {...};`: the specifiers define tags and constants.
            self.base_type(&decl.specs);
            return;
        }
        let base = if decl.specs.ty == TypeSpec::Auto {
            None
        } else {
            Some(self.base_type(&decl.specs))
        };
        for id in self.ast.init_declarators.get(decl.declarators).to_vec() {
            self.init_declarator(&decl.specs, base, id);
        }
    }

    fn init_declarator(
        &mut self,
        specs: &ast::DeclSpecs,
        base: Option<TypeId>,
        id: InitDeclarator,
    ) {
        let Some(sym) = id.declarator.name else {
            return;
        };
        let lo = id.declarator.span.lo;
        let ty = match base {
            Some(b) => {
                let b = self.apply_type_attributes(b, id.declarator.attrs);
                self.apply_declarator(b, &id.declarator)
            }
            None => self.auto_type(id),
        };
        let block_scope = !self.st.scopes.at_file_scope();
        if block_scope && specs.storage != Storage::Extern {
            self.vla_bound_reads(self.loc(lo));
        } else {
            self.st.vla_bounds.clear();
        }
        if specs.storage == Storage::Typedef {
            self.st.scopes.bind(sym, Binding::Typedef(ty));
            return;
        }
        if matches!(self.types().kind(ty), TypeKind::Function { .. }) {
            self.function_declaration(sym, ty, specs.storage == Storage::Static);
            return;
        }
        let flags = self.var_flags(ty, specs);
        let loc = self.loc(lo);
        if block_scope && !matches!(specs.storage, Storage::Extern | Storage::Static) {
            let interner = self.interner;
            let name = self.fb().unique_name(interner.get(sym));
            let name = self.intern(&name);
            let local = self.fb().add_local(Local {
                name,
                ty,
                kind: LocalKind::Local,
                flags,
            });
            let var = VarRef::Local(local);
            self.st.scopes.bind(sym, Binding::Var { var, ty });
            if let Some(init) = id.init {
                let extent = self.initialize(Lval::var(var), ty, init, loc).unwrap_or(0);
                self.complete_declared_array(sym, var, ty, extent);
            }
            return;
        }
        let g = self.global(sym, ty, specs, flags, loc, id.init.is_some());
        self.st.scopes.bind(
            sym,
            Binding::Var {
                var: VarRef::Global(g),
                ty,
            },
        );
        if let Some(init) = id.init {
            let extent = self.global_initializer(g, ty, init, loc);
            self.complete_declared_array(sym, VarRef::Global(g), ty, extent);
        }
    }

    /// `T x[] = {...}` takes its length from the initializer.
    fn complete_declared_array(&mut self, sym: Sym, var: VarRef, ty: TypeId, extent: usize) {
        let complete = self.complete_array(ty, extent);
        if complete != ty {
            self.set_var_type(var, complete);
            self.st.scopes.bind(sym, Binding::Var { var, ty: complete });
        }
    }

    /// `__auto_type x = e`: the type of the initializer (after decay).
    fn auto_type(&mut self, id: InitDeclarator) -> TypeId {
        match id.init.map(|i| self.ast.inits[i]) {
            Some(ast::Initializer::Expr(e)) => {
                let t = self.type_of_expr(e);
                match self.types().kind(t).clone() {
                    TypeKind::Array { elem, .. } => self.types().pointer_to(elem),
                    TypeKind::Function { .. } => self.types().pointer_to(t),
                    _ => self.types().unqualified(t),
                }
            }
            _ => {
                self.diag(
                    id.declarator.span.lo,
                    "__auto_type needs an initializer expression",
                );
                self.types().unknown()
            }
        }
    }

    fn var_flags(&mut self, ty: TypeId, specs: &ast::DeclSpecs) -> VarFlags {
        // An array is as volatile or atomic as its elements.
        let mut t = ty;
        while let TypeKind::Array { elem, .. } = self.types().kind(t) {
            t = *elem;
        }
        let q = Quals(self.types().quals(ty).0 | self.types().quals(t).0);
        VarFlags {
            address_taken: false,
            thread_local: specs.quals.has(ast::Quals::THREAD_LOCAL),
            atomic: q.has(Quals::ATOMIC),
            volatile: q.has(Quals::VOLATILE),
            call_key: false,
        }
    }

    /// A global, merged with earlier declarations of the same name at file scope.
    fn global(
        &mut self,
        sym: Sym,
        ty: TypeId,
        specs: &ast::DeclSpecs,
        flags: VarFlags,
        loc: Loc,
        has_init: bool,
    ) -> GlobalId {
        let name = self.name(sym);
        let is_static = specs.storage == Storage::Static;
        let defines = has_init || specs.storage != Storage::Extern;
        if let (Some(fb), false) = (&self.fb, self.st.scopes.at_file_scope()) {
            if is_static {
                let function = fb.name;
                return self.push_global(Global {
                    name,
                    ty,
                    kind: GlobalKind::StaticLocal { function },
                    linkage: Linkage::Internal,
                    flags,
                    defined: true,
                    init: Vec::new(),
                    loc,
                });
            }
        }
        if let Some(&g) = self.st.file_globals.get(&name) {
            let complete = !matches!(self.types().kind(ty), TypeKind::Array { len: None, .. });
            let global = &mut self.st.unit.globals[g.index()];
            global.defined |= defines;
            if complete || !global.defined {
                global.ty = ty;
            }
            if defines {
                global.loc = loc;
            }
            global.flags.thread_local |= flags.thread_local;
            return g;
        }
        let linkage = if is_static {
            Linkage::Internal
        } else {
            Linkage::External
        };
        let g = self.push_global(Global {
            name,
            ty,
            kind: GlobalKind::Global,
            linkage,
            flags,
            defined: defines,
            init: Vec::new(),
            loc,
        });
        self.st.file_globals.insert(name, g);
        g
    }

    pub fn push_global(&mut self, g: Global) -> GlobalId {
        self.st.unit.globals.push(g);
        GlobalId(self.st.unit.globals.len() as u32 - 1)
    }

    fn function_declaration(&mut self, sym: Sym, ty: TypeId, is_static: bool) {
        let name = self.name(sym);
        let internal = is_static
            || matches!(
                self.st.scopes.lookup_file(sym),
                Some(Binding::Func { internal: true, .. })
            );
        let linkage = if internal {
            Linkage::Internal
        } else {
            Linkage::External
        };
        self.st
            .scopes
            .bind(sym, Binding::Func { name, ty, internal });
        self.declare_function(name, ty, linkage);
    }

    pub fn function_definition(&mut self, f: FuncId) {
        let def = self.ast.functions[f];
        let Some(sym) = def.declarator.name else {
            return;
        };
        let mut ty = self.declared_type(&def.specs, &def.declarator);
        let Some(&Derived::Function {
            params, kr_names, ..
        }) = def.declarator.function_params(self.ast)
        else {
            self.diag(def.span.lo, "function definition without a parameter list");
            return;
        };
        let kr_types = self.kr_parameter_types(def.kr_decls);
        if !kr_names.is_empty() {
            ty = self.kr_function_type(ty, kr_names, &kr_types);
        }
        let (name, internal) = match &self.fb {
            Some(outer) => {
                let qualified = format!(
                    "{}.{}",
                    self.st.names.get(outer.name),
                    self.interner.get(sym)
                );
                let name = self.intern(&qualified);
                self.st.scopes.bind(
                    sym,
                    Binding::Func {
                        name,
                        ty,
                        internal: true,
                    },
                );
                (name, true)
            }
            None => {
                self.function_declaration(sym, ty, def.specs.storage == Storage::Static);
                let internal = matches!(
                    self.st.scopes.lookup(sym),
                    Some(Binding::Func { internal: true, .. })
                );
                (self.name(sym), internal)
            }
        };
        let param_tys = match self.types().kind(ty).clone() {
            TypeKind::Function { params, .. } => params,
            _ => Vec::new(),
        };
        let outer = self.fb.replace(FnBuilder::new(name));
        self.st.scopes.push();
        self.fb().scope_floor = self.st.scopes.depth();
        let param_names: Vec<Option<Sym>> = if kr_names.is_empty() {
            self.ast
                .params
                .get(params)
                .iter()
                .map(|p| p.declarator.name)
                .collect()
        } else {
            self.ast
                .syms
                .get(kr_names)
                .iter()
                .map(|&s| Some(s))
                .collect()
        };
        for (i, (pname, pty)) in param_names.iter().zip(param_tys.iter()).enumerate() {
            let text =
                pname.map_or_else(|| format!("<arg{i}>"), |s| self.interner.get(s).to_string());
            let unique = self.fb().unique_name(&text);
            let local_name = self.intern(&unique);
            let flags = VarFlags {
                volatile: self.types().quals(*pty).has(Quals::VOLATILE),
                ..Default::default()
            };
            let l = self.fb().add_local(Local {
                name: local_name,
                ty: *pty,
                kind: LocalKind::Formal,
                flags,
            });
            self.fb().params.push(l);
            if let Some(s) = pname {
                self.st.scopes.bind(
                    *s,
                    Binding::Var {
                        var: VarRef::Local(l),
                        ty: *pty,
                    },
                );
            }
        }
        self.statement(def.body);
        self.st.scopes.pop();
        let loc = self.loc(def.span.lo);
        let end = self.loc(def.span.hi.saturating_sub(1));
        let builder = std::mem::replace(&mut self.fb, outer).expect("builder set above");
        let (blocks, locals, params) = builder.finish(end);
        let linkage = if internal {
            Linkage::Internal
        } else {
            Linkage::External
        };
        let function = Function {
            name,
            linkage,
            ty,
            params,
            locals,
            blocks,
            loc,
        };
        let hash = self.definition_hash(def.span);
        self.st.unit.functions.push(function);
        self.st.unit.function_hashes.push(hash);
    }

    /// A hash of the definition's text: identical header functions in many units hash alike.
    fn definition_hash(&self, span: crate::frontend::token::Span) -> u64 {
        let mut h = rustc_hash::FxHasher::default();
        for word in self.span_text(span).split_ascii_whitespace() {
            h.write(word.as_bytes());
            h.write_u8(b' ');
        }
        h.finish()
    }

    /// Types of K&R parameters from the declarations between the declarator and the body.
    fn kr_parameter_types(&mut self, decls: ast::List<DeclId>) -> Vec<(Sym, TypeId)> {
        let mut out = Vec::new();
        for d in self.ast.decl_lists.get(decls).to_vec() {
            let decl = self.ast.decls[d];
            let base = self.base_type(&decl.specs);
            for id in self.ast.init_declarators.get(decl.declarators).to_vec() {
                if let Some(s) = id.declarator.name {
                    let t = self.apply_declarator(base, &id.declarator);
                    out.push((s, self.adjust_parameter(t)));
                }
            }
        }
        out
    }

    fn kr_function_type(
        &mut self,
        ty: TypeId,
        names: ast::List<Sym>,
        kr: &[(Sym, TypeId)],
    ) -> TypeId {
        let TypeKind::Function { ret, .. } = self.types().kind(ty).clone() else {
            return ty;
        };
        let params = self
            .ast
            .syms
            .get(names)
            .iter()
            .map(|s| kr.iter().find(|(n, _)| n == s).map(|&(_, t)| t))
            .collect::<Vec<_>>();
        let int = self.types().int();
        let params = params.into_iter().map(|t| t.unwrap_or(int)).collect();
        self.types().intern(
            TypeKind::Function {
                ret,
                params,
                variadic: false,
                prototyped: false,
            },
            Quals::default(),
        )
    }

    /// A GNU nested function: lowered as its own function named `outer.inner`. Uses of the
    /// enclosing function's locals are reported (relay does not model static chains).
    pub fn nested_function(&mut self, f: FuncId) {
        self.function_definition(f);
    }
}
