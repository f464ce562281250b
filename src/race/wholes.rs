//! Whole-object accesses (`memset(p, …)`, `free(p)`): each is one task of the pair stage,
//! paired with every member access of its object, one warning per whole access
//! ([`super::pairs`]).
//!
//! Without `--per-access` such a task reads nothing but its own groups, and each member's
//! check reads only the whole access's group and the member's: so what a task found is kept
//! *by runs of members* ([`WholeRecord`]) and a later run checks only the runs whose members
//! changed. A run's digest is that of its members' digests in order; the runs are cut where a
//! member's digest says so (content-defined, like a chunking file-sync tool), not every `n`
//! members, so a member added or changed re-checks the run around it and leaves the others'
//! boundaries where they were. On SQLite an object has thousands of members and hundreds of
//! whole accesses: when any one member changed, re-checking every task was most of the pair
//! stage of a re-run.

use std::ops::Range;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::candidates::Group;
use super::check::{check, PairContext, Scratch};
use super::pairs::{Pair, PairStats, Side};
use crate::ir::Loc;

/// A member's digest, as the runs of a whole-object task compare them ([`super::memo`]).
pub(super) type MemberDigest = [u8; 16];

/// What one whole-object task found, by runs of members.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct WholeRecord {
    pub runs: Vec<RunRecord>,
}

/// What the checks of one run of members found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct RunRecord {
    /// The digest of its members' digests, in order.
    pub digest: MemberDigest,
    /// The counts of its checks.
    pub stats: PairStats,
    /// The positions (in the run) of the members racing with the whole access, in order.
    pub racing: Vec<u32>,
}

/// A run ends after a member whose digest's first byte is a multiple of this (runs of 32
/// members on average), or at [`MAX_RUN`] members.
const RUN_DIVISOR: u8 = 32;
const MAX_RUN: usize = 256;

/// The witness sites of an object's member groups, numbered in their order: a whole-object
/// warning names the sites of every racing member, and on SQLite the tasks of one object name
/// tens of thousands (collected in a hash set per task, they were a fifth of a re-run's race
/// stage).
pub(super) struct MemberSites {
    /// Every member's witness sites, sorted, once each.
    locs: Vec<Loc>,
    /// Per member, where its sites' numbers are in `numbers`.
    starts: Vec<u32>,
    numbers: Vec<u32>,
}

/// The sites of no member (an object with no member access).
pub(super) static NO_SITES: MemberSites = MemberSites {
    locs: Vec::new(),
    starts: Vec::new(),
    numbers: Vec::new(),
};

impl MemberSites {
    pub fn new(groups: &[Group<'_>], members: &[u32]) -> MemberSites {
        let sites = |m: &u32| groups[*m as usize].access.witnesses.iter().map(|x| x.loc);
        let mut locs: Vec<Loc> = members.iter().flat_map(sites).collect();
        locs.sort_unstable();
        locs.dedup();
        let mut starts = Vec::with_capacity(members.len() + 1);
        let mut numbers = Vec::new();
        for m in members {
            starts.push(numbers.len() as u32);
            numbers.extend(sites(m).filter_map(|l| Some(locs.binary_search(&l).ok()? as u32)));
        }
        starts.push(numbers.len() as u32);
        MemberSites {
            locs,
            starts,
            numbers,
        }
    }

    /// The numbers of the sites of the member at `at`.
    fn of(&self, at: usize) -> &[u32] {
        match (self.starts.get(at), self.starts.get(at + 1)) {
            (Some(&a), Some(&b)) => &self.numbers[a as usize..b as usize],
            _ => &[],
        }
    }
}

/// One whole-object task: the member groups of its object, in order, with their sites and
/// digests (`None` without a memo: nothing is recorded) and what the previous run found for
/// the same whole access, if it had one.
pub(super) struct WholeTask<'r> {
    pub members: &'r [u32],
    pub sites: &'r MemberSites,
    /// The runs of `members` ([`runs`]).
    pub runs: Option<&'r [MemberRun]>,
    pub previous: Option<&'r WholeRecord>,
}

