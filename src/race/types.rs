//! Type-aware aliasing (C11 6.5p7, effective types): two accesses that C's aliasing rules keep
//! apart do not access the same memory, even when Steensgaard put their objects and members in
//! one points-to class. Two rules, one switch (`--no-type-alias` turns both off):
//!
//! - **Scalar types.** Lvalue types of different alias classes
//!   ([`crate::ir::types::TypeTable::alias_class`]) — an `int` and a pointer, a `double` and a
//!   `long` — are different memory. The class is the declared type of the member the path
//!   names (then the element and pointee types of the steps after it), else the lvalue's type
//!   at the access sites, which the summaries record with each access (sites of several classes
//!   merged into one access have none). A record or array accessed whole is made of its
//!   members' scalars; character types, enums, records holding them and unknown types may
//!   alias anything.
//! - **Members of unrelated records.** `p->f` accesses member `f` of an object of `p`'s record
//!   type `A`, `q->g` member `g` of a `B`. With `A` ≠ `B` they are one piece of memory only if one
//!   object lies inside the other's member (`f` is or holds a `B`), or a union holds both (its
//!   arms overlap). Any other overlap reads an object through an lvalue of an unrelated struct
//!   type, which the effective-type rules leave undefined (GCC's `-fstrict-aliasing` assumes it
//!   away the same way: the base types' alias sets do not conflict). Records are told apart by
//!   tag (two definitions of one tag are one record here), anonymous ones by their members'
//!   names. A character member (`char buf[]`, which may be read as any object's bytes), or a
//!   path that follows a pointer after its last member, says nothing about the object.
//!   Likewise a global variable's object (a path from the global that follows no pointer)
//!   holds only the records its declared type holds: `wfile_pos` (a `loff_t`) is not where
//!   any `iocb->ki_pos` lies. A global of character type, or of no known scalar type, may
//!   hold anything.

use std::hash::{Hash, Hasher};

use rustc_hash::FxHashMap;

use crate::ir::types::{AliasClass, IntKind, RecordId, RecordKind, TypeId, TypeKind, TypeTable};
use crate::ir::Name;
use crate::link::Program;
use crate::summary::{Path, Root, Step};

/// What C's aliasing rules know of one access: the scalar types of the memory it touches and
/// the member it lies in.
#[derive(Copy, Clone, Default, PartialEq, Eq, Hash, Debug)]
pub(super) struct AccessType {
    scalar: Option<Scalars>,
    member: Option<MemberPlace>,
    /// The global variable whose object the access lies in (no pointer followed).
    global: Option<GlobalObject>,
}

/// A global variable's object: what its declared type holds.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
struct GlobalObject {
    /// The record key of its type (or of its arrays' elements), when it is a record.
    record: Option<u32>,
    /// The scalars it is made of: none but characters for a character array the program
    /// defines. `None`: unknown.
    scalars: Option<Scalars>,
    /// Storage of no known type, or declared by the program but defined elsewhere (a linker
    /// symbol such as `_stext`): may hold any object.
    raw: bool,
}

/// A set of alias classes, one bit each: the scalar objects an access may touch (a whole
/// record's are its members'). `None` where they are unknown: any memory.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
struct Scalars(u16);

impl Scalars {
    fn of(c: AliasClass) -> Scalars {
        Scalars(match c {
            AliasClass::Int(1) => 1,
            AliasClass::Int(2) => 1 << 1,
            AliasClass::Int(4) => 1 << 2,
            AliasClass::Int(8) => 1 << 3,
            AliasClass::Int(_) => 1 << 4,
            AliasClass::Float(k) => 1 << (5 + k as u16),
            AliasClass::Pointer => 1 << 15,
        })
    }

    fn meets(self, o: Scalars) -> bool {
        self.0 & o.0 != 0
    }
}

/// The member of a record an access lies in, by record keys ([`RecordKeys`]).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
struct MemberPlace {
    /// The record of the last member on the path.
    record: u32,
    /// The record the member is (or is an array of), when it is one.
    holds: Option<u32>,
}

