//! The points-to classes named canonically (what summaries depend on of the partition, see
//! [`super::fingerprint`] and [`super::class_deps`]): members are named by what they stand
//! for, functions, globals and records by label ([`super::labels`]; `g3fa9…`,
//! `l51c0….buf#0`, `a51c0…#2`, `m9e2d….next`), and every class by the smallest 64-bit hash
//! of its members' names ([`name_hash`]; no name is kept as a string: the kernel's classes
//! have millions of members), classes made only of analysis nodes by the class pointing to
//! them (a hash of its name). Stored summaries name classes by their names' hashes. A class
//! no one points to that points nowhere and holds one global or function is left out
//! ([`is_trivial`]): adding a global or a function changes nothing here. Classes no one
//! points to that hold only locals and return values are left out too: they are private to
//! one function, whose body hash covers them — so a body edit that adds a local does not
//! change the fingerprint. Their names are made only when asked for (a stored summary names
//! them) or when a class they point to has no name of its own: the kernel has millions of
//! locals.

use std::sync::Arc;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::labels::Labels;
use super::{Key, KeyBuilder};
use crate::ir::{FuncId, LocalId};
use crate::link::Program;
use crate::pta::{ByClass, Origin, PointsTo};

/// The points-to classes named canonically; see the module documentation.
pub struct ClassTable {
    /// Class representative → rank (canonical classes only).
    rank: FxHashMap<u32, u32>,
    /// Rank → class representative.
    reps: Vec<u32>,
    /// The nodes of each class.
    members: ByClass<u32>,
    /// By representative: the class is private to one function.
    private: Vec<bool>,
    /// By representative: the class is trivial ([`is_trivial`]).
    trivial: Vec<bool>,
    /// Rank → a hash of the class's name (ascending: ranks follow names).
    name_hashes: Vec<u64>,
    /// Rank → what can be read of the class ([`ClassTable::readable`]).
    readable: Vec<u64>,
    /// The classes that may be shared between threads ([`PointsTo::escaping`]).
    escaping: rustc_hash::FxHashSet<u32>,
    pub fingerprint: Key,
}

