//! Accesses shared by the functions of a *collapsed* SCC: a recursive SCC too big for RELAY's
//! per-function fixpoint.
//!
//! In a recursive SCC every function reaches every other, so with RELAY's summaries each
//! member's summary grows to hold the accesses of the whole SCC. On the Linux kernel the
//! function-pointer calls (VFS, device, network ops) close one SCC of ~39,000 functions: that
//! is ~39,000 copies of the same tens of thousands of accesses, each rebound through every
//! call site of every round, and copied again into every caller above.
//!
//! A collapsed SCC (at least [`super::Context::collapse_at`] functions) is analysed
//! differently:
//! - the fixpoint runs as usual, but a call to another member of the SCC brings in only the
//!   callee's lockset, thread and return effects, not its accesses: each member's summary
//!   holds its *own* accesses (its body's and those of callees outside the SCC);
//! - when the fixpoint is done, the own accesses of all members are put together once, in
//!   a form that does not depend on any member's entry ([`SetContent::build`]): paths as
//!   their representatives (`p.f`, like the paths of a recursive call), locksets as acquired
//!   in the performing member. Every member's summary refers to this one set, and every
//!   caller inherits the references of its callees ([`Summary::shared`]) instead of copying
//!   their accesses.
//!
//! The set is coarsened (paths merged per representative and member, locksets joined) only past
//! [`MAX_SHARED_ACCESSES`]: it is stored once, so each access keeps its own path, lockset and
//! sites (coarsened at 2,000 accesses, as summaries are, the kernel's set joined the locksets of
//! every access to one member of one class, and kept only the first sites of each).
//!
//! What is lost, and in which direction: a shared access is guarded only by the locks its own
//! member holds — locks held by its callers (inside or above the SCC) are not applied, and its
//! phase is `Threaded` (not ordered by `main`'s thread creations). That can only add warnings.
//! Call chains of shared accesses start at the member that performs them.

use std::sync::{Arc, OnceLock};

use super::access::{AccessSet, AccessTables, AccessView, GuardedAccess};

/// A shared set is coarsened past this many accesses. It is stored once and referred to, not
/// copied into callers as a summary's accesses are ([`super::access::MAX_ACCESSES`]), so it
/// can keep each access's own path and lockset much longer.
pub const MAX_SHARED_ACCESSES: usize = 1 << 20;
use super::owned::OwnedFormals;
use super::path::{Classes, Root};
use super::threads::Phase;
use super::Summary;
use crate::callgraph::Scc;
use crate::ir::FuncId;
use crate::link::Program;
use crate::pta::PointsTo;

/// The accesses of every function of a collapsed SCC, independent of their entries.
///
/// Named when the SCC is done; its accesses ([`SetContent`]) are built then when the SCC was
/// analysed, and later when it was reused from a store ([`super::stored_sets`]): summaries
/// that refer to the set only hold it by name until the race stage reads it.
pub struct SharedAccesses {
    /// The SCC's smallest function: names the set (there is one per collapsed SCC).
    pub scc: FuncId,
    /// Number of functions of the SCC.
    pub functions: usize,
    content: OnceLock<SetContent>,
}

/// A shared set's accesses.
pub struct SetContent {
    pub accesses: Vec<GuardedAccess>,
    pub tables: AccessTables,
    /// The accesses were merged per representative path ([`AccessSet::coarsen`]).
    pub coarsened: bool,
    /// Members' formals found owned, and the accesses inside their objects left out.
    pub owned_formals: usize,
    pub owned_accesses: usize,
}

