//! Guarded accesses (RELAY §3.3): an lvalue, the relative lockset where it is accessed, read or
//! write, and where — plus the call chain from the summarised function down to the access, so a
//! report can show the path from a thread entry (Chord's counterexamples).

use serde::{Deserialize, Serialize};

use super::intern::Interned;
use super::lockset::RelativeLockset;
use super::path::Path;
use super::threads::Phase;
use crate::ir::types::AliasClass;
use crate::ir::{FuncId, Loc};

#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub enum AccessKind {
    Read,
    Write,
}

/// A call on the way from the summarised function to an access: the call site and the callee.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub struct CallSite {
    pub loc: Loc,
    pub callee: FuncId,
}

pub use super::chain::{Chain, MAX_CHAIN};

/// Where an access happens: its location (in the function that performs it) and the calls from
/// the summarised function down to that function.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
#[serde(from = "StoredWitness")]
pub struct Witness {
    pub loc: Loc,
    chain: Chain,
    /// `chain.len()`, kept beside it: callers order the witnesses they copy by it, and reading
    /// it from the chain's first node was a cache miss per witness copied (a tenth of SQLite's
    /// summaries). After `chain`, so that the derived order is the chain's. Not stored.
    #[serde(skip_serializing)]
    chain_len: u8,
    /// The function whose body performs the access (the chain may be truncated before it).
    #[serde(default)]
    pub func: Option<FuncId>,
}

/// A witness as stored: without its chain's length, which is made again on loading.
#[derive(Deserialize)]
struct StoredWitness {
    loc: Loc,
    chain: Chain,
    #[serde(default)]
    func: Option<FuncId>,
}

impl From<StoredWitness> for Witness {
    fn from(w: StoredWitness) -> Witness {
        Witness::new(w.loc, w.chain, w.func)
    }
}

impl Witness {
    pub fn new(loc: Loc, chain: Chain, func: Option<FuncId>) -> Witness {
        Witness {
            loc,
            chain_len: chain.len() as u8,
            chain,
            func,
        }
    }

    /// The calls from the summarised function down to the one that performs the access.
    pub fn chain(&self) -> &Chain {
        &self.chain
    }

    /// `self.chain().len()`, without reading the chain.
    pub fn chain_len(&self) -> usize {
        self.chain_len as usize
    }
}

/// At most this many witnesses — distinct program points, each with its shortest call chain —
/// are kept per guarded access (the shortest chains first). Every one is reported (a race on
/// lines 8 and 9 of a function names both lines); past the bound the rest are not. (64 keeps
/// every TSan-observed site of memcached and fio; 256 took the Linux subset past 21 GB.)
pub const MAX_WITNESSES: usize = 64;

/// A summary with more guarded accesses than this is widened ([`AccessSet::coarsen`]).
pub const MAX_ACCESSES: usize = 2000;

/// What the summaries cache stores as an access's class when the class follows from the
/// access's path in the summarised function ([`crate::summary::path::Classes::access_class`]):
/// it derives the class again when it loads the summary, so a stored summary does not depend
/// on which class the path has — a new flow that merges two classes changes no summary but
/// of the functions whose analysis read them otherwise. Never in a summary the analyses see:
/// class ids are node ids, far below it.
pub const DERIVED_CLASS: u32 = u32::MAX;

/// RELAY's guarded access `(o, L, k)`: one per lvalue, relative lockset, kind (and atomicity),
/// however many program points perform it — summary sizes depend on that. A few of those program
/// points are kept as witnesses for reports; the race check does not depend on them.
///
/// The lvalue and lockset are indices into the summary's tables ([`AccessTables`]): a summary
/// has far fewer distinct paths and locksets than accesses, and callers rebind each once.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct GuardedAccess {
    pub path: u32,
    pub locks: u32,
    pub kind: AccessKind,
    /// Through an `_Atomic` object or an atomic operation: never races with another atomic access.
    pub atomic: bool,
    /// The alias class of the lvalue's type at every site (`None`: a character, record or
    /// unknown type, or sites of several classes): what C's effective types say it may touch.
    #[serde(default)]
    pub value: Option<AliasClass>,
    /// The points-to class of the accessed memory (the race stage buckets by it): the class
    /// its path has ([`crate::summary::path::Classes::access_class`]) when it has one.
    pub class: Option<u32>,
    /// Whether threads the summarised function created may run at the access.
    #[serde(default)]
    pub phase: Phase,
    /// Sorted by (chain length, location); at least one, at most [`MAX_WITNESSES`]. A boxed
    /// slice: no spare capacity (a `Vec` grown by one push holds room for four).
    pub witnesses: Box<[Witness]>,
}

