//! Type linking: the units' type tables become one program table.
//!
//! Two steps, so that no unit table outlives its [`super::Linker::add`] and the result does not
//! depend on the order units are added:
//!
//! 1. **Staging** ([`Staging`], in `add`). The unit's records and the types its kept items use are
//!    imported into a linker-wide staging table ([`UnitTypes`]), and the items' ids are rewritten
//!    to staging ids; then the unit table is dropped. Non-record types are hash-consed
//!    structurally. Records are nominal and merged by key: a complete record by (kind, tag, field
//!    names and bit widths in order, number of fields, packed); an incomplete one (`struct s;`
//!    only) by (kind, tag). Every complete record of the unit is looked up (not only the used
//!    ones), and a staging record's fields come from the lowest (unit, record) that defines it, so
//!    the staging content is the same whatever the order (only its numbering is not).
//! 2. **Renumbering** ([`FinalTypes`], in `finish`). An incomplete tagged record is resolved to the
//!    complete record of the same kind and tag with the lowest defining (unit, record), if any.
//!    The program table is then built by importing, in program item order (globals, then
//!    functions; within an item in walk order), the types the items use; unused staging types and
//!    records are left behind. The program table is frozen (no interning index).
//!
//! `RecordId(u32::MAX)` (a `.field` of a record the lowering did not know) is kept as is.

use std::hash::{Hash, Hasher};

use hashbrown::HashTable;
use rustc_hash::{FxHashMap, FxHasher};

use crate::ir::types::{FieldDef, IdMap, RecordDef, RecordKind, Type, TypeKind, TypeTable};
use crate::ir::{Name, Quals, RecordId, TypeId};

use super::NONE;

/// The linker-wide staging table: see the module documentation.
#[derive(Default)]
pub(super) struct Staging {
    pub(super) table: TypeTable,
    /// Per staging record: the (unit, unit record) its fields come from; `(NONE, NONE)` for an
    /// incomplete record.
    provider: Vec<(u32, u32)>,
    /// Staging records by merge key.
    keys: HashTable<u32>,
}

/// The merge key of a record: complete records by their fields' names and widths, incomplete ones
/// by kind and tag only.
struct Key<'a> {
    kind: RecordKind,
    tag: Option<Name>,
    complete: bool,
    packed: bool,
    fields: &'a [FieldDef],
}

impl<'a> Key<'a> {
    fn of(r: &'a RecordDef) -> Self {
        Key {
            kind: r.kind,
            tag: r.tag,
            complete: r.complete,
            packed: r.complete && r.packed,
            fields: if r.complete { &r.fields } else { &[] },
        }
    }
    fn hash(&self) -> u64 {
        let mut h = FxHasher::default();
        self.kind.hash(&mut h);
        self.tag.hash(&mut h);
        self.complete.hash(&mut h);
        self.packed.hash(&mut h);
        self.fields.len().hash(&mut h);
        for f in self.fields {
            f.name.hash(&mut h);
            f.bit_width.hash(&mut h);
        }
        h.finish()
    }
    fn same(&self, other: &Key<'_>) -> bool {
        self.kind == other.kind
            && self.tag == other.tag
            && self.complete == other.complete
            && self.packed == other.packed
            && self.fields.len() == other.fields.len()
            && self
                .fields
                .iter()
                .zip(other.fields)
                .all(|(a, b)| a.name == b.name && a.bit_width == b.bit_width)
    }
}

/// The fields of `r` with placeholder types (filled in by [`UnitTypes::drain`]).
fn placeholder_fields(r: &RecordDef) -> Vec<FieldDef> {
    r.fields
        .iter()
        .map(|f| FieldDef {
            ty: TypeId(NONE),
            ..f.clone()
        })
        .collect()
}

/// Imports one unit's types into the staging table (memoised per unit id).
pub(super) struct UnitTypes<'a> {
    unit: u32,
    src: TypeTable,
    tmap: Vec<u32>,
    rmap: Vec<u32>,
    /// Staging records whose fields are to be imported from (unit record, staging record).
    pending: Vec<(u32, u32)>,
    st: &'a mut Staging,
}

