//! What a function's summary depends on besides its own body and its callees' summaries,
//! reduced to hashes that are stable across runs:
//!
//! - the **records**' definitions ([`RecordDefinitions`]) — not in an SCC's key: a body's
//!   key holds the definitions of the records it names, and the entry keeps the records whose
//!   definitions its analysis read, checked when it is reused ([`super::class_deps`]); the
//!   findings' key holds all of them;
//! - the **points-to classes** in a canonical form ([`super::classes::ClassTable`]): every
//!   class named by the smallest hash of its members' names, members by what they stand for —
//!   not in an SCC's key: its entry keeps the classes its analysis read, checked when it is
//!   reused ([`super::class_deps`]); the findings' key holds the whole partition's fingerprint;
//! - each function's **IR**, printed (names, types, locations, ids by label) and hashed with
//!   the declarations of the functions and globals it names; each function's declaration.
//!
//! Functions, globals and records are named by label, not id: ids follow the order of the
//! definitions, and a definition added above others shifts them. The layout of the id spaces
//! ([`ProgramText::layout`]) is for what stores ids as they are: the saved findings.
//!
//! Files are named by name where a summary names one (`summaries/files.rs`), and bodies print
//! a location in another file than the function's with the file's name: a file added or gone
//! re-analyses only the functions whose text changed. A changed struct or union re-analyses the
//! SCCs that name it or read it, a new pointer flow the SCCs that read the classes it changes;
//! edits inside function bodies, new functions and new globals keep the rest.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::classes::NodeNamer;
use super::labels::{hash64, hash_record, Labels};
use super::{Key, KeyBuilder};
use crate::ir::{FuncId, GlobalId, GlobalKind, Linkage, Loc, RecordId, VarFlags};
use crate::link::Program;
use crate::models::Models;
use crate::pta::inclusion::{Bits, ObjectLabel, SiteObjects};
use crate::pta::PointsTo;
use crate::race::memo::ObjectNames;

/// What the summaries' keys read of the program's text. It needs no points-to analysis, so a
/// run computes it beside that (mostly sequential) analysis.
pub struct ProgramText {
    /// The ids' labels ([`Labels`]): summaries store ids by them.
    pub labels: Labels,
    /// The ids of the program's files, functions, globals and records, in id order: what
    /// depends on the ids as they are (the saved findings).
    pub layout: Key,
    /// Every record's definition: what the analyses of SCCs read of them is checked against it
    /// ([`super::class_deps`]).
    pub records: RecordDefinitions,
    /// Per function: its declaration (label, type, linkage, whether it has a body), hashed.
    pub function_decls: Vec<u64>,
    /// Per global: its declaration (label, type, linkage, flags, kind), hashed.
    pub global_decls: Vec<u64>,
    /// Per function with a body: its printed IR with the declarations it names
    /// ([`function_bodies`]).
    pub bodies: Vec<Option<Key>>,
}

impl ProgramText {
    pub fn of(program: &Program) -> ProgramText {
        let labels = Labels::of(program);
        let (records, (function_decls, global_decls)) = rayon::join(
            || RecordDefinitions::of(program, &labels),
            || {
                rayon::join(
                    || function_decls(program, &labels),
                    || global_decls(program, &labels),
                )
            },
        );
        let (layout, bodies) = rayon::join(
            || layout(program, &labels, &function_decls, &global_decls),
            || {
                let decls = Declarations {
                    functions: &function_decls,
                    globals: &global_decls,
                    records: &records.digests,
                };
                function_bodies(program, &labels, decls)
            },
        );
        ProgramText {
            labels,
            layout,
            records,
            function_decls,
            global_decls,
            bodies,
        }
    }
}

/// The ids of the program's files, functions, globals and records, and their declarations.
/// (Functions and globals by their declarations' hashes, records by label: equal layouts
/// number the same things alike.)
fn layout(program: &Program, labels: &Labels, function_decls: &[u64], global_decls: &[u64]) -> Key {
    let mut k = KeyBuilder::new("layout");
    k.u64(program.files.len() as u64);
    for f in &program.files {
        k.str(f);
    }
    for decls in [function_decls, global_decls] {
        k.u64(decls.len() as u64);
        for &d in decls {
            k.u64(d);
        }
    }
    for g in &program.globals {
        k.u64(g.global.flags.address_taken.into());
    }
    k.u64(labels.records.len() as u64);
    for r in 0..labels.records.len() as u32 {
        k.u64(labels.record(RecordId(r)));
    }
    k.finish()
}

/// Every record's definition, hashed one by one and together.
pub struct RecordDefinitions {
    /// Every record in label order: its label and definition.
    pub key: Key,
    /// By record: its definition ([`hash_record`], members' records by label), and whether it
    /// is complete, hashed.
    pub digests: Vec<u64>,
}

