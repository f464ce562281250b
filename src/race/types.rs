//! Type-aware aliasing (C11 6.5p7, effective types): two accesses whose lvalue types belong to
//! different alias classes — an `int` and a pointer, a `double` and a `long` — do not access
//! the same memory, even when Steensgaard put their objects in one points-to class.
//!
//! Character types, records, unions, arrays and unknown types may alias anything (byte copies,
//! whole-object accesses, a member path the analysis could not type). Integers are classed by
//! size (signedness and `long` vs `long long` are not told apart), floating types by kind, all
//! object pointers together. The type of an access is known when its path names a member:
//! the member's declared type, then the element and pointee types of the steps after it.
//! `--no-type-alias` turns the check off.

use crate::ir::types::{FloatKind, IntKind, TypeId, TypeKind, TypeTable};
use crate::link::Program;
use crate::summary::{Path, Step};

/// The alias class of a scalar lvalue type; `None` may alias anything.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum AliasClass {
    Int(u8),
    Float(FloatKind),
    Pointer,
}

/// Whether two accesses' types prove they are different memory.
pub(super) fn incompatible(program: &Program, a: &Path, b: &Path) -> bool {
    let class = |p: &Path| access_type(program, p).and_then(|t| alias_class(&program.types, t));
    matches!((class(a), class(b)), (Some(x), Some(y)) if x != y)
}

/// The declared type of the lvalue a path denotes, when it names a member.
fn access_type(program: &Program, path: &Path) -> Option<TypeId> {
    let types = &program.types;
    let k = path
        .steps
        .iter()
        .rposition(|s| matches!(s, Step::Field(..)))?;
    let Step::Field(record, name) = path.steps[k] else {
        return None;
    };
    if record.0 == u32::MAX {
        return None;
    }
    let mut t = types
        .record(record)
        .fields
        .iter()
        .find(|f| f.name == name)?
        .ty;
    for step in &path.steps[k + 1..] {
        t = match step {
            Step::Deref => match types.kind(t) {
                TypeKind::Pointer(p) => *p,
                _ => return None,
            },
            Step::Index | Step::Elem(_) => match types.kind(t) {
                TypeKind::Array { elem, .. } => *elem,
                _ => return None,
            },
            Step::Field(..) => return None,
        };
    }
    Some(t)
}

fn alias_class(types: &TypeTable, t: TypeId) -> Option<AliasClass> {
    Some(match types.kind(t) {
        TypeKind::Int { kind, .. } => AliasClass::Int(match kind {
            IntKind::Char => return None,
            IntKind::Short => 2,
            IntKind::Int => 4,
            IntKind::Long | IntKind::LongLong => 8,
            IntKind::Int128 => 16,
        }),
        TypeKind::Bool => AliasClass::Int(1),
        TypeKind::Float(k) => AliasClass::Float(*k),
        TypeKind::Pointer(_) => AliasClass::Pointer,
        _ => return None,
    })
}