impl ClassTable {
    /// `None` when two classes get the same name (strings with equal text in two classes, or
    /// two hashes alike): the run then does not use the summaries cache.
    pub fn new(program: &Program, pta: &PointsTo, labels: &Labels) -> Option<ClassTable> {
        let members = ByClass::new(pta, 0, Some);
        let class_members = |c: u32| members.of(c);
        let reps: Vec<u32> = (0..pta.node_count() as u32)
            .filter(|&c| !class_members(c).is_empty())
            .collect();
        let mut preds: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        for &c in &reps {
            if let Some(t) = pta.deref_class(c) {
                preds.entry(t).or_default().push(c);
            }
        }
        let mut private = vec![false; pta.node_count()];
        let mut trivial = vec![false; pta.node_count()];
        for &c in &reps {
            trivial[c as usize] = !preds.contains_key(&c) && is_trivial(pta, c, class_members(c));
            private[c as usize] = !preds.contains_key(&c)
                && class_members(c).iter().all(|&m| {
                    matches!(
                        pta.origin(m),
                        Origin::Local(..) | Origin::Return(_) | Origin::Fresh
                    )
                });
        }
        // Every member of the other classes is named (the fingerprint lists them), in parallel;
        // by the hash of its name (no string is kept: the kernel has millions of members).
        let namer = NodeNamer::new(program, pta, labels);
        let member_names: FxHashMap<u32, Vec<u64>> = reps
            .par_iter()
            .filter(|&&c| !private[c as usize] && !trivial[c as usize])
            .map_init(
                || (namer.fork(), String::new()),
                |(namer, buffer), &c| {
                    let mut names: Vec<u64> = class_members(c)
                        .iter()
                        .filter_map(|&m| namer.name_hash(m, buffer))
                        .collect();
                    names.sort_unstable();
                    (c, names)
                },
            )
            .collect();
        let mut class_name: FxHashMap<u32, u64> = member_names
            .iter()
            .filter_map(|(&c, names)| Some((c, *names.first()?)))
            .collect();
        // A private class names the class it points to when nothing else does (by the smallest
        // hash of its locals' and return values' names).
        let naming: Vec<u32> = reps
            .iter()
            .copied()
            .filter(|&c| private[c as usize])
            .filter(|&c| {
                pta.deref_class(c)
                    .is_some_and(|t| !class_name.contains_key(&t))
            })
            .collect();
        let private_names: Vec<(u32, u64)> = naming
            .par_iter()
            .map_init(
                || (namer.fork(), String::new()),
                |(namer, buffer), &c| {
                    let own = class_members(c).iter().filter(|&&m| {
                        matches!(pta.origin(m), Origin::Local(..) | Origin::Return(_))
                    });
                    let name = own.filter_map(|&m| namer.name_hash(m, buffer)).min();
                    name.map(|n| (c, n))
                },
            )
            .flatten()
            .collect();
        class_name.extend(private_names);
        name_by_predecessors(&reps, &preds, &mut class_name);

        let mut canonical: Vec<(u64, u32)> = class_name
            .iter()
            .filter(|(&c, _)| !private[c as usize])
            .map(|(&c, &name)| (name, c))
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
        let (digests, readable): (Vec<u64>, Vec<u64>) = canonical
            .par_iter()
            .map(|&(_, c)| {
                let target = pta
                    .deref_class(c)
                    .map(|t| class_name.get(&t).copied().unwrap_or(u64::MAX - 1));
                let shared = escaping.contains(&c);
                let readable = readable_digest(pta, labels, c, target, shared);
                let mut k = KeyBuilder::new("class");
                k.u64(readable);
                k.u64(member_names[&c].len() as u64);
                for &m in &member_names[&c] {
                    k.u64(m);
                }
                (short(&k.finish()), readable)
            })
            .unzip();
        let mut k = KeyBuilder::new("classes");
        k.str(&format!("{:?}", pta.mode));
        for (&(name, _), &digest) in canonical.iter().zip(&digests) {
            k.u64(name).u64(digest);
        }
        let reps = canonical.iter().map(|&(_, c)| c).collect();
        let name_hashes = canonical.iter().map(|&(name, _)| name).collect();
        let fingerprint = k.finish();
        Some(ClassTable {
            reps,
            rank,
            members,
            private,
            trivial,
            name_hashes,
            readable,
            escaping,
            fingerprint,
        })
    }

    /// A hash of the name of every canonical or trivial class, by representative: names that
    /// do not depend on how the run numbered the nodes (for the pair stage's digests,
    /// [`crate::race::memo::StableIds`]). Classes whose hashes collide are left out.
    pub fn stable_names(
        &self,
        program: &Program,
        pta: &PointsTo,
        labels: &Labels,
    ) -> FxHashMap<u32, u64> {
        let trivial = self.trivial.iter().enumerate().filter(|(_, &t)| t);
        let trivial_names = trivial.filter_map(|(c, _)| {
            let name = self.private_name(program, pta, labels, c as u32)?;
            Some((c as u32, name_hash(&name)))
        });
        let named = self
            .reps
            .iter()
            .copied()
            .zip(self.name_hashes.iter().copied());
        let mut by_hash: FxHashMap<u64, Option<u32>> = FxHashMap::default();
        for (c, h) in named.chain(trivial_names) {
            by_hash
                .entry(h)
                .and_modify(|one| *one = None)
                .or_insert(Some(c));
        }
        by_hash
            .into_iter()
            .filter_map(|(h, c)| Some((c?, h)))
            .collect()
    }

    /// The rank of a class (any member node or its representative).
    pub fn rank(&self, pta: &PointsTo, class: u32) -> Option<u32> {
        self.rank.get(&pta.class(class)).copied()
    }

    /// The class representative of a rank.
    pub fn class(&self, rank: u32) -> Option<u32> {
        self.reps.get(rank as usize).copied()
    }