/// What a whole-object task found: its warning (the first racing member as the other side,
/// the sites of all racing members named there), its record (with digests), and how many of
/// its members it checked and how many it took from the previous run's record.
pub(super) struct WholeOutcome<'a> {
    pub pair: Option<Pair<'a>>,
    pub record: Option<WholeRecord>,
    pub checked: usize,
    pub replayed: usize,
}

/// Runs `task` for whole access `w`: the runs of members the previous record holds are taken
/// from it, the others checked. The counts of its checks are added to `scratch.stats`.
pub(super) fn run_task<'a>(
    cx: &PairContext<'_>,
    w: &Group<'a>,
    groups: &[Group<'a>],
    task: &WholeTask<'_>,
    scratch: &mut Scratch,
) -> WholeOutcome<'a> {
    let before = std::mem::take(&mut scratch.stats);
    if let Some(outcome) = task
        .previous
        .and_then(|previous| by_runs(cx, w, groups, task, Some(previous), scratch))
    {
        scratch.stats.add(&before);
        return outcome;
    }
    // Without a record, or one that does not hold here (stale or corrupt): every run checked.
    scratch.stats = PairStats::default();
    let outcome = by_runs(cx, w, groups, task, None, scratch).expect("checking every run");
    scratch.stats.add(&before);
    outcome
}

/// [`run_task`] from `previous` (`None`: every run checked); `None` if a recorded racing
/// member does not race here. `scratch.stats` gets the task's counts only.
fn by_runs<'a>(
    cx: &PairContext<'_>,
    w: &Group<'a>,
    groups: &[Group<'a>],
    task: &WholeTask<'_>,
    previous: Option<&WholeRecord>,
    scratch: &mut Scratch,
) -> Option<WholeOutcome<'a>> {
    let recorded: FxHashMap<MemberDigest, &RunRecord> = previous
        .into_iter()
        .flat_map(|r| &r.runs)
        .map(|run| (run.digest, run))
        .collect();
    let mut record = task.runs.map(|r| WholeRecord {
        runs: Vec::with_capacity(r.len()),
    });
    let all = [(0..task.members.len(), None)];
    let runs = match task.runs {
        Some(runs) => runs.iter().map(|(r, d)| (r, Some(*d))).collect::<Vec<_>>(),
        None => all.iter().map(|(r, d)| (r, *d)).collect(),
    };
    let (mut checked, mut replayed) = (0, 0);
    // Positions in `task.members` of the racing members, in order.
    let mut racing: Vec<usize> = Vec::new();
    for (range, digest) in runs {
        let range = range.clone();
        let old = digest.and_then(|d| recorded.get(&d)).copied();
        let run = match old.filter(|r| r.racing.iter().all(|&at| (at as usize) < range.len())) {
            Some(old) => {
                replayed += range.len();
                scratch.stats.add(&old.stats);
                old.clone()
            }
            None => {
                checked += range.len();
                check_run(cx, w, groups, &task.members[range.clone()], digest, scratch)
            }
        };
        racing.extend(run.racing.iter().map(|&at| range.start + at as usize));
        if let Some(r) = &mut record {
            r.runs.push(run);
        }
    }
    let pair = match racing.first() {
        Some(&first) => {
            // Made again for its sides (its counts are the run's, already counted).
            let counted = std::mem::take(&mut scratch.stats);
            let pair = check(cx, w, &groups[task.members[first] as usize], false, scratch);
            scratch.stats = counted;
            Some(with_sites(sides(pair?, w), &racing[1..], task.sites))
        }
        None => None,
    };
    Some(WholeOutcome {
        pair,
        record,
        checked,
        replayed,
    })
}