/// The distinct paths and locksets the accesses of one summary refer to, sorted; the values
/// are interned program-wide (callers repeat their callees' paths and locksets).
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct AccessTables {
    pub paths: Vec<Interned<Path>>,
    pub locksets: Vec<Interned<RelativeLockset>>,
}

impl AccessTables {
    /// An access of these tables with its path and lockset resolved.
    pub fn view<'a>(&'a self, a: &'a GuardedAccess) -> AccessView<'a> {
        AccessView {
            path: &self.paths[a.path as usize],
            locks: &self.locksets[a.locks as usize],
            kind: a.kind,
            atomic: a.atomic,
            value: a.value,
            class: a.class,
            phase: a.phase,
            witnesses: &a.witnesses,
        }
    }

    /// Tables of these values (without spare capacity), interned.
    pub fn new(paths: Vec<Path>, locksets: Vec<RelativeLockset>) -> AccessTables {
        AccessTables {
            paths: paths
                .into_iter()
                .map(|mut p| {
                    p.shrink_to_fit();
                    Interned::new(p)
                })
                .collect(),
            locksets: locksets
                .into_iter()
                .map(|mut l| {
                    l.shrink_to_fit();
                    Interned::new(l)
                })
                .collect(),
        }
    }
}

/// A guarded access with its path and lockset resolved.
#[derive(Copy, Clone, Debug)]
pub struct AccessView<'a> {
    pub path: &'a Path,
    pub locks: &'a RelativeLockset,
    pub kind: AccessKind,
    pub atomic: bool,
    pub value: Option<AliasClass>,
    pub class: Option<u32>,
    pub phase: Phase,
    pub witnesses: &'a [Witness],
}

impl<'a> AccessView<'a> {
    /// The first witness: the access with the shortest call chain.
    pub fn witness(&self) -> &'a Witness {
        &self.witnesses[0]
    }
}

/// (path, lockset, kind, atomic, phase): what makes one guarded access.
pub type AccessKey = (u32, u32, AccessKind, bool, Phase);
/// What [`AccessSet::coarsen`] keeps per merged access: lockset id, value, class, witnesses.
type Merged = (u32, Option<AliasClass>, Option<u32>, Vec<Witness>);
/// An access being built: its class, the join of its sites' values, its witnesses.
type Building = (Option<u32>, Option<AliasClass>, Vec<Witness>);

/// The order of witnesses: shortest chain, then location, then the chain itself (a total order,
/// so which witness survives a merge does not depend on the order accesses were found in).
fn witness_order(w: &Witness) -> (usize, Loc, &Chain) {
    (w.chain_len(), w.loc, &w.chain)
}

/// A lockset table that grows by joins, each distinct pair joined once.
struct LocksetJoins {
    table: indexmap::IndexSet<RelativeLockset, rustc_hash::FxBuildHasher>,
    memo: rustc_hash::FxHashMap<(u32, u32), u32>,
}

impl LocksetJoins {
    fn new(table: indexmap::IndexSet<RelativeLockset, rustc_hash::FxBuildHasher>) -> Self {
        LocksetJoins {
            table,
            memo: rustc_hash::FxHashMap::default(),
        }
    }

    fn get(&self, id: u32) -> &RelativeLockset {
        &self.table[id as usize]
    }

    /// The id of the join of locksets `a` and `b`.
    fn join(&mut self, a: u32, b: u32) -> u32 {
        if a == b {
            return a;
        }
        let pair = (a.min(b), a.max(b));
        if let Some(&j) = self.memo.get(&pair) {
            return j;
        }
        let mut joined = self.get(a).clone();
        joined.join(self.get(b));
        let j = self.table.insert_full(joined).0 as u32;
        self.memo.insert(pair, j);
        j
    }
}

/// The witnesses of one access being built ([`AccessSet::sites`]).
pub struct Sites<'a>(&'a mut Vec<Witness>);

impl Sites<'_> {
    /// Adds a site: one witness per program point, with its shortest chain; among equal
    /// (length, location) the first added is kept (the order of adding is deterministic).
    /// `make` builds the witness only if it is kept.
    pub fn add(&mut self, chain_len: usize, loc: Loc, make: impl FnOnce() -> Witness) {
        let ws = &mut *self.0;
        if let Some(i) = ws.iter().position(|w| w.loc == loc) {
            if ws[i].chain_len() <= chain_len {
                return;
            }
            ws.remove(i);
        }
        let order = |w: &Witness| (w.chain_len(), w.loc);
        let pos = ws.partition_point(|x| order(x) <= (chain_len, loc));
        if pos >= MAX_WITNESSES {
            return;
        }
        ws.insert(pos, make());
        ws.truncate(MAX_WITNESSES);
    }
}

