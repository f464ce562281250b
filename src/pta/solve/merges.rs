//! Why a class is big: the unifications that joined two large classes, and the constraint
//! that caused each.
//!
//! Steensgaard's classes grow by unification, and one constraint can merge two classes of
//! thousands of lvalues each (a `void *` member both sides are stored into, a callback
//! formal). Such merges are rare — an lvalue is on the smaller side of a merge of classes of
//! at least [`MIN_SIDE`] lvalues at most log₂(N / MIN_SIDE) times — so all of them are kept,
//! and `relay callgraph` prints the ones inside the largest classes.

use crate::ir::{FuncId, GlobalId, Loc};

use super::super::{Origin, NONE};

/// Merges where both classes have at least this many lvalues are recorded.
const MIN_SIDE: u32 = 64;

/// The constraint being solved when a unification happened.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Cause {
    /// An instruction (or a `return`) of a function body.
    Instr(FuncId, Loc),
    /// A global's initializer.
    GlobalInit(GlobalId),
    /// A function's own formals and return value joined to its signature.
    Signature(FuncId),
    /// A function reached from an argument of a call of unknown code, bound as its callback.
    UnknownCallback(FuncId, Loc),
    /// Records handed to unknown code joining its memory.
    UnknownMemory,
}

/// One unification of two classes of at least [`MIN_SIDE`] lvalues each.
#[derive(Clone, Debug)]
pub struct Merge {
    /// The representative at the time (resolve with `find` for the final class).
    pub root: u32,
    /// Lvalues on each side, the larger first.
    pub sizes: (u32, u32),
    /// An lvalue of each side, in the same order.
    pub samples: (Origin, Origin),
    pub cause: Cause,
}

/// Per-node bookkeeping, valid at class representatives.
#[derive(Default)]
pub struct MergeTrace {
    /// Lvalues (non-fresh nodes) in each class.
    lvalues: Vec<u32>,
    /// An lvalue of each class, `NONE` if it has none.
    sample: Vec<u32>,
    pub cause: Option<Cause>,
    pub merges: Vec<Merge>,
}

impl MergeTrace {
    pub fn add_node(&mut self, origin: Origin) {
        let lvalue = origin != Origin::Fresh;
        let id = self.lvalues.len() as u32;
        self.lvalues.push(lvalue as u32);
        self.sample.push(if lvalue { id } else { NONE });
    }

    /// Class `child` was absorbed into `root`.
    pub fn union(&mut self, root: u32, child: u32, origin: &[Origin]) {
        let (r, c) = (root as usize, child as usize);
        let (a, b) = (self.lvalues[r], self.lvalues[c]);
        if a.min(b) >= MIN_SIDE {
            if let Some(cause) = self.cause {
                let (big, small) = if a >= b { (r, c) } else { (c, r) };
                self.merges.push(Merge {
                    root,
                    sizes: (self.lvalues[big], self.lvalues[small]),
                    samples: (
                        origin[self.sample[big] as usize],
                        origin[self.sample[small] as usize],
                    ),
                    cause,
                });
            }
        }
        self.lvalues[r] = a + b;
        if self.sample[r] == NONE {
            self.sample[r] = self.sample[c];
        }
    }
}