/// Checks whole access `w` against each of `members` (one run): the run's record.
fn check_run(
    cx: &PairContext<'_>,
    w: &Group<'_>,
    groups: &[Group<'_>],
    members: &[u32],
    digest: Option<MemberDigest>,
    scratch: &mut Scratch,
) -> RunRecord {
    let before = std::mem::take(&mut scratch.stats);
    let racing = (0..members.len() as u32)
        .filter(|&at| {
            check(
                cx,
                w,
                &groups[members[at as usize] as usize],
                false,
                scratch,
            )
            .is_some()
        })
        .collect();
    let stats = std::mem::replace(&mut scratch.stats, before);
    scratch.stats.add(&stats);
    RunRecord {
        digest: digest.unwrap_or_default(),
        stats,
        racing,
    }
}

/// A run of an object's members (their positions) and its digest.
pub(super) type MemberRun = (Range<usize>, MemberDigest);

/// The runs of members whose digests are `digests`, in order (see the module documentation).
/// Once per object: every whole access to it has these runs.
pub(super) fn runs(digests: &[MemberDigest]) -> Vec<MemberRun> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, d) in digests.iter().enumerate() {
        if d[0] % RUN_DIVISOR == 0 || i + 1 - start == MAX_RUN || i + 1 == digests.len() {
            out.push((start..i + 1, run_digest(&digests[start..i + 1])));
            start = i + 1;
        }
    }
    out
}

/// The digest of a run of members.
fn run_digest(members: &[MemberDigest]) -> MemberDigest {
    let mut h = blake3::Hasher::new();
    h.update(b"relay whole run");
    h.update(&(members.len() as u64).to_le_bytes());
    for m in members {
        h.update(m);
    }
    let mut out = [0u8; 16];
    out.copy_from_slice(&h.finalize().as_bytes()[..16]);
    out
}

/// A race of whole access `w` with a member as (whole side, member side), and its
/// [`Pair::performers`].
fn sides<'a>(pair: Pair<'a>, w: &Group<'a>) -> (Side<'a>, Side<'a>, [u32; 2]) {
    if std::ptr::eq(pair.first.access.path, w.access.path) {
        (pair.first, pair.second, pair.performers)
    } else {
        (pair.second, pair.first, pair.performers)
    }
}

/// The warning of a whole access against its first racing member, naming the sites of the
/// other racing members (`others`: their positions among the object's members) on the member's
/// side, in order.
fn with_sites<'a>(
    (whole, mut member, performers): (Side<'a>, Side<'a>, [u32; 2]),
    others: &[usize],
    sites: &MemberSites,
) -> Pair<'a> {
    let mut named = vec![0u64; sites.locs.len().div_ceil(64)];
    for &at in others {
        for &n in sites.of(at) {
            named[n as usize / 64] |= 1 << (n % 64);
        }
    }
    for x in member.access.witnesses {
        if let Ok(n) = sites.locs.binary_search(&x.loc) {
            named[n / 64] &= !(1 << (n % 64));
        }
    }
    member.also = (0..sites.locs.len())
        .filter(|&n| named[n / 64] & (1 << (n % 64)) != 0)
        .map(|n| sites.locs[n])
        .collect();
    Pair {
        first: whole,
        second: member,
        performers,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(first: u8, n: u8) -> MemberDigest {
        let mut d = [n; 16];
        d[0] = first;
        d
    }

    #[test]
    fn runs_are_cut_by_content_so_an_insertion_moves_only_its_run() {
        let members: Vec<MemberDigest> = (0..200u8)
            .map(|i| digest(if i % 7 == 0 { 0 } else { 1 + i % 31 }, i))
            .collect();
        let before = runs(&members);
        let mut edited = members.clone();
        edited.insert(100, digest(5, 250));
        let after = runs(&edited);
        let digests =
            |r: &[MemberRun]| -> Vec<MemberDigest> { r.iter().map(|(_, d)| *d).collect() };
        let (old, new) = (digests(&before), digests(&after));
        let changed = new.iter().filter(|d| !old.contains(d)).count();
        assert_eq!(changed, 1, "only the run holding the new member changes");
        assert_eq!(old.len(), new.len());
        // Every member is in exactly one run, in order.
        let covered: usize = after.iter().map(|(r, _)| r.len()).sum();
        assert_eq!(covered, edited.len());
    }

    #[test]
    fn a_long_run_is_cut_at_the_maximum() {
        let members: Vec<MemberDigest> = (0..600u16).map(|i| digest(1, i as u8)).collect();
        let r = runs(&members);
        assert!(r.iter().all(|(range, _)| range.len() <= MAX_RUN));
        assert_eq!(r.iter().map(|(range, _)| range.len()).sum::<usize>(), 600);
        assert!(runs(&[]).is_empty());
    }
}
