//! Indirect calls filtered by signature, the first layer of multi-layer type analysis (MLTA, Lu &
//! Hu, CCS 2019): a call through a pointer whose type takes a `struct a *` does not reach a
//! function whose parameter in that position is a `struct b *`.
//!
//! Steensgaard merges every function stored in one `void *` slot: the kernel's tracepoints keep
//! all probes in `tracepoint_func.func` and call them through
//! `((void (*)(void *, struct xdp_mem_allocator *, ...))it_func)(...)`, so without this filter
//! every `__traceiter_*` function of one arity calls every probe of that arity (and each other):
//! recursive SCCs of dozens of iterators over hundreds of probes.
//!
//! Parameters are compared by [`Param`] class: two pointers to records must name the same record
//! (by tag: the linker may keep two definitions of one tag); `void *` matches `void *` and
//! other pointers (`char *`, function pointers, pointers to pointers), which match each other,
//! but not a pointer to a record; integers match integers of their size (an enum any integer),
//! floating types floating types; a pointer does not match an integer. Results are compared the
//! same way, `void` matching only `void` (C11 6.7.6.3p15 requires compatible return types; the
//! kernel's CFI hashes them). Aggregates by value, vectors and unprototyped types match
//! anything. A function whose address is cast to a function-pointer type of another shape
//! (`(void (*)(void *))kfree`) is also a target of calls through that shape: the program calls
//! it through that type.
//!
//! `void *` and `struct a *` are not compatible types (C11 6.7.6.3p15, 6.7.6.1p2), and a call
//! through a pointer to a function type incompatible with the function's is undefined (C11
//! 6.5.2.2p9, 6.3.2.3p8; the kernel's CFI traps on it). With [`SignatureFilter::Loose`]
//! (`--loose-signatures`) a `void *` parameter matches a pointer to a record too, for code
//! that stores `(void *)f` and calls it through a `void *`-taking type, results are not
//! compared and integers of any size match. What is left unsound,
//! as in MLTA: a pointer cast from one function type to another after it left the function's
//! name (`(T)p`).

use crate::ir::types::{RecordId, TypeKind, TypeTable};
use crate::ir::{BinOp, Expr, FuncId, Host, Lval, Name, Offset, TypeId, VarRef};
use crate::link::Program;
use rustc_hash::FxHashMap;

/// A record, by tag.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Tag {
    Named(Name),
    Anonymous(RecordId),
}

impl Tag {
    /// The tag of record `r` (the record itself when it has none).
    pub fn of(types: &TypeTable, r: RecordId) -> Tag {
        match types.record(r).tag {
            Some(name) => Tag::Named(name),
            None => Tag::Anonymous(r),
        }
    }
}

/// What a parameter's type says about the arguments it takes.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Param {
    /// A pointer to a record.
    Record(Tag),
    /// `void *`.
    VoidPointer,
    /// Any other pointer.
    Pointer,
    /// Integers and `_Bool`, by size in bytes: integers of two sizes are never compatible. An
    /// enum (`0`: its size is the implementation's choice) matches every integer.
    Integer(u8),
    Floating,
    /// A `void` result.
    Void,
    /// Anything else (aggregates by value, vectors, unknown types): matches every class.
    Other,
}

/// The result, then the parameters, of a function type.
pub type Shape = Box<[Param]>;

/// The number of parameters of a shape (its first position is the result).
pub fn arity(shape: &[Param]) -> usize {
    shape.len().saturating_sub(1)
}

/// The shape of a function type or of a pointer to one; `None` if `ty` is neither, or is not
/// prototyped.
pub fn shape_of(types: &TypeTable, ty: TypeId) -> Option<Shape> {
    let fty = match types.kind(ty) {
        TypeKind::Pointer(p) => *p,
        _ => ty,
    };
    match types.kind(fty) {
        TypeKind::Function {
            ret,
            params,
            prototyped: true,
            ..
        } => Some(
            std::iter::once(*ret)
                .chain(params.iter().copied())
                .map(|t| param(types, t))
                .collect(),
        ),
        _ => None,
    }
}

fn param(types: &TypeTable, ty: TypeId) -> Param {
    use crate::ir::types::IntKind;
    match types.kind(ty) {
        TypeKind::Pointer(p) => match (types.kind(*p), types.as_record(*p)) {
            (_, Some(r)) => Param::Record(Tag::of(types, r)),
            (TypeKind::Void, _) => Param::VoidPointer,
            _ => Param::Pointer,
        },
        TypeKind::Bool => Param::Integer(1),
        TypeKind::Int { kind, .. } => Param::Integer(match kind {
            IntKind::Char => 1,
            IntKind::Short => 2,
            IntKind::Int => 4,
            IntKind::Long | IntKind::LongLong => 8,
            IntKind::Int128 => 16,
        }),
        TypeKind::Enum { .. } => Param::Integer(0),
        TypeKind::Float(_) => Param::Floating,
        TypeKind::Void => Param::Void,
        _ => Param::Other,
    }
}

/// How indirect calls are matched against their targets' parameter types.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum SignatureFilter {
    /// Not at all: by points-to class and arity only (`--no-signature-filter`).
    Off,
    /// A `void *` parameter matches a pointer to a record too (`--loose-signatures`).
    Loose,
    /// By C's compatibility of parameter types ([`Param`]).
    #[default]
    Strict,
}

