//! The accesses the pair check compares, bucketed and grouped.
//!
//! Every entry brings all its accesses (its own and those of the collapsed SCCs it reaches), so
//! entries that reach the same code bring the same accesses again: on the kernel, every thread
//! entry that reaches the SCC of ~39,000 functions brings its ~79,000 shared accesses. Paired
//! one entry at a time, a bucket of `m` accesses performed by `k` entries costs `(k·m)²` checks.
//! Here an access is a [`Group`]: everything the check reads of it (path, lockset, kind, class,
//! phase, sites, object classes), with the list of entries that perform it. The check runs once
//! per pair of groups and looks at the entries only where its verdict depends on them
//! (`super::pairs`).

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use super::entries::{EntryOrigin, ThreadEntry};
use super::objects::AccessObjects;
use super::types::{AccessType, TypeAlias};
use crate::ir::types::AliasClass;
use crate::pta::PointsTo;
use crate::summary::path::Classes;
use crate::summary::shared::SharedAccesses;
use crate::summary::{
    AccessKind, AccessView, Path, Phase, RelativeLockset, Root, Step, Summaries, Witness,
};

/// One access, as the pair check sees it, and the entries that perform it.
pub(super) struct Group<'a> {
    /// The access (with the first performer's witnesses).
    pub access: AccessView<'a>,
    /// The class of the object the access lies in, when it proves two accesses apart.
    pub object: Option<u32>,
    /// The class of the object the access lies in, and whether the access is to all of it
    /// (`memset(p, …)` on untyped memory, `free(p)`): in the field-based mode its members are
    /// classes of their own, so such an access is also paired with every member access.
    pub within: Option<(u32, bool)>,
    /// The objects its sites may touch, by the inclusion-based points-to (`super::objects`).
    pub objects: Option<u32>,
    /// What C's aliasing rules know of it (`super::types`).
    pub ty: AccessType,
    /// The entries that perform it, in entry order, each once, with their witnesses (the same
    /// sites, reached through their own call chains).
    pub performers: Performers<'a>,
    /// Those of the performers that run once (do not race with themselves), sorted; equal
    /// lists are one list.
    pub once: Arc<[usize]>,
    /// Some performer's access may be ordered by its phase (`super::check::ordered`): made
    /// before its first thread creation, or after its joins, by an entry that orders another.
    pub may_order: bool,
    /// A lock of the access is reached from the thread argument, and some performer knows the
    /// global object its argument is (`super::check::instantiate`).
    pub arg_locks: bool,
}

#[derive(Copy, Clone)]
pub(super) struct Performer<'a> {
    /// Index into the entries.
    pub entry: usize,
    pub witnesses: &'a [Witness],
}

/// The entries performing a group's access, in entry order, each once.
pub(super) enum Performers<'a> {
    /// One by one, each with its witnesses.
    Listed(Vec<Performer<'a>>),
    /// Every entry reaching a collapsed SCC, all with the witnesses of the SCC's shared access:
    /// one list for every access of the SCC (on the kernel, hundreds of entries times ~80,000
    /// accesses).
    Reaching {
        entries: Arc<[usize]>,
        witnesses: &'a [Witness],
        /// The collapsed SCC (its name, [`crate::summary::SharedAccesses::scc`]).
        scc: crate::ir::FuncId,
    },
}

impl<'a> Performers<'a> {
    pub fn len(&self) -> usize {
        match self {
            Performers::Listed(l) => l.len(),
            Performers::Reaching { entries, .. } => entries.len(),
        }
    }

    /// The `i`-th performer.
    pub fn get(&self, i: usize) -> Performer<'a> {
        match self {
            Performers::Listed(l) => l[i],
            Performers::Reaching {
                entries, witnesses, ..
            } => Performer {
                entry: entries[i],
                witnesses,
            },
        }
    }

    /// The performer that is entry `entry`, if one is.
    pub fn find(&self, entry: usize) -> Option<Performer<'a>> {
        match self {
            Performers::Listed(l) => l
                .binary_search_by_key(&entry, |p| p.entry)
                .ok()
                .map(|i| l[i]),
            Performers::Reaching {
                entries, witnesses, ..
            } => entries
                .binary_search(&entry)
                .ok()
                .map(|_| Performer { entry, witnesses }),
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = Performer<'a>> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Adds `p` unless its entry performs the access already (an own access equal to a shared
    /// one is one performance).
    fn add(&mut self, p: Performer<'a>) {
        if let Performers::Reaching { entries, .. } = self {
            if entries.binary_search(&p.entry).is_ok() {
                return;
            }
            *self = Performers::Listed(self.iter().collect());
        }
        if let Performers::Listed(list) = self {
            if let Err(at) = list.binary_search_by_key(&p.entry, |q| q.entry) {
                list.insert(at, p);
            }
        }
    }
}