    /// The hash of a canonical class's name (any member node or its representative).
    pub fn name_hash(&self, pta: &PointsTo, class: u32) -> Option<u64> {
        let rank = self.rank(pta, class)?;
        self.name_hashes.get(rank as usize).copied()
    }

    /// The canonical class whose name has this hash.
    pub fn named(&self, name_hash: u64) -> Option<u32> {
        let rank = self.name_hashes.binary_search(&name_hash).ok()?;
        self.reps.get(rank).copied()
    }

    /// Whether the class (a representative) is private to one function: its members are
    /// locals and return values no class points to, so what can be read of it is fixed by
    /// the bodies of the functions whose locals they are.
    pub fn is_private(&self, class: u32) -> bool {
        self.private.get(class as usize).copied().unwrap_or(false)
    }

    /// What an analysis can read of a class (a representative) besides its identity, hashed
    /// ([`readable_digest`]): `None` for a class neither canonical nor trivial.
    pub fn readable(&self, pta: &PointsTo, labels: &Labels, class: u32) -> Option<u64> {
        if let Some(&rank) = self.rank.get(&class) {
            return self.readable.get(rank as usize).copied();
        }
        // A trivial class points nowhere.
        let trivial = self.trivial.get(class as usize).copied().unwrap_or(false);
        let shared = self.escaping.contains(&class);
        trivial.then(|| readable_digest(pta, labels, class, None, shared))
    }

    /// The name of a class without a rank: private to one function (`l51c0….buf#0`,
    /// `r51c0…`: its smallest member's), or trivial (`g…`, `f…`: its member's).
    pub fn private_name(
        &self,
        program: &Program,
        pta: &PointsTo,
        labels: &Labels,
        class: u32,
    ) -> Option<String> {
        let c = pta.class(class) as usize;
        let members = self.members.of(c as u32);
        if *self.trivial.get(c)? {
            return match pta.origin(*members.first()?) {
                Origin::Global(g) => Some(format!("g{:x}", labels.global(g))),
                Origin::Function(f) => Some(format!("f{:x}", labels.function(f))),
                _ => None,
            };
        }
        if !*self.private.get(c)? {
            return None;
        }
        private_name(program, pta, labels, members)
    }

    /// The class a [`ClassTable::private_name`] names in this program: found through the
    /// function's locals (its body is part of every key that stores the name), or the
    /// trivial class of a global or function (still trivial: else the fingerprint differs).
    pub fn private_class(
        &self,
        program: &Program,
        pta: &PointsTo,
        labels: &Labels,
        name: &str,
    ) -> Option<u32> {
        let label = |l: &str| u64::from_str_radix(l, 16).ok();
        let function = |l: &str| Some(FuncId(labels.functions.id(label(l)?)?));
        // A trivial class stored by a run whose partition differed: the class of its member
        // now (the summaries cache checks what the class is, [`super::class_deps`]).
        if let Some(g) = name.strip_prefix('g') {
            let g = crate::ir::GlobalId(labels.globals.id(label(g)?)?);
            return Some(pta.class(pta.global_node(g)));
        }
        if let Some(f) = name.strip_prefix('f') {
            return Some(pta.class(pta.function_node(function(f)?)));
        }
        if let Some(f) = name.strip_prefix('r') {
            return Some(pta.class(pta.return_node(function(f)?)));
        }
        let (f, local) = name.strip_prefix('l')?.split_once('.')?;
        let f = function(f)?;
        let (local, ordinal) = local.rsplit_once('#')?;
        let ordinal: u32 = ordinal.parse().ok()?;
        let body = program.functions.get(f.index())?.body.as_ref()?;
        let ordinals = local_ordinals(program, f);
        let l = body
            .locals
            .iter()
            .zip(&ordinals)
            .position(|(l, &o)| o == ordinal && program.names.get(l.name) == local)?;
        Some(pta.class(pta.local_node(f, LocalId(l as u32))))
    }
}

