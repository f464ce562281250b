//! What an analysis reads of the program's derived facts, recorded while it runs: the
//! points-to classes it asks for, and the record definitions it looks into.
//!
//! The summaries cache keys an SCC without the points-to partition and without the program's
//! records: what an SCC's summaries depend on of them are the classes of the nodes its
//! analysis asked about (its locals, globals, members, the classes its callees' summaries
//! name, and whatever those point to) and the records whose members it read. Every class id
//! the analysis gets is an answer of [`crate::pta::PointsTo::class`], and every record
//! definition it sees comes from [`crate::ir::types::TypeTable::record`] (or
//! [`crate::ir::types::TypeTable::find_field`]); both note what they were asked about here
//! while a [`recording`] runs on the thread. The cache stores what the answers were with the
//! SCC and checks them against the next run's partition and records
//! ([`crate::cache::class_deps`]).
//!
//! One log holds both, as `u32`s ([`Asked`]): a node as its number, a record as its number
//! with [`RECORD`] set (no run has 2³¹ nodes: [`Asked::of`] is checked against the node
//! count by the reader), and a read of the whole record table as [`ALL_RECORDS`].

use std::cell::RefCell;

use rustc_hash::FxHashSet;

thread_local! {
    static READS: RefCell<Option<Reads>> = const { RefCell::new(None) };
}

/// The nodes asked about so far (the last one apart: the same one is asked about many times
/// in a row).
struct Reads {
    seen: FxHashSet<u32>,
    last: u32,
}

/// Runs `f`, returning what it returned and what it asked about (in no particular order,
/// as [`Asked::of`] reads them). Recordings nest: an inner one's nodes are the outer one's too.
pub fn recording<R>(f: impl FnOnce() -> R) -> (R, Vec<u32>) {
    let outer = READS.with_borrow_mut(|r| {
        r.replace(Reads {
            seen: FxHashSet::default(),
            last: u32::MAX,
        })
    });
    // Restored on unwinding too (a panic fails one SCC; the thread goes on to others).
    struct Restore(Option<Option<Reads>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(outer) = self.0.take() {
                READS.with_borrow_mut(|r| *r = outer);
            }
        }
    }
    let mut restore = Restore(Some(outer));
    let result = f();
    let mut outer = restore.0.take().expect("restored once");
    let inner = READS.with_borrow_mut(Option::take);
    let read: Vec<u32> = inner.map_or_else(Vec::new, |i| i.seen.into_iter().collect());
    if let Some(o) = &mut outer {
        o.seen.extend(read.iter().copied());
    }
    READS.with_borrow_mut(|r| *r = outer);
    (result, read)
}

/// Runs `f` without noting what it asks: for answers that are not part of what the
/// analysis computes from the partition, but derived again from it wherever they are used
/// (an access's class that follows from its path, [`crate::summary::access::DERIVED_CLASS`]).
pub fn unrecorded<R>(f: impl FnOnce() -> R) -> R {
    let outer = READS.with_borrow_mut(Option::take);
    // Restored on unwinding too.
    struct Restore(Option<Reads>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = self.0.take();
            READS.with_borrow_mut(|r| *r = outer);
        }
    }
    let _restore = Restore(outer);
    f()
}

/// Marks a record's number in the log.
pub const RECORD: u32 = 1 << 31;

/// The log's mark for a read of every record at once ([`crate::ir::types::TypeTable::records`]).
pub const ALL_RECORDS: u32 = u32::MAX;

/// One thing an analysis asked about, as the log holds it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Asked {
    /// The class of a points-to node.
    Node(u32),
    /// The definition of a record (its number).
    Record(u32),
    /// Every record's definition.
    AllRecords,
}

impl Asked {
    /// What the logged `x` stands for.
    pub fn of(x: u32) -> Asked {
        match x {
            ALL_RECORDS => Asked::AllRecords,
            x if x & RECORD != 0 => Asked::Record(x & !RECORD),
            node => Asked::Node(node),
        }
    }
}

/// Notes that record `r`'s definition was read, if a recording runs on this thread.
#[inline]
pub fn note_record(r: u32) {
    note(if r >= RECORD { ALL_RECORDS } else { r | RECORD });
}

/// Notes that every record's definition was read, if a recording runs on this thread.
#[inline]
pub fn note_all_records() {
    note(ALL_RECORDS);
}

/// Notes that the class of `node` was asked for, if a recording runs on this thread.
#[inline]
pub(crate) fn note(node: u32) {
    READS.with(|r| {
        if let Ok(mut r) = r.try_borrow_mut() {
            if let Some(r) = r.as_mut() {
                if r.last != node {
                    r.last = node;
                    r.seen.insert(node);
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recording_sees_its_own_reads_and_passes_them_to_the_one_around_it() {
        note(1);
        let ((_, inner), outer) = recording(|| {
            note(2);
            let inner = recording(|| {
                note(3);
                note(3);
            });
            note(4);
            inner
        });
        let sorted = |mut v: Vec<u32>| {
            v.sort_unstable();
            v
        };
        assert_eq!(sorted(inner), vec![3]);
        assert_eq!(
            sorted(outer),
            vec![2, 3, 4],
            "not 1: read before the recording"
        );
        let (_, after) = recording(|| ());
        assert!(after.is_empty());
    }

    #[test]
    fn records_are_logged_apart_from_nodes() {
        let (_, read) = recording(|| {
            note(7);
            note_record(7);
            note_record(RECORD + 1);
            note_all_records();
        });
        let mut asked: Vec<Asked> = read.into_iter().map(Asked::of).collect();
        asked.sort_by_key(|a| format!("{a:?}"));
        asked.dedup();
        assert_eq!(
            asked,
            vec![Asked::AllRecords, Asked::Node(7), Asked::Record(7)],
            "a record past the marks reads as all of them"
        );
    }

    #[test]
    fn what_runs_unrecorded_is_not_noted_and_the_recording_goes_on_after_it() {
        let (_, read) = recording(|| {
            note(1);
            unrecorded(|| note(2));
            note(3);
        });
        let mut read = read;
        read.sort_unstable();
        assert_eq!(read, vec![1, 3]);
    }
}
