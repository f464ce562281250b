//! Figure 7's test for a pair of access groups ([`super::candidates`]), counting the stage each
//! pair of performances fails at (Chord's pipeline: considered → may alias → concurrent →
//! unlocked).
//!
//! A pair of groups stands for every pair of their performers (entry pairs). Most of the test
//! reads only the accesses; where it reads the entries — an entry run once does not race with
//! itself, thread-private arguments, the ordering by thread creation and joins, a lock reached
//! from the thread's argument — and the groups make that matter, the entry pairs are tested one
//! by one. Otherwise one test decides for all, and the counts are multiplied.

use std::borrow::Cow;

use rustc_hash::FxHashMap;

use super::candidates::{Group, Orderers, Performer};
use super::entries::ThreadEntry;
use super::objects::AccessObjects;
use super::pairs::{Pair, PairStats, Side};
use super::types::TypeAlias;
use crate::ir::types::RecordKind;
use crate::link::Program;
use crate::models::LockMode;
use crate::summary::{AccessKind, AccessView, Path, Phase, Root, Step};

/// What the test of a pair reads besides the two groups.
pub(super) struct PairContext<'p> {
    pub program: &'p Program,
    pub entries: &'p [ThreadEntry],
    /// Type-aware aliasing, when on ([`super::types`]).
    pub type_alias: Option<&'p TypeAlias>,
    /// Distinct objects on ([`super::objects`]).
    pub objects: Option<AccessObjects<'p>>,
    orderers: Orderers,
}

/// A worker's own state: its counts and memo tables.
#[derive(Default)]
pub(super) struct Scratch {
    pub stats: PairStats,
    /// Disjointness of two object sets ([`AccessObjects::disjoint`]).
    pub disjoint: FxHashMap<(u32, u32), bool>,
    /// The sizes of intersections of two groups' `once` lists, by the lists' addresses (equal
    /// lists are one list, and in a large bucket a few lists are shared by most groups).
    both_once: FxHashMap<(usize, usize), usize>,
}

impl<'p> PairContext<'p> {
    pub fn new(
        program: &'p Program,
        entries: &'p [ThreadEntry],
        type_alias: Option<&'p TypeAlias>,
        objects: Option<AccessObjects<'p>>,
    ) -> Self {
        PairContext {
            program,
            entries,
            type_alias,
            objects,
            orderers: Orderers::of(entries),
        }
    }

    fn multiple(&self, p: &Performer<'_>) -> bool {
        self.entries[p.entry].multiple
    }

    /// Whether two performances form a pair: two different entries, or one that runs more than
    /// once (concurrent with itself).
    fn valid(&self, p: &Performer<'_>, q: &Performer<'_>) -> bool {
        p.entry != q.entry || self.multiple(p)
    }

