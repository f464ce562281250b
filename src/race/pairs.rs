//! Figure 7: pairs of guarded accesses from concurrent thread entries that may race, counted
//! stage by stage the way Chord reports its pipeline (considered → may alias → concurrent →
//! unlocked).
//!
//! Accesses are bucketed by points-to class first, so only accesses that may alias are ever
//! compared. In the default field-based mode that class is the member's (`S.f` for every object
//! of `S`); the classes of the objects the members lie in then separate accesses of one bucket,
//! unless an object may lie inside another (see [`separates`]).

use std::ops::Range;

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

use super::candidates::{same_sites, Candidates, Group};
use super::check::{check, remake, PairContext, Scratch};
use super::found::{number_accesses, Found, ReportedAccesses};
use super::memo::{self, BucketRecord, PairMemo, WholeMembers};
use super::objects::AccessObjects;
use super::rows::{chunks, Arranged, Chunk, Unreported};
use super::types::TypeAlias;
use super::wholes::{self, WholeRecord};
use crate::ir::{FuncId, Loc};
use crate::progress::{Heartbeat, Progress};
use crate::summary::{AccessView, Summaries};

/// One side of a warning: an access performed by a thread entry (possibly in a callee).
#[derive(Clone, Debug)]
pub struct Side<'a> {
    pub entry: FuncId,
    /// The access is one of a collapsed SCC's shared set: `entry` stands for every entry
    /// reaching the SCC (its name, and how many entries reach it).
    pub collapsed: Option<(FuncId, usize)>,
    pub access: AccessView<'a>,
    /// Sites of other accesses that race at the same pair of first sites (another lockset or
    /// entry, a widened summary's merged access): one warning names them all. Sorted.
    pub also: Vec<Loc>,
}

impl Side<'_> {
    /// Adds the sites of `other` (the same first site) that this side does not name yet: those
    /// it was found at and those it absorbed.
    pub(super) fn absorb(&mut self, other: &Side<'_>) {
        let found = if std::ptr::eq(self.access.witnesses, other.access.witnesses) {
            &[]
        } else {
            other.access.witnesses
        };
        let mut added: Vec<Loc> = found
            .iter()
            .map(|w| w.loc)
            .chain(other.also.iter().copied())
            .filter(|&loc| self.access.witnesses.iter().all(|x| x.loc != loc))
            .collect();
        if added.len() <= 8 {
            for loc in added {
                if let Err(i) = self.also.binary_search(&loc) {
                    self.also.insert(i, loc);
                }
            }
            return;
        }
        // A whole-object warning names thousands of sites: one merge of the two sorted lists,
        // not an insertion (and a shift of the list) per site.
        added.sort_unstable();
        added.dedup();
        let mine = std::mem::take(&mut self.also);
        self.also = merge_sorted(&mine, &added);
    }
}

/// The union of two sorted lists without repeats, sorted.
fn merge_sorted(a: &[Loc], b: &[Loc]) -> Vec<Loc> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

