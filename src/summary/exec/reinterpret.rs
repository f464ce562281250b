//! Pointer arithmetic and casts that move a pointer to another object than the one its path
//! names. A symbolic pointer is the path of what it points to (`&s.a` is `s·a`); that path
//! stays true for arithmetic inside an array (`p + i` on `a·[]`), but not for:
//!
//! - `&s.a + 1` or `(char *)&s.a + 4`: the pointer leaves the member for another member of
//!   the same object, so the path loses its trailing members (`s`, which overlaps them all);
//! - `container_of(p, T, m)` — `(T *)((char *)p - offsetof(T, m))`: byte arithmetic backwards
//!   reaches the object *around* the one the path names. When the path is a member of a
//!   global it is that global; otherwise the path says nothing about the result, which is
//!   then only known by its points-to class (the race stage does not separate such objects by
//!   class: see `race::pairs::object_class`);
//! - `(T *)&x.m` with `m` not a `T` (the first-member cast of C "inheritance"): the object is
//!   the one around `m`, so the members are dropped until one of type `T`.
//!
//! Without this a write through `container_of` would be the access `s·m·x`, which the race
//! stage proves different from `s·x` (two members of one struct): a race missed silently.

use super::{FnAnalysis, State};
use crate::ir::types::{IntKind, RecordId, TypeKind};
use crate::ir::*;
use crate::summary::path::{Path, Root, Step};
use crate::summary::value::SymVal;

impl FnAnalysis<'_> {
    /// The value of `a + k` for a pointer `a`.
    pub(super) fn eval_ptr_add(&self, st: &State, a: &Expr, k: &Expr) -> SymVal {
        let v = self.eval(st, a);
        if matches!(k, Expr::Const(Const::Int(0))) {
            return v;
        }
        let backwards = matches!(k, Expr::Const(Const::Int(i)) if *i < 0) && self.byte_pointer(a);
        let moved = |p: &Path| {
            if backwards {
                outermost_global(p)
            } else {
                Some(without_members(p.clone()))
            }
        };
        match v {
            SymVal::Init(_) if backwards => SymVal::Top,
            SymVal::Init(_) => v,
            SymVal::Must(p) => moved(&p).map_or(SymVal::Top, SymVal::Must),
            SymVal::May(ps) => ps
                .iter()
                .map(moved)
                .collect::<Option<Vec<_>>>()
                .map_or(SymVal::Top, SymVal::pointing_to),
            _ => SymVal::Top,
        }
    }

    /// The value of `(t)a`.
    pub(super) fn eval_cast(&self, st: &State, t: TypeId, a: &Expr) -> SymVal {
        let v = self.eval(st, a);
        let types = &self.ctx.program.types;
        let Some(r) = types.pointee(t).and_then(|p| types.as_record(p)) else {
            return v;
        };
        match v {
            SymVal::Must(p) => SymVal::Must(self.viewed_as(p, r)),
            SymVal::May(ps) => {
                SymVal::pointing_to(ps.into_iter().map(|p| self.viewed_as(p, r)).collect())
            }
            v => v,
        }
    }

    /// The path of the object of record `r` that the memory at `p` is viewed as: `p` itself,
    /// or the object around it when `p` is a member of another type.
    fn viewed_as(&self, mut p: Path, r: RecordId) -> Path {
        let types = &self.ctx.program.types;
        while let Some(Step::Field(owner, name)) = p.steps.last() {
            let member = types
                .record(*owner)
                .fields
                .iter()
                .find(|f| f.name == *name)
                .map(|f| f.ty);
            let of_r = member.is_some_and(|t| {
                types.as_record(t) == Some(r)
                    || types.pointee(t).and_then(|e| types.as_record(e)) == Some(r)
            });
            if of_r {
                break;
            }
            p.steps.pop();
        }
        p
    }

    /// Whether `e` is a `char *` or `void *` (arithmetic on it counts bytes).
    fn byte_pointer(&self, e: &Expr) -> bool {
        let program = self.ctx.program;
        let Some(t) = crate::pta::signature::expr_type(program, self.func, e) else {
            return false;
        };
        let types = &program.types;
        types.pointee(t).is_some_and(|p| {
            matches!(
                types.kind(p),
                TypeKind::Void
                    | TypeKind::Int {
                        kind: IntKind::Char,
                        ..
                    }
            )
        })
    }
}

/// The path without its trailing members (`s·a` → `s`; `a·[]` stays).
fn without_members(mut p: Path) -> Path {
    while matches!(p.steps.last(), Some(Step::Field(..))) {
        p.steps.pop();
    }
    p
}

/// The global a member path lies in (`s·n` → `s`), when no pointer is followed on the way.
fn outermost_global(p: &Path) -> Option<Path> {
    match p.root {
        Root::Global(_) if !p.steps.contains(&Step::Deref) => {
            let steps = p
                .steps
                .iter()
                .take_while(|s| s.is_element())
                .copied()
                .collect();
            Some(Path {
                root: p.root,
                steps,
            })
        }
        _ => None,
    }
}
