//! Which functions a library can find behind a pointer to a record, by the record's types.
//!
//! A function handed to code relay cannot see is one it may call back. Behind an argument
//! `struct hdr_histogram *h`, that code reads `h`'s members by their declared types (C's
//! effective-type rules; the field-based mode trusts them too): it finds the functions stored
//! in function-pointer members, in records nested by value, and behind members that point to
//! records, recursively. A member that may hold any pointer (`void *`, a pointer to a pointer)
//! is not looked behind: calling through it needs a cast to a function type it does not
//! declare, and the code does not know the program's record types behind a `void *` (user
//! data handed back to the program's own callbacks). A `void *` argument may be a function
//! the program cast to data. Following every pointer through the classes instead made one
//! Steensgaard class reach almost every function: redis's 391 configuration and module
//! callbacks escaped through `getaddrinfo`, `hdr_close` and hiredis.

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
    /// Any pointer (`void *`, `T **`): not looked behind.
    Untyped,
}

/// Where the functions an argument of an unknown external may carry are looked for.
#[derive(Copy, Clone)]
pub(super) enum ArgReach {
    /// A pointer to a record (through any number of pointers): its members, by their types
    /// ([`Solver::member_functions`]); in the insensitive mode also every class behind it.
    Record(RecordId),
    /// A pointer to a data pointer (`void **`, `char **`): no function.
    DataPointer,
    /// A `void *`: the functions the program casts to data, in the class it points to.
    VoidPointer,
    /// Anything else (a function pointer, an expression of no known type): every function in
    /// the class it points to — and, in the insensitive mode, behind it.
    Any,
}

impl Solver<'_> {
    /// Whether callbacks are found through members by their types (the field-based mode,
    /// which has a node per member and trusts declared types already).
    pub(super) fn typed_reach(&self) -> bool {
        self.p.mode == super::super::FieldMode::FieldBased
    }

    /// How the functions behind an argument of an unknown external are found.
    pub(super) fn argument_reach(&self, f: FuncId, e: &Expr) -> ArgReach {
        if let Some(r) = self.argument_record(f, e) {
            return ArgReach::Record(r);
        }
        if !self.typed_reach() {
            return ArgReach::Any;
        }
        let types = &self.program.types;
        let Some(p) =
            crate::pta::signature::expr_type(self.program, f, e).and_then(|t| types.pointee(t))
        else {
            return ArgReach::Any;
        };
        if matches!(types.kind(p), TypeKind::Void) {
            return ArgReach::VoidPointer;
        }
        match types.pointee(p) {
            Some(q) if !matches!(types.kind(q), TypeKind::Function { .. }) => ArgReach::DataPointer,
            _ => ArgReach::Any,
        }
    }

    /// The record an argument leads to: its pointee's, and in the field-based mode through
    /// casts and any number of pointers (`(void *)c`, `struct h **` for an out-parameter).
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
            let fields = self.fields_of(r);
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
                    walk_into(&mut seen, &mut stack, inner);
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Unknown code handed a pointer to a `record` reaches the objects behind its members (by
    /// type: members of records nested in it and of the records its members point to): a
    /// pointer member may hold unknown memory, and what it holds is unknown memory's. In the
    /// field-based mode a member's node is shared by every object of its record.
    pub(super) fn members_to_world(&mut self, record: RecordId, world: u32) {
        if !self.typed_reach() {
            return;
        }
        let mut seen = vec![record];
        let mut stack = vec![record];
        while let Some(r) = stack.pop() {
            let fields = self.fields_of(r);
            for (name, ty) in fields {
                let kind = self.member_kind(ty);
                if !matches!(kind, Member::Nothing) || self.holds_pointer(ty) {
                    if let Some(&n) = self.p.field_nodes.get(&(r, name)) {
                        self.assign(n, world);
                    }
                }
                if let Member::Record(inner) = kind {
                    walk_into(&mut seen, &mut stack, inner);
                }
            }
        }
    }

    /// The members of record `r`: names and types.
    fn fields_of(&self, r: RecordId) -> Vec<(Name, TypeId)> {
        self.program
            .types
            .record(r)
            .fields
            .iter()
            .map(|fd| (fd.name, fd.ty))
            .collect()
    }

    /// A pointer member, or an array of them (to numbers too: `char *name`).
    fn holds_pointer(&self, ty: TypeId) -> bool {
        let types = &self.program.types;
        let mut t = ty;
        while let TypeKind::Array { elem, .. } = types.kind(t) {
            t = *elem;
        }
        types.pointee(t).is_some()
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

/// Queues record `inner` for a walk over records (each once, at most [`MAX_RECORDS`]).
fn walk_into(seen: &mut Vec<RecordId>, stack: &mut Vec<RecordId>, inner: RecordId) {
    if !seen.contains(&inner) && seen.len() < MAX_RECORDS {
        seen.push(inner);
        stack.push(inner);
    }
}