/// The program's records as the member rule reads them: one key per tag (or anonymous
/// members' names), what each key's objects may hold, and the unions each may lie in.
pub(super) struct TypeAlias {
    key: Vec<u32>,
    /// Per key: the keys of every record its objects hold (transitively, itself included), sorted.
    holds: Vec<Box<[u32]>>,
    /// Per key: the unions whose objects may hold it (a union itself included), sorted.
    in_unions: Vec<Box<[u32]>>,
    /// Per key: the scalars its objects are made of (`None`: a character, enum or other
    /// member of no known class, in it or a record it holds).
    scalars: Vec<Option<Scalars>>,
}

impl TypeAlias {
    pub fn new(types: &TypeTable) -> TypeAlias {
        let records = types.records();
        let key = record_keys(records);
        let keys = key.iter().map(|&k| k as usize + 1).max().unwrap_or(0);
        // Direct containment between keys: a member of record type, or an array of one.
        let mut direct: Vec<Vec<u32>> = vec![Vec::new(); keys];
        let mut is_union = vec![false; keys];
        // The scalar members' classes, per key (not those of the records it holds).
        let mut own: Vec<Option<Scalars>> = vec![Some(Scalars(0)); keys];
        for (r, def) in records.iter().enumerate() {
            let k = key[r] as usize;
            is_union[k] |= def.kind == RecordKind::Union;
            for f in &def.fields {
                if let Some(inner) = record_of(types, f.ty) {
                    direct[k].push(key[inner.0 as usize]);
                    continue;
                }
                let class = types.alias_class(element(types, f.ty)).map(Scalars::of);
                own[k] = own[k].zip(class).map(|(x, y)| Scalars(x.0 | y.0));
            }
        }
        let holds = closures(&direct);
        let scalars = holds
            .iter()
            .map(|inner| {
                inner.iter().try_fold(Scalars(0), |acc, &r| {
                    own[r as usize].map(|x| Scalars(acc.0 | x.0))
                })
            })
            .collect();
        let mut in_unions: Vec<Vec<u32>> = vec![Vec::new(); keys];
        for u in (0..keys).filter(|&u| is_union[u]) {
            for &inner in holds[u].iter() {
                in_unions[inner as usize].push(u as u32);
            }
        }
        TypeAlias {
            key,
            holds,
            scalars,
            in_unions: in_unions
                .into_iter()
                .map(|mut v| {
                    v.sort_unstable();
                    v.into_boxed_slice()
                })
                .collect(),
        }
    }

    /// What the aliasing rules know of an access to the lvalue `path` denotes, `value` being the
    /// alias class of its type at every site ([`crate::summary::GuardedAccess::value`]).
    pub fn of(&self, program: &Program, path: &Path, value: Option<AliasClass>) -> AccessType {
        let types = &program.types;
        let site = value.map(Scalars::of);
        let global = self.global_object(program, path);
        let Some((k, record, name)) = last_member(path) else {
            return AccessType {
                scalar: site,
                member: None,
                global,
            };
        };
        let Some(field) = types.record(record).fields.iter().find(|f| f.name == name) else {
            return AccessType {
                global,
                ..AccessType::default()
            };
        };
        let rest = &path.steps[k + 1..];
        // The memory's declared type, by the path (a record's: its members'); a site's type
        // says the same, or one member of it, or is a byte (character) access of it. A type
        // the declared one does not hold: type punning, either.
        let declared = lvalue_type(types, field.ty, rest).and_then(|t| self.scalars_of(types, t));
        let scalar = match (declared, site) {
            (Some(d), Some(v)) => d.meets(v).then_some(v),
            (d, v) => d.or(v),
        };
        let member =
            (!rest.contains(&Step::Deref) && !is_character(types, field.ty)).then(|| MemberPlace {
                record: self.key[record.0 as usize],
                holds: record_of(types, field.ty).map(|r| self.key[r.0 as usize]),
            });
        AccessType {
            scalar,
            member,
            global,
        }
    }

