//! C types, hash-consed in a [`TypeTable`]: one per translation unit while lowering, one for the
//! whole program after linking ([`crate::link::Program::types`]).
//!
//! A [`TypeId`] indexes the table; equal types get equal ids, so type equality is id equality.
//! Structs and unions are nominal: a [`RecordId`] names one definition, with its fields in order
//! (the linker merges the units' identical definitions). Typedefs are resolved away; enums are
//! integers that remember their tag.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;
use serde::{Deserialize, Serialize};

use super::Name;

#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub struct TypeId(pub u32);

#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub struct RecordId(pub u32);

/// Type qualifiers, as bit flags.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub struct Quals(pub u8);
impl Quals {
    pub const CONST: u8 = 1;
    pub const VOLATILE: u8 = 2;
    pub const RESTRICT: u8 = 4;
    pub const ATOMIC: u8 = 8;
    pub fn has(self, q: u8) -> bool {
        self.0 & q != 0
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum IntKind {
    Char,
    Short,
    Int,
    Long,
    LongLong,
    Int128,
}

/// The alias class of a scalar lvalue type ([`TypeTable::alias_class`]): two lvalues of
/// different classes do not access the same object under C's effective-type rules.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub enum AliasClass {
    Int(u8),
    Float(FloatKind),
    Pointer,
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub enum FloatKind {
    Half,
    BFloat16,
    Float,
    Double,
    LongDouble,
    Float128,
    Decimal,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum TypeKind {
    Void,
    Bool,
    Int {
        kind: IntKind,
        signed: bool,
    },
    Float(FloatKind),
    Complex(FloatKind),
    Pointer(TypeId),
    Array {
        elem: TypeId,
        len: Option<u64>,
    },
    Function {
        ret: TypeId,
        params: Vec<TypeId>,
        variadic: bool,
        prototyped: bool,
    },
    Record(RecordId),
    /// An enumeration: an `int` that remembers its tag.
    Enum {
        tag: Option<Name>,
    },
    /// GCC vector extension (`vector_size`).
    Vector {
        elem: TypeId,
        bytes: u64,
    },
    /// A type the front end could not resolve; a diagnostic was reported.
    Unknown,
}

/// Maps the type and record ids inside a type to another table (see [`TypeKind::map_ids`]).
pub trait IdMap {
    fn ty(&mut self, t: TypeId) -> TypeId;
    fn record(&mut self, r: RecordId) -> RecordId;
}

impl TypeKind {
    /// The same kind with every type and record id it contains mapped through `m`.
    pub fn map_ids(self, m: &mut impl IdMap) -> TypeKind {
        match self {
            TypeKind::Pointer(p) => TypeKind::Pointer(m.ty(p)),
            TypeKind::Array { elem, len } => TypeKind::Array {
                elem: m.ty(elem),
                len,
            },
            TypeKind::Function {
                ret,
                mut params,
                variadic,
                prototyped,
            } => {
                let ret = m.ty(ret);
                for p in &mut params {
                    *p = m.ty(*p);
                }
                TypeKind::Function {
                    ret,
                    params,
                    variadic,
                    prototyped,
                }
            }
            TypeKind::Record(r) => TypeKind::Record(m.record(r)),
            TypeKind::Vector { elem, bytes } => TypeKind::Vector {
                elem: m.ty(elem),
                bytes,
            },
            k @ (TypeKind::Void
            | TypeKind::Bool
            | TypeKind::Int { .. }
            | TypeKind::Float(_)
            | TypeKind::Complex(_)
            | TypeKind::Enum { .. }
            | TypeKind::Unknown) => k,
        }
    }
}

#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Type {
    pub kind: TypeKind,
    pub quals: Quals,
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum RecordKind {
    Struct,
    Union,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FieldDef {
    /// The member's name; anonymous struct/union members get a synthetic `<anon.N>` name.
    pub name: Name,
    /// True for an anonymous struct/union member, whose fields are reachable directly.
    pub anonymous: bool,
    pub ty: TypeId,
    pub bit_width: Option<u32>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RecordDef {
    pub kind: RecordKind,
    pub tag: Option<Name>,
    pub fields: Vec<FieldDef>,
    /// False while only declared (`struct s;`) or being defined.
    pub complete: bool,
    /// `__attribute__((packed))`: no padding between members.
    #[serde(default)]
    pub packed: bool,
}

#[derive(Default, Serialize, Deserialize)]
pub struct TypeTable {
    types: Vec<Type>,
    /// The interning index: the ids of `types`, hashed by content (the types are not duplicated).
    /// Either complete (one entry per type) or empty, after [`TypeTable::freeze`] or
    /// deserialisation; [`TypeTable::intern`] rebuilds it on demand.
    #[serde(skip)]
    ids: HashTable<u32>,
    records: Vec<RecordDef>,
}

fn type_hash(t: &Type) -> u64 {
    FxBuildHasher.hash_one(t)
}

impl TypeTable {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn intern(&mut self, kind: TypeKind, quals: Quals) -> TypeId {
        if self.ids.len() != self.types.len() {
            self.reindex();
        }
        let t = Type { kind, quals };
        let types = &self.types;
        let entry = self.ids.entry(
            type_hash(&t),
            |&i| types[i as usize] == t,
            |&i| type_hash(&types[i as usize]),
        );
        match entry {
            hashbrown::hash_table::Entry::Occupied(o) => TypeId(*o.get()),
            hashbrown::hash_table::Entry::Vacant(v) => {
                let id = self.types.len() as u32;
                v.insert(id);
                self.types.push(t);
                TypeId(id)
            }
        }
    }

    /// Drops the interning index and spare capacity: for a table that is only read from now on.
    /// [`TypeTable::intern`] still works (it rebuilds the index first).
    /// Renames every name the table holds (enum and record tags, member names) in place with
    /// `f`, a one-to-one renaming: no two types become equal. The interning index is rebuilt
    /// by the next [`TypeTable::intern`].
    pub fn rename_names(&mut self, mut f: impl FnMut(&mut Name)) {
        for t in &mut self.types {
            if let TypeKind::Enum { tag: Some(n) } = &mut t.kind {
                f(n);
            }
        }
        for r in &mut self.records {
            if let Some(n) = &mut r.tag {
                f(n);
            }
            for field in &mut r.fields {
                f(&mut field.name);
            }
        }
        self.ids = HashTable::new();
    }

    pub fn freeze(&mut self) {
        self.ids = HashTable::new();
        self.types.shrink_to_fit();
        self.records.shrink_to_fit();
    }

    pub fn get(&self, id: TypeId) -> &Type {
        &self.types[id.0 as usize]
    }

    pub fn kind(&self, id: TypeId) -> &TypeKind {
        &self.types[id.0 as usize].kind
    }

    pub fn quals(&self, id: TypeId) -> Quals {
        self.types[id.0 as usize].quals
    }

    /// The same type with extra qualifiers.
    pub fn qualified(&mut self, id: TypeId, quals: Quals) -> TypeId {
        if quals.0 == 0 {
            return id;
        }
        let t = self.get(id).clone();
        self.intern(t.kind, Quals(t.quals.0 | quals.0))
    }

    /// The same type without qualifiers.
    pub fn unqualified(&mut self, id: TypeId) -> TypeId {
        if self.quals(id).0 == 0 {
            return id;
        }
        let kind = self.kind(id).clone();
        self.intern(kind, Quals::default())
    }

    pub fn void(&mut self) -> TypeId {
        self.intern(TypeKind::Void, Quals::default())
    }
    pub fn int(&mut self) -> TypeId {
        self.intern(
            TypeKind::Int {
                kind: IntKind::Int,
                signed: true,
            },
            Quals::default(),
        )
    }
    pub fn unknown(&mut self) -> TypeId {
        self.intern(TypeKind::Unknown, Quals::default())
    }
    pub fn pointer_to(&mut self, t: TypeId) -> TypeId {
        self.intern(TypeKind::Pointer(t), Quals::default())
    }

    pub fn new_record(&mut self, kind: RecordKind, tag: Option<Name>) -> RecordId {
        self.records.push(RecordDef {
            kind,
            tag,
            fields: Vec::new(),
            complete: false,
            packed: false,
        });
        RecordId(self.records.len() as u32 - 1)
    }

    /// A record's definition (noted as read by a [`crate::reads::recording`] on the thread:
    /// the summaries cache checks what an analysis read of the records).
    pub fn record(&self, id: RecordId) -> &RecordDef {
        crate::reads::note_record(id.0);
        &self.records[id.0 as usize]
    }

    /// A record, for editing its definition (records are nominal: this does not affect interning).
    pub fn record_mut(&mut self, id: RecordId) -> &mut RecordDef {
        &mut self.records[id.0 as usize]
    }

    pub fn complete_record(&mut self, id: RecordId, fields: Vec<FieldDef>, packed: bool) {
        let r = &mut self.records[id.0 as usize];
        r.fields = fields;
        r.complete = true;
        r.packed = packed;
    }

    /// Every record's definition (noted as a read of all of them, as [`TypeTable::record`]
    /// notes one).
    pub fn records(&self) -> &[RecordDef] {
        crate::reads::note_all_records();
        &self.records
    }

    /// How many records there are (not a read of their definitions).
    pub fn record_count(&self) -> usize {
        self.records.len()
    }

    pub fn len(&self) -> usize {
        self.types.len()
    }

    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }

    /// The pointee of a pointer type (arrays decay), or `None`.
    pub fn pointee(&self, id: TypeId) -> Option<TypeId> {
        match self.kind(id) {
            TypeKind::Pointer(t) => Some(*t),
            TypeKind::Array { elem, .. } => Some(*elem),
            _ => None,
        }
    }

    /// The alias class of a scalar lvalue type (C11 6.5p7 as relay reads it: integers by size,
    /// signedness and `long` vs `long long` not told apart; floating types by kind; every object
    /// pointer together). `None` — may alias anything — for character types, records, unions,
    /// arrays and what is not a scalar.
    pub fn alias_class(&self, t: TypeId) -> Option<AliasClass> {
        Some(match self.kind(t) {
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

    /// The record of a struct/union type, or `None`.
    pub fn as_record(&self, id: TypeId) -> Option<RecordId> {
        match self.kind(id) {
            TypeKind::Record(r) => Some(*r),
            _ => None,
        }
    }

    /// The path of members that reaches `name` in record `rid`, looking through anonymous members:
    /// `[(record, member)]`, outermost first. `None` also for a record id outside the table
    /// (`RecordId(u32::MAX)`: a member of an object whose type the lowering did not know).
    pub fn find_field(&self, rid: RecordId, name: Name) -> Option<Vec<(RecordId, usize)>> {
        let rec = self.records.get(rid.0 as usize)?;
        crate::reads::note_record(rid.0);
        if let Some(i) = rec
            .fields
            .iter()
            .position(|f| !f.anonymous && f.name == name)
        {
            return Some(vec![(rid, i)]);
        }
        for (i, f) in rec.fields.iter().enumerate().filter(|(_, f)| f.anonymous) {
            if let Some(inner) = self.as_record(f.ty) {
                if let Some(mut path) = self.find_field(inner, name) {
                    path.insert(0, (rid, i));
                    return Some(path);
                }
            }
        }
        None
    }

    pub fn is_integer(&self, id: TypeId) -> bool {
        matches!(
            self.kind(id),
            TypeKind::Int { .. } | TypeKind::Bool | TypeKind::Enum { .. }
        )
    }

    pub fn is_arithmetic(&self, id: TypeId) -> bool {
        self.is_integer(id) || matches!(self.kind(id), TypeKind::Float(_) | TypeKind::Complex(_))
    }

    pub fn is_pointer_like(&self, id: TypeId) -> bool {
        matches!(
            self.kind(id),
            TypeKind::Pointer(_) | TypeKind::Array { .. } | TypeKind::Function { .. }
        )
    }

    /// Rebuilds the interning index (after deserialisation or [`TypeTable::freeze`]; `intern`
    /// does it on demand).
    pub fn reindex(&mut self) {
        let types = &self.types;
        let mut ids = HashTable::with_capacity(types.len());
        for (i, t) in types.iter().enumerate() {
            ids.insert_unique(type_hash(t), i as u32, |&j| type_hash(&types[j as usize]));
        }
        self.ids = ids;
    }
}
