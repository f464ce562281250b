//! Figure 7: pairs of guarded accesses from concurrent thread entries that may race, counted
//! stage by stage the way Chord reports its pipeline (considered → may alias → concurrent →
//! unlocked).
//!
//! Accesses are bucketed by points-to class first, so only accesses that may alias are ever
//! compared. In the default field-based mode that class is the member's (`S.f` for every object
//! of `S`); the classes of the objects the members lie in then separate accesses of one bucket,
//! unless an object may lie inside another (see [`separates`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::entries::ThreadEntry;
use crate::ir::types::RecordKind;
use crate::ir::{FuncId, Loc};
use crate::link::Program;
use crate::models::LockMode;
use crate::pta::PointsTo;
use crate::summary::path::Classes;
use crate::summary::{AccessKind, AccessView, Path, Phase, Root, Step, Summaries};

/// One side of a warning: an access performed by a thread entry (possibly in a callee).
#[derive(Clone, Debug)]
pub struct Side<'a> {
    pub entry: FuncId,
    pub access: AccessView<'a>,
    /// Sites of other accesses that race at the same pair of first sites (another lockset or
    /// entry, a widened summary's merged access): one warning names them all. Sorted.
    pub also: Vec<Loc>,
}

impl Side<'_> {
    /// Adds the sites of `other` (the same first site) that this side does not name yet.
    fn absorb(&mut self, other: &Side<'_>) {
        if std::ptr::eq(self.access.witnesses, other.access.witnesses) {
            return;
        }
        for w in other.access.witnesses {
            if let Err(i) = self.also.binary_search(&w.loc) {
                if self.access.witnesses.iter().all(|x| x.loc != w.loc) {
                    self.also.insert(i, w.loc);
                }
            }
        }
    }
}

impl Pair<'_> {
    /// Whether both sides are performed at the same program points as `other`'s.
    fn same_sites(&self, other: &Pair<'_>) -> bool {
        let sites = |x: &AccessView<'_>, y: &AccessView<'_>| {
            x.witnesses.len() == y.witnesses.len()
                && x.witnesses
                    .iter()
                    .zip(y.witnesses)
                    .all(|(a, b)| a.loc == b.loc)
        };
        sites(&self.first.access, &other.first.access)
            && sites(&self.second.access, &other.second.access)
    }

    /// Whether both sides access the same locations as `other`'s: the same path, or the same
    /// points-to class (one member of a record, in the field-based mode).
    fn same_lvalues(&self, other: &Pair<'_>) -> bool {
        let same = |x: &AccessView<'_>, y: &AccessView<'_>| match (x.class, y.class) {
            (Some(a), Some(b)) => a == b,
            _ => x.path == y.path,
        };
        same(&self.first.access, &other.first.access)
            && same(&self.second.access, &other.second.access)
    }
}

/// Two accesses that may race, before filters.
#[derive(Clone, Debug)]
pub struct Pair<'a> {
    pub first: Side<'a>,
    pub second: Side<'a>,
}

/// Chord-style counts of the pair stages.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairStats {
    pub entries: usize,
    /// Buckets (points-to classes) holding accesses of some entry.
    pub buckets: usize,
    /// Same bucket, concurrent entries, at least one write.
    pub considered: usize,
    /// … not both inside the own argument objects of two instances of one entry.
    pub private_arg: usize,
    /// … not of incompatible types ([`super::types`]).
    pub type_alias: usize,
    /// … not in disjoint objects ([`super::objects`]).
    #[serde(default)]
    pub distinct_objects: usize,
    /// … whose lvalues may alias.
    pub may_alias: usize,
    /// … not ordered by `main`'s thread creations and joins.
    pub concurrent: usize,
    /// … not both atomic and not protected by a common lock: the races.
    pub unlocked: usize,
}

/// The key accesses are bucketed by: their class, or their path when it has none.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Bucket {
    Class(u32),
    Path(Path),
}

/// An access of an entry, as the pair check sees it.
#[derive(Copy, Clone)]
struct Candidate<'a> {
    entry: usize,
    access: AccessView<'a>,
    /// The class of the object the access lies in, when it proves two accesses apart.
    object: Option<u32>,
    /// The class of the object the access lies in, and whether the access is to all of it
    /// (`memset(p, …)` on untyped memory, `free(p)`): in the field-based mode its members are
    /// classes of their own, so such an access is also paired with every member access.
    within: Option<(u32, bool)>,
    /// The objects its sites may touch, by the inclusion-based points-to ([`super::objects`]).
    objects: Option<u32>,
}