    /// The global variable `path` stays inside, if it follows no pointer.
    fn global_object(&self, program: &Program, path: &Path) -> Option<GlobalObject> {
        let Root::Global(g) = path.root else {
            return None;
        };
        if path.steps.contains(&Step::Deref) {
            return None;
        }
        let types = &program.types;
        let global = &program.globals.get(g.index())?.global;
        let ty = global.ty;
        let record = record_of(types, ty);
        // A variable the program defines has its declared type as its effective type (C11
        // 6.5p6), characters included: its bytes may be read as characters, but no other
        // object lies in it. One only declared here is memory defined elsewhere.
        let character = is_character(types, ty);
        let scalars = match character {
            true => Some(Scalars(0)),
            false => self.scalars_of(types, ty),
        };
        let unknown =
            !character && record.is_none() && types.alias_class(element(types, ty)).is_none();
        Some(GlobalObject {
            record: record.map(|r| self.key[r.0 as usize]),
            scalars: scalars.filter(|_| global.defined),
            raw: unknown || (character && !global.defined),
        })
    }

    /// Whether the two accesses are different memory by C's aliasing rules.
    pub fn incompatible(&self, a: &AccessType, b: &AccessType) -> bool {
        if matches!((a.scalar, b.scalar), (Some(x), Some(y)) if !x.meets(y)) {
            return true;
        }
        // A global variable's object holds a record only if its declared type does.
        let outside = |g: Option<GlobalObject>, m: Option<MemberPlace>| match (g, m) {
            (Some(g), Some(m)) => !g.raw && !g.record.is_some_and(|k| self.holds_key(k, m.record)),
            _ => false,
        };
        if outside(a.global, b.member) || outside(b.global, a.member) {
            return true;
        }
        // … and only the scalars its declared type is made of (a character array: none).
        let foreign = |g: Option<GlobalObject>, s: Option<Scalars>| {
            let held = g.and_then(|g| g.scalars);
            matches!((held, s), (Some(held), Some(s)) if !held.meets(s))
        };
        if foreign(a.global, b.scalar) || foreign(b.global, a.scalar) {
            return true;
        }
        let (Some(x), Some(y)) = (a.member, b.member) else {
            return false;
        };
        let holds = |m: MemberPlace, r: u32| m.holds.is_some_and(|h| self.holds_key(h, r));
        x.record != y.record
            && !holds(x, y.record)
            && !holds(y, x.record)
            && !sorted_meet(
                &self.in_unions[x.record as usize],
                &self.in_unions[y.record as usize],
            )
    }

    /// The scalars an object of type `t` is made of (an array's: its elements').
    fn scalars_of(&self, types: &TypeTable, t: TypeId) -> Option<Scalars> {
        let t = element(types, t);
        match types.kind(t) {
            TypeKind::Record(r) => self.scalars[self.key[r.0 as usize] as usize],
            _ => types.alias_class(t).map(Scalars::of),
        }
    }

    /// Hashes the rows of the tables [`TypeAlias::incompatible`] reads for an access of type
    /// `ty` (its keys are in `ty`): the pair memo's digests hold them instead of the tables.
    pub fn hash_rows(&self, ty: &AccessType, h: &mut impl Hasher) {
        let holds = |k: Option<u32>| k.and_then(|k| self.holds.get(k as usize));
        holds(ty.global.and_then(|g| g.record)).hash(h);
        holds(ty.member.and_then(|m| m.holds)).hash(h);
        (ty.member)
            .and_then(|m| self.in_unions.get(m.record as usize))
            .hash(h);
    }

    fn holds_key(&self, outer: u32, inner: u32) -> bool {
        self.holds[outer as usize].binary_search(&inner).is_ok()
    }
}

