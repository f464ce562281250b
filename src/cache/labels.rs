//! Names for the program's functions, globals and records that do not depend on how the run
//! numbered them: a function's or a global's id is its position among the linked program's
//! definitions, so adding a function (or a global, or a record) before it shifts it. The
//! summaries cache stores ids by these labels, so that a summary stored by one run still
//! means the same thing after an edit that added or removed a declaration elsewhere.
//!
//! A label is a 64-bit hash of what the id stands for:
//!
//! - a function: its name, and for a `static` one the path of its unit;
//! - a global: its name, for a `static` one its unit, for a `static` local the function;
//! - a record with a tag: struct or union, and its tag — not its members, so that a member
//!   added keeps the label, and the summaries that name the record's other members (every
//!   caller that copied an access to one) keep their stored form; what depends on its members
//!   is keyed or checked by its definition ([`super::fingerprint::RecordDefinitions`]: the
//!   bodies that name it, the analyses that read it);
//! - an anonymous record: struct or union and its members (names, types, bit widths) —
//!   nested anonymous records only as `<anon>`.
//!
//! Two ids with the same description (two structs of one tag from different units, two
//! identical anonymous structs) are told apart by their order: the second gets the label
//! `(description, 1)`, and so on. The order of ids is
//! kept by every edit that does not move definitions past each other, so that stays stable
//! where it matters.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::KeyBuilder;
use crate::ir::print::Printer;
use crate::ir::types::RecordId;
use crate::ir::{FuncId, GlobalId, GlobalKind, Linkage};
use crate::link::Program;

/// The labels of one id space, and the id of each label.
pub struct IdLabels {
    of: Vec<u64>,
    id: FxHashMap<u64, u32>,
}

impl IdLabels {
    /// Labels from descriptions (`descriptions[i]` describes id `i`): equal descriptions are
    /// told apart by their order.
    fn new(descriptions: Vec<u64>) -> IdLabels {
        let mut id = FxHashMap::default();
        id.reserve(descriptions.len());
        let mut seen: FxHashMap<u64, u64> = FxHashMap::default();
        let of = descriptions
            .into_iter()
            .enumerate()
            .map(|(i, d)| {
                let mut label = d;
                if id.contains_key(&label) {
                    let n = seen.entry(d).or_insert(0);
                    loop {
                        *n += 1;
                        label = hash64(KeyBuilder::new("label").u64(d).u64(*n));
                        if !id.contains_key(&label) {
                            break;
                        }
                    }
                }
                id.insert(label, i as u32);
                label
            })
            .collect();
        IdLabels { of, id }
    }

    /// The label of id `i` (in range: ids are the program's).
    pub fn label(&self, i: u32) -> u64 {
        self.of[i as usize]
    }

    /// The id labelled `label` in this program.
    pub fn id(&self, label: u64) -> Option<u32> {
        self.id.get(&label).copied()
    }

    pub fn len(&self) -> usize {
        self.of.len()
    }

    /// Every id's label, by id.
    pub fn all(&self) -> &[u64] {
        &self.of
    }

    pub fn is_empty(&self) -> bool {
        self.of.is_empty()
    }
}

/// The labels of the program's functions, globals and records.
pub struct Labels {
    pub functions: IdLabels,
    pub globals: IdLabels,
    pub records: IdLabels,
}