/// Builds the accesses of one function, deduplicated by `(o, L, k)`.
#[derive(Default)]
pub struct AccessSet {
    paths: indexmap::IndexSet<Path, rustc_hash::FxBuildHasher>,
    locksets: indexmap::IndexSet<RelativeLockset, rustc_hash::FxBuildHasher>,
    map: rustc_hash::FxHashMap<AccessKey, Building>,
}

impl AccessSet {
    pub fn path_id(&mut self, p: Path) -> u32 {
        self.paths.insert_full(p).0 as u32
    }

    pub fn lockset_id(&mut self, l: &RelativeLockset) -> u32 {
        match self.locksets.get_index_of(l) {
            Some(i) => i as u32,
            None => self.locksets.insert_full(l.clone()).0 as u32,
        }
    }

    /// Adds a site of access `key`, whose lvalue has alias class `value` there (the access's
    /// value is the join: one class only if every site has it — the sites of one access are
    /// not split by type, so its witnesses do not depend on types); `chain_len` and `loc` order
    /// witnesses, `make` builds the witness only if it is kept (callers' accesses arrive by
    /// the thousand).
    #[allow(clippy::too_many_arguments)]
    pub fn insert(
        &mut self,
        key: AccessKey,
        class: Option<u32>,
        value: Option<AliasClass>,
        chain_len: usize,
        loc: Loc,
        make: impl FnOnce() -> Witness,
    ) {
        self.sites(key, class, value, 1).add(chain_len, loc, make);
    }