/// Whether two shapes can describe the same call: the results and every parameter agree (see
/// [`Param`]). Loosely, results are not compared, nor integers' sizes.
pub fn compatible(a: &[Param], b: &[Param], filter: SignatureFilter) -> bool {
    let loose = filter == SignatureFilter::Loose;
    let skip = loose as usize;
    a.iter().zip(b).skip(skip).all(|(x, y)| match (x, y) {
        (Param::Record(x), Param::Record(y)) => x == y,
        (Param::VoidPointer, Param::Record(_)) | (Param::Record(_), Param::VoidPointer) => loose,
        (Param::VoidPointer | Param::Pointer, Param::Pointer | Param::VoidPointer) => true,
        (Param::Integer(x), Param::Integer(y)) => loose || x == y || *x == 0 || *y == 0,
        (Param::Other, _) | (_, Param::Other) => true,
        (x, y) => x == y,
    })
}

/// The shape of the pointer a call goes through (`callee` in function `caller`), when its static
/// type is known: a cast, or a load from a variable or member of function-pointer type.
pub fn call_shape(program: &Program, caller: FuncId, callee: &Expr) -> Option<Shape> {
    shape_of(&program.types, expr_type(program, caller, callee)?)
}

/// The record a pointer expression points to, by its static type (`&act` is a
/// `struct sigaction *`; a cast to `void *` hides it).
pub(crate) fn pointee_record(program: &Program, caller: FuncId, e: &Expr) -> Option<RecordId> {
    let types = &program.types;
    let t = match e {
        Expr::AddrOf(lv) => lval_type(program, caller, lv)?,
        Expr::Cast(_, inner) if matches!(**inner, Expr::AddrOf(_)) => {
            return pointee_record(program, caller, inner)
        }
        _ => types.pointee(expr_type(program, caller, e)?)?,
    };
    types.as_record(t)
}

/// The static type of a cast or a load, when the IR makes it evident (other expressions: `None`).
pub(crate) fn expr_type(program: &Program, caller: FuncId, e: &Expr) -> Option<TypeId> {
    match e {
        Expr::Cast(t, _) => Some(*t),
        Expr::Load(lv) => lval_type(program, caller, lv),
        _ => None,
    }
}

pub(crate) fn lval_type(program: &Program, caller: FuncId, lv: &Lval) -> Option<TypeId> {
    lval_type_by(program, caller, lv, expr_type)
}

/// The static type of a pointer-valued expression, following pointer arithmetic too
/// (`p + i` has `p`'s type).
pub(crate) fn pointer_type(program: &Program, caller: FuncId, e: &Expr) -> Option<TypeId> {
    match e {
        Expr::Binary(BinOp::PtrAdd, p, _) => pointer_type(program, caller, p),
        Expr::Load(lv) => lval_type_by(program, caller, lv, pointer_type),
        _ => expr_type(program, caller, e),
    }
}

fn lval_type_by(
    program: &Program,
    caller: FuncId,
    lv: &Lval,
    address_type: fn(&Program, FuncId, &Expr) -> Option<TypeId>,
) -> Option<TypeId> {
    let types = &program.types;
    let mut ty = match &lv.host {
        Host::Var(VarRef::Local(l)) => {
            let body = program.functions.get(caller.index())?.body.as_ref()?;
            body.locals.get(l.index())?.ty
        }
        Host::Var(VarRef::Global(g)) => program.globals.get(g.index())?.global.ty,
        Host::Mem(e) => types.pointee(address_type(program, caller, e)?)?,
    };
    for off in &lv.offsets {
        ty = match off {
            // The lowering names every member on the way, anonymous ones (`t->callback` in
            // an anonymous union of `struct tasklet_struct`) included: look the name up in the
            // record itself first.
            Offset::Field { record, name } => match (record.0 as usize)
                .lt(&types.record_count())
                .then(|| types.record(*record))
                .and_then(|r| r.fields.iter().find(|f| f.name == *name))
            {
                Some(f) => f.ty,
                None => {
                    let (r, i) = *types.find_field(*record, *name)?.last()?;
                    types.record(r).fields.get(i)?.ty
                }
            },
            Offset::Index(_) => match types.kind(ty) {
                TypeKind::Array { elem, .. } => *elem,
                _ => types.pointee(ty)?,
            },
        };
    }
    Some(ty)
}

/// The shapes each defined function may be called through: its own, and those its address is
/// cast to.
#[derive(Default)]
pub struct Signatures {
    params: Vec<Option<Shape>>,
    cast: FxHashMap<FuncId, Vec<Shape>>,
    filter: SignatureFilter,
}

impl Signatures {
    /// `cast[f]`: the function-pointer shapes, other than its own, that `f`'s address is cast to.
    pub fn new(program: &Program, cast: FxHashMap<FuncId, Vec<Shape>>) -> Signatures {
        let params = program
            .functions
            .iter()
            .map(|f| f.body.as_ref().and_then(|_| shape_of(&program.types, f.ty)))
            .collect();
        Signatures {
            params,
            cast,
            filter: SignatureFilter::Strict,
        }
    }

    /// The same shapes, matched under `filter` (`Off` is handled by the caller: no shapes).
    pub fn with_filter(self, filter: SignatureFilter) -> Signatures {
        Signatures { filter, ..self }
    }

    /// Whether `f` may be the target of a call through a pointer of shape `call`.
    pub fn accepts(&self, f: FuncId, call: Option<&[Param]>) -> bool {
        match (self.params.get(f.index()).and_then(Option::as_deref), call) {
            (Some(own), Some(call)) => {
                let filter = self.filter;
                compatible(own, call, filter)
                    || self
                        .cast
                        .get(&f)
                        .is_some_and(|shapes| shapes.iter().any(|s| compatible(s, call, filter)))
            }
            _ => true,
        }
    }
}
