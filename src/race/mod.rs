//! Warning generation (RELAY §3.4, Figure 7): thread entries, then pairs of guarded accesses
//! from two entries (or one entry that runs more than once) whose lvalues may alias, at least one
//! a write, not both atomic, with no common lock held exclusively by one side.
//!
//! Accesses are bucketed by points-to class first, so only accesses that may alias are ever
//! compared. Filters, orderings between main and its threads, and reports are built on this
//! (see the warnings issue).

pub mod entries;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::ir::types::RecordKind;
use crate::ir::FuncId;
use crate::link::Program;
use crate::summary::{AccessKind, AccessView, Path, RelativeLockset, Root, Step, Summaries};

pub use entries::{thread_entries, ThreadEntry};

/// One side of a warning: an access performed by a thread entry (possibly in a callee).
#[derive(Clone, Debug)]
pub struct Side<'a> {
    pub entry: FuncId,
    pub access: AccessView<'a>,
}

#[derive(Clone, Debug)]
pub struct Warning<'a> {
    pub first: Side<'a>,
    pub second: Side<'a>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct RaceStats {
    pub entries: usize,
    /// Buckets (points-to classes) holding accesses of some entry.
    pub buckets: usize,
    /// Access pairs compared (same bucket, concurrent entries).
    pub pairs_considered: usize,
    pub warnings: usize,
}

/// The key accesses are bucketed by: their class, or their path when it has none.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Bucket {
    Class(u32),
    Path(Path),
}

/// All warnings between the given entries, sorted and deduplicated by access-location pair.
pub fn warnings<'a>(
    program: &Program,
    sums: &'a Summaries,
    entries: &[ThreadEntry],
) -> (Vec<Warning<'a>>, RaceStats) {
    let mut stats = RaceStats {
        entries: entries.len(),
        ..Default::default()
    };
    let mut buckets: BTreeMap<Bucket, Vec<(usize, AccessView<'a>)>> = BTreeMap::new();
    for (i, e) in entries.iter().enumerate() {
        let Some(s) = sums.get(e.func) else { continue };
        for a in s.accesses() {
            let key = match a.class {
                Some(c) => Bucket::Class(c),
                None => Bucket::Path(a.path.clone()),
            };
            buckets.entry(key).or_default().push((i, a));
        }
    }
    stats.buckets = buckets.len();
    let mut found: BTreeMap<(crate::ir::Loc, crate::ir::Loc), Warning<'a>> = BTreeMap::new();
    for items in buckets.values() {
        for (x, &(ei, a)) in items.iter().enumerate() {
            for &(ej, b) in &items[x..] {
                if !concurrent(entries, ei, ej) {
                    continue;
                }
                stats.pairs_considered += 1;
                if races(program, &a, &b) {
                    let (first, second) = ordered(
                        Side {
                            entry: entries[ei].func,
                            access: a,
                        },
                        Side {
                            entry: entries[ej].func,
                            access: b,
                        },
                    );
                    found
                        .entry((first.access.witness().loc, second.access.witness().loc))
                        .or_insert(Warning { first, second });
                }
            }
        }
    }
    let warnings: Vec<Warning<'a>> = found.into_values().collect();
    stats.warnings = warnings.len();
    (warnings, stats)
}

fn ordered<'a>(a: Side<'a>, b: Side<'a>) -> (Side<'a>, Side<'a>) {
    if (a.access.witness().loc, a.entry) <= (b.access.witness().loc, b.entry) {
        (a, b)
    } else {
        (b, a)
    }
}

/// Whether entries `i` and `j` may run at the same time: two different entries always; an
/// entry with itself only when it may be started more than once.
fn concurrent(entries: &[ThreadEntry], i: usize, j: usize) -> bool {
    i != j || entries[i].multiple
}

/// Figure 7's test for one pair of accesses from concurrent entries.
fn races(program: &Program, a: &AccessView<'_>, b: &AccessView<'_>) -> bool {
    (a.kind == AccessKind::Write || b.kind == AccessKind::Write)
        && !(a.atomic && b.atomic)
        && !RelativeLockset::excludes(&a.locks.plus, &b.locks.plus)
        && may_alias(program, a.path, b.path)
}

/// RELAY's mayEqual, after the bucketing by class: sound syntactic checks that separate accesses
/// of one class — two different variables, or two different members of one struct.
fn may_alias(program: &Program, a: &Path, b: &Path) -> bool {
    if let (Root::Global(x), Root::Global(y)) = (a.root, b.root) {
        if x != y && !a.steps.contains(&Step::Deref) && !b.steps.contains(&Step::Deref) {
            return false;
        }
    }
    match (a.steps.last(), b.steps.last()) {
        (Some(Step::Field(ra, fa)), Some(Step::Field(rb, fb))) if ra == rb && fa != fb => {
            program.types.record(*ra).kind == RecordKind::Union
        }
        _ => true,
    }
}