    /// Calls `f` on every pair of performances of `x` and `y` (unordered, each with itself too,
    /// when they are one group) that forms a pair, in performer order; stops when `f` says so.
    fn each_pair<'a>(
        &self,
        x: &Group<'a>,
        y: &Group<'a>,
        same: bool,
        mut f: impl FnMut(&Performer<'a>, &Performer<'a>) -> bool,
    ) {
        for (i, p) in x.performers.iter().enumerate() {
            let from = if same { i } else { 0 };
            for q in (from..y.performers.len()).map(|j| y.performers.get(j)) {
                if self.valid(&p, &q) && !f(&p, &q) {
                    return;
                }
            }
        }
    }

    /// Calls `f` on every pair of performances of `x` and `y` (among those
    /// [`PairContext::each_pair`] visits) by one entry whose argument object holds both
    /// accesses: walks the two performer lists (in entry order) side by side instead of
    /// visiting every pair. Within one group every performer is another entry, so there it is
    /// each performer with itself, which `each_pair` visits too.
    fn each_own_pair<'a>(
        &self,
        x: &Group<'a>,
        y: &Group<'a>,
        mut f: impl FnMut(&Performer<'a>, &Performer<'a>),
    ) {
        let (a, b) = (x.access.path, y.access.path);
        let (px, py) = (&x.performers, &y.performers);
        let own = |p: &Performer<'a>, q: &Performer<'a>| {
            let e = &self.entries[p.entry];
            self.valid(p, q) && in_own_argument(e, a) && in_own_argument(e, b)
        };
        let (mut i, mut j) = (0, 0);
        while i < px.len() && j < py.len() {
            let (p, q) = (px.get(i), py.get(j));
            match p.entry.cmp(&q.entry) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    if own(&p, &q) {
                        f(&p, &q);
                    }
                    i += 1;
                    j += 1;
                }
            }
        }
    }

    /// How many pairs of performances `x` and `y` form (see [`PairContext::each_pair`]).
    fn count_pairs(
        &self,
        x: &Group<'_>,
        y: &Group<'_>,
        same: bool,
        both_once: &mut FxHashMap<(usize, usize), usize>,
    ) -> usize {
        let n = x.performers.len();
        if same {
            // Performers are different entries: every two of them, and each with itself when
            // it runs more than once.
            return n * (n - 1) / 2 + (n - x.once.len());
        }
        let both = if x.once.is_empty() || y.once.is_empty() {
            0
        } else if x.once.len() + y.once.len() < MEMO_ONCE_FROM {
            sorted_intersection(&x.once, &y.once)
        } else {
            let key = |l: &[usize]| l.as_ptr() as usize;
            *both_once
                .entry((key(&x.once), key(&y.once)))
                .or_insert_with(|| sorted_intersection(&x.once, &y.once))
        };
        n * y.performers.len() - both
    }
}

/// Two `once` lists are intersected through the memo when together at least this long: the
/// long ones are few (the lists of entries reaching a collapsed SCC), the short ones many.
const MEMO_ONCE_FROM: usize = 64;