impl Labels {
    pub fn of(program: &Program) -> Labels {
        let unit = |u: u32| {
            program
                .units
                .get(u as usize)
                .map_or("", |u| u.name.as_str())
        };
        let functions = (0..program.functions.len())
            .into_par_iter()
            .map(|i| {
                let f = &program.functions[i];
                let mut k = KeyBuilder::new("function label");
                k.str(program.names.get(f.name));
                if f.linkage == Linkage::Internal {
                    k.str(unit(f.unit));
                }
                hash64(&mut k)
            })
            .collect();
        let globals = (0..program.globals.len())
            .into_par_iter()
            .map(|i| {
                let pg = &program.globals[i];
                let g = &pg.global;
                let mut k = KeyBuilder::new("global label");
                k.str(program.names.get(g.name));
                if let GlobalKind::StaticLocal { function } = g.kind {
                    k.str(program.names.get(function));
                }
                if g.linkage == Linkage::Internal {
                    k.str(unit(pg.unit));
                }
                hash64(&mut k)
            })
            .collect();
        // Members' records by tag only: a record's label does not wait for another's.
        let mut p = program.printer();
        p.record_name = Some(Box::new(|r| {
            let tag = program.types.record(r).tag;
            tag.map_or("<anon>", |t| program.names.get(t)).to_string()
        }));
        let records = (0..program.types.record_count() as u32)
            .map(|r| {
                let def = program.types.record(RecordId(r));
                let mut k = KeyBuilder::new("record label");
                match def.tag {
                    Some(tag) => {
                        k.str(&format!("{:?}", def.kind))
                            .str(program.names.get(tag));
                    }
                    None => hash_record(&mut k, program, &p, RecordId(r)),
                }
                hash64(&mut k)
            })
            .collect();
        Labels {
            functions: IdLabels::new(functions),
            globals: IdLabels::new(globals),
            records: IdLabels::new(records),
        }
    }

    pub fn function(&self, f: FuncId) -> u64 {
        self.functions.label(f.0)
    }

    pub fn global(&self, g: GlobalId) -> u64 {
        self.globals.label(g.0)
    }

    pub fn record(&self, r: RecordId) -> u64 {
        self.records.label(r.0)
    }

    /// A printer that names functions, globals and records by label (`name:label`): printed
    /// IR that does not depend on the ids, yet tells apart two `static` globals of one name or
    /// two records of one tag.
    pub fn printer<'a>(&'a self, program: &'a Program) -> Printer<'a> {
        let mut p = program.printer();
        p.global_name = Box::new(move |g| {
            let name = program
                .globals
                .get(g.index())
                .map_or("", |pg| program.names.get(pg.global.name));
            format!("{name}:{:x}", self.global(g))
        });
        p.function_name = Box::new(move |f| {
            let name = program
                .functions
                .get(f.index())
                .map_or("", |pf| program.names.get(pf.name));
            format!("{name}:{:x}", self.function(f))
        });
        p.record_name = Some(Box::new(move |r| {
            let tag = program.types.record(r).tag;
            let tag = tag.map_or("", |t| program.names.get(t));
            format!("{tag}:{:x}", self.record(r))
        }));
        p.member_records = true;
        p
    }
}

/// Adds record `r`'s definition to `k`: struct or union, packed or not, its tag and its
/// members (names, types as `p` prints them, bit widths).
pub fn hash_record(k: &mut KeyBuilder, program: &Program, p: &Printer<'_>, r: RecordId) {
    let r = program.types.record(r);
    k.str(&format!("{:?} {}", r.kind, r.packed));
    k.str(r.tag.map_or("", |t| program.names.get(t)));
    k.u64(r.fields.len() as u64);
    for f in &r.fields {
        k.str(program.names.get(f.name))
            .str(&p.ty(f.ty))
            .u64(f.bit_width.map_or(u64::MAX, u64::from))
            .u64(u64::from(f.anonymous));
    }
}

/// The first 64 bits of a key.
pub fn hash64(k: &mut KeyBuilder) -> u64 {
    let key = k.finish();
    let mut b = [0u8; 8];
    b.copy_from_slice(&key.0[..8]);
    u64::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_descriptions_are_told_apart_by_order() {
        let l = IdLabels::new(vec![7, 9, 7, 7]);
        let labels: Vec<u64> = (0..4).map(|i| l.label(i)).collect();
        assert_eq!(labels[0], 7);
        assert_eq!(labels[1], 9);
        let mut distinct = labels.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 4);
        for (i, &label) in labels.iter().enumerate() {
            assert_eq!(l.id(label), Some(i as u32));
        }
        // The second copy keeps its label when a description is added before it.
        let shifted = IdLabels::new(vec![1, 7, 9, 7, 7]);
        assert_eq!(shifted.label(3), labels[2]);
        assert_eq!(shifted.label(4), labels[3]);
    }
}