impl<'a> UnitTypes<'a> {
    /// Takes the unit's table and looks up every complete record it defines (see the module
    /// documentation).
    pub(super) fn new(unit: u32, src: TypeTable, st: &'a mut Staging) -> Self {
        let mut ut = UnitTypes {
            unit,
            tmap: vec![NONE; src.len()],
            rmap: vec![NONE; src.records().len()],
            src,
            pending: Vec::new(),
            st,
        };
        for r in 0..ut.src.records().len() {
            if ut.src.records()[r].complete {
                ut.import_record(RecordId(r as u32));
            }
        }
        ut.drain();
        ut
    }

    /// The staging id of the unit's type `t`.
    pub(super) fn ty(&mut self, t: TypeId) -> TypeId {
        let s = self.import(t);
        self.drain();
        s
    }

    /// The staging id of the unit's record `r`.
    pub(super) fn record(&mut self, r: RecordId) -> RecordId {
        let s = self.import_record(r);
        self.drain();
        s
    }

    fn import(&mut self, t: TypeId) -> TypeId {
        let Some(&m) = self.tmap.get(t.0 as usize) else {
            return self.st.table.unknown();
        };
        if m != NONE {
            return TypeId(m);
        }
        let Type { kind, quals } = self.src.get(t).clone();
        let kind = self.map_kind(kind);
        let s = self.st.table.intern(kind, quals);
        self.tmap[t.0 as usize] = s.0;
        s
    }

    fn map_kind(&mut self, kind: TypeKind) -> TypeKind {
        kind.map_ids(self)
    }

    /// Maps a record to its staging record (creating it, or becoming its provider, as needed);
    /// field types are imported later by [`UnitTypes::drain`], so recursive records terminate.
    fn import_record(&mut self, r: RecordId) -> RecordId {
        let Some(&m) = self.rmap.get(r.0 as usize) else {
            return RecordId(NONE);
        };
        if m != NONE {
            return RecordId(m);
        }
        let def = self.src.record(r);
        let key = Key::of(def);
        let hash = key.hash();
        let st = &mut *self.st;
        let records = st.table.records();
        let me = (self.unit, r.0);
        let s = match st
            .keys
            .find(hash, |&i| Key::of(&records[i as usize]).same(&key))
        {
            Some(&s) => {
                if def.complete && me < st.provider[s as usize] {
                    st.provider[s as usize] = me;
                    st.table.record_mut(RecordId(s)).fields = placeholder_fields(def);
                    self.pending.push((r.0, s));
                }
                s
            }
            None => {
                let s = st.table.new_record(def.kind, def.tag).0;
                if def.complete {
                    let fields = placeholder_fields(def);
                    st.table.complete_record(RecordId(s), fields, def.packed);
                    st.provider.push(me);
                    self.pending.push((r.0, s));
                } else {
                    st.provider.push((NONE, NONE));
                }
                let records = st.table.records();
                st.keys
                    .insert_unique(hash, s, |&i| Key::of(&records[i as usize]).hash());
                s
            }
        };
        self.rmap[r.0 as usize] = s;
        RecordId(s)
    }

    /// Imports the field types of the records this unit now provides.
    fn drain(&mut self) {
        while let Some((r, s)) = self.pending.pop() {
            if self.st.provider[s as usize] != (self.unit, r) {
                continue; // a lower record of this unit with the same key took over
            }
            for i in 0..self.src.record(RecordId(r)).fields.len() {
                let t = self.import(self.src.record(RecordId(r)).fields[i].ty);
                self.st.table.record_mut(RecordId(s)).fields[i].ty = t;
            }
        }
    }
}

