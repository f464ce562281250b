//! Symbolic values (RELAY Figure 2: `v ::= ⊤ | ⊥ | i | init(o) | must(o) | may(os)`), plus the
//! two kinds of value this analysis needs beyond the paper: a function address (thread start
//! routines passed through wrappers) and the result of a conditional lock operation (followed
//! into the branch that tests it).

use serde::{Deserialize, Serialize};

use super::lockset::Lock;
use super::path::{Path, Step};
use crate::ir::FuncId;

/// At most this many targets in a `may` set; larger sets become ⊤.
pub const MAX_MAY: usize = 4;

#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default, Serialize, Deserialize)]
pub enum SymVal {
    /// Not assigned yet.
    Bottom,
    /// Any value.
    #[default]
    Top,
    Int(i128),
    /// The value the path held (at function entry for formals; when read, for memory).
    Init(Path),
    /// Must point to the path.
    Must(Path),
    /// May point to any of the paths (sorted, 2..=MAX_MAY of them).
    May(Vec<Path>),
    Func(FuncId),
    /// The result of a conditional lock operation: the lock is held iff the value is non-zero
    /// (`nonzero`) or iff it is zero (`!nonzero`).
    Try {
        lock: Lock,
        nonzero: bool,
    },
}

impl SymVal {
    /// The locations a pointer with this value may point to; empty when unknown.
    pub fn targets(&self) -> Vec<Path> {
        match self {
            SymVal::Init(p) => vec![p.clone().with(Step::Deref)],
            SymVal::Must(p) => vec![p.clone()],
            SymVal::May(ps) => ps.clone(),
            _ => Vec::new(),
        }
    }

    /// Whether the value names exactly one location (a lock operation on it is a *must*).
    pub fn is_must(&self) -> bool {
        matches!(self, SymVal::Init(_) | SymVal::Must(_))
    }

    /// A pointer value to any of `paths` (⊤ when there are none or too many).
    pub fn pointing_to(mut paths: Vec<Path>) -> SymVal {
        paths.sort();
        paths.dedup();
        match paths.len() {
            0 => SymVal::Top,
            1 => SymVal::Must(paths.pop().expect("one path")),
            n if n <= MAX_MAY => SymVal::May(paths),
            _ => SymVal::Top,
        }
    }

    /// The least upper bound.
    pub fn join(&self, other: &SymVal) -> SymVal {
        use SymVal::*;
        match (self, other) {
            (a, b) if a == b => a.clone(),
            (Bottom, x) | (x, Bottom) => x.clone(),
            (Top, _) | (_, Top) => Top,
            (a @ (Init(_) | Must(_) | May(_)), b @ (Init(_) | Must(_) | May(_))) => {
                let mut t = a.targets();
                t.extend(b.targets());
                SymVal::pointing_to(t)
            }
            _ => Top,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::GlobalId;
    use crate::summary::path::Root;

    fn g(i: u32) -> Path {
        Path::new(Root::Global(GlobalId(i)))
    }

    #[test]
    fn join_is_a_least_upper_bound() {
        use SymVal::*;
        let vals = [
            Bottom,
            Top,
            Int(1),
            Int(2),
            Init(g(0)),
            Must(g(1)),
            Must(g(2)),
            Func(FuncId(3)),
        ];
        for a in &vals {
            assert_eq!(a.join(&Bottom), *a);
            assert_eq!(a.join(&Top), Top);
            assert_eq!(a.join(a), *a);
            for b in &vals {
                assert_eq!(a.join(b), b.join(a), "commutative: {a:?} {b:?}");
                for c in &vals {
                    assert_eq!(a.join(b).join(c), a.join(&b.join(c)), "associative");
                }
            }
        }
        assert_eq!(Int(1).join(&Int(2)), Top);
        assert_eq!(Must(g(1)).join(&Must(g(2))), May(vec![g(1), g(2)]));
        assert_eq!(
            Init(g(0)).join(&Must(g(1))),
            May(vec![g(0).with(Step::Deref), g(1)])
        );
    }

    #[test]
    fn may_sets_are_bounded() {
        let mut v = SymVal::Bottom;
        for i in 0..=MAX_MAY as u32 {
            v = v.join(&SymVal::Must(g(i)));
        }
        assert_eq!(v, SymVal::Top);
    }
}
