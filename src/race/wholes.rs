//! Whole-object accesses (`memset(p, …)`, `free(p)`): each is one task of the pair stage,
//! paired with every member access of its object, one warning per whole access
//! ([`super::pairs`]). Without `--per-access` such a task reads nothing but its own groups, so
//! the pair memo ([`super::memo`]) keeps, per whole access (by its group's digest), the outcome
//! of its check against each member (by the member group's digest): a run after an edit makes
//! again only the checks of members whose group is new, and takes the others' outcomes —
//! counts, and the race made again from the two performances it was found between. On SQLite
//! these tasks are most of the pair stage's checks, and an object's members are many: kept per
//! task (until session 42), one changed member made every whole access of its object pair
//! them all again.

use std::mem;

use rustc_hash::{FxHashMap, FxHashSet};

use super::candidates::Group;
use super::check::{check, remake, PairContext, Scratch};
use super::memo::{Digest, MemberOutcome, WholeRecord};
use super::pairs::{Pair, Side};
use crate::ir::Loc;
use crate::summary::Witness;

/// What a whole-object task reads of the previous run's memo: its record, and the member
/// digests its task paired, in order.
#[derive(Clone, Copy)]
pub(super) struct Previous<'r> {
    pub record: &'r WholeRecord,
    pub list: &'r [u128],
}

/// What a whole-object task found.
pub(super) struct WholeFound<'a> {
    /// Its warning: the first racing member as the other side, the sites of all racing
    /// members named there.
    pub pair: Option<Pair<'a>>,
    /// Its record for the next run, when this run keeps a memo.
    pub record: Option<WholeRecord>,
    /// The member checks it made (the others' outcomes were the previous run's).
    pub checked: usize,
}

/// The task of whole access `w` against `members` (group ids, in order). With the memo
/// (`digests`: this run's member list digest and each member group's digest, in order), it
/// records each check's outcome, and takes those `previous` recorded for a member group of the
/// same digest instead of checking it again.
pub(super) fn pair_whole<'a>(
    cx: &PairContext<'_>,
    w: &Group<'a>,
    groups: &[Group<'a>],
    members: &[u32],
    digests: Option<(&Digest, &[u128])>,
    previous: Option<Previous<'_>>,
    scratch: &mut Scratch,
) -> WholeFound<'a> {
    let earlier = digests.zip(previous).map(|(now, p)| Earlier::new(now, p));
    let mut outcomes = Outcomes::default();
    let mut first: Option<(Side<'a>, Side<'a>, [u32; 2])> = None;
    let mut others: Vec<&'a [Witness]> = Vec::new();
    let mut checked = 0;
    for (at, &m) in members.iter().enumerate() {
        let g = &groups[m as usize];
        let replayed = (earlier.as_ref())
            .and_then(|e| e.outcome(at))
            .and_then(|o| Some((o, replay(cx, w, g, o, first.is_none())?)));
        let (outcome, pair) = match replayed {
            Some((o, pair)) => {
                scratch.stats.add(&o.stats);
                (o.clone(), pair)
            }
            None => {
                checked += 1;
                checked_outcome(cx, w, g, scratch)
            }
        };
        match pair {
            Some(pair) if first.is_none() => first = Some(sides(pair, w)),
            _ if outcome.performers.is_some() => others.push(g.access.witnesses),
            _ => {}
        }
        if digests.is_some() {
            outcomes.push(outcome);
        }
    }
    WholeFound {
        pair: first.map(|sides| with_sites(sides, others.into_iter())),
        record: digests.map(|(list, _)| outcomes.record(*list)),
        checked,
    }
}

/// The outcomes of the previous run's task, by this run's member positions.
struct Earlier<'r> {
    record: &'r WholeRecord,
    /// This run's member digests, when the list is not the one recorded.
    now: Option<&'r [u128]>,
    /// The recorded list's positions by member digest, when it is not this run's.
    positions: FxHashMap<u128, u32>,
}

impl<'r> Earlier<'r> {
    fn new((list, now): (&Digest, &'r [u128]), previous: Previous<'r>) -> Earlier<'r> {
        let same = previous.record.members == *list;
        let positions = match same {
            true => FxHashMap::default(),
            false => (previous.list.iter())
                .enumerate()
                .map(|(i, &d)| (d, i as u32))
                .collect(),
        };
        Earlier {
            record: previous.record,
            now: (!same).then_some(now),
            positions,
        }
    }

    /// The recorded outcome of the member at position `at` of this run's list: of the member
    /// at the same position when the list is the recorded one, else of a member of the same
    /// digest (equal digests, equal verdicts). `None` for a stale or corrupt record.
    fn outcome(&self, at: usize) -> Option<&'r MemberOutcome> {
        let position = match self.now {
            None => at,
            Some(now) => *self.positions.get(now.get(at)?)? as usize,
        };
        let index = *self.record.per_member.get(position)?;
        self.record.outcomes.get(index as usize)
    }
}

/// A recorded outcome on this run's groups: `Some(None)` when it is no race, or when it is
/// one and only its sites are wanted (`first` unset); `Some(Some(pair))` the race made again
/// from its performances; `None` when they are not this run's (a stale record: checked).
fn replay<'a>(
    cx: &PairContext<'_>,
    w: &Group<'a>,
    g: &Group<'a>,
    outcome: &MemberOutcome,
    first: bool,
) -> Option<Option<Pair<'a>>> {
    match outcome.performers {
        Some([p, q]) if first => Some(Some(remake(cx, w, p, g, q)?)),
        Some([p, q]) => {
            // Not made again, but its performers must be there.
            w.performers.find(p as usize)?;
            g.performers.find(q as usize)?;
            Some(None)
        }
        None => Some(None),
    }
}

/// Checks `w` against member `g`: the check's outcome (its own counts, added to `scratch`'s
/// as well) and its race.
fn checked_outcome<'a>(
    cx: &PairContext<'_>,
    w: &Group<'a>,
    g: &Group<'a>,
    scratch: &mut Scratch,
) -> (MemberOutcome, Option<Pair<'a>>) {
    let before = mem::take(&mut scratch.stats);
    let pair = check(cx, w, g, false, scratch);
    let stats = mem::replace(&mut scratch.stats, before);
    scratch.stats.add(&stats);
    let performers = pair.as_ref().map(|p| p.performers);
    (MemberOutcome { stats, performers }, pair)
}

/// A task's outcomes as they are recorded: each distinct one once.
#[derive(Default)]
struct Outcomes {
    distinct: Vec<MemberOutcome>,
    index: FxHashMap<MemberOutcome, u32>,
    per_member: Vec<u32>,
}

impl Outcomes {
    fn push(&mut self, outcome: MemberOutcome) {
        let next = self.distinct.len() as u32;
        let i = *self.index.entry(outcome.clone()).or_insert(next);
        if i == next {
            self.distinct.push(outcome);
        }
        self.per_member.push(i);
    }

    fn record(self, members: Digest) -> WholeRecord {
        WholeRecord {
            members,
            per_member: self.per_member,
            outcomes: self.distinct,
        }
    }
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
