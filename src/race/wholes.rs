//! Whole-object accesses (`memset(p, …)`, `free(p)`): each is one task of the pair stage,
//! paired with every member access of its object, one warning per whole access
//! ([`super::pairs`]). Without `--per-access` such a task reads nothing but its own groups, so
//! what it found is kept by digest as a bucket's is ([`super::memo`]) and replayed when the
//! digest is the same: on SQLite these tasks are most of the pair stage's checks.

use rustc_hash::FxHashSet;

use super::candidates::Group;
use super::check::{check, PairContext, Scratch};
use super::memo::BucketRecord;
use super::pairs::{Pair, Side};
use crate::ir::Loc;
use crate::summary::Witness;

/// What a whole-object task found: its warning — the first racing member as the other side,
/// the sites of all racing members named there — and the positions of the racing members in
/// `members`, in order.
pub(super) fn whole_object_pair<'a>(
    cx: &PairContext<'_>,
    w: &Group<'a>,
    groups: &[Group<'a>],
    members: &[u32],
    scratch: &mut Scratch,
) -> (Option<Pair<'a>>, Vec<u32>) {
    pair_with(cx, w, groups, members.iter().copied().enumerate(), scratch)
}

/// [`whole_object_pair`] from what a previous run found (`record`: the racing members'
/// positions, and the task's counts): its first racing member checked again on this run's
/// groups, the others' sites taken as they are (the same digest: the same verdicts). `None` if
/// the first is not racing here (a stale or corrupt record): the task is run again.
pub(super) fn replay<'a>(
    cx: &PairContext<'_>,
    w: &Group<'a>,
    groups: &[Group<'a>],
    members: &[u32],
    record: &BucketRecord,
    scratch: &mut Scratch,
) -> Option<(Option<Pair<'a>>, Vec<u32>)> {
    let racing = record
        .racing
        .iter()
        .map(|&(_, at)| Some((at, *members.get(at as usize)?)))
        .collect::<Option<Vec<_>>>()?;
    let pair = match racing.first() {
        Some(&(_, first)) => {
            let pair = check(cx, w, &groups[first as usize], false, scratch);
            // The task's counts are the record's (a task starts with none).
            scratch.stats = Default::default();
            let others = racing[1..].iter().map(|&(_, m)| &groups[m as usize]);
            Some(with_sites(
                sides(pair?, w),
                others.map(|g| g.access.witnesses),
            ))
        }
        None => None,
    };
    scratch.stats = record.stats.clone();
    Some((pair, racing.into_iter().map(|(at, _)| at).collect()))
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
/// other racing members (`others`: their witnesses) on the member's side.
fn with_sites<'a, 'w>(
    (whole, mut member, performers): (Side<'a>, Side<'a>, [u32; 2]),
    others: impl Iterator<Item = &'w [Witness]>,
) -> Pair<'a> {
    let mut sites: FxHashSet<Loc> = others.flatten().map(|x| x.loc).collect();
    for x in member.access.witnesses {
        sites.remove(&x.loc);
    }
    member.also = sites.into_iter().collect();
    member.also.sort();
    Pair {
        first: whole,
        second: member,
        performers,
    }
}

/// The warning of whole access `w` against the `members` (with their positions) that race with
/// it, and the positions of those.
fn pair_with<'a>(
    cx: &PairContext<'_>,
    w: &Group<'a>,
    groups: &[Group<'a>],
    members: impl Iterator<Item = (usize, u32)>,
    scratch: &mut Scratch,
) -> (Option<Pair<'a>>, Vec<u32>) {
    let mut first: Option<(Side<'a>, Side<'a>, [u32; 2])> = None;
    let mut positions = Vec::new();
    let mut others: Vec<&'a [Witness]> = Vec::new();
    for (at, m) in members {
        let Some(pair) = check(cx, w, &groups[m as usize], false, scratch) else {
            continue;
        };
        positions.push(at as u32);
        let sides = sides(pair, w);
        match first {
            None => first = Some(sides),
            Some(_) => others.push(sides.1.access.witnesses),
        }
    }
    let pair = first.map(|sides| with_sites(sides, others.into_iter()));
    (pair, positions)
}
