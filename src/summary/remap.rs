//! Renaming the run-specific ids inside a summary: interned [`Name`]s (their numbering depends
//! on the order parallel units were interned) and points-to classes (union-find representatives,
//! which move when any node is added). The summaries cache stores summaries with these ids
//! replaced by portable ones and maps them back on load ([`crate::cache::summaries`]).
//!
//! Renaming changes the order of paths, so the result is put back into the canonical form a
//! freshly computed summary has (sorted tables, accesses and `may` sets): a loaded summary is
//! equal to the one the analysis would compute.

use super::access::{sorted_table, AccessTables, GuardedAccess, Spawn, DERIVED_CLASS};
use super::chain::{CalleeMemo, Chain, LocMemo, SiteLocs, VisitMemo};
use super::lockset::{Lock, RelativeLockset};
use super::owned;
use super::path::{Path, Root, Step};
use super::threads::ThreadState;
use super::value::SymVal;
use super::Summary;
use crate::ir::{FuncId, GlobalId, Loc, Name, RecordId};

/// A renaming of names, classes, functions, globals and records; `None` means the id cannot be
/// renamed (the summary is then not portable, or not valid here). Functions, globals and
/// records are kept by default: only the cache's portable form renames them.
pub trait IdMap {
    fn name(&mut self, n: Name) -> Option<Name>;
    fn class(&mut self, c: u32) -> Option<u32>;
    fn func(&mut self, f: FuncId) -> Option<FuncId> {
        Some(f)
    }
    fn global(&mut self, g: GlobalId) -> Option<GlobalId> {
        Some(g)
    }
    fn record(&mut self, r: RecordId) -> Option<RecordId> {
        Some(r)
    }
}

impl Summary {
    /// The summary with every name and class renamed by `m`, in canonical form; `None` if `m`
    /// cannot rename one of them. Without its shared sets (a store keeps their names).
    pub fn remap(&self, m: &mut impl IdMap) -> Option<Summary> {
        self.clone().into_remapped(m)
    }

    /// [`Summary::remap`] of a summary not needed any more: its accesses and their witnesses
    /// are moved, not copied (a summary decoded from the cache is renamed at once).
    pub fn into_remapped(self, m: &mut impl IdMap) -> Option<Summary> {
        // Fields moved one by one (no `..self`): a new field must say how it is renamed.
        let (tables, accesses) = remap_accesses(&self.tables, self.accesses, m)?;
        Some(Summary {
            lockset: lockset(&self.lockset, m)?,
            ret: value(&self.ret, m)?,
            accesses,
            tables,
            spawns: self
                .spawns
                .iter()
                .map(|s| spawn(s, m))
                .collect::<Option<_>>()?,
            threads: ThreadState {
                spawned: self.threads.spawned,
                live: path_set(&self.threads.live, m)?,
                joined: path_set(&self.threads.joined, m)?,
                live_starts: self.threads.live_starts.remap(|f| m.func(f))?,
            },
            formal_escapes: self.formal_escapes,
            formal_self_refs: self.formal_self_refs,
            formal_loads_escape: self.formal_loads_escape,
            returns_fresh: self.returns_fresh,
            member_calls: self
                .member_calls
                .into_iter()
                .map(|c| {
                    Some(owned::MemberCall {
                        callee: m.func(c.callee)?,
                        args: c.args,
                    })
                })
                .collect::<Option<_>>()?,
            widened: self.widened,
            modelled: self.modelled,
            coarsened: self.coarsened,
            shared: Vec::new(),
        })
    }
}

impl Summary {
    /// Calls `m` on every name and class [`Summary::remap`] renames (in another order),
    /// without building the renamed copy: what the cache's first pass over a summary needs
    /// (which names it uses), at the cost of its tables rather than of its accesses.
    pub fn visit_ids(&self, m: &mut impl IdMap) -> Option<()> {
        for p in &self.tables.paths {
            path(p, m)?;
        }
        for l in &self.tables.locksets {
            lockset(l, m)?;
        }
        let named = self.accesses.iter().filter_map(|a| a.class);
        for c in named.filter(|&c| c != DERIVED_CLASS) {
            m.class(c)?;
        }
        lockset(&self.lockset, m)?;
        value(&self.ret, m)?;
        for s in &self.spawns {
            spawn(s, m)?;
        }
        path_set::<Vec<Path>>(&self.threads.live, m)?;
        path_set::<Vec<Path>>(&self.threads.joined, m)?;
        self.threads.live_starts.remap(|f| m.func(f))?;
        for c in &self.member_calls {
            m.func(c.callee)?;
        }
        for a in &self.accesses {
            for f in a.witnesses.iter().filter_map(|w| w.func) {
                m.func(f)?;
            }
        }
        Some(())
    }

