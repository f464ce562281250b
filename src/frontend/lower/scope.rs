//! Scoped symbol tables for lowering: ordinary identifiers and struct/union/enum tags.

use rustc_hash::FxHashMap;

use crate::frontend::intern::Sym;
use crate::ir::{Name, RecordId, TypeId, VarRef};

#[derive(Copy, Clone, Debug)]
pub(crate) enum Binding {
    Var {
        var: VarRef,
        ty: TypeId,
    },
    Func {
        name: Name,
        ty: TypeId,
        internal: bool,
    },
    EnumConst {
        value: i128,
        ty: TypeId,
    },
    Typedef(TypeId),
}

#[derive(Copy, Clone, Debug)]
pub(crate) enum Tag {
    Record(RecordId),
    Enum(TypeId),
}

/// Scope 0 is file scope; functions and blocks push more.
pub(crate) struct Scopes {
    ordinary: Vec<FxHashMap<Sym, Binding>>,
    tags: Vec<FxHashMap<Sym, Tag>>,
}

impl Scopes {
    pub fn new() -> Self {
        Scopes {
            ordinary: vec![FxHashMap::default()],
            tags: vec![FxHashMap::default()],
        }
    }

    pub fn push(&mut self) {
        self.ordinary.push(FxHashMap::default());
        self.tags.push(FxHashMap::default());
    }

    pub fn pop(&mut self) {
        if self.ordinary.len() > 1 {
            self.ordinary.pop();
            self.tags.pop();
        }
    }

    /// Back to file scope (after an error inside a function).
    pub fn reset_to_file(&mut self) {
        self.ordinary.truncate(1);
        self.tags.truncate(1);
    }

    pub fn at_file_scope(&self) -> bool {
        self.ordinary.len() == 1
    }

    pub fn lookup(&self, s: Sym) -> Option<Binding> {
        self.ordinary.iter().rev().find_map(|m| m.get(&s).copied())
    }

    /// The binding and the depth of the scope that holds it (0 = file scope).
    pub fn lookup_depth(&self, s: Sym) -> Option<(Binding, usize)> {
        self.ordinary
            .iter()
            .enumerate()
            .rev()
            .find_map(|(d, m)| m.get(&s).map(|b| (*b, d)))
    }

    pub fn depth(&self) -> usize {
        self.ordinary.len() - 1
    }

    pub fn lookup_file(&self, s: Sym) -> Option<Binding> {
        self.ordinary[0].get(&s).copied()
    }

    pub fn bind(&mut self, s: Sym, b: Binding) {
        if let Some(m) = self.ordinary.last_mut() {
            m.insert(s, b);
        }
    }

    pub fn bind_file(&mut self, s: Sym, b: Binding) {
        self.ordinary[0].insert(s, b);
    }

    pub fn tag(&self, s: Sym) -> Option<Tag> {
        self.tags.iter().rev().find_map(|m| m.get(&s).copied())
    }

    pub fn tag_current(&self, s: Sym) -> Option<Tag> {
        self.tags.last().and_then(|m| m.get(&s).copied())
    }

    pub fn bind_tag(&mut self, s: Sym, t: Tag) {
        if let Some(m) = self.tags.last_mut() {
            m.insert(s, t);
        }
    }
}