impl RecordDefinitions {
    fn of(program: &Program, labels: &Labels) -> RecordDefinitions {
        let digests: Vec<u64> = (0..labels.records.len() as u32)
            .into_par_iter()
            .map_init(
                || labels.printer(program),
                |p, r| {
                    let mut k = KeyBuilder::new("record definition");
                    hash_record(&mut k, program, p, RecordId(r));
                    k.u64(program.types.record(RecordId(r)).complete.into());
                    hash64(&mut k)
                },
            )
            .collect();
        let mut records: Vec<(u64, u64)> = (0..digests.len())
            .map(|r| (labels.record(RecordId(r as u32)), digests[r]))
            .collect();
        records.sort_unstable();
        let mut k = KeyBuilder::new("records");
        k.u64(records.len() as u64);
        for (label, digest) in records {
            k.u64(label).u64(digest);
        }
        RecordDefinitions {
            key: k.finish(),
            digests,
        }
    }
}

fn function_decls(program: &Program, labels: &Labels) -> Vec<u64> {
    (0..program.functions.len())
        .into_par_iter()
        .map_init(
            || labels.printer(program),
            |p, i| {
                let f = &program.functions[i];
                hash64(
                    KeyBuilder::new("function declaration")
                        .u64(labels.function(FuncId(i as u32)))
                        .str(&p.ty(f.ty))
                        .u64(u64::from(f.linkage == Linkage::Internal))
                        .u64(u64::from(f.body.is_some())),
                )
            },
        )
        .collect()
}

fn global_decls(program: &Program, labels: &Labels) -> Vec<u64> {
    (0..program.globals.len())
        .into_par_iter()
        .map_init(
            || labels.printer(program),
            |p, i| {
                let g = &program.globals[i].global;
                // Not the location or the initializer: pointer flow from initializers is in the
                // points-to fingerprint, and a global's line does not reach summaries. Not
                // whether its address is taken: no analysis after the link reads it (what the
                // address reaches is in the points-to partition), and a body naming the global
                // would change with any `&g` elsewhere. The layout keeps it.
                let flags = VarFlags {
                    address_taken: false,
                    ..g.flags
                };
                let kind = match g.kind {
                    GlobalKind::Global => "",
                    GlobalKind::StaticLocal { function } => program.names.get(function),
                };
                hash64(
                    KeyBuilder::new("global declaration")
                        .u64(labels.global(GlobalId(i as u32)))
                        .str(&p.ty(g.ty))
                        .str(kind)
                        .str(&format!("{:?} {:?} {}", g.linkage, flags, g.defined)),
                )
            },
        )
        .collect()
}

/// The models by name, in name order.
pub fn models(models: &Models) -> Key {
    let mut all: Vec<(&str, String)> = models
        .iter()
        .map(|(name, m)| (name, format!("{m:?}")))
        .collect();
    all.sort();
    let mut k = KeyBuilder::new("models");
    for (name, m) in &all {
        k.str(name).str(m);
    }
    k.finish()
}

/// The hashed declarations of the program's functions and globals and the definitions of its
/// records, by id: a body's key holds those it names.
#[derive(Clone, Copy)]
struct Declarations<'a> {
    functions: &'a [u64],
    globals: &'a [u64],
    records: &'a [u64],
}

/// Each function's printed IR, hashed (`None`: no body), with ids by label, the declarations
/// of the functions and globals it names and the definitions of the records it names,
/// locations in its own file relative to the function's (so it keeps its hash when lines are
/// added above it) and without the integer constants of `asm` inputs (`__LINE__` in the
/// kernel's `WARN_ON`; no analysis reads them).
/// In parallel (on the current rayon pool).
fn function_bodies(
    program: &Program,
    labels: &Labels,
    decls: Declarations<'_>,
) -> Vec<Option<Key>> {
    (0..program.functions.len())
        .into_par_iter()
        .map(|i| {
            let body = program.functions[i].body.as_ref()?;
            let cell = std::cell::RefCell::new((Vec::new(), Vec::new(), Vec::new()));
            let named = &cell;
            let text = {
                let mut printer = labels.printer(program);
                let (global_name, function_name) = (printer.global_name, printer.function_name);
                printer.global_name = Box::new(move |g| {
                    named.borrow_mut().0.push(decls.globals[g.index()]);
                    global_name(g)
                });
                printer.function_name = Box::new(move |f| {
                    named.borrow_mut().1.push(decls.functions[f.index()]);
                    function_name(f)
                });
                if let Some(record_name) = printer.record_name.take() {
                    printer.record_name = Some(Box::new(move |r| {
                        // The label names the record, not its members: its definition.
                        if let Some(&d) = decls.records.get(r.0 as usize) {
                            named.borrow_mut().2.push(d);
                        }
                        record_name(r)
                    }));
                }
                // Locations relative to the function's own: lines added above it do not change it.
                printer.relative_to = Some(body.loc);
                printer.hide_asm_constants = true;
                printer.hide_call_constants = true;
                printer.function(body)
            };
            let (mut globals, mut functions, mut records) = cell.into_inner();
            let mut k = KeyBuilder::new("body");
            k.str(&text);
            for decls in [&mut globals, &mut functions, &mut records] {
                decls.sort_unstable();
                decls.dedup();
                k.u64(decls.len() as u64);
                for &d in decls.iter() {
                    k.u64(d);
                }
            }
            Some(k.finish())
        })
        .collect()
}