impl Pair<'_> {
    /// Whether both sides name the same program points as `other`'s (the sites they were
    /// found at and those they absorbed).
    pub(super) fn same_sites(&self, other: &Pair<'_>) -> bool {
        let sites = |x: &Side<'_>, y: &Side<'_>| {
            same_sites(x.access.witnesses, y.access.witnesses) && x.also == y.also
        };
        sites(&self.first, &other.first) && sites(&self.second, &other.second)
    }

    /// Whether both sides access the same locations as `other`'s: the same path, or the same
    /// points-to class (one member of a record, in the field-based mode).
    pub(super) fn same_lvalues(&self, other: &Pair<'_>) -> bool {
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
    /// The entries (indices) of the two performances the check found racing, in the order of
    /// the groups it checked (not `first`, `second`): what the pair memo keeps to make the
    /// race again ([`super::memo::BucketRecord::performers`]).
    pub performers: [u32; 2],
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

impl PairStats {
    /// Adds a worker's counts.
    pub(super) fn add(&mut self, o: &PairStats) {
        self.considered += o.considered;
        self.private_arg += o.private_arg;
        self.type_alias += o.type_alias;
        self.distinct_objects += o.distinct_objects;
        self.may_alias += o.may_alias;
        self.concurrent += o.concurrent;
        self.unlocked += o.unlocked;
    }
}

/// All racing pairs between the entries, one per pair of access locations, sorted, and — when
/// `input.memo` is given — what each bucket found, for the next run ([`PairMemo`]). Buckets
/// `input.memo` holds are replayed instead of checked. Buckets are paired in parallel (on the
/// current rayon pool); the result does not depend on how many threads run.
pub fn racing_pairs<'a>(
    input: &super::RaceInput<'_>,
    sums: &'a Summaries,
) -> (Vec<Pair<'a>>, PairStats, Option<PairMemo>) {
    let mut objects = input.objects.map(AccessObjects::new);
    let types = TypeAlias::new(&input.program.types);
    let beat = Heartbeat::start(input.progress, "pair candidates");
    let cands = Candidates::collect(input, sums, &mut objects, &types);
    drop(beat);
    let mut stats = PairStats {
        entries: input.entries.len(),
        buckets: cands.buckets.len(),
        ..Default::default()
    };
    let type_alias = input.type_alias.then_some(&types);
    let cx = PairContext::new(input.program, input.entries, type_alias, objects);
    let groups = &cands.groups;
    // Whole-object accesses, and the member accesses of their objects, by object.
    let wholes: Vec<u32> = (0..groups.len() as u32)
        .filter(|&g| groups[g as usize].within.is_some_and(|w| w.1))
        .collect();
    let whole_objects: FxHashSet<u32> = wholes
        .iter()
        .filter_map(|&g| groups[g as usize].within)
        .map(|w| w.0)
        .collect();
    let mut members: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    for &g in cands.buckets.iter().flatten() {
        if let Some((o, false)) = groups[g as usize].within {
            if whole_objects.contains(&o) {
                members.entry(o).or_default().push(g);
            }
        }
    }
    // Progress by groups of the buckets and whole-object accesses done.
    let progress = Progress::new(
        input.progress,
        "pairs",
        "accesses",
        (cands.groups.len() + wholes.len()) as u64,
    );
    let arranged: Vec<Arranged> = cands
        .buckets
        .iter()
        .map(|ids| Arranged::new(ids, |g| groups[g].object))
        .collect();
    let accesses: Vec<u32> = match input.per_access {
        true => number_accesses(groups),
        false => Vec::new(),
    };
    // The object sets of `--inclusion` are numbered per run: named by their objects' names,
    // or nothing is reused or kept.
    let memo = input.memo.and_then(|m| {
        let object_sets = match &cx.objects {
            Some(objects) => objects.named_sets(m.ids.objects.as_deref()?)?,
            None => Vec::new(),
        };
        let ids = memo::IdHasher::new(input.program, input.pta, m.ids);
        let context = memo::context_digest(ids, input.entries, type_alias, input.per_access);
        let facts = memo::GroupFacts {
            accesses: &accesses,
            type_alias,
            object_sets: &object_sets,
            lists: memo::ListDigests::new(groups),
        };
        let digests = memo::bucket_digests(ids, &arranged, groups, &facts);
        // With `--per-access` a whole-object task reads what earlier tasks found: not kept.
        let wholes = (!input.per_access)
            .then(|| memo::whole_digests(ids, &wholes, &members, groups, &facts));
        Some((m.previous, context, digests, wholes))
    });
    let member_sites: FxHashMap<u32, wholes::MemberSites> = match input.per_access {
        true => FxHashMap::default(),
        false => members
            .par_iter()
            .map(|(&o, list)| (o, wholes::MemberSites::new(groups, list)))
            .collect(),
    };
    let run = Tasks {
        cx: &cx,
        member_sites: &member_sites,
        groups,
        arranged: &arranged,
        wholes: &wholes,
        members: &members,
        whole_digests: memo.as_ref().and_then(|(_, _, _, w)| w.as_ref()),
        previous_wholes: match &memo {
            Some((previous, context, _, Some(digests))) => digests
                .tasks
                .iter()
                .map(|d| previous.get_whole(context, d))
                .collect(),
            _ => Vec::new(),
        },
        accesses: &accesses,
        per_access: input.per_access,
        progress: &progress,
    };
    // The buckets the previous run found, replayed (`None`: checked).
    let mut replayed: Vec<Option<(Found<'a>, BucketRecord)>> = match &memo {
        Some((previous, context, digests, _)) => digests
            .par_iter()
            .enumerate()
            .map_init(Scratch::default, |scratch, (b, digest)| {
                let record = previous.get(context, digest)?;
                let found = run.replay(b, record, scratch)?;
                Some((found, record.clone()))
            })
            .collect(),
        None => arranged.iter().map(|_| None).collect(),
    };
    // Tasks: chunks of rows, cut by checks rather than by bucket (one bucket of the kernel
    // holds tens of thousands of groups and would keep one thread busy for minutes), or one
    // replay per replayed bucket; then the whole-object accesses. They run in batches
    // ([`batches`]), each merged in task order as soon as it is done (holding every task's
    // races until the end ran the kernel out of memory); a task sees what the batches before it
    // found, so the result does not depend on the number of threads.
    let (tasks, per_bucket) = plan(&arranged, |b| replayed[b].is_some(), &wholes);
    let mut found = Found::new(input.per_access);
    // Room for the replayed races at once (growing to them rehashed every race again).
    found.reserve(replayed.iter().flatten().map(|(f, _)| f.len()).sum());
    // What each bucket found, for the next run.
    let mut records: Vec<BucketRecord> = match memo {
        Some(_) => vec![BucketRecord::default(); arranged.len()],
        None => Vec::new(),
    };
    // What each whole-object task found, for the next run (without `--per-access`).
    let mut whole_records: Vec<WholeKept> = Vec::new();
    let found_wholes: Vec<bool> = run.previous_wholes.iter().map(Option::is_some).collect();
    if let Some((_, _, _, Some(digests))) = &memo {
        whole_records.resize(digests.tasks.len(), Default::default());
    }
    // `--per-access`: the accesses with their warning, as the batches so far found them.
    let mut reported = ReportedAccesses::new(accesses.iter().max().map_or(0, |&a| a as usize + 1));
    // `--per-access`: per object, its member accesses without a warning before the batch.
    let mut pending = match input.per_access {
        true => members.clone(),
        false => FxHashMap::default(),
    };
    // `--per-access`: per bucket, the groups whose access has no warning before the batch.
    let mut unreported = input
        .per_access
        .then(|| Unreported::new(&arranged, |g| accesses[g]));
    for range in batches(&per_bucket, wholes.len()) {
        let batch = &tasks[range];
        prune_pending(&mut pending, batch, groups, &wholes, &reported, &accesses);
        let before = Before {
            reported: &reported,
            pending: &pending,
            unreported: unreported.as_ref(),
        };
        let per_task: Vec<(Found<'a>, PairStats, Option<WholeKept>)> = batch
            .par_iter()
            .map_init(Scratch::default, |scratch, task| {
                let (local, whole) = run.run(task, &before, scratch);
                (local, std::mem::take(&mut scratch.stats), whole)
            })
            .collect();
        for (task, (mut local, mut s, whole)) in batch.iter().zip(per_task) {
            match task {
                Task::Replayed(b) => {
                    if let Some((replay, record)) = replayed[*b].take() {
                        (local, s) = (replay, record.stats.clone());
                        if let Some(r) = records.get_mut(*b) {
                            *r = record;
                        }
                    }
                    progress.advance(arranged[*b].rows() as u64);
                }
                Task::Rows(chunk) => {
                    if let Some(r) = records.get_mut(chunk.bucket) {
                        r.stats.add(&s);
                        r.racing.append(&mut local.racing);
                        r.performers.append(&mut local.performers);
                    }
                }
                Task::Whole(i) => {
                    if let (Some(r), Some(whole)) = (whole_records.get_mut(*i), whole) {
                        *r = whole;
                    }
                }
            }
            stats.add(&s);
            reported.extend(local.reported_accesses());
            if let Some(u) = &mut unreported {
                local.reported_accesses().for_each(|a| u.remove(a));
            }
            found.merge(local);
        }
    }
    progress.finish();
    let memo = memo.map(|(_, context, digests, wholes)| {
        let replays = tasks
            .iter()
            .filter(|t| matches!(t, Task::Replayed(_)))
            .count();
        let wholes = wholes.map(|w| w.tasks).unwrap_or_default();
        PairMemo::of_run(
            context,
            digests.into_iter().zip(records),
            wholes
                .into_iter()
                .zip(whole_records)
                .zip(found_wholes.into_iter().chain(std::iter::repeat(false)))
                .map(|((d, (record, members)), found)| (d, record, members, found)),
            replays,
        )
    });
    (found.into_sorted(), stats, memo)
}

/// The tasks of the pair stage, bucket by bucket (its chunks of rows, or one replay when
/// `replayed` says so), then the whole-object accesses; and how many tasks each bucket has.
fn plan(
    arranged: &[Arranged],
    replayed: impl Fn(usize) -> bool,
    wholes: &[u32],
) -> (Vec<Task>, Vec<usize>) {
    let mut tasks: Vec<Task> = Vec::new();
    let mut per_bucket = vec![0; arranged.len()];
    let mut cut = chunks(arranged).into_iter().peekable();
    for (b, count) in per_bucket.iter_mut().enumerate() {
        let from = tasks.len();
        while let Some(chunk) = cut.next_if(|c| c.bucket == b) {
            if !replayed(b) {
                tasks.push(Task::Rows(chunk));
            }
        }
        if replayed(b) {
            tasks.push(Task::Replayed(b));
        }
        *count = tasks.len() - from;
    }
    tasks.extend((0..wholes.len()).map(Task::Whole));
    (tasks, per_bucket)
}

/// The tasks cut into batches, given how many tasks each bucket has (its rows, in order) and
/// how many whole-object tasks follow. A bucket's tasks are cut into segments of
/// [`TASKS_PER_BATCH`] from its own start; segments are added to the current batch, which is
/// closed once it holds [`TASKS_PER_BATCH`] tasks or more (so a batch holds fewer than twice
/// that). A full segment thus ends its batch: which of a bucket's tasks share a batch — and so
/// which of its checks are skipped, and its counts — depends on the bucket alone (the next run
/// may replay them, [`PairMemo`]). The whole-object tasks start a batch of their own, cut the
/// same way: where they start does not depend on which buckets were replayed.
fn batches(per_bucket: &[usize], wholes: usize) -> Vec<Range<usize>> {
    let mut cut = Batches::default();
    for &n in per_bucket {
        cut.add(n);
    }
    cut.close();
    cut.add(wholes);
    cut.close();
    cut.out
}

/// The batches cut so far ([`batches`]), and the current one.
#[derive(Default)]
struct Batches {
    out: Vec<Range<usize>>,
    current: Range<usize>,
}

impl Batches {
    /// Adds a bucket's `n` tasks, segment by segment.
    fn add(&mut self, n: usize) {
        for segment in (0..n).step_by(TASKS_PER_BATCH) {
            self.current.end += (n - segment).min(TASKS_PER_BATCH);
            if self.current.len() >= TASKS_PER_BATCH {
                self.close();
            }
        }
    }

    /// Ends the current batch, unless it is empty.
    fn close(&mut self) {
        if !self.current.is_empty() {
            let end = self.current.end;
            self.out
                .push(std::mem::replace(&mut self.current, end..end));
        }
    }
}

/// What a whole-object task keeps for the next run: its record, and its counts.
type WholeKept = (WholeRecord, WholeMembers);

/// A piece of the pair stage, run by one thread.
enum Task {
    /// Rows of one bucket.
    Rows(Chunk),
    /// A whole-object access (its position in the list of them), with the member accesses of
    /// its object.
    Whole(usize),
    /// A bucket the previous run found (replayed before the batches).
    Replayed(usize),
}

/// How many tasks run between two merges ([`racing_pairs`]): enough to keep every thread
/// busy, few enough that their races fit in memory.
const TASKS_PER_BATCH: usize = 64;

/// What the batches before a task found (`--per-access`).
struct Before<'r> {
    /// The accesses with their warning.
    reported: &'r ReportedAccesses,
    /// Per object, its member accesses without a warning.
    pending: &'r FxHashMap<u32, Vec<u32>>,
    /// Per bucket, the groups whose access has no warning (`--per-access` only).
    unreported: Option<&'r Unreported>,
}