/// One key per record tag; anonymous records by kind and member names.
fn record_keys(records: &[crate::ir::types::RecordDef]) -> Vec<u32> {
    let mut tags: FxHashMap<Name, u32> = FxHashMap::default();
    let mut shapes: FxHashMap<(bool, Vec<Name>), u32> = FxHashMap::default();
    let mut next = 0u32;
    let mut fresh = || {
        next += 1;
        next - 1
    };
    records
        .iter()
        .map(|def| match def.tag {
            Some(tag) => *tags.entry(tag).or_insert_with(&mut fresh),
            None => {
                let names = def.fields.iter().map(|f| f.name).collect();
                let shape = (def.kind == RecordKind::Union, names);
                *shapes.entry(shape).or_insert_with(&mut fresh)
            }
        })
        .collect()
}

/// Per key, every key reachable from it in `direct`, itself included, sorted (iterative:
/// nesting depth is input-dependent).
fn closures(direct: &[Vec<u32>]) -> Vec<Box<[u32]>> {
    let mut mark = vec![u32::MAX; direct.len()];
    let mut stack = Vec::new();
    (0..direct.len() as u32)
        .map(|k| {
            let mut seen = vec![k];
            mark[k as usize] = k;
            stack.push(k);
            while let Some(x) = stack.pop() {
                for &y in &direct[x as usize] {
                    if mark[y as usize] != k {
                        mark[y as usize] = k;
                        seen.push(y);
                        stack.push(y);
                    }
                }
            }
            seen.sort_unstable();
            seen.into_boxed_slice()
        })
        .collect()
}