/// What an analysis can read of a class besides which nodes are in it: the name of the class
/// it points to, whether it may be shared between threads, whether it holds a member node
/// (interior), and the functions in it (the targets of a call through a pointer to it).
fn readable_digest(
    pta: &PointsTo,
    labels: &Labels,
    class: u32,
    target: Option<u64>,
    shared: bool,
) -> u64 {
    let mut functions: Vec<u64> = (pta.class_functions(class).iter())
        .map(|&f| labels.function(f))
        .collect();
    functions.sort_unstable();
    let mut k = KeyBuilder::new("class readable");
    k.u64(target.unwrap_or(u64::MAX))
        .u64(shared.into())
        .u64(pta.is_interior(class).into())
        .u64(functions.len() as u64);
    for f in functions {
        k.u64(f);
    }
    short(&k.finish())
}

/// The first 64 bits of a key.
fn short(key: &Key) -> u64 {
    let mut first = [0u8; 8];
    first.copy_from_slice(&key.0[..8]);
    u64::from_le_bytes(first)
}

/// A 64-bit hash of a member's name (a class is named by its members' smallest), as labels
/// are 64-bit hashes: two classes named alike are refused by [`ClassTable::new`] (the run goes
/// without the cache); two other members alike would go unnoticed by the fingerprint, with the
/// odds of a 64-bit collision.
fn name_hash(name: &str) -> u64 {
    let hash = blake3::hash(name.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&hash.as_bytes()[..8]);
    u64::from_le_bytes(first)
}

/// Whether a class no class points to is trivial: it points to nothing, and its one member is
/// a global or a function (a global whose address no code takes, a function called only
/// directly). Such a class tells nothing about any other object: it is left out of the
/// fingerprint and the ranks, so that adding a global or a function changes neither; a
/// summary names it by its member.
fn is_trivial(pta: &PointsTo, class: u32, members: &[u32]) -> bool {
    pta.deref_class(class).is_none()
        && matches!(members, [m] if matches!(pta.origin(*m), Origin::Global(_) | Origin::Function(_)))
}

/// The smallest name among a private class's members (locals and return values).
fn private_name(
    program: &Program,
    pta: &PointsTo,
    labels: &Labels,
    members: &[u32],
) -> Option<String> {
    let mut ordinals: FxHashMap<FuncId, Vec<u32>> = FxHashMap::default();
    members
        .iter()
        .filter_map(|&m| match pta.origin(m) {
            Origin::Return(f) => Some(format!("r{:x}", labels.function(f))),
            Origin::Local(f, l) => {
                let ords = ordinals
                    .entry(f)
                    .or_insert_with(|| local_ordinals(program, f));
                local_name(program, labels, f, l, ords)
            }
            _ => None,
        })
        .min()
}

/// A stable name for each node that stands for something in the program (`None` for nodes
/// the analysis made): locals by name and occurrence (ids shift when a local is added before
/// them), allocation sites by their order in the function (their lines shift with edits above
/// them).
pub(super) struct NodeNamer<'a> {
    program: &'a Program,
    pta: &'a PointsTo,
    labels: &'a Labels,
    /// Each allocation-site node's rank among its function's, in node order (shared by the
    /// namers [`NodeNamer::fork`] makes).
    alloc_rank: Arc<FxHashMap<u32, u32>>,
    ordinals: FxHashMap<FuncId, Vec<u32>>,
}

impl<'a> NodeNamer<'a> {
    pub fn new(program: &'a Program, pta: &'a PointsTo, labels: &'a Labels) -> Self {
        Self::with_alloc_ranks(program, pta, labels, Self::alloc_ranks(pta))
    }

    /// Each allocation-site node's rank among its function's, in node order.
    pub fn alloc_ranks(pta: &PointsTo) -> Arc<FxHashMap<u32, u32>> {
        let mut count: FxHashMap<FuncId, u32> = FxHashMap::default();
        let mut alloc_rank = FxHashMap::default();
        for node in 0..pta.node_count() as u32 {
            if let Origin::Alloc(f, _) = pta.origin(node) {
                let c = count.entry(f).or_insert(0);
                alloc_rank.insert(node, *c);
                *c += 1;
            }
        }
        Arc::new(alloc_rank)
    }