    /// The sites of access `key`, to which sites whose lvalue has alias class `value` are
    /// about to be added ([`Self::insert`] for many sites of one access: the access is looked
    /// up once). The access is made if it is new, with room for `expected` sites: add at
    /// least one.
    pub fn sites(
        &mut self,
        key: AccessKey,
        class: Option<u32>,
        value: Option<AliasClass>,
        expected: usize,
    ) -> Sites<'_> {
        let (_, joined, ws) = self.map.entry(key).or_insert_with(|| {
            let room = expected.min(MAX_WITNESSES);
            (class, value, Vec::with_capacity(room))
        });
        if *joined != value {
            *joined = None;
        }
        Sites(ws)
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// The widening applied to a summary that grew past [`MAX_ACCESSES`]: every path becomes
    /// its representative form (`collapse`, `None` drops it) and the accesses of one path, kind
    /// and atomicity merge into one, with the join of their locksets (fewer must-held, more
    /// may-released locks: only more warnings). The merged access keeps the witnesses of all
    /// it merges (every site is still reported), up to [`MAX_WITNESSES`].
    ///
    /// Works on table indices: each distinct path is collapsed once and each distinct pair of
    /// locksets joined once (a kernel function coarsens tens of thousands of accesses that share
    /// a few hundred paths and locksets; cloning them per access dominated the analysis).
    pub fn coarsen(self, mut collapse: impl FnMut(&Path) -> Option<Path>) -> AccessSet {
        let AccessSet {
            paths,
            locksets,
            map,
        } = self;
        let mut new_paths: indexmap::IndexSet<Path, rustc_hash::FxBuildHasher> =
            indexmap::IndexSet::default();
        let new_path: Vec<Option<u32>> = paths
            .iter()
            .map(|p| collapse(p).map(|q| new_paths.insert_full(q).0 as u32))
            .collect();
        let mut joins = LocksetJoins::new(locksets);
        // (collapsed path, kind, atomic, phase) → (lockset, class, witness).
        let mut merged: rustc_hash::FxHashMap<(u32, AccessKind, bool, Phase), Merged> =
            rustc_hash::FxHashMap::default();
        for ((p, l, kind, atomic, phase), (class, value, ws)) in map {
            let Some(path) = new_path[p as usize] else {
                continue;
            };
            match merged.entry((path, kind, atomic, phase)) {
                std::collections::hash_map::Entry::Occupied(mut e) => {
                    let (locks, joined, _, all) = e.get_mut();
                    *locks = joins.join(*locks, l);
                    // Sites of two classes: the merged access may be either.
                    if *joined != value {
                        *joined = None;
                    }
                    all.extend(ws);
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert((l, value, class, ws));
                }
            }
        }
        // Merged keys are distinct, so the insertion order does not matter (`finish` sorts).
        let mut out = AccessSet::default();
        for ((p, kind, atomic, phase), (locks, value, class, mut ws)) in merged {
            let key = (
                out.path_id(new_paths[p as usize].clone()),
                out.lockset_id(joins.get(locks)),
                kind,
                atomic,
                phase,
            );
            // In the total witness order: which ones survive does not depend on the order
            // accesses were found in.
            ws.sort_by(|a, b| witness_order(a).cmp(&witness_order(b)));
            for w in ws {
                let (len, loc) = (w.chain_len(), w.loc);
                out.insert(key, class, value, len, loc, || w);
            }
        }
        out
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The tables, sorted, and the accesses in canonical order: the result depends only on the
    /// set of accesses, not on the order they were found in (recursive SCCs compare summaries
    /// between rounds).
    pub fn finish(self) -> (AccessTables, Vec<GuardedAccess>) {
        let (paths, path_new) = sorted_table(self.paths);
        let (locksets, lockset_new) = sorted_table(self.locksets);
        let mut accesses: Vec<GuardedAccess> = self
            .map
            .into_iter()
            .map(
                |((path, locks, kind, atomic, phase), (class, value, witnesses))| GuardedAccess {
                    path: path_new[path as usize],
                    locks: lockset_new[locks as usize],
                    kind,
                    atomic,
                    value,
                    class,
                    phase,
                    witnesses: witnesses.into_boxed_slice(),
                },
            )
            .collect();
        accesses.sort_by_key(|a| (a.path, a.locks, a.kind, a.atomic, a.phase));
        (AccessTables::new(paths, locksets), accesses)
    }
}

/// A table in sorted order, and the new index of each old one.
pub(super) fn sorted_table<T: Ord>(table: impl IntoIterator<Item = T>) -> (Vec<T>, Vec<u32>) {
    let mut items: Vec<(T, usize)> = table.into_iter().enumerate().map(|(i, t)| (t, i)).collect();
    items.sort();
    let mut new = vec![0u32; items.len()];
    for (pos, (_, old)) in items.iter().enumerate() {
        new[*old] = pos as u32;
    }
    (items.into_iter().map(|(t, _)| t).collect(), new)
}

/// A thread creation performed by the function or its callees.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub struct Spawn {
    /// The start routines the creation may run.
    pub start: Vec<FuncId>,
    /// The creation site (in the function that calls the model).
    pub loc: Loc,
    /// Whether the creation site is inside a loop (the entry may run more than once).
    pub in_loop: bool,
    /// How many distinct call paths reach the site, counted up to 2: a function that creates
    /// a thread and is called twice starts it twice.
    pub paths: u8,
    /// The shortest call chain to the creation site.
    pub chain: Chain,
    /// The one object the thread's argument points to, when every path agrees on it (in the
    /// summarised function's terms): lets the race stage name `arg->lock` in the thread.
    #[serde(default)]
    pub arg: Option<Path>,
    /// The function containing the creation site (the chain may be truncated before it).
    #[serde(default)]
    pub func: Option<FuncId>,
    /// The thread's argument points into an object allocated by the function containing the
    /// site and not yet escaped from it (every path that reaches the site): each creation
    /// hands its thread an object of its own.
    #[serde(default)]
    pub fresh_arg: bool,
    /// No instance of the start routines created earlier by the function (or its callees)
    /// may still run at the creation, on every path that reaches it: two call paths to the
    /// site, or a loop around it, start one instance after another, not two at once.
    #[serde(default)]
    pub alone: bool,
    /// The thread's argument is `&a[i]` (maybe a member of it) with `i` stepping once per run
    /// of the loop around the creation, which runs once (no loop around the call in a
    /// caller): each creation at this site hands its thread another element.
    #[serde(default)]
    pub distinct_arg: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::GlobalId;
    use crate::summary::lockset::{Lock, LockMode};
    use crate::summary::path::{Root, Step};

    fn global(i: u32) -> Path {
        Path::new(Root::Global(GlobalId(i)))
    }
    fn held(locks: &[u32], released: &[u32]) -> RelativeLockset {
        RelativeLockset {
            plus: locks
                .iter()
                .map(|&i| Lock {
                    path: global(100 + i),
                    mode: LockMode::Exclusive,
                })
                .collect(),
            rehold: Default::default(),
            minus: released.iter().map(|&i| global(100 + i)).collect(),
            minus_top: false,
        }
    }
    fn at(line: u32) -> Loc {
        Loc {
            file: 0,
            line,
            col: 1,
        }
    }