/// All racing pairs between the entries, one per pair of access locations, sorted.
pub fn racing_pairs<'a>(
    input: &super::RaceInput<'_>,
    sums: &'a Summaries,
) -> (Vec<Pair<'a>>, PairStats) {
    let (program, pta, entries) = (input.program, input.pta, input.entries);
    let mut objects = input.objects.map(super::objects::AccessObjects::new);
    let mut stats = PairStats {
        entries: entries.len(),
        ..Default::default()
    };
    let mut buckets: BTreeMap<Bucket, Vec<Candidate<'a>>> = BTreeMap::new();
    // Escaped callbacks are interchangeable for the check (each may run at any time, in any
    // thread, several at once, ordered with nothing): an access that several of them perform
    // (through a common callee) is paired once, under the first of them.
    let mut pooled = rustc_hash::FxHashSet::default();
    for (i, e) in entries.iter().enumerate() {
        let Some(s) = sums.get(e.func) else { continue };
        let interchangeable = is_interchangeable(e);
        let classes = Classes {
            program,
            pta,
            func: e.func,
        };
        for a in s.all_accesses() {
            if interchangeable && !pooled.insert(AccessIdentity::of(&a)) {
                continue;
            }
            let key = match a.class {
                Some(c) => Bucket::Class(c),
                None => Bucket::Path(a.path.clone()),
            };
            let object = classes.object_class(a.path).map(|o| pta.class(o));
            buckets.entry(key).or_default().push(Candidate {
                entry: i,
                access: a,
                object: object.filter(|&o| separates(pta, o)),
                within: object.map(|o| (o, a.class == Some(o))),
                objects: objects.as_mut().and_then(|o| o.of(&a)),
            });
        }
    }
    stats.buckets = buckets.len();
    let cx = PairContext {
        program,
        entries,
        type_alias: input.type_alias,
        objects,
    };
    // Whole-object accesses, and the member accesses of their objects by object: each one
    // access of each kind of entry (see `Representatives`), as the pairs of those decide for
    // all (the copies in other entries give the same warnings).
    let mut whole = Representatives::default();
    for c in buckets.values().flatten() {
        if c.within.is_some_and(|w| w.1) {
            whole.offer(entries, c);
        }
    }
    let wholes: rustc_hash::FxHashSet<u32> = whole
        .kept
        .iter()
        .filter_map(|c| c.within)
        .map(|w| w.0)
        .collect();
    let mut member_reps = Representatives::default();
    for c in buckets.values().flatten() {
        if c.within.is_some_and(|(o, w)| !w && wholes.contains(&o)) {
            member_reps.offer(entries, c);
        }
    }
    let mut members: rustc_hash::FxHashMap<u32, Vec<Candidate<'a>>> = Default::default();
    for c in member_reps.kept {
        if let Some((o, _)) = c.within {
            members.entry(o).or_default().push(c);
        }
    }
    // One warning per pair of first sites and lvalues. The same pair of lvalues found again
    // (another lockset, entry, or a widened summary's merged access) adds its sites to it;
    // another pair of lvalues at exactly the same sites (the members of one whole-struct copy)
    // adds nothing; one with other sites is a warning of its own.
    let mut found: BTreeMap<(Loc, Loc), Vec<Pair<'a>>> = BTreeMap::new();
    let mut add = |mut pair: Pair<'a>| {
        let order = |s: &Side<'_>| (s.access.witness().loc, s.entry);
        if order(&pair.second) < order(&pair.first) {
            std::mem::swap(&mut pair.first, &mut pair.second);
        }
        let key = (
            pair.first.access.witness().loc,
            pair.second.access.witness().loc,
        );
        let at = found.entry(key).or_default();
        if let Some(kept) = at.iter_mut().find(|p| p.same_lvalues(&pair)) {
            kept.first.absorb(&pair.first);
            kept.second.absorb(&pair.second);
        } else if !at.iter().any(|p| p.same_sites(&pair)) {
            at.push(pair);
        }
    };
    for items in buckets.values() {
        for_each_candidate(items, |a, b| {
            if let Some(pair) = check(&cx, a, b, &mut stats) {
                add(pair);
            }
        });
    }
    for w in &whole.kept {
        let racing = w
            .within
            .and_then(|(o, _)| whole_object_pair(&cx, w, members.get(&o), &mut stats));
        if let Some(pair) = racing {
            add(pair);
        }
    }
    (found.into_values().flatten().collect(), stats)
}