impl<'a> Group<'a> {
    /// The access as `p` performs it.
    pub fn view(&self, p: &Performer<'a>) -> AccessView<'a> {
        AccessView {
            witnesses: p.witnesses,
            ..self.access
        }
    }
}

/// The key accesses are bucketed by: their class, or their path when it has none.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Bucket {
    Class(u32),
    Path(Path),
}

/// The groups of a run, and the buckets (points-to classes) that hold them.
pub(super) struct Candidates<'a> {
    pub groups: Vec<Group<'a>>,
    /// Group indices per bucket, in order of creation; buckets in key order.
    pub buckets: Vec<Vec<u32>>,
}

/// What the pair check reads of an access itself. Paths and locksets are interned
/// program-wide, so equal ones are the same object.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct AccessFacts {
    path: *const Path,
    locks: *const RelativeLockset,
    kind: AccessKind,
    atomic: bool,
    value: Option<AliasClass>,
    class: Option<u32>,
    phase: Phase,
}

impl AccessFacts {
    fn of(a: &AccessView<'_>) -> AccessFacts {
        AccessFacts {
            path: a.path,
            locks: a.locks,
            kind: a.kind,
            atomic: a.atomic,
            value: a.value,
            class: a.class,
            phase: a.phase,
        }
    }
}

/// What makes two accesses one group: everything the pair check reads of them; sites are
/// compared by location.
struct GroupKey<'a> {
    facts: AccessFacts,
    object: Option<u32>,
    within: Option<(u32, bool)>,
    objects: Option<u32>,
    witnesses: &'a [Witness],
}

impl PartialEq for GroupKey<'_> {
    fn eq(&self, o: &Self) -> bool {
        self.facts == o.facts
            && (self.object, self.within, self.objects) == (o.object, o.within, o.objects)
            && same_sites(self.witnesses, o.witnesses)
    }
}

impl Eq for GroupKey<'_> {}

impl Hash for GroupKey<'_> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        (self.facts, self.object, self.within, self.objects).hash(h);
        hash_sites(self.witnesses, h);
    }
}

fn hash_sites<H: Hasher>(witnesses: &[Witness], h: &mut H) {
    for w in witnesses {
        w.loc.hash(h);
    }
}

pub(super) fn same_sites(x: &[Witness], y: &[Witness]) -> bool {
    x.len() == y.len() && x.iter().zip(y).all(|(a, b)| a.loc == b.loc)
}

impl<'a> Candidates<'a> {
    /// The accesses of every entry, grouped and bucketed. A collapsed SCC's shared accesses are
    /// grouped once, when the first entry reaching them is met, with the list of every entry
    /// that reaches them as their performers.
    pub fn collect(
        input: &super::RaceInput<'_>,
        sums: &'a Summaries,
        objects: &mut Option<AccessObjects<'_>>,
        types: &TypeAlias,
    ) -> Candidates<'a> {
        let (program, pta, entries) = (input.program, input.pta, input.entries);
        let reaching = reaching_entries(entries, sums);
        let mut b = Builder {
            pta,
            types,
            objects,
            groups: Vec::new(),
            index: FxHashMap::default(),
            buckets: BTreeMap::new(),
        };
        // Escaped callbacks are interchangeable for the check (each may run at any time, in any
        // thread, several at once, ordered with nothing): an access that several of them
        // perform (through a common callee) is paired once, under the first of them.
        let mut pooled = FxHashSet::default();
        let mut sets_done = FxHashSet::default();
        for (i, e) in entries.iter().enumerate() {
            let Some(s) = sums.get(e.func) else { continue };
            let interchangeable = is_interchangeable(e);
            let classes = Classes {
                program,
                pta,
                func: e.func,
            };
            for a in s.accesses() {
                if interchangeable && !pooled.insert(PoolKey::of(&a)) {
                    continue;
                }
                b.add(&classes, a, Addition::Own(i));
            }
            for set in &s.shared {
                if !sets_done.insert(Arc::as_ptr(set)) {
                    continue;
                }
                let performers = &reaching[&Arc::as_ptr(set)];
                let classes = Classes {
                    program,
                    pta,
                    func: set.scc,
                };
                for a in set.accesses() {
                    b.add(&classes, a, Addition::Reaching(performers, set.scc));
                }
            }
        }
        finish_groups(&mut b.groups, entries);
        Candidates {
            groups: b.groups,
            buckets: b.buckets.into_values().collect(),
        }
    }
}

