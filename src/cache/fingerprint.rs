//! What a function's summary depends on besides its own body and its callees' summaries,
//! reduced to hashes that are stable across runs:
//!
//! - the **layout** of the program's id spaces (files, functions, globals, records in id order,
//!   with their types): summaries refer to functions, globals, records and files by id, so equal
//!   layouts let those ids be stored as they are;
//! - the **points-to classes** in a canonical form ([`super::classes::ClassTable`]): every
//!   class named by its smallest member, members by what they stand for;
//! - each function's **IR**, printed (names, types, locations) and hashed.
//!
//! The fingerprints are coarse on purpose: an edit that changes the points-to partition, a
//! type, a global, or the set of files re-analyses everything. Edits inside function bodies that
//! keep pointer flow (the common case) keep them.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::classes::NodeNamer;
use super::{Key, KeyBuilder};
use crate::ir::{FuncId, GlobalKind, Linkage, Loc};
use crate::link::Program;
use crate::models::Models;
use crate::pta::inclusion::{Bits, ObjectLabel, SiteObjects};
use crate::pta::PointsTo;

/// What the summaries' keys read of the program's text: its [`layout`] and every function's
/// body key ([`function_bodies`]). It needs no points-to analysis, so a run computes it beside
/// that (mostly sequential) analysis.
pub struct ProgramText {
    pub layout: Key,
    pub bodies: Vec<Option<Key>>,
}

impl ProgramText {
    pub fn of(program: &Program) -> ProgramText {
        let (layout, bodies) = rayon::join(|| layout(program), || function_bodies(program));
        ProgramText { layout, bodies }
    }
}

/// The ids of the program's files, functions, globals and records, and their declarations.
pub fn layout(program: &Program) -> Key {
    let p = program.printer();
    let mut k = KeyBuilder::new("layout");
    k.u64(program.files.len() as u64);
    for f in &program.files {
        k.str(f);
    }
    k.u64(program.functions.len() as u64);
    for (i, f) in program.functions.iter().enumerate() {
        k.str(&program.function_label(FuncId(i as u32)))
            .str(&p.ty(f.ty))
            .u64(u64::from(f.linkage == Linkage::Internal))
            .u64(u64::from(f.body.is_some()));
    }
    k.u64(program.globals.len() as u64);
    for g in &program.globals {
        let g = &g.global;
        // Not the location or the initializer: pointer flow from initializers is in the
        // points-to fingerprint, and a global's line does not reach summaries.
        let kind = match g.kind {
            GlobalKind::Global => "",
            GlobalKind::StaticLocal { function } => program.names.get(function),
        };
        k.str(program.names.get(g.name))
            .str(&p.ty(g.ty))
            .str(kind)
            .str(&format!("{:?} {:?} {}", g.linkage, g.flags, g.defined));
    }
    let records = program.types.records();
    k.u64(records.len() as u64);
    for r in records {
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
    k.finish()
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

/// Each function's printed IR, hashed (`None`: no body), with locations in its own file relative
/// to the function's (so it keeps its hash when lines are added above it) and without the
/// integer constants of `asm` inputs (`__LINE__` in the kernel's `WARN_ON`; no analysis reads
/// them). In parallel (on the current rayon pool).
pub fn function_bodies(program: &Program) -> Vec<Option<Key>> {
    (0..program.functions.len())
        .into_par_iter()
        .map(|i| {
            let body = program.functions[i].body.as_ref()?;
            // Locations relative to the function's own: lines added above it do not change it.
            let mut printer = program.printer();
            printer.relative_to = Some(body.loc);
            printer.hide_asm_constants = true;
            printer.hide_call_constants = true;
            let text = printer.function(body);
            Some(KeyBuilder::new("body").str(&text).finish())
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
/// (`bodies`) and global initializer.
pub fn site_objects<'a>(
    program: &Program,
    pta: &PointsTo,
    objects: &SiteObjects,
    own_locs: impl Fn(FuncId) -> &'a [Loc],
    bodies: &[Option<Key>],
) -> Key {
    let mut k = KeyBuilder::new("site objects");
    let mut namer = ObjectNamer {
        objects,
        nodes: NodeNamer::new(program, pta),
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
        return k.finish();
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
    k.finish()
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
            ObjectLabel::Allocation(f, rank) => format!("A{}#{rank}", f.0),
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