/// One warning for a whole-object access `w`: paired with every member access of its object
/// that races with it, the first as the other side and the sites of all of them named there.
fn whole_object_pair<'a>(
    cx: &PairContext<'_>,
    w: &Candidate<'a>,
    members: Option<&Vec<Candidate<'a>>>,
    stats: &mut PairStats,
) -> Option<Pair<'a>> {
    let mut racing: Option<Pair<'a>> = None;
    let mut sites: rustc_hash::FxHashSet<Loc> = Default::default();
    for m in members.into_iter().flatten() {
        let Some(pair) = check(cx, *w, *m, stats) else {
            continue;
        };
        let (whole, member) = if pair.first.access.path == w.access.path {
            (pair.first, pair.second)
        } else {
            (pair.second, pair.first)
        };
        sites.extend(member.access.witnesses.iter().map(|x| x.loc));
        racing.get_or_insert(Pair {
            first: whole,
            second: member,
        });
    }
    let mut pair = racing?;
    for x in pair.second.access.witnesses {
        sites.remove(&x.loc);
    }
    pair.second.also = sites.into_iter().collect();
    pair.second.also.sort();
    Some(pair)
}

/// The accesses that stand for all: per access (path, locks, kind, sites, …) and per kind of
/// entry (what the pair check reads of an entry: runs more than once, is `main`, is ordered by
/// `main`'s creations or joins, its argument), the first two from different entries. Two
/// entries of one kind give every pair of accesses the same verdict, except that one entry run
/// once does not race with itself: hence two.
#[derive(Default)]
struct Representatives<'a> {
    seen: rustc_hash::FxHashMap<(AccessIdentity, EntryKind), (usize, bool)>,
    kept: Vec<Candidate<'a>>,
}

/// (runs more than once, the entry itself if it runs once — it may order the threads it
/// starts —, `ordered_by`, `joined_by`, argument).
type EntryKind = (bool, Option<FuncId>, Vec<FuncId>, Vec<FuncId>, Option<Path>);

impl<'a> Representatives<'a> {
    fn offer(&mut self, entries: &[ThreadEntry], c: &Candidate<'a>) {
        let e = &entries[c.entry];
        let kind = (
            e.multiple,
            (!e.multiple).then_some(e.func),
            e.ordered_by.clone(),
            e.joined_by.clone(),
            e.arg.clone(),
        );
        let slot = self.seen.entry((AccessIdentity::of(&c.access), kind));
        let keep = match slot {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert((c.entry, false));
                true
            }
            std::collections::hash_map::Entry::Occupied(mut o) => {
                let (first, second) = o.get_mut();
                let keep = !*second && *first != c.entry;
                *second |= keep;
                keep
            }
        };
        if keep {
            self.kept.push(*c);
        }
    }
}

/// An entry that may run at any time, in any thread, several at once, ordered with nothing and
/// with no known argument: an escaped callback.
fn is_interchangeable(e: &ThreadEntry) -> bool {
    matches!(e.origin, super::entries::EntryOrigin::Callback { .. })
        && e.multiple
        && !e.is_main
        && e.ordered_by.is_empty()
        && e.joined_by.is_empty()
        && e.arg.is_none()
}

/// What the check of a pair reads of an access, and its sites (the locations of its witnesses,
/// hashed: the same access at other lines is another one, or a pooled callback would hide its
/// sites). Paths and locksets are interned program-wide, so equal ones are the same object.
#[derive(PartialEq, Eq, Hash)]
struct AccessIdentity {
    path: *const Path,
    locks: *const crate::summary::RelativeLockset,
    kind: AccessKind,
    atomic: bool,
    class: Option<u32>,
    phase: Phase,
    sites: u64,
}

impl AccessIdentity {
    fn of(a: &AccessView<'_>) -> AccessIdentity {
        AccessIdentity {
            path: a.path,
            locks: a.locks,
            kind: a.kind,
            atomic: a.atomic,
            class: a.class,
            phase: a.phase,
            sites: {
                use std::hash::{Hash, Hasher};
                let mut h = rustc_hash::FxHasher::default();
                for w in a.witnesses {
                    w.loc.hash(&mut h);
                }
                h.finish()
            },
        }
    }
}