fn sorted_intersection(x: &[usize], y: &[usize]) -> usize {
    if std::ptr::eq(x, y) {
        return x.len();
    }
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < x.len() && j < y.len() {
        match x[i].cmp(&y[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// The test of every pair of performances of `x` and `y` (one group with itself when `same`):
/// the race between the first pair that races, if any.
pub(super) fn check<'a>(
    cx: &PairContext<'_>,
    x: &Group<'a>,
    y: &Group<'a>,
    same: bool,
    scratch: &mut Scratch,
) -> Option<Pair<'a>> {
    let (a, b) = (&x.access, &y.access);
    if a.kind != AccessKind::Write && b.kind != AccessKind::Write {
        return None;
    }
    let n = cx.count_pairs(x, y, same, &mut scratch.both_once);
    if n == 0 {
        return None;
    }
    let stats = &mut scratch.stats;
    stats.considered += n;
    if matches!((x.object, y.object), (Some(p), Some(q)) if p != q)
        || !may_alias(cx.program, a.path, b.path)
    {
        return None;
    }
    // Thread-private arguments concern two performances by one entry; the rest of the test
    // depends on the entries only through ordering and argument locks.
    let private = own_argument_shape(a.path) && own_argument_shape(b.path);
    let entry_dependent = private || x.may_order || y.may_order || x.arg_locks || y.arg_locks;
    let mut kept = n;
    if private {
        cx.each_own_pair(x, y, |_, _| kept -= 1);
        stats.private_arg += n - kept;
        if kept == 0 {
            return None;
        }
    }
    if cx.type_alias.is_some_and(|t| t.incompatible(&x.ty, &y.ty)) {
        stats.type_alias += kept;
        return None;
    }
    if let Some(objects) = &cx.objects {
        if objects.disjoint(x.objects, y.objects, &mut scratch.disjoint) {
            scratch.stats.distinct_objects += kept;
            return None;
        }
    }
    let stats = &mut scratch.stats;
    stats.may_alias += kept;
    if !entry_dependent {
        // One verdict for every pair: tested on the first.
        let mut first = None;
        cx.each_pair(x, y, same, |p, q| {
            first = Some((*p, *q));
            false
        });
        let (p, q) = first?;
        stats.concurrent += kept;
        let (ep, eq) = (&cx.entries[p.entry], &cx.entries[q.entry]);
        if (a.atomic && b.atomic) || protected((ep, a), (eq, b)) {
            return None;
        }
        stats.unlocked += kept;
        return Some(race(cx, x, &p, y, &q));
    }
    by_entries(cx, x, y, same, private, kept, stats)
}

/// The test of the `n` pairs of performances left after thread-private arguments (`private`:
/// the paths may be in one entry's own argument) when the verdict depends on the entries. It
/// depends on them in two ways only: a pair with an entry that orders others ([`Orderers`]) may
/// be ordered, and a performer whose known argument renames the group's locks
/// (`Group::arg_locks`) may be protected differently. Every other pair shares one verdict, so
/// only the pairs with such a performer are visited — on the kernel a group is performed by a
/// thousand entries, and visiting every pair of two groups' performances took minutes. Counts,
/// verdict and the racing pair reported (the first in [`PairContext::each_pair`]'s order) are
/// those of visiting every pair.
fn by_entries<'a>(
    cx: &PairContext<'_>,
    x: &Group<'a>,
    y: &Group<'a>,
    same: bool,
    private: bool,
    n: usize,
    stats: &mut PairStats,
) -> Option<Pair<'a>> {
    let (a, b) = (&x.access, &y.access);
    let (px, py) = (&x.performers, &y.performers);
    // A pair the private arguments removed; one left after them that the ordering removes.
    let own = |p: &Performer<'_>, q: &Performer<'_>| {
        let e = &cx.entries[p.entry];
        private && p.entry == q.entry && in_own_argument(e, a.path) && in_own_argument(e, b.path)
    };
    let ordered_pair = |p: &Performer<'_>, q: &Performer<'_>| {
        let (ep, eq) = (&cx.entries[p.entry], &cx.entries[q.entry]);
        cx.valid(p, q) && !own(p, q) && (ordered(ep, a, eq) || ordered(eq, b, ep))
    };
    let ordering = |g: &Group<'_>, phase| -> Vec<bool> {
        let by = cx.orderers.in_phase(phase);
        g.performers
            .iter()
            .map(|p| by.is_some_and(|o| o[p.entry]))
            .collect()
    };
    let ordered_pairs = count_special_pairs(
        (&ordering(x, a.phase), &ordering(y, b.phase)),
        same,
        |i, j| ordered_pair(&px.get(i), &py.get(j)),
    );
    let concurrent = n - ordered_pairs;
    stats.concurrent += concurrent;
    if concurrent == 0 || (a.atomic && b.atomic) {
        return None;
    }
    // The argument a performer instantiates the group's locks with, if it may rename them.
    let argument = |g: &Group<'_>, p: &Performer<'_>| {
        g.arg_locks
            .then(|| cx.entries[p.entry].arg.as_ref())
            .flatten()
    };
    let renaming = |g: &Group<'a>| -> Vec<bool> {
        g.performers
            .iter()
            .map(|p| argument(g, &p).is_some())
            .collect()
    };
    let (rx, ry) = (renaming(x), renaming(y));
    let concurrent_pair = |i: usize, j: usize| {
        let (p, q) = (px.get(i), py.get(j));
        cx.valid(&p, &q) && !own(&p, &q) && !ordered_pair(&p, &q)
    };
    // The pairs with a renaming performer, one by one: the concurrent ones, those unprotected,
    // and the first of these.
    let (mut renamed, mut unlocked, mut first) = (0, 0, None::<(usize, usize)>);
    count_special_pairs((&rx, &ry), same, |i, j| {
        if concurrent_pair(i, j) {
            renamed += 1;
            let (p, q) = (px.get(i), py.get(j));
            if !protected_with((argument(x, &p), a), (argument(y, &q), b)) {
                unlocked += 1;
                first = Some(first.map_or((i, j), |f| f.min((i, j))));
            }
        }
        false
    });
    // The others share one verdict; their first racing pair is found by visiting them in
    // order, up to the first renamed one.
    if !protected_with((None, a), (None, b)) && concurrent > renamed {
        unlocked += concurrent - renamed;
        'rows: for i in (0..px.len()).filter(|&i| !rx[i]) {
            let from = if same { i } else { 0 };
            for j in (from..py.len()).filter(|&j| !ry[j]) {
                if first.is_some_and(|f| f < (i, j)) {
                    break 'rows;
                }
                if concurrent_pair(i, j) {
                    first = Some((i, j));
                    break 'rows;
                }
            }
        }
    }
    stats.unlocked += unlocked;
    let (i, j) = first?;
    Some(race(cx, x, &px.get(i), y, &py.get(j)))
}