impl SetContent {
    /// Puts together the own accesses of the SCC's members (`summaries`, parallel to
    /// `scc.functions`), but those inside objects their formals own ([`OwnedFormals`]).
    pub fn build(
        program: &Program,
        pta: &PointsTo,
        scc: &Scc,
        summaries: &[Option<Arc<Summary>>],
        owned: &OwnedFormals,
    ) -> SetContent {
        let mut set = AccessSet::default();
        let mut private = 0;
        for (&f, s) in scc.functions.iter().zip(summaries) {
            let Some(s) = s else { continue };
            let classes = Classes {
                program,
                pta,
                func: f,
            };
            // Inside an object the formal owns: only the calling thread reaches it.
            let inside_owned = |p: &super::Path| matches!(p.root, Root::Formal(j) if p.derefs() == 1 && owned.owned(f, j));
            let paths: Vec<Option<u32>> = s
                .tables
                .paths
                .iter()
                .map(|p| {
                    (!inside_owned(p))
                        .then(|| classes.collapse((**p).clone()).map(|q| set.path_id(q)))
                        .flatten()
                })
                .collect();
            let locksets: Vec<u32> = s
                .tables
                .locksets
                .iter()
                .map(|l| {
                    set.lockset_id(&l.rebind(|p| classes.collapse(p.clone()).into_iter().collect()))
                })
                .collect();
            for a in &s.accesses {
                let Some(p) = paths[a.path as usize] else {
                    private += usize::from(inside_owned(&s.tables.paths[a.path as usize]));
                    continue;
                };
                let key = (
                    p,
                    locksets[a.locks as usize],
                    a.kind,
                    a.atomic,
                    Phase::Threaded,
                );
                for w in a.witnesses.iter() {
                    set.insert(key, a.class, a.value, w.chain_len(), w.loc, || w.clone());
                }
            }
        }
        let coarsened = set.len() > MAX_SHARED_ACCESSES;
        if coarsened {
            // Every path is entry-independent now: any member's view of classes will do.
            let classes = Classes {
                program,
                pta,
                func: scc.functions[0],
            };
            set = set.coarsen(|p| classes.object_member(p));
        }
        let (tables, accesses) = set.finish();
        SetContent {
            accesses,
            tables,
            coarsened,
            owned_formals: owned.len(),
            owned_accesses: private,
        }
    }
}

impl SharedAccesses {
    /// The set of the collapsed SCC named `scc`, of `functions` functions, its accesses still
    /// to be built ([`Self::fill`]).
    pub fn named(scc: FuncId, functions: usize) -> SharedAccesses {
        SharedAccesses {
            scc,
            functions,
            content: OnceLock::new(),
        }
    }

    /// Gives the set its accesses; `false` if it has them already.
    pub fn fill(&self, content: SetContent) -> bool {
        self.content.set(content).is_ok()
    }

    /// The set's accesses. They are built before the summaries stage ends whenever a later
    /// stage reads summaries ([`super::Setup::sets_needed`]): reading a set without them is a
    /// bug in the pipeline, not a property of the input.
    pub fn content(&self) -> &SetContent {
        self.content
            .get()
            .expect("a collapsed SCC's shared set is read before it is built")
    }

    pub fn accesses(&self) -> impl Iterator<Item = AccessView<'_>> {
        let content = self.content();
        content.accesses.iter().map(|a| content.tables.view(a))
    }
}

impl Summary {
    /// What a call from another member of its collapsed SCC reads of this summary: all of it
    /// but its accesses, which reach the callers through the SCC's shared set instead
    /// (`exec/call.rs`: `apply_summary` copies none across a collapsed call). A memoised step
    /// is named by this part of its callees' summaries ([`crate::schedule::Made::read`]), so an
    /// edit that changes only a member's accesses does not reach its callers' steps. Every field
    /// is named: a new one must be placed on one side or the other.
    pub fn read_by_members(&self) -> Summary {
        Summary {
            lockset: self.lockset.clone(),
            ret: self.ret.clone(),
            accesses: Vec::new(),
            tables: AccessTables::default(),
            spawns: self.spawns.clone(),
            threads: self.threads.clone(),
            formal_escapes: self.formal_escapes.clone(),
            formal_self_refs: self.formal_self_refs.clone(),
            formal_loads_escape: self.formal_loads_escape.clone(),
            returns_fresh: self.returns_fresh,
            member_calls: self.member_calls.clone(),
            widened: self.widened,
            modelled: self.modelled,
            // Says how the accesses are kept: the race stage reads it, callers do not.
            coarsened: false,
            shared: self.shared.clone(),
        }
    }
}

/// One set per collapsed SCC and run: the SCC names it.
impl PartialEq for SharedAccesses {
    fn eq(&self, other: &Self) -> bool {
        self.scc == other.scc
    }
}

impl Eq for SharedAccesses {}

impl std::fmt::Debug for SharedAccesses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let accesses = self.content.get().map(|c| c.accesses.len());
        write!(
            f,
            "SharedAccesses({:?}, {} functions, {:?} accesses)",
            self.scc, self.functions, accesses
        )
    }
}

/// Adds `more` to a sorted, duplicate-free list of shared sets.
pub fn merge_into(list: &mut Vec<Arc<SharedAccesses>>, more: &[Arc<SharedAccesses>]) {
    for s in more {
        if let Err(i) = list.binary_search_by_key(&s.scc, |x| x.scc) {
            list.insert(i, s.clone());
        }
    }
}
