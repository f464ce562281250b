//! What a function's summary depends on besides its own body and its callees' summaries,
//! reduced to hashes that are stable across runs:
//!
//! - the **layout** of the program's id spaces (files, functions, globals, records in id order,
//!   with their types): summaries refer to functions, globals, records and files by id, so equal
//!   layouts let those ids be stored as they are;
//! - the **points-to classes** in a canonical form: every class is named by its smallest
//!   member ([`ClassTable`]), members by what they stand for (`g12`, `l7.buf#0`, `a7#2`,
//!   `m3.next`), classes made only of analysis nodes by the class pointing to them (`*g12`).
//!   Class ids in summaries are stored as ranks in this naming. Classes no one points to that
//!   hold only locals and return values are left out: they are private to one function, whose
//!   body hash covers them — so a body edit that adds a local does not change the fingerprint;
//! - each function's **IR**, printed (names, types, locations) and hashed.
//!
//! The fingerprints are coarse on purpose: an edit that changes the points-to partition, a
//! type, a global, or the set of files re-analyses everything. Edits inside function bodies that
//! keep pointer flow (the common case) keep them.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::{Key, KeyBuilder};
use crate::ir::{FuncId, GlobalKind, Linkage, Loc};
use crate::link::Program;
use crate::models::Models;
use crate::pta::inclusion::{Bits, ObjectLabel, SiteObjects};
use crate::pta::{Origin, PointsTo};

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
/// ([`node_names`]), so the key does not depend on how either analysis numbered its nodes, nor
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
        program,
        pta,
        objects,
        nodes: None,
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
    program: &'a Program,
    pta: &'a PointsTo,
    objects: &'a SiteObjects,
    /// [`node_names`], computed on first use.
    nodes: Option<Vec<Option<String>>>,
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
            ObjectLabel::Node(n) => self
                .nodes
                .get_or_insert_with(|| node_names(self.program, self.pta))
                .get(n as usize)?
                .clone()?,
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

/// The points-to classes named canonically; see the module documentation.
pub struct ClassTable {
    /// Class representative → rank (canonical classes only).
    rank: FxHashMap<u32, u32>,
    /// Class representative → name, for the classes private to one function (not in the
    /// fingerprint: stored by name, found again through the function's locals).
    private: FxHashMap<u32, String>,
    /// Rank → class representative.
    reps: Vec<u32>,
    pub fingerprint: Key,
}

impl ClassTable {
    /// `None` when two classes get the same name (strings with equal text in two classes): the
    /// run then does not use the summaries cache.
    pub fn new(program: &Program, pta: &PointsTo) -> Option<ClassTable> {
        let n = pta.node_count() as u32;
        let names = node_names(program, pta);
        let mut members: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        for node in 0..n {
            members.entry(pta.class(node)).or_default().push(node);
        }
        let mut preds: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        for &c in members.keys() {
            if let Some(t) = pta.deref_class(c) {
                preds.entry(t).or_default().push(c);
            }
        }
        let mut class_name: FxHashMap<u32, String> = members
            .iter()
            .filter_map(|(&c, ms)| {
                let min = ms
                    .iter()
                    .filter_map(|&m| names[m as usize].as_ref())
                    .min()?;
                Some((c, min.clone()))
            })
            .collect();
        name_by_predecessors(&members, &preds, &mut class_name);

        let private = |c: u32| {
            !preds.contains_key(&c)
                && members[&c].iter().all(|&m| {
                    matches!(
                        pta.origin(m),
                        Origin::Local(..) | Origin::Return(_) | Origin::Fresh
                    )
                })
        };
        let mut canonical: Vec<(&str, u32)> = class_name
            .iter()
            .filter(|(&c, _)| !private(c))
            .map(|(&c, name)| (name.as_str(), c))
            .collect();
        let private_names: FxHashMap<u32, String> = class_name
            .iter()
            .filter(|(&c, _)| private(c))
            .map(|(&c, name)| (c, name.clone()))
            .collect();
        canonical.sort_unstable();
        if canonical.windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
        let rank: FxHashMap<u32, u32> = canonical
            .iter()
            .enumerate()
            .map(|(i, &(_, c))| (c, i as u32))
            .collect();
        let escaping = pta.escaping();
        let mut k = KeyBuilder::new("classes");
        k.str(&format!("{:?}", pta.mode));
        for &(name, c) in &canonical {
            let mut ms: Vec<&str> = members[&c]
                .iter()
                .filter_map(|&m| names[m as usize].as_deref())
                .collect();
            ms.sort_unstable();
            k.str(name).u64(ms.len() as u64);
            for m in ms {
                k.str(m);
            }
            let target = pta.deref_class(c).map_or(u64::MAX, |t| {
                rank.get(&t).map_or(u64::MAX - 1, |&r| u64::from(r))
            });
            k.u64(target).u64(u64::from(escaping.contains(&c)));
        }
        Some(ClassTable {
            reps: canonical.iter().map(|&(_, c)| c).collect(),
            rank,
            private: private_names,
            fingerprint: k.finish(),
        })
    }

