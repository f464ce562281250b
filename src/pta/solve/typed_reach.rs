//! Which functions a library can find behind a pointer to a record, by the record's types.
//!
//! A function handed to code relay cannot see is one it may call back. Behind an argument
//! `struct hdr_histogram *h`, that code reads `h`'s members by their declared types (C's
//! effective-type rules; the field-based mode trusts them too): it finds the functions stored
//! in function-pointer members, in records nested by value, and behind members that point to
//! records, recursively. A member that may hold any pointer (`void *`, a pointer to a pointer)
//! yields the functions whose address it holds itself: the code does not know the program's
//! record types behind a `void *` (user data handed back to the program's own callbacks) and
//! does not look into them. Following every pointer through the classes instead made one
//! Steensgaard class reach almost every function: redis's 391 configuration and module
//! callbacks escaped through `hdr_close` and hiredis's `redisAsyncHandleRead`.

use super::Solver;
use crate::ir::types::{RecordId, TypeId, TypeKind};
use crate::ir::*;
use rustc_hash::FxHashMap;

/// How far a typed walk goes: records visited.
const MAX_RECORDS: usize = 256;

/// What a member of a given type may lead to.
enum Member {
    /// Nothing a function can be found behind (arithmetic, pointers to arithmetic).
    Nothing,
    /// A function pointer: the functions it points to.
    Function,
    /// A record, by value or behind a pointer: its members, by their types.
    Record(RecordId),
    /// Any pointer (`void *`, `T **`): the functions it points to itself.
    Untyped,
}

impl Solver<'_> {
    /// Whether callbacks are found through members by their types (the field-based mode,
    /// which has a node per member and trusts declared types already).
    pub(super) fn typed_reach(&self) -> bool {
        self.p.mode == super::super::FieldMode::FieldBased
    }

    /// The record an argument of an unknown external leads to: its pointee's, through any
    /// number of pointers in the field-based mode (`struct h **` for an out-parameter).
    pub(super) fn argument_record(&self, f: FuncId, e: &Expr) -> Option<RecordId> {
        let direct = crate::pta::signature::pointee_record(self.program, f, e);
        if direct.is_some() || !self.typed_reach() {
            return direct;
        }
        // `(void *)c`: the object is what the pointer pointed to before the cast.
        if let Expr::Cast(_, inner) = e {
            if let Some(r) = self.argument_record(f, inner) {
                return Some(r);
            }
        }
        let types = &self.program.types;
        let mut t = match e {
            Expr::AddrOf(lv) | Expr::StartOf(lv) => {
                crate::pta::signature::lval_type(self.program, f, lv)?
            }
            _ => types.pointee(crate::pta::signature::expr_type(self.program, f, e)?)?,
        };
        for _ in 0..8 {
            match self.member_kind(t) {
                Member::Record(r) => return Some(r),
                _ => t = types.pointee(t)?,
            }
        }
        None
    }

    /// Whether an argument's static type is a pointer to a data pointer (`void **`): what it
    /// points to is a pointer, not a function.
    pub(super) fn points_to_pointer(&self, f: FuncId, e: &Expr) -> bool {
        let types = &self.program.types;
        let Some(t) = crate::pta::signature::expr_type(self.program, f, e) else {
            return false;
        };
        types
            .pointee(t)
            .and_then(|p| types.pointee(p))
            .is_some_and(|q| !matches!(types.kind(q), TypeKind::Function { .. }))
    }

    /// Whether an argument's static type is `void *`.
    pub(super) fn is_void_pointer(&self, f: FuncId, e: &Expr) -> bool {
        let types = &self.program.types;
        crate::pta::signature::expr_type(self.program, f, e)
            .and_then(|t| types.pointee(t))
            .is_some_and(|p| matches!(types.kind(p), TypeKind::Void))
    }

    /// The functions in class `c` that a `void *` argument may be: a function becomes a
    /// `void *` only by a cast, so only those the program casts to a data pointer or an
    /// integer may hide behind it.
    pub(super) fn untyped_functions(
        &self,
        c: u32,
        by_class: &FxHashMap<u32, Vec<FuncId>>,
    ) -> Vec<FuncId> {
        by_class
            .get(&c)
            .into_iter()
            .flatten()
            .copied()
            .filter(|g| self.cast_to_data.get(g.index()).copied().unwrap_or(true))
            .collect()
    }

    /// The functions stored in the members of `record`, of the records nested in it by value,
    /// and of the records its members point to (see the module comment).
    pub(super) fn member_functions(
        &mut self,
        record: RecordId,
        by_class: &FxHashMap<u32, Vec<FuncId>>,
    ) -> Vec<FuncId> {
        let typed = self.typed_reach();
        let mut out = Vec::new();
        let mut seen = vec![record];
        let mut stack = vec![record];
        while let Some(r) = stack.pop() {
            let fields: Vec<(Name, TypeId)> = self
                .program
                .types
                .record(r)
                .fields
                .iter()
                .map(|fd| (fd.name, fd.ty))
                .collect();
            for (name, ty) in fields {
                let node = self.p.field_nodes.get(&(r, name)).copied();
                let next = match self.member_kind(ty) {
                    Member::Nothing => None,
                    Member::Function => {
                        out.extend(node.map_or_else(Vec::new, |n| self.pointed_to(n, by_class)));
                        None
                    }
                    Member::Record(inner) => Some(inner),
                    // Calling back through a `void *` member would need a cast to a
                    // function type the member does not declare: not followed.
                    Member::Untyped => None,
                };
                // Without types (insensitive mode), only records nested by value are walked,
                // and every member's pointees are collected.
                let next = if typed {
                    next
                } else {
                    if let Some(n) = node {
                        out.extend(self.pointed_to(n, by_class));
                    }
                    self.program.types.as_record(ty)
                };
                if let Some(inner) = next {
                    if !seen.contains(&inner) && seen.len() < MAX_RECORDS {
                        seen.push(inner);
                        stack.push(inner);
                    }
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The functions in the class node `n` points to.
    fn pointed_to(&self, n: u32, by_class: &FxHashMap<u32, Vec<FuncId>>) -> Vec<FuncId> {
        let c = self.p.uf.find_const(n);
        match self.p.pts[c as usize] {
            super::NONE => Vec::new(),
            t => by_class
                .get(&self.p.uf.find_const(t))
                .cloned()
                .unwrap_or_default(),
        }
    }

    /// What a member of type `ty` may lead to.
    fn member_kind(&self, ty: TypeId) -> Member {
        let types = &self.program.types;
        let mut t = ty;
        // Arrays hold their elements.
        while let TypeKind::Array { elem, .. } = types.kind(t) {
            t = *elem;
        }
        if let Some(r) = types.as_record(t) {
            return Member::Record(r);
        }
        let Some(mut p) = types.pointee(t) else {
            return Member::Nothing;
        };
        while let TypeKind::Array { elem, .. } = types.kind(p) {
            p = *elem;
        }
        match types.kind(p) {
            TypeKind::Function { .. } => Member::Function,
            TypeKind::Record(r) => Member::Record(*r),
            _ if types.is_arithmetic(p) => Member::Nothing,
            _ => Member::Untyped,
        }
    }
}