/// Calls `f` on every unordered pair of one bucket's accesses (an access with itself too)
/// that may lie in one object: accesses whose object classes prove them apart are never
/// paired (a bucket is one member of one record, over every object of that record).
fn for_each_candidate<'a>(
    items: &[Candidate<'a>],
    mut f: impl FnMut(Candidate<'a>, Candidate<'a>),
) {
    let mut by_object: BTreeMap<Option<u32>, Vec<Candidate<'a>>> = BTreeMap::new();
    for c in items {
        by_object.entry(c.object).or_default().push(*c);
    }
    let anywhere = by_object.remove(&None).unwrap_or_default();
    for group in by_object.values() {
        for (x, &a) in group.iter().enumerate() {
            for &b in &group[x..] {
                f(a, b);
            }
        }
    }
    for (x, &a) in anywhere.iter().enumerate() {
        for &b in anywhere[x..].iter().chain(by_object.values().flatten()) {
            f(a, b);
        }
    }
}

/// Figure 7's test for one pair, counting the stage it fails at.
/// What the check of a pair reads besides the two accesses.
struct PairContext<'p> {
    program: &'p Program,
    entries: &'p [ThreadEntry],
    /// Type-aware aliasing on ([`super::types`]).
    type_alias: bool,
    /// Distinct objects on ([`super::objects`]).
    objects: Option<super::objects::AccessObjects<'p>>,
}

fn check<'a>(
    cx: &PairContext<'_>,
    x: Candidate<'a>,
    y: Candidate<'a>,
    stats: &mut PairStats,
) -> Option<Pair<'a>> {
    let (program, entries) = (cx.program, cx.entries);
    let (ei, a, ej, b) = (x.entry, x.access, y.entry, y.access);
    let writes = a.kind == AccessKind::Write || b.kind == AccessKind::Write;
    if !writes || !(ei != ej || entries[ei].multiple) {
        return None;
    }
    stats.considered += 1;
    if matches!((x.object, y.object), (Some(p), Some(q)) if p != q)
        || !may_alias(program, a.path, b.path)
    {
        return None;
    }
    if ei == ej && in_own_argument(&entries[ei], a.path) && in_own_argument(&entries[ej], b.path) {
        stats.private_arg += 1;
        return None;
    }
    if cx.type_alias && super::types::incompatible(program, a.path, b.path) {
        stats.type_alias += 1;
        return None;
    }
    if cx
        .objects
        .as_ref()
        .is_some_and(|o| o.disjoint(x.objects, y.objects))
    {
        stats.distinct_objects += 1;
        return None;
    }
    stats.may_alias += 1;
    if ordered(&entries[ei], &a, &entries[ej]) || ordered(&entries[ej], &b, &entries[ei]) {
        return None;
    }
    stats.concurrent += 1;
    if (a.atomic && b.atomic) || protected((&entries[ei], &a), (&entries[ej], &b)) {
        return None;
    }
    stats.unlocked += 1;
    let x = Side {
        entry: entries[ei].func,
        access: a,
        also: Vec::new(),
    };
    let y = Side {
        entry: entries[ej].func,
        access: b,
        also: Vec::new(),
    };
    let key = |s: &Side<'_>| (s.access.witness().loc, s.entry);
    let (first, second) = if key(&x) <= key(&y) { (x, y) } else { (y, x) };
    Some(Pair { first, second })
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
fn instantiate(p: &Path, e: &ThreadEntry) -> Path {
    match (&e.arg, p.root, p.steps.first()) {
        (Some(arg), Root::Formal(0), Some(Step::Deref)) => arg.extended(&p.steps[1..]),
        _ => p.clone(),
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

/// Whether the class of the object an access lies in separates it from accesses in objects of
/// other classes: not when an object of the class may be a member of another (a pointer into a
/// member reaches the object around it by `container_of` or a cast, and that object's class is
/// another).
fn separates(pta: &PointsTo, object: u32) -> bool {
    !pta.is_interior(object)
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
    use super::*;
    use crate::ir::types::RecordId;
    use crate::ir::{GlobalId, Name};
    use crate::summary::Lock;

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
}