/// Calls `f(i, j)` on every pair of `each_pair`'s range (`i ≤ j` within one group) with a
/// special performer (`special.0[i]` or `special.1[j]`), each once, and counts those it says
/// yes to.
fn count_special_pairs(
    (sx, sy): (&[bool], &[bool]),
    same: bool,
    mut f: impl FnMut(usize, usize) -> bool,
) -> usize {
    let mut n = 0;
    for i in (0..sx.len()).filter(|&i| sx[i]) {
        let from = if same { i } else { 0 };
        n += (from..sy.len()).filter(|&j| f(i, j)).count();
    }
    for j in (0..sy.len()).filter(|&j| sy[j]) {
        let to = if same { j } else { sx.len() };
        n += (0..to).filter(|&i| !sx[i] && f(i, j)).count();
    }
    n
}

/// The race between `p`'s performance of `x` and `q`'s of `y`, its sides in location order.
fn race<'a>(
    cx: &PairContext<'_>,
    x: &Group<'a>,
    p: &Performer<'a>,
    y: &Group<'a>,
    q: &Performer<'a>,
) -> Pair<'a> {
    let side = |g: &Group<'a>, p: &Performer<'a>| Side {
        entry: cx.entries[p.entry].func,
        collapsed: match &g.performers {
            super::candidates::Performers::Reaching { entries, scc, .. } => {
                Some((*scc, entries.len()))
            }
            super::candidates::Performers::Listed(_) => None,
        },
        access: g.view(p),
        also: Vec::new(),
    };
    let performers = [p.entry, q.entry].map(|e| e as u32);
    let (x, y) = (side(x, p), side(y, q));
    let key = |s: &Side<'_>| (s.access.witness().loc, s.entry);
    let (first, second) = if key(&x) <= key(&y) { (x, y) } else { (y, x) };
    Pair {
        first,
        second,
        performers,
    }
}

/// The race [`check`] found between groups `x` and `y`, made again from the performances it
/// was found between (entries `p` of `x` and `q` of `y`, [`Pair::performers`]) without testing
/// them: what a replayed bucket of the pair memo holds ([`super::memo`]). `None` if a group has
/// no such performer (a stale record).
pub(super) fn remake<'a>(
    cx: &PairContext<'_>,
    x: &Group<'a>,
    p: u32,
    y: &Group<'a>,
    q: u32,
) -> Option<Pair<'a>> {
    let p = x.performers.find(p as usize)?;
    let q = y.performers.find(q as usize)?;
    Some(race(cx, x, &p, y, &q))
}

/// The paths thread-private arguments can apply to: inside the thread argument's object.
fn own_argument_shape(path: &Path) -> bool {
    path.root == Root::Formal(0)
        && path.steps.first() == Some(&Step::Deref)
        && !path.steps[1..].contains(&Step::Deref)
}

/// Thread-private arguments: an access of an entry whose every creation hands it an object of
/// its own, inside that object (the formal's pointee, members and elements, no pointer loaded
/// from memory on the way). Two instances of the entry access two objects there.
fn in_own_argument(e: &ThreadEntry, path: &Path) -> bool {
    e.private_arg
        && path.root == Root::Formal(0)
        && path.steps.first() == Some(&Step::Deref)
        && !path.steps[1..].contains(&Step::Deref)
        // An element's own members only: `arg[1]` is the next element.
        && (!e.private_element || !matches!(path.steps.get(1), Some(s) if s.is_element()))
}

