//! Symbolic lvalues (RELAY Figure 2: `o ::= x | x.f | p.f | (*o).f`): access paths rooted at a
//! formal, a global, or a points-to representative, k-limited so that loops terminate.

use serde::{Deserialize, Serialize};

use crate::ir::{FuncId, GlobalId, LocalId, Name, RecordId};
use crate::link::Program;
use crate::pta::PointsTo;

/// Where an access path starts.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub enum Root {
    Global(GlobalId),
    /// The storage of the function's `i`-th formal: `Formal(i)` is the formal itself (private to
    /// the callee), `Formal(i)·*` is what its incoming value points to.
    Formal(u32),
    /// A local of the function being analysed. Never appears in a summary: an address-taken local
    /// is replaced by its representative, any other local is private.
    Local(LocalId),
    /// A points-to class: every location of the class (RELAY's `p`). Used past the k-limit and
    /// where the symbolic value of a pointer is unknown.
    Rep(u32),
    /// A program-wide pseudo lock named by a model (`rcu_read_lock` holds `rcu`).
    Pseudo(Name),
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub enum Step {
    /// Follows the pointer stored at the path so far.
    Deref,
    Field(RecordId, Name),
    /// Any element of an array (RELAY's `[0]`: all indices are one location).
    Index,
    /// The element at a constant index (`m[3]`): one lock, one thread handle, a location apart
    /// from the other constant elements (but not from `Index`).
    Elem(u32),
}

impl Step {
    /// An array step, constant or not.
    pub fn is_element(&self) -> bool {
        matches!(self, Step::Index | Step::Elem(_))
    }
}

#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub struct Path {
    pub root: Root,
    /// (Tried as `SmallVec<[Step; 4]>`: no faster with mimalloc, 8% more memory.)
    pub steps: Vec<Step>,
}

/// At most this many dereferences in a path; deeper paths collapse to a representative.
pub const MAX_DEREFS: usize = 4;
/// At most this many steps in a path.
pub const MAX_STEPS: usize = 10;

impl Path {
    /// Frees spare capacity (a path pushed step by step holds room for four; a summary's
    /// tables keep millions of paths).
    pub fn shrink_to_fit(&mut self) {
        self.steps.shrink_to_fit();
    }

    pub fn new(root: Root) -> Path {
        Path {
            root,
            steps: Vec::new(),
        }
    }

    pub fn with(mut self, step: Step) -> Path {
        self.steps.push(step);
        self
    }

    pub fn extended(&self, steps: &[Step]) -> Path {
        let mut p = self.clone();
        p.steps.extend_from_slice(steps);
        p
    }

    pub fn derefs(&self) -> usize {
        self.steps.iter().filter(|s| **s == Step::Deref).count()
    }

    /// Whether the path names memory private to the function's frame: a local or a formal
    /// itself (not through a pointer).
    pub fn is_frame_local(&self) -> bool {
        matches!(self.root, Root::Local(_) | Root::Formal(_)) && !self.steps.contains(&Step::Deref)
    }
}

/// Computes points-to classes of paths in the context of one function (formals and locals are
/// that function's).
pub struct Classes<'a> {
    pub program: &'a Program,
    pub pta: &'a PointsTo,
    pub func: FuncId,
}