    /// The callee of every call of the summary's call chains (the part that counts, see
    /// [`super::chain`]), once per chain node (a callee may come more than once): the cache
    /// stores chains apart from the summary, and names their callees with the functions
    /// [`Summary::visit_ids`] meets. The witnesses' chains share their nodes: walked whole per
    /// witness, they were most of encoding a summary.
    pub fn visit_callees(&self, v: &mut impl FnMut(FuncId)) {
        let mut memo = CalleeMemo::default();
        let witnesses = self.accesses.iter().flat_map(|a| a.witnesses.iter());
        let chains = witnesses
            .map(|w| (w.chain(), w.chain_len()))
            .chain(self.spawns.iter().map(|sp| (&sp.chain, sp.chain.len())));
        for (chain, len) in chains {
            chain.visit_callees(len, v, &mut memo);
        }
    }

    /// Every location of the summary of `f`, with the function whose body it is in (as
    /// [`Summary::map_locs`] tells it); a chain node shared by several witnesses is visited
    /// once.
    pub fn visit_locs(&self, f: FuncId, v: &mut impl FnMut(Loc, FuncId)) {
        let mut memo = VisitMemo::default();
        let witnesses = self.accesses.iter().flat_map(|a| &a.witnesses);
        let sites = witnesses
            .map(|w| (w.loc, w.chain(), w.func))
            .chain(self.spawns.iter().map(|sp| (sp.loc, &sp.chain, sp.func)));
        for (loc, chain, func) in sites {
            let last = chain.visit_locs(f, v, &mut memo);
            v(loc, func.unwrap_or(last));
        }
    }

    /// [`Summary::map_locs`] without rebuilding the chains: the witnesses' and spawns' own
    /// locations are rewritten, and the chains' calls' rewritten locations returned for
    /// [`super::chain::encode_with_mapped_table`] to write (a summary is encoded for the cache
    /// this way: making the rewritten chains was most of encoding it).
    pub fn map_locs_but_chains(
        &mut self,
        f: FuncId,
        m: &mut impl FnMut(Loc, FuncId) -> Loc,
    ) -> SiteLocs {
        let mut memo = VisitMemo::default();
        let mut sites = SiteLocs::default();
        // The function of the chain's last call; its calls' locations rewritten into `sites`.
        let mut last_callee = |chain: &Chain, m: &mut dyn FnMut(Loc, FuncId) -> Loc| {
            let mut visit = |l, owner| {
                sites.entry((l, owner)).or_insert_with(|| m(l, owner));
            };
            chain.visit_locs(f, &mut visit, &mut memo)
        };
        for w in self
            .accesses
            .iter_mut()
            .flat_map(|a| a.witnesses.iter_mut())
        {
            let last = last_callee(w.chain(), m);
            w.loc = m(w.loc, w.func.unwrap_or(last));
        }
        for sp in &mut self.spawns {
            let last = last_callee(&sp.chain, m);
            sp.loc = m(sp.loc, sp.func.unwrap_or(last));
        }
        sites
    }

    /// Rewrites every location of the summary of `f` with `m`, which is also told the function
    /// whose body the location is in: `f` for its own accesses and call sites, the callee of
    /// the previous call for the rest of a call chain, the performing function for an access.
    pub fn map_locs(&mut self, f: FuncId, m: &mut impl FnMut(Loc, FuncId) -> Loc) {
        let mut memo = LocMemo::default();
        for a in &mut self.accesses {
            for w in &mut a.witnesses {
                let (chain, last) = w.chain().map_locs(f, m, &mut memo);
                *w = super::Witness::new(m(w.loc, w.func.unwrap_or(last)), chain, w.func);
            }
        }
        for sp in &mut self.spawns {
            let last;
            (sp.chain, last) = sp.chain.map_locs(f, m, &mut memo);
            sp.loc = m(sp.loc, sp.func.unwrap_or(last));
        }
    }
}