/// The ordering analysis (thread creation history): an access of an entry that runs once
/// (`main`, a thread started once), made before its first thread creation, precedes every thread
/// created only inside it (directly or by such threads); one made after it joined all the
/// threads it created follows every thread that cannot outlive them.
fn ordered(mine: &ThreadEntry, a: &AccessView<'_>, other: &ThreadEntry) -> bool {
    let by = match a.phase {
        Phase::Before => &other.ordered_by,
        Phase::Joined => &other.joined_by,
        Phase::Threaded => return false,
    };
    !mine.multiple && by.binary_search(&mine.func).is_ok()
}

/// Whether a lock held at both accesses keeps them apart: a lock both hold, at least one side
/// exclusively, that names one lock in both threads. A global lock (or one reached from a
/// global) does; a lock reached from a thread's argument or a points-to representative
/// (`d->lock`) names a different lock in each thread — it still protects the accesses that go
/// through the same base (`d->count`): if the two `d` differ, so do the accesses
/// (conditional must-not-alias, Naik & Aiken POPL 2007).
///
/// A lock reached from the thread's argument, when every creation passes the same global
/// object, is that object's lock in every instance of the entry.
fn protected(
    (ea, a): (&ThreadEntry, &AccessView<'_>),
    (eb, b): (&ThreadEntry, &AccessView<'_>),
) -> bool {
    protected_with((ea.arg.as_ref(), a), (eb.arg.as_ref(), b))
}

/// [`protected`], given the global objects the two threads' arguments are, if known.
fn protected_with(
    (ea, a): (Option<&Path>, &AccessView<'_>),
    (eb, b): (Option<&Path>, &AccessView<'_>),
) -> bool {
    a.locks.plus.iter().any(|la| {
        b.locks.plus.iter().any(|lb| {
            let exclusive = la.mode == LockMode::Exclusive || lb.mode == LockMode::Exclusive;
            let (ra, rb) = (instantiate(&la.path, ea), instantiate(&lb.path, eb));
            exclusive
                && ((ra == rb && names_one_lock(&ra))
                    || (la.path == lb.path && same_base(&la.path, a.path, b.path)))
        })
    })
}

/// A path of the entry's summary with the thread argument (`Formal(0)` dereferenced) replaced
/// by the global object every creation passes, when there is one.
fn instantiate<'p>(p: &'p Path, arg: Option<&Path>) -> Cow<'p, Path> {
    match (arg, p.root, p.steps.first()) {
        (Some(arg), Root::Formal(0), Some(Step::Deref)) => Cow::Owned(arg.extended(&p.steps[1..])),
        _ => Cow::Borrowed(p),
    }
}

/// Global locks, members of globals, locks reached from a global pointer (RELAY's assumption
/// that the pointer is not reassigned), and pseudo-locks (`rcu`). Never an element of an array
/// of locks at a non-constant index (`m[i]`, `a[i].mutex`, `item_locks[hv & mask]`): paths do
/// not keep such an index, so two threads may hold different elements; `m[3]` is one lock.
fn names_one_lock(p: &Path) -> bool {
    matches!(p.root, Root::Global(_) | Root::Pseudo(_)) && !indexed(p)
}

fn indexed(p: &Path) -> bool {
    p.steps.contains(&Step::Index)
}

/// Two different constant elements of one array (`m[3]` and `m[4]`).
fn different_elements(x: Option<&Step>, y: Option<&Step>) -> bool {
    matches!((x, y), (Some(Step::Elem(a)), Some(Step::Elem(b))) if a != b)
}

/// Both accesses are in the same object `P` (their paths up to the last dereference agree), and
/// the lock is reached from it (`P.lock`, or `*P.mutex` for a lock the object points to): if the
/// two threads' `P` are one object they hold one lock, otherwise the accesses do not alias.
fn same_base(lock: &Path, a: &Path, b: &Path) -> bool {
    fn object(p: &Path) -> &[Step] {
        let members = p
            .steps
            .iter()
            .rev()
            .take_while(|s| !matches!(s, Step::Deref))
            .count();
        &p.steps[..p.steps.len() - members]
    }
    let (oa, ob) = (object(a), object(b));
    a.root == b.root
        && oa == ob
        && lock.root == a.root
        && lock.steps.starts_with(oa)
        && !indexed(lock)
}

/// RELAY's mayEqual, after the bucketing by class: sound syntactic checks that separate accesses
/// of one class — two different variables, or two different members of one struct.
fn may_alias(program: &Program, a: &Path, b: &Path) -> bool {
    if let (Root::Global(x), Root::Global(y)) = (a.root, b.root) {
        if x != y && !a.steps.contains(&Step::Deref) && !b.steps.contains(&Step::Deref) {
            return false;
        }
    }
    let different_members = |x: Option<&Step>, y: Option<&Step>| match (x, y) {
        (Some(Step::Field(ra, fa)), Some(Step::Field(rb, fb))) if ra == rb && fa != fb => {
            program.types.record(*ra).kind != RecordKind::Union
        }
        _ => false,
    };
    if different_members(a.steps.last(), b.steps.last()) {
        return false;
    }
    // One object reached the same way, then two different members of it (`d->lock` and
    // `d->pwr.ev`; `d->lock` as a whole, from a lock operation, and `d->pwr.ev`).
    if a.root == b.root {
        let common = a
            .steps
            .iter()
            .zip(&b.steps)
            .take_while(|(x, y)| x == y)
            .count();
        let (x, y) = (a.steps.get(common), b.steps.get(common));
        if different_members(x, y) || different_elements(x, y) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::super::candidates::Performers;
    use super::*;
    use crate::ir::types::RecordId;
    use crate::ir::{FuncId, GlobalId, Loc, Name};
    use crate::summary::Lock;
    use crate::summary::Witness;

    fn field(n: u32) -> Step {
        Step::Field(RecordId(0), Name(n))
    }
    /// `arg->f<n>` in a thread entry.
    fn arg_member(n: u32) -> Path {
        Path::new(Root::Formal(0)).with(Step::Deref).with(field(n))
    }
    fn entry(arg: Option<Path>) -> ThreadEntry {
        ThreadEntry {
            func: FuncId(0),
            multiple: true,
            is_main: false,
            ordered_by: Vec::new(),
            joined_by: Vec::new(),
            arg,
            private_arg: false,
            private_element: false,
            origin: crate::race::entries::EntryOrigin::Started,
        }
    }
    fn lockset(locks: &[Path]) -> crate::summary::RelativeLockset {
        let mut l = crate::summary::RelativeLockset::default();
        for p in locks {
            l.acquire(Lock {
                path: p.clone(),
                mode: LockMode::Exclusive,
            });
        }
        l
    }
    fn protects(locks: &[Path], a: &Path, b: &Path, arg: Option<Path>) -> bool {
        let l = lockset(locks);
        let view = |p| AccessView {
            path: p,
            locks: &l,
            kind: AccessKind::Write,
            atomic: false,
            value: None,
            class: None,
            phase: Phase::Threaded,
            witnesses: &[],
        };
        let e = entry(arg);
        protected((&e, &view(a)), (&e, &view(b)))
    }

    #[test]
    fn a_lock_through_the_thread_argument_protects_only_its_own_object() {
        let lock = arg_member(1);
        // `d->lock` held, `d->count` accessed: if the two `d` differ so do the accesses.
        assert!(protects(
            std::slice::from_ref(&lock),
            &arg_member(2),
            &arg_member(2),
            None
        ));
        // `d->lock` held, a global accessed: different threads may hold different locks.
        let g = Path::new(Root::Global(GlobalId(7)));
        assert!(!protects(std::slice::from_ref(&lock), &g, &g, None));
        // … unless every creation passes the same global object.
        let dev = Path::new(Root::Global(GlobalId(3)));
        assert!(protects(&[lock], &g, &g, Some(dev)));
    }

    #[test]
    fn a_global_lock_protects_everything() {
        let lock = Path::new(Root::Global(GlobalId(1)));
        let g = Path::new(Root::Global(GlobalId(7)));
        assert!(protects(&[lock], &g, &g, None));
        assert!(!protects(&[], &g, &g, None));
    }

    #[test]
    fn same_base_needs_the_lock_base_as_a_prefix_of_both_accesses() {
        let lock = arg_member(1);
        assert!(same_base(&lock, &arg_member(2), &arg_member(3)));
        let other = Path::new(Root::Formal(1)).with(Step::Deref).with(field(2));
        assert!(!same_base(&lock, &arg_member(2), &other));
        // `db->mutex` points to the lock: `*db->mutex` guards `db->trace`.
        let through = arg_member(4).with(Step::Deref);
        assert!(same_base(&through, &arg_member(2), &arg_member(3)));
        // A member of another object reached from `db` is not guarded by it.
        let deeper = arg_member(5).with(Step::Deref).with(field(2));
        assert!(!same_base(&lock, &deeper, &deeper));
    }

    #[test]
    fn an_entry_run_once_orders_only_what_its_phases_say() {
        let started = ThreadEntry {
            ordered_by: vec![FuncId(7)],
            ..entry(None)
        };
        let main = ThreadEntry {
            func: FuncId(7),
            is_main: true,
            multiple: false,
            ..entry(None)
        };
        let l = lockset(&[]);
        let p = Path::new(Root::Global(GlobalId(1)));
        let at = |phase| AccessView {
            path: &p,
            locks: &l,
            kind: AccessKind::Write,
            atomic: false,
            value: None,
            class: None,
            phase,
            witnesses: &[],
        };
        assert!(ordered(&main, &at(Phase::Before), &started));
        assert!(
            !ordered(&main, &at(Phase::Joined), &started),
            "not join-ordered"
        );
        assert!(!ordered(&main, &at(Phase::Threaded), &started));
        assert!(
            !ordered(&started, &at(Phase::Before), &main),
            "only the starter's phases order"
        );
        // A thread started once orders what it starts, as `main` does; not when it runs twice.
        let parent = ThreadEntry {
            func: FuncId(3),
            multiple: false,
            ..entry(None)
        };
        let child = ThreadEntry {
            ordered_by: vec![FuncId(3), FuncId(7)],
            joined_by: vec![FuncId(3)],
            ..entry(None)
        };
        assert!(ordered(&parent, &at(Phase::Before), &child));
        assert!(ordered(&parent, &at(Phase::Joined), &child));
        let twice = ThreadEntry {
            multiple: true,
            ..parent
        };
        assert!(!ordered(&twice, &at(Phase::Before), &child));
    }

    /// A program with nothing in it: `may_alias` and the type check read it only for members.
    fn empty_program() -> Program {
        let names = crate::ir::names::Names::new();
        let out = crate::frontend::lower::lower_unit("t.c".to_string(), "int g;", &names);
        let mut linker = crate::link::Linker::new(std::sync::Arc::new(names));
        linker.add(0, out.unit);
        linker.finish()
    }

    /// The test of one pair of performances, as it was before accesses were grouped.
    fn one_pair(
        cx: &PairContext<'_>,
        (ei, a): (usize, &AccessView<'_>),
        (ej, b): (usize, &AccessView<'_>),
        stats: &mut PairStats,
    ) -> bool {
        let entries = cx.entries;
        let writes = a.kind == AccessKind::Write || b.kind == AccessKind::Write;
        if !writes || !(ei != ej || entries[ei].multiple) {
            return false;
        }
        stats.considered += 1;
        if !may_alias(cx.program, a.path, b.path) {
            return false;
        }
        if ei == ej
            && in_own_argument(&entries[ei], a.path)
            && in_own_argument(&entries[ej], b.path)
        {
            stats.private_arg += 1;
            return false;
        }
        stats.may_alias += 1;
        if ordered(&entries[ei], a, &entries[ej]) || ordered(&entries[ej], b, &entries[ei]) {
            return false;
        }
        stats.concurrent += 1;
        if (a.atomic && b.atomic) || protected((&entries[ei], a), (&entries[ej], b)) {
            return false;
        }
        stats.unlocked += 1;
        true
    }

    #[test]
    fn a_group_pair_counts_decides_and_reports_as_its_performance_pairs_do() {
        let program = empty_program();
        // main (run once, orders t), t (run once), w (runs twice, private argument), c (runs
        // twice, started with the global `dev` as its argument).
        let main = ThreadEntry {
            func: FuncId(0),
            multiple: false,
            is_main: true,
            ..entry(None)
        };
        let t = ThreadEntry {
            func: FuncId(1),
            multiple: false,
            ordered_by: vec![FuncId(0)],
            ..entry(None)
        };
        let w = ThreadEntry {
            func: FuncId(2),
            private_arg: true,
            ordered_by: vec![FuncId(0)],
            joined_by: vec![FuncId(0)],
            ..entry(None)
        };
        let c = ThreadEntry {
            func: FuncId(3),
            ..entry(Some(Path::new(Root::Global(GlobalId(3)))))
        };
        let entries = [main, t, w, c];
        let cx = PairContext::new(&program, &entries, None, None);
        let g = Path::new(Root::Global(GlobalId(7)));
        let own = arg_member(2);
        let (none, arg_lock, global_lock) = (
            lockset(&[]),
            lockset(&[arg_member(1)]),
            lockset(&[Path::new(Root::Global(GlobalId(1)))]),
        );
        let witness = [Witness::new(Loc::default(), Default::default(), None)];
        let mut accesses = Vec::new();
        for path in [&g, &own] {
            for locks in [&none, &arg_lock, &global_lock] {
                for kind in [AccessKind::Read, AccessKind::Write] {
                    for phase in [Phase::Before, Phase::Joined, Phase::Threaded] {
                        accesses.push(AccessView {
                            path,
                            locks,
                            kind,
                            atomic: false,
                            value: None,
                            class: None,
                            phase,
                            witnesses: &witness,
                        });
                    }
                }
            }
        }
        let performer_sets: [&[usize]; 5] = [&[0], &[1], &[0, 1], &[1, 2, 3], &[0, 1, 2, 3]];
        let mut groups = Vec::new();
        for a in &accesses {
            for (set, reaching) in performer_sets.iter().flat_map(|s| [(s, false), (s, true)]) {
                let performers = if reaching {
                    Performers::Reaching {
                        entries: std::sync::Arc::from(*set),
                        witnesses: &witness,
                        scc: FuncId(0),
                    }
                } else {
                    Performers::Listed(
                        set.iter()
                            .map(|&e| Performer {
                                entry: e,
                                witnesses: &witness,
                            })
                            .collect(),
                    )
                };
                groups.push(Group {
                    access: *a,
                    object: None,
                    within: None,
                    objects: None,
                    ty: Default::default(),
                    performers,
                    once: std::sync::Arc::from([]),
                    may_order: false,
                    arg_locks: false,
                });
            }
        }
        super::super::candidates::finish_groups(&mut groups, &entries);
        let mut checked = 0;
        for (i, x) in groups.iter().enumerate() {
            for (j, y) in groups.iter().enumerate().skip(i) {
                let same = i == j;
                let mut scratch = Scratch::default();
                // The entries of the race reported, in entry order.
                let raced = check(&cx, x, y, same, &mut scratch).map(|pair| {
                    let (p, q) = (pair.first.entry, pair.second.entry);
                    (p.min(q), p.max(q))
                });
                let mut expected = PairStats::default();
                let mut first = None;
                for (k, p) in x.performers.iter().enumerate() {
                    let from = if same { k } else { 0 };
                    for q in y.performers.iter().skip(from) {
                        let races = one_pair(
                            &cx,
                            (p.entry, &x.access),
                            (q.entry, &y.access),
                            &mut expected,
                        );
                        if races && first.is_none() {
                            let (p, q) = (entries[p.entry].func, entries[q.entry].func);
                            first = Some((p.min(q), p.max(q)));
                        }
                    }
                }
                assert_eq!(scratch.stats, expected, "groups {i} and {j}");
                assert_eq!(raced, first, "groups {i} and {j}: the first racing pair");
                checked += 1;
            }
        }
        assert!(checked > 10_000);
    }
}