    #[test]
    fn a_witness_is_stored_without_its_chain_length_and_gets_it_back() {
        let call = CallSite {
            loc: at(3),
            callee: crate::ir::FuncId(3),
        };
        let chain = Chain::prefixed(call, &Chain::prefixed(call, &Chain::empty()));
        let w = Witness::new(at(5), chain.clone(), Some(crate::ir::FuncId(3)));
        let bytes = bincode::serialize(&w).unwrap();
        let fields = (at(5), chain, Some(crate::ir::FuncId(3)));
        assert_eq!(bytes, bincode::serialize(&fields).unwrap());
        let back: Witness = bincode::deserialize(&bytes).unwrap();
        assert_eq!(back.chain_len(), 2);
        assert_eq!(back, w);
    }

    /// Accesses `(path, lockset, line)`, inserted in the given order, coarsened by mapping
    /// every path to `g0` except `g9` (dropped).
    fn coarsened(accesses: &[(u32, RelativeLockset, u32)]) -> (AccessTables, Vec<GuardedAccess>) {
        let mut set = AccessSet::default();
        for (p, locks, line) in accesses {
            let key = (
                set.path_id(global(*p).with(Step::Deref)),
                set.lockset_id(locks),
                AccessKind::Write,
                false,
                Phase::Before,
            );
            // g1 and g2 are ints, g3 a pointer: merged, they are either.
            let value = Some(if *p == 3 {
                AliasClass::Pointer
            } else {
                AliasClass::Int(4)
            });
            set.insert(key, Some(7), value, 0, at(*line), || {
                Witness::new(at(*line), Chain::empty(), None)
            });
        }
        set.coarsen(|p| (p.root != Root::Global(GlobalId(9))).then(|| global(0)))
            .finish()
    }

    #[test]
    fn coarsen_joins_locksets_and_keeps_every_site() {
        let accesses = vec![
            (1, held(&[1, 2], &[]), 30),
            (2, held(&[1], &[3]), 20),
            (3, held(&[1, 2], &[4]), 40),
            (9, held(&[], &[]), 10),
        ];
        let (tables, out) = coarsened(&accesses);
        assert_eq!(out.len(), 1, "one merged access; g9 dropped");
        assert_eq!(
            tables,
            AccessTables::new(vec![global(0)], vec![held(&[1], &[3, 4])])
        );
        let lines: Vec<Loc> = out[0].witnesses.iter().map(|w| w.loc).collect();
        assert_eq!(lines, vec![at(20), at(30), at(40)]);
        assert_eq!(out[0].class, Some(7));
        assert_eq!(out[0].value, None, "an int and a pointer merged");
        let ints = coarsened(&accesses[..2]).1;
        assert_eq!(ints[0].value, Some(AliasClass::Int(4)), "two ints merged");
        // Any insertion order gives the same result.
        let mut reversed = accesses.clone();
        reversed.reverse();
        assert_eq!(coarsened(&reversed), (tables, out));
    }

    #[test]
    fn one_witness_per_site_with_its_shortest_chain_up_to_the_bound() {
        let mut set = AccessSet::default();
        let key = (
            set.path_id(global(1)),
            set.lockset_id(&held(&[], &[])),
            AccessKind::Read,
            false,
            Phase::Threaded,
        );
        let callee = CallSite {
            loc: at(1000),
            callee: crate::ir::FuncId(3),
        };
        let long = Chain::prefixed(callee, &Chain::empty());
        let witness = |line: u32, chain: &Chain| Witness::new(at(line), chain.clone(), None);
        // The same site through a call, then directly: the direct (shorter) one replaces it.
        set.insert(key, None, None, 1, at(5), || witness(5, &long));
        set.insert(key, None, None, 0, at(5), || witness(5, &Chain::empty()));
        set.insert(key, None, None, 1, at(5), || witness(5, &long));
        for line in 10..10 + 2 * MAX_WITNESSES as u32 {
            set.insert(key, None, None, 0, at(line), || {
                witness(line, &Chain::empty())
            });
        }
        let (_, out) = set.finish();
        let ws = &out[0].witnesses;
        assert_eq!(ws.len(), MAX_WITNESSES);
        assert_eq!((ws[0].loc, ws[0].chain_len()), (at(5), 0));
        let distinct: std::collections::BTreeSet<Loc> = ws.iter().map(|w| w.loc).collect();
        assert_eq!(distinct.len(), MAX_WITNESSES, "one witness per site");
    }
}