/// Builds the program table from the staging table: see the module documentation.
pub(super) struct FinalTypes {
    st: TypeTable,
    /// Staging record → the staging record it resolves to.
    target: Vec<u32>,
    tmap: Vec<u32>,
    rmap: Vec<u32>,
    /// (staging record, program record) whose fields are still to be imported.
    pending: Vec<(u32, u32)>,
    out: TypeTable,
}

impl FinalTypes {
    pub(super) fn new(staging: Staging) -> Self {
        let Staging {
            table, provider, ..
        } = staging;
        // The complete record each tag resolves to: the one with the lowest provider.
        let mut best: FxHashMap<(RecordKind, Name), u32> = FxHashMap::default();
        for (s, r) in table.records().iter().enumerate() {
            if let (true, Some(tag)) = (r.complete, r.tag) {
                best.entry((r.kind, tag))
                    .and_modify(|b| {
                        if provider[s] < provider[*b as usize] {
                            *b = s as u32
                        }
                    })
                    .or_insert(s as u32);
            }
        }
        let target = table
            .records()
            .iter()
            .enumerate()
            .map(|(s, r)| match (r.complete, r.tag) {
                (false, Some(tag)) => best.get(&(r.kind, tag)).copied().unwrap_or(s as u32),
                _ => s as u32,
            })
            .collect();
        FinalTypes {
            tmap: vec![NONE; table.len()],
            rmap: vec![NONE; table.records().len()],
            target,
            st: table,
            pending: Vec::new(),
            out: TypeTable::new(),
        }
    }

    /// The program id of the staging type `t`.
    pub(super) fn ty(&mut self, t: TypeId) -> TypeId {
        let s = self.import(t);
        self.drain();
        s
    }

    /// The program id of the staging record `r`.
    pub(super) fn record(&mut self, r: RecordId) -> RecordId {
        let s = self.import_record(r);
        self.drain();
        s
    }

    /// The program table (frozen).
    pub(super) fn finish(self) -> TypeTable {
        debug_assert!(self.pending.is_empty());
        let mut out = self.out;
        out.freeze();
        out
    }

    fn import(&mut self, t: TypeId) -> TypeId {
        let Some(&m) = self.tmap.get(t.0 as usize) else {
            return self.out.intern(TypeKind::Unknown, Quals::default());
        };
        if m != NONE {
            return TypeId(m);
        }
        let Type { kind, quals } = self.st.get(t).clone();
        let kind = kind.map_ids(self);
        let s = self.out.intern(kind, quals);
        self.tmap[t.0 as usize] = s.0;
        s
    }

    fn import_record(&mut self, r: RecordId) -> RecordId {
        let Some(&s) = self.target.get(r.0 as usize) else {
            return RecordId(NONE);
        };
        let m = self.rmap[s as usize];
        if m != NONE {
            return RecordId(m);
        }
        let def = self.st.record(RecordId(s));
        let id = self.out.new_record(def.kind, def.tag);
        if def.complete {
            self.pending.push((s, id.0));
        }
        self.rmap[s as usize] = id.0;
        id
    }

    fn drain(&mut self) {
        while let Some((s, id)) = self.pending.pop() {
            let n = self.st.record(RecordId(s)).fields.len();
            let mut fields = Vec::with_capacity(n);
            for i in 0..n {
                let f = &self.st.record(RecordId(s)).fields[i];
                let (f, t) = (f.clone(), f.ty);
                fields.push(FieldDef {
                    ty: self.import(t),
                    ..f
                });
            }
            let packed = self.st.record(RecordId(s)).packed;
            self.out.complete_record(RecordId(id), fields, packed);
        }
    }
}

impl IdMap for UnitTypes<'_> {
    fn ty(&mut self, t: TypeId) -> TypeId {
        self.import(t)
    }
    fn record(&mut self, r: RecordId) -> RecordId {
        self.import_record(r)
    }
}

impl IdMap for FinalTypes {
    fn ty(&mut self, t: TypeId) -> TypeId {
        self.import(t)
    }
    fn record(&mut self, r: RecordId) -> RecordId {
        self.import_record(r)
    }
}