/// What a task of the pair stage reads.
struct Tasks<'r, 'a> {
    cx: &'r PairContext<'r>,
    groups: &'r [Group<'a>],
    arranged: &'r [Arranged],
    /// The whole-object accesses (groups).
    wholes: &'r [u32],
    /// Per object, the member accesses of the objects accessed whole.
    members: &'r FxHashMap<u32, Vec<u32>>,
    /// Per object accessed whole, its members' sites (empty with `--per-access`).
    member_sites: &'r FxHashMap<u32, wholes::MemberSites>,
    /// The digests of the whole-object tasks and of their objects' members (`None` with
    /// `--per-access`, or without the memo).
    whole_digests: Option<&'r memo::WholeDigests>,
    /// Per whole-object access, what the previous run found for its task, if it found one for
    /// the same whole access (empty with `--per-access`, or without the memo).
    previous_wholes: Vec<Option<&'r WholeRecord>>,
    /// `--per-access`: per group, its access's number ([`number_accesses`]); else empty.
    accesses: &'r [u32],
    per_access: bool,
    progress: &'r Progress,
}

impl<'a> Tasks<'_, 'a> {
    /// The races `task` finds, given what the batches before found (`before`), and for a
    /// whole-object task with the memo its record and member counts.
    fn run(
        &self,
        task: &Task,
        before: &Before<'_>,
        scratch: &mut Scratch,
    ) -> (Found<'a>, Option<WholeKept>) {
        let done = before.reported;
        let pending = before.pending;
        let mut local = Found::new(self.per_access);
        let mut record = None;
        match task {
            Task::Rows(chunk) => {
                for row in chunk.rows.clone() {
                    self.row(&mut local, done, before.unreported, chunk, row, scratch);
                    self.progress.advance(1);
                }
            }
            Task::Replayed(_) => {}
            Task::Whole(i) => {
                let w = self.wholes[*i] as usize;
                let object = self.groups[w].within.map(|(o, _)| o);
                let of_object = object
                    .and_then(|o| self.members.get(&o))
                    .map_or(&[][..], |m| &m[..]);
                if self.per_access {
                    // Each racing member is an access of its own to report. Once the
                    // whole-object access has its warning, only the members without one can
                    // add a warning (the kernel's objects have tens of thousands).
                    for &m in of_object {
                        if self.reported(&local, done, w) {
                            break;
                        }
                        self.test(&mut local, done, w, m as usize, scratch);
                    }
                    for &m in object.and_then(|o| pending.get(&o)).into_iter().flatten() {
                        self.test(&mut local, done, w, m as usize, scratch);
                    }
                } else {
                    let outcome = self.whole(*i, object, of_object, scratch);
                    if let Some(pair) = outcome.pair {
                        local.add_pair(pair);
                    }
                    let members = WholeMembers {
                        replayed: outcome.replayed,
                        checked: outcome.checked,
                    };
                    record = outcome.record.map(|r| (r, members));
                }
                self.progress.advance(1);
            }
        }
        (local, record)
    }

    /// Checks row `row` of the chunk's bucket (its head against each partner, in order). With
    /// `--per-access` (`unreported`), once the head's access has its warning only the partners
    /// whose access had none before the batch are visited: [`Tasks::test`] skips the others'
    /// checks anyway (both reported), in the same order, so the races found are the same.
    fn row(
        &self,
        local: &mut Found<'a>,
        done: &ReportedAccesses,
        unreported: Option<&Unreported>,
        chunk: &Chunk,
        row: usize,
        s: &mut Scratch,
    ) {
        let bucket = &self.arranged[chunk.bucket];
        let head = bucket.group(row);
        // Only a race of this row's can report the head's access meanwhile: its checks all
        // involve the head.
        let mut head_reported = self.reported(local, done, head);
        for range in bucket.partners(row) {
            let mut at = range.start;
            while at < range.end {
                if let (true, Some(u)) = (head_reported, unreported) {
                    match u.next(chunk.bucket, at..range.end) {
                        Some(next) => at = next,
                        None => break,
                    }
                }
                if let Some(performers) = self.test(local, done, head, bucket.group(at), s) {
                    head_reported = true;
                    local.racing.push((row as u32, at as u32));
                    local.performers.push(performers);
                }
                at += 1;
            }
        }
    }

    /// The races the previous run found in bucket `bucket` (`record`), made again on this
    /// run's groups, in the order found: the same races, naming this run's sites. A race is
    /// made from the performances it was found between (the same digest: the same verdicts);
    /// a record without them has its races checked again. `None` if a recorded race is not
    /// one here (a stale or corrupt record): the bucket is checked.
    fn replay(&self, bucket: usize, record: &BucketRecord, s: &mut Scratch) -> Option<Found<'a>> {
        let arranged = &self.arranged[bucket];
        let mut local = Found::new(self.per_access);
        for (i, &(x, y)) in record.racing.iter().enumerate() {
            let (x, y) = (x as usize, y as usize);
            if x >= arranged.rows() || y >= arranged.rows() {
                return None;
            }
            let (gx, gy) = (arranged.group(x), arranged.group(y));
            let (groups_x, groups_y) = (&self.groups[gx], &self.groups[gy]);
            let pair = match record.performers.get(i) {
                Some(&[p, q]) => remake(self.cx, groups_x, p, groups_y, q)?,
                None => check(self.cx, groups_x, groups_y, gx == gy, s)?,
            };
            local.performers.push(pair.performers);
            local.add(pair, [gx, gy].map(|g| self.accesses.get(g).copied()));
            local.racing.push((x as u32, y as u32));
        }
        Some(local)
    }

    /// Whole-object task `i` without `--per-access` (`object`'s `members`): the runs of
    /// members the previous run's record holds replayed, the others checked ([`wholes`]).
    fn whole(
        &self,
        i: usize,
        object: Option<u32>,
        members: &[u32],
        s: &mut Scratch,
    ) -> wholes::WholeOutcome<'a> {
        let w = &self.groups[self.wholes[i] as usize];
        let task = wholes::WholeTask {
            members,
            sites: object
                .and_then(|o| self.member_sites.get(&o))
                .unwrap_or(&wholes::NO_SITES),
            runs: self
                .whole_digests
                .and_then(|d| d.runs.get(&object?))
                .map(Vec::as_slice)
                .or(self.whole_digests.map(|_| &[][..])),
            previous: self.previous_wholes.get(i).copied().flatten(),
        };
        wholes::run_task(self.cx, w, self.groups, &task, s)
    }

    /// Whether `--per-access` has group `g`'s access reported already.
    fn reported(&self, local: &Found<'_>, done: &ReportedAccesses, g: usize) -> bool {
        self.accesses
            .get(g)
            .is_some_and(|&a| done.contains(a) || local.reported(a))
    }

    /// Tests groups `x` and `y`, unless both accesses have their warning (`--per-access`: the
    /// first found in task order is kept); if they race, the performances they race in
    /// ([`Pair::performers`]).
    fn test(
        &self,
        local: &mut Found<'a>,
        done: &ReportedAccesses,
        x: usize,
        y: usize,
        s: &mut Scratch,
    ) -> Option<[u32; 2]> {
        if self.reported(local, done, x) && self.reported(local, done, y) {
            return None;
        }
        let (gx, gy) = (&self.groups[x], &self.groups[y]);
        let pair = check(self.cx, gx, gy, x == y, s)?;
        let performers = pair.performers;
        local.add(pair, [x, y].map(|g| self.accesses.get(g).copied()));
        Some(performers)
    }
}