/// Per collapsed SCC's shared accesses (by address), the entries that reach them, in entry
/// order; of the interchangeable ones only the first (see [`Candidates::collect`]).
fn reaching_entries(
    entries: &[ThreadEntry],
    sums: &Summaries,
) -> FxHashMap<*const SharedAccesses, Arc<[usize]>> {
    let mut lists: FxHashMap<*const SharedAccesses, (Vec<usize>, bool)> = FxHashMap::default();
    for (i, e) in entries.iter().enumerate() {
        let Some(s) = sums.get(e.func) else { continue };
        let interchangeable = is_interchangeable(e);
        for set in &s.shared {
            let (list, pooled) = lists.entry(Arc::as_ptr(set)).or_default();
            if interchangeable && std::mem::replace(pooled, true) {
                continue;
            }
            if list.last() != Some(&i) {
                list.push(i);
            }
        }
    }
    lists
        .into_iter()
        .map(|(set, (list, _))| (set, Arc::from(list)))
        .collect()
}

/// Who performs an access being added: one entry (its own access), or every entry reaching a
/// collapsed SCC (one of the SCC's shared accesses).
enum Addition<'l> {
    Own(usize),
    Reaching(&'l Arc<[usize]>, crate::ir::FuncId),
}

/// The groups and buckets being built.
struct Builder<'a, 'b, 'p> {
    pta: &'b PointsTo,
    types: &'b TypeAlias,
    objects: &'b mut Option<AccessObjects<'p>>,
    groups: Vec<Group<'a>>,
    index: FxHashMap<GroupKey<'a>, u32>,
    buckets: BTreeMap<Bucket, Vec<u32>>,
}

impl<'a> Builder<'a, '_, '_> {
    fn add(&mut self, classes: &Classes<'_>, a: AccessView<'a>, by: Addition<'_>) {
        let pta = self.pta;
        let object = classes.object_class(a.path).map(|o| pta.class(o));
        let key = GroupKey {
            facts: AccessFacts::of(&a),
            object: object.filter(|&o| separates(pta, o)),
            within: object.map(|o| (o, a.class == Some(o))),
            objects: self.objects.as_mut().and_then(|o| o.of(&a)),
            witnesses: a.witnesses,
        };
        if let Some(&g) = self.index.get(&key) {
            let performers = &mut self.groups[g as usize].performers;
            match by {
                Addition::Own(entry) => performers.add(Performer {
                    entry,
                    witnesses: a.witnesses,
                }),
                Addition::Reaching(list, _) => {
                    for &entry in list.iter() {
                        performers.add(Performer {
                            entry,
                            witnesses: a.witnesses,
                        });
                    }
                }
            }
            return;
        }
        let id = self.groups.len() as u32;
        self.groups.push(Group {
            access: a,
            object: key.object,
            within: key.within,
            objects: key.objects,
            ty: self.types.of(classes.program, a.path, a.value),
            performers: match by {
                Addition::Own(entry) => Performers::Listed(vec![Performer {
                    entry,
                    witnesses: a.witnesses,
                }]),
                Addition::Reaching(list, scc) => Performers::Reaching {
                    entries: list.clone(),
                    witnesses: a.witnesses,
                    scc,
                },
            },
            once: Arc::from([]),
            may_order: false,
            arg_locks: false,
        });
        self.index.insert(key, id);
        let bucket = match a.class {
            Some(c) => Bucket::Class(c),
            None => Bucket::Path(a.path.clone()),
        };
        self.buckets.entry(bucket).or_default().push(id);
    }
}