    /// A namer with the allocation sites' ranks ([`NodeNamer::alloc_ranks`]) made already.
    pub fn with_alloc_ranks(
        program: &'a Program,
        pta: &'a PointsTo,
        labels: &'a Labels,
        alloc_rank: Arc<FxHashMap<u32, u32>>,
    ) -> Self {
        NodeNamer {
            program,
            pta,
            labels,
            alloc_rank,
            ordinals: FxHashMap::default(),
        }
    }

    pub fn labels(&self) -> &'a Labels {
        self.labels
    }

    /// A namer for another thread: the same names, its own memo.
    pub fn fork(&self) -> Self {
        NodeNamer {
            program: self.program,
            pta: self.pta,
            labels: self.labels,
            alloc_rank: self.alloc_rank.clone(),
            ordinals: FxHashMap::default(),
        }
    }

    pub fn name(&mut self, node: u32) -> Option<String> {
        let mut name = String::new();
        self.write_name(node, &mut name).then_some(name)
    }

    /// [`name_hash`] of the node's [`NodeNamer::name`], written in `buffer`.
    pub fn name_hash(&mut self, node: u32, buffer: &mut String) -> Option<u64> {
        buffer.clear();
        self.write_name(node, buffer).then(|| name_hash(buffer))
    }

    /// Appends the node's name to `out`; false (and nothing written) for a node of the
    /// analysis's own.
    fn write_name(&mut self, node: u32, out: &mut String) -> bool {
        use std::fmt::Write as _;
        let (program, labels) = (self.program, self.labels);
        // Writing to a String cannot fail.
        let _ = match self.pta.origin(node) {
            Origin::Global(g) => write!(out, "g{:x}", labels.global(g)),
            Origin::Function(f) => write!(out, "f{:x}", labels.function(f)),
            Origin::Return(f) => write!(out, "r{:x}", labels.function(f)),
            Origin::Local(f, l) => {
                let ords = self
                    .ordinals
                    .entry(f)
                    .or_insert_with(|| local_ordinals(program, f));
                match local_name(program, labels, f, l, ords) {
                    Some(name) => write!(out, "{name}"),
                    None => return false,
                }
            }
            Origin::Alloc(f, _) => match self.alloc_rank.get(&node) {
                Some(rank) => write!(out, "a{:x}#{rank}", labels.function(f)),
                None => return false,
            },
            Origin::Str(s) => match program.strings.get(s.0 as usize) {
                Some(text) => write!(
                    out,
                    "s{}",
                    &KeyBuilder::new("str").str(text).finish().hex()[..16]
                ),
                None => return false,
            },
            Origin::Field(r, name) => {
                write!(out, "m{:x}.{}", labels.record(r), program.names.get(name))
            }
            Origin::Fresh => return false,
        };
        true
    }
}

/// `l{f}.{name}#{ordinal}` (`f` by label); `ordinals`: [`local_ordinals`] of `f`.
fn local_name(
    program: &Program,
    labels: &Labels,
    f: FuncId,
    l: LocalId,
    ordinals: &[u32],
) -> Option<String> {
    let local = program.functions[f.index()]
        .body
        .as_ref()?
        .locals
        .get(l.index())?;
    Some(format!(
        "l{:x}.{}#{}",
        labels.function(f),
        program.names.get(local.name),
        ordinals.get(l.index())?
    ))
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
/// (`*name`, hashed), level by level. Classes no named class reaches stay unnamed.
fn name_by_predecessors(
    reps: &[u32],
    preds: &FxHashMap<u32, Vec<u32>>,
    class_name: &mut FxHashMap<u32, u64>,
) {
    let mut unnamed: Vec<u32> = reps
        .iter()
        .copied()
        .filter(|c| !class_name.contains_key(c))
        .collect();
    loop {
        let found: Vec<(u32, u64)> = unnamed
            .iter()
            .filter_map(|&c| {
                let best = preds
                    .get(&c)?
                    .iter()
                    .filter_map(|p| class_name.get(p))
                    .min()?;
                let mut k = KeyBuilder::new("pointed to by");
                k.u64(*best);
                Some((c, super::labels::hash64(&mut k)))
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