    /// The rank of a class (any member node or its representative).
    pub fn rank(&self, pta: &PointsTo, class: u32) -> Option<u32> {
        self.rank.get(&pta.class(class)).copied()
    }

    /// The class representative of a rank.
    pub fn class(&self, rank: u32) -> Option<u32> {
        self.reps.get(rank as usize).copied()
    }

    /// The name of a class private to one function (`l7.buf#0`, `r7`).
    pub fn private_name(&self, pta: &PointsTo, class: u32) -> Option<&str> {
        self.private.get(&pta.class(class)).map(String::as_str)
    }

    /// The class a [`ClassTable::private_name`] names in this program, found through the
    /// function's locals (its body is part of every key that stores the name).
    pub fn private_class(program: &Program, pta: &PointsTo, name: &str) -> Option<u32> {
        if let Some(f) = name.strip_prefix('r') {
            let f: u32 = f.parse().ok()?;
            return (f < program.functions.len() as u32)
                .then(|| pta.class(pta.return_node(FuncId(f))));
        }
        let (f, local) = name.strip_prefix('l')?.split_once('.')?;
        let f = FuncId(f.parse().ok()?);
        let (local, ordinal) = local.rsplit_once('#')?;
        let ordinal: u32 = ordinal.parse().ok()?;
        let body = program.functions.get(f.index())?.body.as_ref()?;
        let ordinals = local_ordinals(program, f);
        let l = body
            .locals
            .iter()
            .zip(&ordinals)
            .position(|(l, &o)| o == ordinal && program.names.get(l.name) == local)?;
        Some(pta.class(pta.local_node(f, crate::ir::LocalId(l as u32))))
    }
}

/// A stable name for every node that stands for something in the program (`None` for nodes
/// the analysis made).
fn node_names(program: &Program, pta: &PointsTo) -> Vec<Option<String>> {
    // Locals by name and occurrence (ids shift when a local is added before them), allocation
    // sites by their order in the function (their lines shift with edits above them).
    let mut local_ordinal: FxHashMap<FuncId, Vec<u32>> = FxHashMap::default();
    let mut alloc_count: FxHashMap<FuncId, u32> = FxHashMap::default();
    (0..pta.node_count() as u32)
        .map(|node| {
            Some(match pta.origin(node) {
                Origin::Global(g) => format!("g{}", g.0),
                Origin::Function(f) => format!("f{}", f.0),
                Origin::Return(f) => format!("r{}", f.0),
                Origin::Local(f, l) => {
                    let ords = local_ordinal
                        .entry(f)
                        .or_insert_with(|| local_ordinals(program, f));
                    let local = &program.functions[f.index()].body.as_ref()?.locals[l.index()];
                    format!(
                        "l{}.{}#{}",
                        f.0,
                        program.names.get(local.name),
                        ords[l.index()]
                    )
                }
                Origin::Alloc(f, _) => {
                    let c = alloc_count.entry(f).or_insert(0);
                    *c += 1;
                    format!("a{}#{}", f.0, *c - 1)
                }
                Origin::Str(s) => {
                    let text = program.strings.get(s.0 as usize)?;
                    format!(
                        "s{}",
                        &KeyBuilder::new("str").str(text).finish().hex()[..16]
                    )
                }
                Origin::Field(r, name) => format!("m{}.{}", r.0, program.names.get(name)),
                Origin::Fresh => return None,
            })
        })
        .collect()
}

/// For each local of `f`: how many locals of the same name come before it.
fn local_ordinals(program: &Program, f: FuncId) -> Vec<u32> {
    let Some(body) = &program.functions[f.index()].body else {
        return Vec::new();
    };
    let mut seen: FxHashMap<crate::ir::Name, u32> = FxHashMap::default();
    body.locals
        .iter()
        .map(|l| {
            let c = seen.entry(l.name).or_insert(0);
            *c += 1;
            *c - 1
        })
        .collect()
}

/// Names classes made only of analysis nodes after the smallest class pointing to them
/// (`*name`), level by level. Classes no named class reaches stay unnamed.
fn name_by_predecessors(
    members: &FxHashMap<u32, Vec<u32>>,
    preds: &FxHashMap<u32, Vec<u32>>,
    class_name: &mut FxHashMap<u32, String>,
) {
    let mut unnamed: Vec<u32> = members
        .keys()
        .copied()
        .filter(|c| !class_name.contains_key(c))
        .collect();
    unnamed.sort_unstable();
    loop {
        let found: Vec<(u32, String)> = unnamed
            .iter()
            .filter_map(|&c| {
                let best = preds
                    .get(&c)?
                    .iter()
                    .filter_map(|p| class_name.get(p))
                    .min()?;
                Some((c, format!("*{best}")))
            })
            .collect();
        if found.is_empty() {
            return;
        }
        for (c, name) in found {
            class_name.insert(c, name);
        }
        unnamed.retain(|c| !class_name.contains_key(c));
    }
}