/// Drops from `pending` (per object, the member accesses that may still get a warning of their
/// own) those that `found` reports, for the objects of `batch`'s whole-object accesses.
fn prune_pending(
    pending: &mut FxHashMap<u32, Vec<u32>>,
    batch: &[Task],
    groups: &[Group<'_>],
    wholes: &[u32],
    reported: &ReportedAccesses,
    accesses: &[u32],
) {
    for task in batch {
        let Task::Whole(i) = task else { continue };
        let object = groups[wholes[*i] as usize].within.map(|(o, _)| o);
        if let Some(list) = object.and_then(|o| pending.get_mut(&o)) {
            list.retain(|&m| {
                !accesses
                    .get(m as usize)
                    .is_some_and(|&a| reported.contains(a))
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_sorted_sites_keeps_each_once_in_order() {
        let at = |line| Loc {
            file: 0,
            line,
            col: 0,
        };
        let a = [at(1), at(4), at(9)];
        let b = [at(2), at(4), at(10), at(11)];
        let merged = merge_sorted(&a, &b);
        assert_eq!(merged, [1, 2, 4, 9, 10, 11].map(at));
        assert_eq!(merge_sorted(&[], &b), b);
    }

    /// Every task is in one batch, in order; a batch holds fewer than twice
    /// [`TASKS_PER_BATCH`] tasks; which of a bucket's tasks share a batch does not depend on
    /// the buckets before it; the whole-object tasks start a batch.
    #[test]
    fn batches_group_a_buckets_tasks_as_if_it_were_alone() {
        let per_bucket = [1, 5, 63, 64, 200, 3, 130, 64, 1, 70, 0, 2];
        let wholes = 150;
        let cut = batches(&per_bucket, wholes);
        let flat: Vec<usize> = cut.iter().flat_map(|r| r.clone()).collect();
        let total = per_bucket.iter().sum::<usize>() + wholes;
        assert_eq!(flat, (0..total).collect::<Vec<_>>());
        assert!(cut
            .iter()
            .all(|r| !r.is_empty() && r.len() < 2 * TASKS_PER_BATCH));
        // Per task, the batch it is in.
        let batch_of = |cut: &[Range<usize>], t: usize| cut.iter().position(|r| r.contains(&t));
        // How a bucket's tasks (from `from`, `n` of them) are grouped: for each task, the
        // first of its bucket's tasks in its batch.
        let grouping = |cut: &[Range<usize>], from: usize, n: usize| -> Vec<usize> {
            (from..from + n)
                .map(|t| {
                    (from..)
                        .find(|&u| batch_of(cut, u) == batch_of(cut, t))
                        .unwrap()
                        - from
                })
                .collect()
        };
        let mut from = 0;
        for &n in &per_bucket {
            let alone = batches(&[n], 0);
            assert_eq!(
                grouping(&cut, from, n),
                grouping(&alone, 0, n),
                "bucket of {n}"
            );
            from += n;
        }
        assert!(
            cut.iter().any(|r| r.start == from),
            "whole-object tasks start a batch"
        );
    }
}