pub fn path(p: &Path, m: &mut impl IdMap) -> Option<Path> {
    let root = match p.root {
        Root::Rep(c) => Root::Rep(m.class(c)?),
        Root::Pseudo(n) => Root::Pseudo(m.name(n)?),
        Root::Global(g) => Root::Global(m.global(g)?),
        r @ (Root::Formal(_) | Root::Local(_)) => r,
    };
    let steps = p
        .steps
        .iter()
        .map(|s| match *s {
            Step::Field(r, n) => Some(Step::Field(m.record(r)?, m.name(n)?)),
            s @ (Step::Deref | Step::Index | Step::Elem(_)) => Some(s),
        })
        .collect::<Option<_>>()?;
    Some(Path { root, steps })
}

/// A set of paths renamed (into any set type: thread handles are a `BTreeSet`, released locks a
/// `SortedSet`).
fn path_set<'a, C: FromIterator<Path>>(
    s: impl IntoIterator<Item = &'a Path>,
    m: &mut impl IdMap,
) -> Option<C> {
    s.into_iter().map(|p| path(p, m)).collect()
}

fn lock(l: &Lock, m: &mut impl IdMap) -> Option<Lock> {
    Some(Lock {
        path: path(&l.path, m)?,
        mode: l.mode,
    })
}

fn lockset(l: &RelativeLockset, m: &mut impl IdMap) -> Option<RelativeLockset> {
    Some(RelativeLockset {
        plus: l.plus.iter().map(|x| lock(x, m)).collect::<Option<_>>()?,
        rehold: path_set(&l.rehold, m)?,
        minus: path_set(&l.minus, m)?,
        minus_top: l.minus_top,
    })
}

fn value(v: &SymVal, m: &mut impl IdMap) -> Option<SymVal> {
    Some(match v {
        SymVal::Init(p) => SymVal::Init(path(p, m)?),
        SymVal::Must(p) => SymVal::Must(path(p, m)?),
        SymVal::May(ps) => {
            let mut ps: Vec<Path> = ps.iter().map(|p| path(p, m)).collect::<Option<_>>()?;
            ps.sort();
            SymVal::May(ps)
        }
        SymVal::Try { lock: l, nonzero } => SymVal::Try {
            lock: lock(l, m)?,
            nonzero: *nonzero,
        },
        SymVal::Func(f) => SymVal::Func(m.func(*f)?),
        SymVal::Bottom | SymVal::Top | SymVal::Int(_) => v.clone(),
    })
}

fn spawn(s: &Spawn, m: &mut impl IdMap) -> Option<Spawn> {
    Some(Spawn {
        start: s.start.iter().map(|&f| m.func(f)).collect::<Option<_>>()?,
        arg: match &s.arg {
            Some(p) => Some(path(p, m)?),
            None => None,
        },
        func: match s.func {
            Some(f) => Some(m.func(f)?),
            None => None,
        },
        ..s.clone()
    })
}