/// What the race stage reads of the inclusion-based points-to ([`SiteObjects`]): the objects
/// of every access site a summary can name — each function's `own_locs` (see
/// [`super::summaries`]), as a witness performed by that function or by an unknown one — and
/// the objects unknown code reaches. Objects are named as the points-to classes' members are
/// ([`NodeNamer`]), so the key does not depend on how either analysis numbered its nodes, nor
/// on where lines are; sets are numbered in the order they are met. When an object has no
/// such name (or two share one), the key is the program's text instead: every function body
/// (`bodies`) and global initializer, and no object names are given. Else the names of the
/// objects met are given too (hashed; the pair stage's digests name object sets with them).
pub fn site_objects<'a>(
    program: &Program,
    pta: &PointsTo,
    labels: &Labels,
    objects: &SiteObjects,
    own_locs: impl Fn(FuncId) -> &'a [Loc],
    bodies: &[Option<Key>],
) -> (Key, Option<ObjectNames>) {
    let mut k = KeyBuilder::new("site objects");
    let mut namer = ObjectNamer {
        objects,
        nodes: NodeNamer::new(program, pta, labels),
        hashes: FxHashMap::default(),
        owner: FxHashMap::default(),
        numbered: FxHashMap::default(),
    };
    let labelled = (|| {
        for f in (0..program.functions.len() as u32).map(FuncId) {
            for &loc in own_locs(f) {
                namer.set(&mut k, objects.site(Some(f), loc))?;
                namer.set(&mut k, objects.site(None, loc))?;
            }
        }
        let (count, sum) = namer.digest(objects.escaped())?;
        k.u64(count).bytes(&sum.to_le_bytes());
        Some(())
    })();
    if labelled.is_some() {
        return (k.finish(), Some(namer.hashes));
    }
    let mut k = KeyBuilder::new("site objects: program text");
    for b in bodies {
        match b {
            Some(b) => k.key(b),
            None => k.u64(0),
        };
    }
    for g in &program.globals {
        k.str(&format!("{:?}", g.global.init));
    }
    (k.finish(), None)
}

/// Names the objects of [`SiteObjects`] for [`site_objects`]. A set is hashed as the number
/// of its objects and the sum of their names' hashes (128 bits each): order does not matter,
/// so no set's names are sorted — SQLite's sites have 20,000 distinct sets of 840 objects on
/// average.
struct ObjectNamer<'a> {
    objects: &'a SiteObjects,
    nodes: NodeNamer<'a>,
    /// Each object's name, hashed.
    hashes: FxHashMap<u32, u128>,
    /// Which object each name (hashed) was given to: names must be one object's.
    owner: FxHashMap<u128, u32>,
    /// Interned set id → its number in the key.
    numbered: FxHashMap<u32, u64>,
}

impl ObjectNamer<'_> {
    /// Adds the set `id` (`None`: unknown) to `k`: its number, and the first time it is met
    /// its objects. `None` when an object has no name of its own.
    fn set(&mut self, k: &mut KeyBuilder, id: Option<u32>) -> Option<()> {
        let Some(id) = id else {
            k.u64(u64::MAX);
            return Some(());
        };
        if let Some(&n) = self.numbered.get(&id) {
            k.u64(n);
            return Some(());
        }
        let n = self.numbered.len() as u64;
        self.numbered.insert(id, n);
        let (count, sum) = self.digest(self.objects.set(id))?;
        k.u64(n).u64(count).bytes(&sum.to_le_bytes());
        Some(())
    }

    /// A set's objects: how many, and the sum of their names' hashes.
    fn digest(&mut self, set: &Bits) -> Option<(u64, u128)> {
        let (mut count, mut sum) = (0u64, 0u128);
        for node in set.iter() {
            count += 1;
            sum = sum.wrapping_add(self.hash(node)?);
        }
        Some((count, sum))
    }

    /// The hash of an object's name.
    fn hash(&mut self, node: u32) -> Option<u128> {
        if let Some(&h) = self.hashes.get(&node) {
            return Some(h);
        }
        let name = match self.objects.object(node)? {
            ObjectLabel::Node(n) => self.nodes.name(n)?,
            ObjectLabel::Allocation(f, rank) => {
                format!("A{:x}#{rank}", self.nodes.labels().function(f))
            }
            ObjectLabel::Opaque => "opaque".into(),
            ObjectLabel::World => "world".into(),
            ObjectLabel::Nowhere => "nowhere".into(),
        };
        let key = KeyBuilder::new("object").str(&name).finish();
        let h = u128::from_le_bytes(key.0[..16].try_into().ok()?);
        if *self.owner.entry(h).or_insert(node) != node {
            return None;
        }
        self.hashes.insert(node, h);
        Some(h)
    }
}