fn sorted_meet(x: &[u32], y: &[u32]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < x.len() && j < y.len() {
        match x[i].cmp(&y[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}

/// The last member step of a path: its index, record and name (a known record only).
fn last_member(path: &Path) -> Option<(usize, RecordId, Name)> {
    let k = path
        .steps
        .iter()
        .rposition(|s| matches!(s, Step::Field(..)))?;
    match path.steps[k] {
        Step::Field(record, name) if record.0 != u32::MAX => Some((k, record, name)),
        _ => None,
    }
}

/// The type of the lvalue a member of type `t` followed by the steps `rest` denotes.
fn lvalue_type(types: &TypeTable, mut t: TypeId, rest: &[Step]) -> Option<TypeId> {
    for step in rest {
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

/// The array element type under any number of array levels.
fn element(types: &TypeTable, mut t: TypeId) -> TypeId {
    while let TypeKind::Array { elem, .. } = types.kind(t) {
        t = *elem;
    }
    t
}

/// The record a member of type `t` is, or is an array of.
fn record_of(types: &TypeTable, t: TypeId) -> Option<RecordId> {
    match types.kind(element(types, t)) {
        TypeKind::Record(r) => Some(*r),
        _ => None,
    }
}

/// A character type or an array of one: its bytes may be any object's.
fn is_character(types: &TypeTable, t: TypeId) -> bool {
    matches!(
        types.kind(element(types, t)),
        TypeKind::Int {
            kind: IntKind::Char,
            ..
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const DECLS: &str = "
        struct b { int g; long h; };
        struct a { int f; struct b b; struct b arr[2]; };
        struct c { int x; };
        struct d { int y; };
        union u { struct c c; struct d d; };
        struct e { int e; char buf[8]; int *p; };
        struct w { union u u; int z; };
        struct o { struct { int anon; }; int after; };
        struct ge_holder { long n; struct e e; };
        struct a ga; struct ge_holder ge; struct w gw; struct o go; union u gu;
        long gl; char gbuf[16]; extern char gext[];";

    fn program() -> Program {
        let names = crate::ir::names::Names::new();
        let out = crate::frontend::lower::lower_unit("t.c".to_string(), DECLS, &names);
        let mut linker = crate::link::Linker::new(std::sync::Arc::new(names));
        linker.add(0, out.unit);
        linker.finish()
    }

    /// `(*formal).tag.member` with further steps.
    fn member(p: &Program, tag: &str, name: &str, rest: &[Step]) -> Path {
        let records = p.types.records();
        let r = records
            .iter()
            .position(|d| d.tag.is_some_and(|t| p.names.get(t) == tag))
            .or_else(|| {
                let anon = p.names.intern(name);
                records
                    .iter()
                    .position(|d| d.tag.is_none() && d.fields.iter().any(|f| f.name == anon))
            })
            .expect("record");
        let step = Step::Field(RecordId(r as u32), p.names.intern(name));
        let mut steps = vec![Step::Deref, step];
        steps.extend_from_slice(rest);
        Path::new(Root::Formal(0)).extended(&steps)
    }

    fn apart(p: &Program, x: &Path, y: &Path) -> bool {
        typed_apart(p, (x, None), (y, None))
    }

    fn typed_apart(
        p: &Program,
        (x, vx): (&Path, Option<AliasClass>),
        (y, vy): (&Path, Option<AliasClass>),
    ) -> bool {
        let t = TypeAlias::new(&p.types);
        let (tx, ty) = (t.of(p, x, vx), t.of(p, y, vy));
        assert_eq!(t.incompatible(&tx, &ty), t.incompatible(&ty, &tx));
        t.incompatible(&tx, &ty)
    }

    #[test]
    fn scalar_types_of_different_classes_are_apart() {
        let p = program();
        let (int, long, ptr) = (
            Some(AliasClass::Int(4)),
            Some(AliasClass::Int(8)),
            Some(AliasClass::Pointer),
        );
        let (f, h) = (member(&p, "a", "f", &[]), member(&p, "b", "h", &[]));
        assert!(typed_apart(&p, (&f, int), (&h, long)), "int vs long");
        let pointee = member(&p, "e", "p", &[Step::Deref]);
        let x = member(&p, "c", "x", &[]);
        let slot = member(&p, "e", "p", &[]);
        assert!(
            typed_apart(&p, (&pointee, None), (&slot, ptr)),
            "*e.p is an int"
        );
        let anywhere = Path::new(Root::Formal(0)).with(Step::Deref);
        assert!(
            typed_apart(&p, (&anywhere, ptr), (&x, None)),
            "a pointer at its site"
        );
        assert!(
            !typed_apart(&p, (&pointee, int), (&x, int)),
            "both int, p's target anywhere"
        );
        assert!(
            !typed_apart(&p, (&anywhere, None), (&x, int)),
            "a char or unknown type"
        );
        assert!(
            apart(&p, &f, &h),
            "members' declared types, whatever the sites say"
        );
        assert!(
            !typed_apart(&p, (&pointee, long), (&anywhere, int)),
            "an int read as a long: either"
        );
    }

    #[test]
    fn a_whole_record_is_made_of_its_members_scalars() {
        let p = program();
        let (int, ptr) = (Some(AliasClass::Int(4)), Some(AliasClass::Pointer));
        let anywhere = Path::new(Root::Formal(0)).with(Step::Deref);
        let inner_b = member(&p, "a", "b", &[]);
        assert!(
            typed_apart(&p, (&inner_b, None), (&anywhere, ptr)),
            "a b holds no pointer"
        );
        assert!(
            !typed_apart(&p, (&inner_b, None), (&anywhere, int)),
            "b.g is an int"
        );
        let arr = member(&p, "a", "arr", &[]);
        assert!(
            typed_apart(&p, (&arr, None), (&anywhere, ptr)),
            "an array of them too"
        );
        let w = member(&p, "o", "after", &[]);
        assert!(
            !typed_apart(&p, (&w, None), (&anywhere, None)),
            "unknown: anything"
        );
        let with_chars = member(&p, "ge_holder", "e", &[]);
        let long = Some(AliasClass::Int(8));
        assert!(
            !typed_apart(&p, (&with_chars, None), (&anywhere, long)),
            "e has a char buf"
        );
    }

    #[test]
    fn members_of_unrelated_records_are_apart() {
        let p = program();
        let (f, x, y) = (
            member(&p, "a", "f", &[]),
            member(&p, "c", "x", &[]),
            member(&p, "e", "e", &[]),
        );
        assert!(apart(&p, &f, &x));
        assert!(apart(&p, &x, &y));
        assert!(!apart(&p, &f, &f));
    }

    #[test]
    fn a_member_holding_the_other_record_may_overlap_it() {
        let p = program();
        let g = member(&p, "b", "g", &[]);
        assert!(
            !apart(&p, &member(&p, "a", "b", &[]), &g),
            "a.b is a struct b"
        );
        assert!(
            !apart(&p, &member(&p, "a", "arr", &[Step::Index]), &g),
            "an array of them"
        );
        assert!(
            apart(&p, &member(&p, "a", "f", &[]), &g),
            "a.f is not where a's b lies"
        );
    }

    #[test]
    fn records_in_one_union_may_overlap() {
        let p = program();
        let (x, y) = (member(&p, "c", "x", &[]), member(&p, "d", "y", &[]));
        assert!(!apart(&p, &x, &y), "c and d are arms of union u");
        assert!(
            !apart(&p, &member(&p, "u", "c", &[]), &y),
            "the union's own member"
        );
        assert!(!apart(&p, &member(&p, "w", "u", &[]), &x), "w.u holds a c");
        assert!(apart(&p, &member(&p, "w", "z", &[]), &x));
    }

    #[test]
    fn characters_and_pointers_followed_say_nothing_of_the_record() {
        let p = program();
        let x = member(&p, "c", "x", &[]);
        assert!(!apart(&p, &member(&p, "e", "buf", &[Step::Index]), &x));
        assert!(!apart(&p, &member(&p, "e", "p", &[Step::Deref]), &x));
    }

    /// The whole object of global `name`.
    fn global(p: &Program, name: &str) -> Path {
        let g = p
            .globals
            .iter()
            .position(|g| p.names.get(g.global.name) == name)
            .expect("global");
        Path::new(Root::Global(crate::ir::GlobalId(g as u32)))
    }

    #[test]
    fn a_global_holds_only_the_records_of_its_type() {
        let p = program();
        let (x, g) = (member(&p, "c", "x", &[]), member(&p, "b", "g", &[]));
        assert!(apart(&p, &global(&p, "gl"), &x), "a long holds no c");
        assert!(apart(&p, &global(&p, "ga"), &x), "an a holds no c");
        assert!(!apart(&p, &global(&p, "ga"), &g), "an a holds b's");
        assert!(!apart(&p, &global(&p, "gu"), &x), "the union's arm");
        assert!(
            apart(&p, &global(&p, "gbuf"), &x),
            "a char array holds no c"
        );
        assert!(
            !apart(&p, &global(&p, "gext"), &x),
            "defined elsewhere: anything"
        );
        let deref = global(&p, "gl").with(Step::Deref);
        assert!(!apart(&p, &deref, &x), "through a pointer: anywhere");
    }

    #[test]
    fn a_defined_global_holds_only_the_scalars_of_its_type() {
        let p = program();
        let anywhere = Path::new(Root::Formal(0)).with(Step::Deref);
        let (int, long) = (Some(AliasClass::Int(4)), Some(AliasClass::Int(8)));
        let (gbuf, gl) = (global(&p, "gbuf"), global(&p, "gl"));
        assert!(
            typed_apart(&p, (&gbuf, None), (&anywhere, int)),
            "an int in chars"
        );
        assert!(
            !typed_apart(&p, (&gbuf, None), (&anywhere, None)),
            "bytes of anything"
        );
        assert!(
            typed_apart(&p, (&gl, None), (&anywhere, int)),
            "an int in a long"
        );
        assert!(!typed_apart(&p, (&gl, None), (&anywhere, long)));
        let gext = global(&p, "gext");
        assert!(
            !typed_apart(&p, (&gext, None), (&anywhere, int)),
            "defined elsewhere"
        );
    }

    #[test]
    fn anonymous_records_are_known_by_their_members() {
        let p = program();
        let anon = member(&p, "", "anon", &[]);
        assert!(
            apart(&p, &member(&p, "o", "after", &[]), &anon),
            "o holds it elsewhere"
        );
        assert!(apart(&p, &anon, &member(&p, "c", "x", &[])));
        assert!(!apart(&p, &anon, &anon));
    }
}