impl Classes<'_> {
    /// The class of the memory a path denotes, if the points-to graph knows it. In the
    /// field-based mode a path ending in a member (after its last dereference) is that member's
    /// class, like [`PointsTo::lval_class`].
    pub fn class(&self, path: &Path) -> Option<u32> {
        self.class_of(path.root, &path.steps)
    }

    /// The class an access to `path` gets: [`Classes::class`], found without noting what it
    /// asked of the partition — the summaries cache does not store it but derives it again
    /// from the path ([`super::access::DERIVED_CLASS`]), so it is no part of what the analysis
    /// read. When the path has no class it is asked again, noted: the access then takes a
    /// class from elsewhere, which its summary names, and a partition in which the path had
    /// one would have given it that one instead.
    pub fn access_class(&self, path: &Path) -> Option<u32> {
        crate::reads::unrecorded(|| self.class(path)).or_else(|| self.class(path))
    }

    /// [`Classes::class`] of the path `root·steps` (no path is built: this runs for every
    /// rebound access).
    fn class_of(&self, root: Root, steps: &[Step]) -> Option<u32> {
        let last_deref = steps.iter().rposition(|s| *s == Step::Deref);
        let tail = match last_deref {
            Some(i) => &steps[i + 1..],
            None => steps,
        };
        let member = tail.iter().rev().find_map(|s| match s {
            Step::Field(r, n) => Some((*r, *n)),
            _ => None,
        });
        if let Some((r, n)) = member {
            if let Some(c) = self.pta.field_class(r, n) {
                return Some(c);
            }
        }
        self.object_class_of(root, steps)
    }

    /// The class of the object a path lies in: like [`Classes::class`] but ignoring the
    /// members after the last dereference (in the field-based mode a member has a class of its
    /// own, which says nothing about whether the object is shared).
    pub fn object_class(&self, path: &Path) -> Option<u32> {
        self.object_class_of(path.root, &path.steps)
    }

    fn object_class_of(&self, root: Root, steps: &[Step]) -> Option<u32> {
        match steps.iter().rposition(|s| *s == Step::Deref) {
            Some(i) => self.pta.deref_class(self.class_of(root, &steps[..i])?),
            None => self.root_class(root),
        }
    }

    /// The path as its representative form `p.f`: the object its last dereference reaches,
    /// then the trailing members. Paths without a dereference are returned unchanged.
    pub fn collapse(&self, path: Path) -> Option<Path> {
        if !path.steps.contains(&Step::Deref) {
            return Some(path);
        }
        let c = self.object_class(&path)?;
        let i = path.steps.iter().rposition(|s| *s == Step::Deref)?;
        Some(Path {
            root: Root::Rep(c),
            steps: path.steps[i + 1..].to_vec(),
        })
    }

    /// The coarsest form of a path: the representative of the object it lies in and the last
    /// member accessed (`p.f`), for summaries widened for size. `None` for paths that keep a
    /// dereference after collapsing and for pseudo-locations.
    pub fn object_member(&self, p: &Path) -> Option<Path> {
        let mut q = self.collapse(p.clone())?;
        if q.steps.contains(&Step::Deref) || matches!(q.root, Root::Pseudo(_)) {
            return None;
        }
        let object = self.root_class(q.root)?;
        let member = q
            .steps
            .iter()
            .rev()
            .find(|s| matches!(s, Step::Field(..)))
            .copied();
        q.root = Root::Rep(object);
        q.steps = member.into_iter().collect();
        Some(q)
    }

    pub fn root_class(&self, root: Root) -> Option<u32> {
        let pta = self.pta;
        match root {
            Root::Global(g) => Some(pta.class(pta.global_node(g))),
            Root::Formal(i) => {
                let body = self.program.functions[self.func.index()].body.as_ref()?;
                let l = *body.params.get(i as usize)?;
                Some(pta.class(pta.local_node(self.func, l)))
            }
            Root::Local(l) => Some(pta.class(pta.local_node(self.func, l))),
            Root::Rep(c) => Some(pta.class(c)),
            Root::Pseudo(_) => None,
        }
    }

    /// Applies the k-limit: a path with too many dereferences or steps becomes the
    /// representative of the memory its last dereference reaches, followed by the trailing
    /// members (`p.f`). `None` if that memory has no class.
    ///
    /// A path rooted at a representative is always collapsed that way: it stands for every
    /// object of its class already, so the steps before its last dereference distinguish nothing
    /// (and would multiply the summary's entries).
    pub fn limit(&self, path: Path) -> Option<Path> {
        let rep_deref = matches!(path.root, Root::Rep(_)) && path.steps.contains(&Step::Deref);
        if !rep_deref && path.derefs() <= MAX_DEREFS && path.steps.len() <= MAX_STEPS {
            return Some(path);
        }
        let mut p = self.collapse(path)?;
        p.steps.truncate(MAX_STEPS);
        Some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_local_paths() {
        let f = Path::new(Root::Formal(0));
        assert!(f.is_frame_local());
        assert!(!f.clone().with(Step::Deref).is_frame_local());
        assert!(!Path::new(Root::Global(GlobalId(0))).is_frame_local());
        assert_eq!(
            f.with(Step::Deref)
                .with(Step::Field(RecordId(0), Name(1)))
                .with(Step::Deref)
                .derefs(),
            2
        );
    }
}