/// What the check reads of a group's performers, computed once.
pub(super) fn finish_groups(groups: &mut [Group<'_>], entries: &[ThreadEntry]) {
    // Per entry, whether its accesses in each phase may be ordered with some other entry:
    // it runs once and orders a thread it starts (before its first creation, after its joins).
    let Orderers { before, joined } = Orderers::of(entries);
    let mut onces: FxHashMap<Vec<usize>, Arc<[usize]>> = FxHashMap::default();
    let mut of_list = |performers: &Performers<'_>| {
        let once: Vec<usize> = performers
            .iter()
            .map(|p| p.entry)
            .filter(|&e| !entries[e].multiple)
            .collect();
        let any = |o: &[bool]| performers.iter().any(|p| o[p.entry]);
        PerformerFacts {
            once: onces
                .entry(once)
                .or_insert_with_key(|k| Arc::from(k.as_slice()))
                .clone(),
            before: any(&before),
            joined: any(&joined),
            argument: performers.iter().any(|p| entries[p.entry].arg.is_some()),
        }
    };
    // The lists of entries reaching a collapsed SCC are shared by all its accesses.
    let mut reaching: FxHashMap<*const [usize], PerformerFacts> = FxHashMap::default();
    for g in groups {
        let facts = match &g.performers {
            Performers::Reaching { entries, .. } => reaching
                .entry(Arc::as_ptr(entries))
                .or_insert_with(|| of_list(&g.performers))
                .clone(),
            Performers::Listed(_) => of_list(&g.performers),
        };
        g.once = facts.once;
        g.may_order = match g.access.phase {
            Phase::Before => facts.before,
            Phase::Joined => facts.joined,
            Phase::Threaded => false,
        };
        g.arg_locks = facts.argument
            && g.access.locks.plus.iter().any(|l| {
                l.path.root == Root::Formal(0) && l.path.steps.first() == Some(&Step::Deref)
            });
    }
}

/// Per entry, whether its accesses in a phase may be ordered with some other entry's: it runs
/// once and orders a thread it starts (before its first creation, after its joins). Only such
/// an entry's performance can be ordered ([`super::check`]'s `ordered`).
pub(super) struct Orderers {
    pub before: Vec<bool>,
    pub joined: Vec<bool>,
}

impl Orderers {
    pub fn of(entries: &[ThreadEntry]) -> Orderers {
        let orders = |by: fn(&ThreadEntry) -> &Vec<crate::ir::FuncId>| -> Vec<bool> {
            let ordering: FxHashSet<_> =
                entries.iter().flat_map(|e| by(e).iter().copied()).collect();
            entries
                .iter()
                .map(|e| !e.multiple && ordering.contains(&e.func))
                .collect()
        };
        Orderers {
            before: orders(|e| &e.ordered_by),
            joined: orders(|e| &e.joined_by),
        }
    }

    /// The entries whose accesses in `phase` may be ordered; `None` for none.
    pub fn in_phase(&self, phase: Phase) -> Option<&[bool]> {
        match phase {
            Phase::Before => Some(&self.before),
            Phase::Joined => Some(&self.joined),
            Phase::Threaded => None,
        }
    }
}

/// What [`finish_groups`] reads of a list of performers.
#[derive(Clone)]
struct PerformerFacts {
    /// Those that run once, sorted.
    once: Arc<[usize]>,
    /// Some performer's accesses made before its first thread creation may be ordered.
    before: bool,
    /// Some performer's accesses made after its joins may be ordered.
    joined: bool,
    /// Some performer knows the global object its argument is.
    argument: bool,
}

/// An entry that may run at any time, in any thread, several at once, ordered with nothing and
/// with no known argument: an escaped callback.
fn is_interchangeable(e: &ThreadEntry) -> bool {
    matches!(e.origin, EntryOrigin::Callback { .. })
        && e.multiple
        && !e.is_main
        && e.ordered_by.is_empty()
        && e.joined_by.is_empty()
        && e.arg.is_none()
}

/// What pools an escaped callback's access with another's: the access and its sites (hashed:
/// the same access at other lines is another one, or a pooled callback would hide its sites).
#[derive(PartialEq, Eq, Hash)]
struct PoolKey {
    facts: AccessFacts,
    sites: u64,
}

impl PoolKey {
    fn of(a: &AccessView<'_>) -> PoolKey {
        let mut h = rustc_hash::FxHasher::default();
        hash_sites(a.witnesses, &mut h);
        PoolKey {
            facts: AccessFacts::of(a),
            sites: h.finish(),
        }
    }
}

/// Whether the class of the object an access lies in separates it from accesses in objects of
/// other classes: not when an object of the class may be a member of another (a pointer into a
/// member reaches the object around it by `container_of` or a cast, and that object's class is
/// another).
fn separates(pta: &PointsTo, object: u32) -> bool {
    !pta.is_interior(object)
}