/// Renamed tables, sorted again, and the accesses re-indexed and sorted as
/// [`super::access::AccessSet::finish`] leaves them.
fn remap_accesses(
    t: &AccessTables,
    mut accesses: Vec<GuardedAccess>,
    m: &mut impl IdMap,
) -> Option<(AccessTables, Vec<GuardedAccess>)> {
    let paths: Vec<Path> = t.paths.iter().map(|p| path(p, m)).collect::<Option<_>>()?;
    let locksets: Vec<RelativeLockset> = t
        .locksets
        .iter()
        .map(|l| lockset(l, m))
        .collect::<Option<_>>()?;
    let (paths, path_new) = sorted_table(paths);
    let (locksets, lockset_new) = sorted_table(locksets);
    for a in &mut accesses {
        for w in a.witnesses.iter_mut() {
            if let Some(f) = &mut w.func {
                *f = m.func(*f)?;
            }
        }
        a.path = *path_new.get(a.path as usize)?;
        a.locks = *lockset_new.get(a.locks as usize)?;
        if let Some(c) = a.class.as_mut().filter(|c| **c != DERIVED_CLASS) {
            *c = m.class(*c)?;
        }
    }
    let mut out = accesses;
    out.sort_by_key(|a| (a.path, a.locks, a.kind, a.atomic, a.phase));
    Some((AccessTables::new(paths, locksets), out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{GlobalId, RecordId};
    use crate::summary::access::{AccessKind, Witness};
    use crate::summary::threads::Phase;

    /// Reverses the order of names and classes below 10: sorting must be redone.
    struct Reverse;
    impl IdMap for Reverse {
        fn name(&mut self, n: Name) -> Option<Name> {
            (n.0 < 10).then(|| Name(9 - n.0))
        }
        fn class(&mut self, c: u32) -> Option<u32> {
            (c < 10).then(|| 9 - c)
        }
    }

    struct Identity;
    impl IdMap for Identity {
        fn name(&mut self, n: Name) -> Option<Name> {
            Some(n)
        }
        fn class(&mut self, c: u32) -> Option<u32> {
            Some(c)
        }
    }

    fn field(root: Root, n: u32) -> Path {
        Path::new(root)
            .with(Step::Deref)
            .with(Step::Field(RecordId(0), Name(n)))
    }

    fn summary() -> Summary {
        let paths = vec![
            field(Root::Rep(1), 2),
            field(Root::Rep(3), 1),
            field(Root::Formal(0), 5),
        ];
        let lock = |p: Path| Lock {
            path: p,
            mode: crate::models::LockMode::Exclusive,
        };
        let locksets = vec![
            RelativeLockset::default(),
            RelativeLockset {
                plus: [lock(field(Root::Global(GlobalId(0)), 4))]
                    .into_iter()
                    .collect(),
                rehold: Default::default(),
                minus: Default::default(),
                minus_top: false,
            },
        ];
        let access = |path, locks, class| GuardedAccess {
            path,
            locks,
            kind: AccessKind::Write,
            atomic: false,
            value: None,
            class,
            phase: Phase::Before,
            witnesses: Box::new([Witness::new(
                crate::ir::Loc::default(),
                crate::summary::Chain::empty(),
                None,
            )]),
        };
        Summary {
            accesses: vec![
                access(0, 0, Some(1)),
                access(1, 1, Some(3)),
                access(2, 0, None),
            ],
            tables: AccessTables::new(paths, locksets),
            ret: SymVal::May(vec![field(Root::Rep(1), 0), field(Root::Rep(2), 0)]),
            ..Summary::default()
        }
    }

    #[test]
    fn renaming_twice_is_the_identity_and_stays_canonical() {
        // In canonical form, as the analysis leaves summaries.
        let s = summary().remap(&mut Identity).unwrap();
        let r = s.remap(&mut Reverse).unwrap();
        assert_ne!(r, s);
        assert!(r.tables.paths.windows(2).all(|w| w[0] < w[1]));
        assert!(matches!(&r.ret, SymVal::May(ps) if ps.windows(2).all(|w| w[0] < w[1])));
        // Each access still denotes the same (renamed) path, lockset and class.
        let renamed: std::collections::BTreeSet<_> = s
            .accesses()
            .map(|a| {
                let p = path(a.path, &mut Reverse).unwrap();
                let l = lockset(a.locks, &mut Reverse).unwrap();
                (p, l, a.class.map(|c| 9 - c))
            })
            .collect();
        let got: std::collections::BTreeSet<_> = r
            .accesses()
            .map(|a| (a.path.clone(), a.locks.clone(), a.class))
            .collect();
        assert_eq!(renamed, got);
        let back = r.remap(&mut Reverse).unwrap();
        assert_eq!(back, s);
    }

    /// Records the ids it is asked for.
    #[derive(Default)]
    struct Seen(Vec<Name>, Vec<u32>);
    impl IdMap for Seen {
        fn name(&mut self, n: Name) -> Option<Name> {
            self.0.push(n);
            Some(n)
        }
        fn class(&mut self, c: u32) -> Option<u32> {
            self.1.push(c);
            Some(c)
        }
    }

    #[test]
    fn visiting_ids_meets_those_renaming_meets() {
        let s = summary();
        let (mut renamed, mut visited) = (Seen::default(), Seen::default());
        s.remap(&mut renamed).unwrap();
        s.visit_ids(&mut visited).unwrap();
        for seen in [&mut renamed, &mut visited] {
            seen.0.sort();
            seen.0.dedup();
            seen.1.sort();
            seen.1.dedup();
        }
        assert!(!renamed.0.is_empty() && !renamed.1.is_empty());
        assert_eq!((renamed.0, renamed.1), (visited.0, visited.1));
        assert_eq!(s.visit_ids(&mut Reverse), s.remap(&mut Reverse).map(|_| ()));
    }

    #[test]
    fn an_unmappable_id_fails_the_whole_summary() {
        let mut s = summary();
        s.tables
            .paths
            .push(crate::summary::intern::Interned::new(field(
                Root::Rep(42),
                0,
            )));
        assert!(s.remap(&mut Reverse).is_none());
    }
}
