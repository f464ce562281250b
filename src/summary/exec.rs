//! The per-function analysis: RELAY's symbolic execution (§3.1) and relative lockset analysis
//! (§3.2) as one forward dataflow problem over the IR ([`crate::dataflow`]), followed by a pass
//! over the fixpoint that collects guarded accesses (§3.3) and the function's summary.
//!
//! The state at a program point is the symbolic value of every *tracked* local (a local or
//! formal whose address is never taken, as a whole) and the relative lockset. Memory (globals,
//! the heap, address-taken locals) is not tracked: a read of it yields `init(o)` of its access
//! path, the symbolic "value of `o`", which is what lets `ai = dev->priv; lock(&ai->lock)` name
//! the lock `d->priv->lock` (RELAY Figure 1). Stores to memory are not remembered, the sound
//! choice when other threads may write it (RELAY sets escaping locations to ⊤ after each step).

use std::collections::BTreeMap;

use super::access::{AccessKind, AccessSet, Spawn, Witness, MAX_ACCESSES};
use super::lockset::RelativeLockset;
use super::path::{Classes, Path, Root, Step};
use super::threads::ThreadState;
use super::value::SymVal;
use super::{Context, Summary};
use crate::dataflow::{self, Analysis, JoinSemiLattice};
use crate::ir::*;
use crate::schedule::Lookup;

/// The pseudo path naming the handle of a thread a function cannot name.
pub(super) const ANONYMOUS_THREAD: &str = "thread";

mod call;
mod escape;
mod fresh;
mod loops;
mod reinterpret;
use call::merge_spawns;
use fresh::FreshReturns;

/// The handle arguments of the joins of a loop, by the CFG edge (block, successor index) that
/// leaves it.
type ExitJoins = rustc_hash::FxHashMap<(usize, usize), Vec<Expr>>;

/// Constant indices up to this one are elements of their own (`Step::Elem`); past it, any.
const MAX_ELEM: u32 = 1 << 16;

/// How an lvalue is accessed: read or write, atomically or not, and as which alias class.
#[derive(Copy, Clone)]
pub(super) struct How {
    pub kind: AccessKind,
    pub atomic: bool,
    pub value: Option<crate::ir::types::AliasClass>,
}

/// At most this many members of a record get the accesses of a whole-object access.
const MAX_MEMBER_ACCESSES: usize = 64;

/// The dataflow state: tracked locals' values and the relative lockset.
#[derive(Clone, PartialEq, Debug)]
pub struct State {
    reachable: bool,
    /// Values of tracked locals; a missing local is ⊥ (not assigned yet). Formals start as
    /// `init(x)`.
    env: BTreeMap<LocalId, SymVal>,
    pub locks: RelativeLockset,
    pub threads: ThreadState,
    /// Tracked locals holding the only pointers to an object allocated here, with the
    /// allocation's location (see `fresh.rs`): the locals of one location are all the
    /// object's pointers.
    fresh: BTreeMap<LocalId, Loc>,
    /// The allocations (of `fresh`) whose object may hold pointers to itself
    /// (`exec/escape.rs`).
    self_refs: std::collections::BTreeSet<Loc>,
}

impl JoinSemiLattice for State {
    fn join(&mut self, other: &State) -> bool {
        if !other.reachable {
            return false;
        }
        if !self.reachable {
            *self = other.clone();
            return true;
        }
        let mut changed = self.locks.join(&other.locks);
        changed |= self.threads.join(&other.threads);
        let fresh = self.fresh.len();
        // An object stays fresh only if the same locals point to it on both paths: a local
        // that points to it on one path only would be a pointer to it nobody tracks.
        let differ = |x: &BTreeMap<LocalId, Loc>, y: &BTreeMap<LocalId, Loc>| {
            x.iter()
                .filter(|&(l, at)| y.get(l) != Some(at))
                .map(|(_, at)| *at)
                .collect::<Vec<Loc>>()
        };
        let mut lost = differ(&self.fresh, &other.fresh);
        lost.extend(differ(&other.fresh, &self.fresh));
        self.fresh
            .retain(|l, at| other.fresh.get(l) == Some(at) && !lost.contains(at));
        changed |= fresh != self.fresh.len();
        let refs = self.self_refs.len();
        self.self_refs.extend(other.self_refs.iter().copied());
        changed |= refs != self.self_refs.len();
        // A key missing on one side is ⊥ there (formals start as `init(x)` in the entry state).
        for (l, v) in &other.env {
            match self.env.get_mut(l) {
                Some(mine) => {
                    let j = mine.join(v);
                    if j != *mine {
                        *mine = j;
                        changed = true;
                    }
                }
                None => {
                    self.env.insert(*l, v.clone());
                    changed = true;
                }
            }
        }
        changed
    }
}

/// One function's analysis, with everything it needs from the program.
pub struct FnAnalysis<'a> {
    pub ctx: &'a Context<'a>,
    pub func: FuncId,
    pub body: &'a Function,
    pub callees: &'a Lookup<'a, Summary>,
    classes: Classes<'a>,
    /// Formal index of each local (None for non-formals).
    formal_index: Vec<Option<u32>>,
    /// Classes reachable from the function's formals; with [`Context::escaping`] (globals,
    /// thread arguments) what RELAY's isAccessible allows.
    accessible: rustc_hash::FxHashSet<u32>,
    /// Locations of thread joins inside a loop (a join of `t[i]` there joins every slot).
    joins_in_loop: rustc_hash::FxHashSet<Loc>,
    /// For each CFG edge leaving a loop that joins array slots (`for (i…) pthread_join(t[i])`),
    /// the handle arguments of those joins: a join loop is assumed to run over every slot the
    /// create loop filled (bounds are not compared), so on leaving it they are all joined.
    exit_joins: ExitJoins,
    /// The handle of a thread the function cannot name: no join removes it.
    anonymous_thread: Path,
    /// Allocations (by location) published with no lock held: their accesses before the
    /// publication are shared after all (see `fresh.rs`). Set before the collecting pass.
    racy_publications: std::cell::OnceCell<rustc_hash::FxHashSet<Loc>>,
    /// Address-taken locals whose address never leaves the frame except into callees that
    /// keep nothing (see `fresh.rs`): private to the thread, whatever their class.
    private_locals: rustc_hash::FxHashSet<LocalId>,
}

/// What the collecting pass gathers.
#[derive(Default)]
struct Collector {
    accesses: AccessSet,
    spawns: Vec<Spawn>,
    /// Shared accesses of collapsed SCCs reached through callees.
    shared: Vec<std::sync::Arc<crate::summary::shared::SharedAccesses>>,
    /// Calls to other members of the function's collapsed SCC ([`crate::summary::owned`]).
    member_calls: Vec<crate::summary::owned::MemberCall>,
    /// The block being visited (for "is this thread creation in a loop").
    block: usize,
    /// The callees' accesses copied so far, by callee and summary, as they were rebound.
    copied: rustc_hash::FxHashMap<(FuncId, *const Summary), Vec<call::Rebound>>,
}

impl<'a> FnAnalysis<'a> {
    pub fn new(
        ctx: &'a Context<'a>,
        func: FuncId,
        body: &'a Function,
        callees: &'a Lookup<'a, Summary>,
    ) -> Self {
        let mut formal_index = vec![None; body.locals.len()];
        for (i, p) in body.params.iter().enumerate() {
            if let Some(slot) = formal_index.get_mut(p.index()) {
                *slot = Some(i as u32);
            }
        }
        let pta = ctx.pta;
        let formals = body.params.iter().map(|&l| pta.local_node(func, l));
        // Only what the formals reach: the escaping classes are shared by every function (on
        // the whole kernel, copying them per function was 93 % of the analysis).
        let accessible = pta.reachable_from(formals);
        let mut this = FnAnalysis {
            ctx,
            func,
            body,
            callees,
            classes: Classes {
                program: ctx.program,
                pta,
                func,
            },
            formal_index,
            accessible,
            joins_in_loop: Default::default(),
            exit_joins: Default::default(),
            anonymous_thread: Path::new(Root::Pseudo(ctx.program.names.intern(ANONYMOUS_THREAD))),
            racy_publications: Default::default(),
            private_locals: Default::default(),
        };
        (this.joins_in_loop, this.exit_joins) = this.find_loop_joins();
        this.private_locals = this.find_private_locals();
        this
    }

    /// The exit thread state in the callers' terms: handles in this frame are anonymous.
    fn exported_threads(&self, mut t: ThreadState) -> ThreadState {
        let frame_local = |p: &Path| p.is_frame_local();
        if t.live.iter().any(frame_local) {
            t.live.retain(|p| !frame_local(p));
            t.live.insert(self.anonymous_thread.clone());
        }
        t.joined.retain(|p| !frame_local(p));
        t
    }

    /// Runs the fixpoint and the collecting pass.
    pub fn run(&self) -> Summary {
        let results = dataflow::solve(self, self.body);
        let _ = self
            .racy_publications
            .set(self.find_racy_publications(&results.entry));
        let mut col = Collector::default();
        let mut exit: Option<(RelativeLockset, ThreadState)> = None;
        let mut ret = SymVal::Bottom;
        let mut fresh_returns = FreshReturns::default();
        let mut sink = Some(&mut col);
        for (b, block) in self.body.blocks.iter().enumerate() {
            let mut st = results.entry[b].clone();
            if !st.reachable {
                continue;
            }
            if let Some(c) = sink.as_deref_mut() {
                c.block = b;
            }
            for instr in &block.instrs {
                self.instr(&mut st, instr, &mut sink);
            }
            self.terminator_reads(&st, &block.term, &mut sink);
            if let Terminator::Return { value, .. } = &block.term {
                match &mut exit {
                    Some((locks, threads)) => {
                        locks.join(&st.locks);
                        threads.join(&st.threads);
                    }
                    None => exit = Some((st.locks.clone(), st.threads.clone())),
                }
                fresh_returns.add(value.as_ref().map(|e| self.returned_freshness(&st, e)));
                let v = value.as_ref().map_or(SymVal::Top, |e| self.eval(&st, e));
                ret = ret.join(&self.exported_value(v));
            }
        }
        let spawns = merge_spawns(col.spawns);
        let mut set = col.accesses;
        let coarsened = set.len() > MAX_ACCESSES;
        if coarsened {
            // The object's representative and the member accessed: `p.f`.
            set = set.coarsen(|p| self.classes.object_member(p));
        }
        let (tables, accesses) = set.finish();
        let (lockset, threads) = exit.unwrap_or_default();
        let formals = self.formal_facts();
        Summary {
            lockset,
            threads: self.exported_threads(threads),
            formal_escapes: formals.escapes,
            formal_self_refs: formals.self_refs,
            formal_loads_escape: formals.loads_escape,
            returns_fresh: fresh_returns.all_fresh(),
            member_calls: col.member_calls,
            ret,
            accesses,
            tables,
            spawns,
            widened: results.widened,
            coarsened,
            modelled: false,
            shared: col.shared,
        }
    }

    // ----- evaluation -----

    fn root_of_local(&self, l: LocalId) -> Root {
        match self.formal_index.get(l.index()).copied().flatten() {
            Some(i) => Root::Formal(i),
            None => Root::Local(l),
        }
    }

    /// The local an lvalue names if it is tracked (whole, never address-taken).
    fn tracked(&self, lv: &Lval) -> Option<LocalId> {
        match &lv.host {
            Host::Var(VarRef::Local(l)) if lv.offsets.is_empty() => {
                let local = self.body.locals.get(l.index())?;
                (!local.flags.address_taken).then_some(*l)
            }
            _ => None,
        }
    }

    fn local_value(&self, st: &State, l: LocalId) -> SymVal {
        st.env.get(&l).cloned().unwrap_or(SymVal::Bottom)
    }

    /// The symbolic value of an expression.
    pub(super) fn eval(&self, st: &State, e: &Expr) -> SymVal {
        match e {
            Expr::Const(Const::Int(i)) => SymVal::Int(*i),
            Expr::Load(lv) => match self.tracked(lv) {
                Some(l) => self.local_value(st, l),
                None => {
                    let paths = self.lval_paths(st, lv);
                    paths
                        .into_iter()
                        .map(SymVal::Init)
                        .reduce(|a, b| a.join(&b))
                        .unwrap_or(SymVal::Top)
                }
            },
            Expr::AddrOf(lv) => SymVal::pointing_to(self.lval_paths(st, lv)),
            Expr::StartOf(lv) => SymVal::pointing_to(
                self.lval_paths(st, lv)
                    .into_iter()
                    .map(|p| p.with(Step::Index))
                    .collect(),
            ),
            Expr::Func(FuncRef::Linked(f)) => SymVal::Func(*f),
            Expr::Cast(t, a) => self.eval_cast(st, *t, a),
            Expr::Binary(BinOp::PtrAdd, a, k) => self.eval_ptr_add(st, a, k),
            Expr::Binary(op @ (BinOp::Eq | BinOp::Ne), a, b) => {
                // Only comparisons with zero: `r == 0`, `0 != r`.
                let x = match (&**a, &**b) {
                    (x, Expr::Const(Const::Int(0))) | (Expr::Const(Const::Int(0)), x) => x,
                    _ => return SymVal::Top,
                };
                match self.eval(st, x) {
                    SymVal::Try { lock, nonzero } => SymVal::Try {
                        lock,
                        nonzero: nonzero == (*op == BinOp::Ne),
                    },
                    SymVal::Int(i) => SymVal::Int(((i == 0) == (*op == BinOp::Eq)) as i128),
                    _ => SymVal::Top,
                }
            }
            Expr::Unary(UnOp::LogNot, a) => match self.eval(st, a) {
                SymVal::Try { lock, nonzero } => SymVal::Try {
                    lock,
                    nonzero: !nonzero,
                },
                SymVal::Int(i) => SymVal::Int((i == 0) as i128),
                _ => SymVal::Top,
            },
            _ => SymVal::Top,
        }
    }

    /// The access paths an lvalue may denote (k-limited); a dereference of an unknown pointer
    /// falls back to the pointer's points-to class.
    pub(super) fn lval_paths(&self, st: &State, lv: &Lval) -> Vec<Path> {
        let bases = match &lv.host {
            Host::Var(VarRef::Global(g)) => vec![Path::new(Root::Global(*g))],
            Host::Var(VarRef::Local(l)) => vec![Path::new(self.root_of_local(*l))],
            Host::Mem(e) => self.deref_paths(st, e),
        };
        let offsets: Vec<Step> = lv
            .offsets
            .iter()
            .map(|o| match o {
                Offset::Field { record, name } => Step::Field(*record, *name),
                Offset::Index(e) => match **e {
                    Expr::Const(Const::Int(k)) => u32::try_from(k)
                        .ok()
                        .filter(|k| *k <= MAX_ELEM)
                        .map_or(Step::Index, Step::Elem),
                    _ => Step::Index,
                },
            })
            .collect();
        bases
            .into_iter()
            .filter_map(|b| self.classes.limit(b.extended(&offsets)))
            .collect()
    }

    /// What the pointer value of `e` may point to.
    fn deref_paths(&self, st: &State, e: &Expr) -> Vec<Path> {
        let t = self.eval(st, e).targets();
        if !t.is_empty() {
            return t;
        }
        self.ctx
            .pta
            .value_class(self.func, e)
            .map(|c| vec![Path::new(Root::Rep(c))])
            .unwrap_or_default()
    }

    /// Puts a path into summary form: rooted at a global, a formal's target, a representative
    /// or a pseudo lock. `None` for memory private to the frame or to the thread, or not
    /// accessible from the function's formals and the globals.
    fn normalize(&self, path: Path) -> Option<Path> {
        let path = match path.root {
            Root::Pseudo(_) => return Some(path),
            Root::Global(g) => {
                let global = &self.ctx.program.globals[g.index()].global;
                if global.flags.thread_local && !path.steps.contains(&Step::Deref) {
                    return None;
                }
                return Some(path);
            }
            Root::Formal(_) if !path.is_frame_local() => return Some(path),
            Root::Formal(i) => {
                let l = *self.body.params.get(i as usize)?;
                self.address_taken_local(l, path)?
            }
            Root::Local(l) => self.address_taken_local(l, path)?,
            Root::Rep(_) => path,
        };
        match self.classes.object_class(&path) {
            Some(c) if !self.accessible.contains(&c) && !self.ctx.escaping.contains(&c) => None,
            _ => self.classes.limit(path),
        }
    }

    /// A lock path in summary form: like [`Self::normalize`], but a lock on an object no other
    /// thread can reach is kept (as its representative) rather than dropped.
    fn normalize_lock(&self, path: Path) -> Option<Path> {
        let path = match path.root {
            Root::Formal(i) if path.is_frame_local() => {
                let l = *self.body.params.get(i as usize)?;
                self.address_taken_local(l, path)?
            }
            Root::Local(l) => self.address_taken_local(l, path)?,
            _ => path,
        };
        self.classes.limit(path)
    }

    /// An address-taken local in summary form: its representative (`None` if the local is
    /// private after all: its address never left the frame).
    fn address_taken_local(&self, l: LocalId, path: Path) -> Option<Path> {
        if !self.body.locals.get(l.index())?.flags.address_taken || self.private_locals.contains(&l)
        {
            return None;
        }
        let c = self.classes.root_class(Root::Local(l))?;
        Some(Path {
            root: Root::Rep(c),
            steps: path.steps,
        })
    }

    /// A return value as the caller may see it (frame-local paths become ⊤).
    fn exported_value(&self, v: SymVal) -> SymVal {
        let export = |p: &Path| -> Option<Path> {
            match p.root {
                Root::Formal(_) | Root::Local(_) if p.is_frame_local() => None,
                Root::Local(_) => None,
                _ => Some(p.clone()),
            }
        };
        match v {
            // A formal's incoming value: the caller substitutes its actual.
            SymVal::Init(p) if p.steps.is_empty() && matches!(p.root, Root::Formal(_)) => {
                SymVal::Init(p)
            }
            SymVal::Init(p) => export(&p).map_or(SymVal::Top, SymVal::Init),
            SymVal::Must(p) => export(&p).map_or(SymVal::Top, SymVal::Must),
            SymVal::May(ps) => {
                let e: Option<Vec<Path>> = ps.iter().map(export).collect();
                e.map_or(SymVal::Top, SymVal::pointing_to)
            }
            SymVal::Try { lock, nonzero } => match export(&lock.path) {
                Some(_) => SymVal::Try { lock, nonzero },
                None => SymVal::Top,
            },
            v => v,
        }
    }

    // ----- accesses -----

    fn record(
        &self,
        st: &State,
        lv: &Lval,
        kind: AccessKind,
        loc: Loc,
        sink: &mut Option<&mut Collector>,
    ) {
        let Some(col) = sink.as_deref_mut() else {
            return;
        };
        if let Host::Var(VarRef::Local(l)) = &lv.host {
            if !self.body.locals[l.index()].flags.address_taken {
                return;
            }
        }
        if self.through_private(st, lv) {
            return;
        }
        let atomic = self.is_atomic(lv);
        let class = || self.ctx.pta.lval_class(self.func, lv);
        let types = &self.ctx.program.types;
        let ty = crate::pta::signature::lval_type(self.ctx.program, self.func, lv);
        let record = ty.and_then(|t| types.as_record(t));
        let how = How {
            kind,
            atomic,
            value: ty.and_then(|t| types.alias_class(t)),
        };
        for p in self.lval_paths(st, lv) {
            let covered = record.is_some_and(|r| self.push_members(st, col, &p, r, how, loc));
            if !covered {
                self.push(st, col, p, how, loc, class);
            }
        }
    }

    /// A whole-object access (`s = t`, `memset(&s, ...)`, a struct passed by value) overlaps
    /// every member access; in the field-based points-to mode members are classes of their own,
    /// so the access is recorded on each member of record `r` too, and on the members of its
    /// nested records (at most [`MAX_MEMBER_ACCESSES`] in all). Whether that covers the whole
    /// object, in which case the whole-object access need not be recorded (the race stage
    /// pairs a whole-object access with every member access of its object, which costs).
    fn push_members(
        &self,
        st: &State,
        col: &mut Collector,
        path: &Path,
        r: RecordId,
        how: How,
        loc: Loc,
    ) -> bool {
        let types = &self.ctx.program.types;
        let mut budget = MAX_MEMBER_ACCESSES;
        let mut records = std::collections::VecDeque::from([(path.clone(), r)]);
        while let Some((outer, r)) = records.pop_front() {
            for f in &types.record(r).fields {
                if budget == 0 {
                    return false;
                }
                budget -= 1;
                let member = outer.clone().with(Step::Field(r, f.name));
                let class = || self.ctx.pta.field_class(r, f.name);
                // A member that is a record (or an array of them) has members of its own.
                let (mut t, mut inner) = (f.ty, member.clone());
                while let crate::ir::types::TypeKind::Array { elem, .. } = types.kind(t) {
                    (t, inner) = (*elem, inner.with(Step::Index));
                }
                if let Some(nested) = types.as_record(t) {
                    records.push_back((inner, nested));
                }
                let how = How {
                    value: types.alias_class(f.ty),
                    ..how
                };
                self.push(st, col, member, how, loc, class);
            }
        }
        true
    }

    fn push(
        &self,
        st: &State,
        col: &mut Collector,
        path: Path,
        how: How,
        loc: Loc,
        fallback_class: impl Fn() -> Option<u32>,
    ) {
        if let Some(path) = self.normalize(path) {
            // The class follows from the path when it can (deterministic: the first access
            // found with a path must not decide it); the IR's class only otherwise.
            let class = self.classes.access_class(&path).or_else(fallback_class);
            let key = (
                col.accesses.path_id(path),
                col.accesses.lockset_id(&st.locks),
                how.kind,
                how.atomic,
                st.threads.phase(),
            );
            col.accesses.insert(key, class, how.value, 0, loc, || {
                Witness::new(loc, crate::summary::Chain::empty(), Some(self.func))
            });
        }
    }

    /// Whether the lvalue is an `_Atomic` variable or member, or a *marked* access: memory
    /// read or written through a cast to a pointer to `volatile` (`*(volatile T *)&x`, what the
    /// kernel's `READ_ONCE`/`WRITE_ONCE` expand to). As in the kernel memory model (and KCSAN),
    /// two marked accesses do not race; a marked and a plain one still do. A variable merely
    /// declared `volatile` is not marked.
    fn is_atomic(&self, lv: &Lval) -> bool {
        let types = &self.ctx.program.types;
        if let (Host::Mem(addr), []) = (&lv.host, lv.offsets.as_slice()) {
            if let Expr::Cast(t, _) = addr.as_ref() {
                if types
                    .pointee(*t)
                    .is_some_and(|p| types.quals(p).has(Quals::VOLATILE))
                {
                    return true;
                }
            }
        }
        // An `_Atomic` object, or a member of one (a member that is `_Atomic`, or one inside
        // an `_Atomic` variable, member or pointee: `*p` for `_Atomic int *p`).
        let atomic_member = lv.offsets.iter().any(|o| match o {
            Offset::Field { record, name } if record.0 != u32::MAX => types
                .record(*record)
                .fields
                .iter()
                .find(|f| f.name == *name)
                .is_some_and(|f| types.quals(f.ty).has(Quals::ATOMIC)),
            _ => false,
        });
        atomic_member
            || match &lv.host {
                Host::Var(VarRef::Global(g)) => {
                    self.ctx.program.globals[g.index()].global.flags.atomic
                }
                Host::Var(VarRef::Local(l)) => self.body.locals[l.index()].flags.atomic,
                Host::Mem(addr) => {
                    crate::pta::signature::expr_type(self.ctx.program, self.func, addr)
                        .and_then(|t| types.pointee(t))
                        .is_some_and(|p| types.quals(p).has(Quals::ATOMIC))
                }
            }
    }

    /// Records the reads an expression performs.
    fn reads(&self, st: &State, e: &Expr, loc: Loc, sink: &mut Option<&mut Collector>) {
        if sink.is_none() {
            return;
        }
        match e {
            Expr::Load(lv) => {
                self.address_reads(st, lv, loc, sink);
                self.record(st, lv, AccessKind::Read, loc, sink);
            }
            Expr::AddrOf(lv) | Expr::StartOf(lv) => self.address_reads(st, lv, loc, sink),
            Expr::Unary(_, a) | Expr::Cast(_, a) => self.reads(st, a, loc, sink),
            Expr::Binary(_, a, b) => {
                self.reads(st, a, loc, sink);
                self.reads(st, b, loc, sink);
            }
            _ => {}
        }
    }

    /// The reads needed to compute an lvalue's address (the pointer, the indices).
    fn address_reads(&self, st: &State, lv: &Lval, loc: Loc, sink: &mut Option<&mut Collector>) {
        if let Host::Mem(e) = &lv.host {
            self.reads(st, e, loc, sink);
        }
        for o in &lv.offsets {
            if let Offset::Index(e) = o {
                self.reads(st, e, loc, sink);
            }
        }
    }

    fn terminator_reads(&self, st: &State, term: &Terminator, sink: &mut Option<&mut Collector>) {
        match term {
            Terminator::Branch { cond: e, loc, .. }
            | Terminator::Switch { value: e, loc, .. }
            | Terminator::IndirectGoto { target: e, loc, .. }
            | Terminator::Return {
                value: Some(e),
                loc,
            } => self.reads(st, e, *loc, sink),
            _ => {}
        }
    }

    // ----- transfer functions -----

    fn instr(&self, st: &mut State, instr: &Instr, sink: &mut Option<&mut Collector>) {
        if !st.reachable {
            return;
        }
        match instr {
            Instr::Assign { dst, src, loc } => {
                self.reads(st, src, *loc, sink);
                self.address_reads(st, dst, *loc, sink);
                self.record(st, dst, AccessKind::Write, *loc, sink);
                let v = self.eval(st, src);
                self.assign(st, dst, v);
            }
            Instr::Call {
                dst,
                callee,
                args,
                loc,
            } => self.call(st, dst.as_ref(), callee, args, *loc, sink),
            // RELAY ignores the memory effects of inline assembly; its operands are still
            // evaluated, and tracked outputs become unknown.
            Instr::Asm {
                outputs, inputs, ..
            } => {
                for e in inputs {
                    self.reads(st, e, instr.loc(), sink);
                }
                for o in outputs {
                    self.assign(st, o, SymVal::Top);
                }
            }
        }
        self.update_fresh(st, instr);
    }

    fn assign(&self, st: &mut State, dst: &Lval, v: SymVal) {
        if let Some(l) = self.tracked(dst) {
            st.env.insert(l, v);
        }
    }
}

impl Analysis for FnAnalysis<'_> {
    type Domain = State;

    fn bottom(&self) -> State {
        State {
            reachable: false,
            env: BTreeMap::new(),
            locks: RelativeLockset::default(),
            threads: ThreadState::default(),
            fresh: Default::default(),
            self_refs: Default::default(),
        }
    }

    fn entry_state(&self) -> State {
        let mut env = BTreeMap::new();
        for (i, &l) in self.body.params.iter().enumerate() {
            let tracked = self
                .body
                .locals
                .get(l.index())
                .is_some_and(|x| !x.flags.address_taken);
            if tracked {
                env.insert(l, SymVal::Init(Path::new(Root::Formal(i as u32))));
            }
        }
        State {
            reachable: true,
            env,
            locks: RelativeLockset::default(),
            threads: ThreadState::default(),
            fresh: Default::default(),
            self_refs: Default::default(),
        }
    }

    fn apply_instr(&self, st: &mut State, instr: &Instr) {
        self.instr(st, instr, &mut None);
    }

    /// A branch on the result of a conditional lock operation acquires the lock on the edge
    /// where the result says so.
    fn apply_edge(&self, st: &State, block: usize, term: &Terminator, succ: usize) -> State {
        let mut out = st.clone();
        if st.reachable {
            // Leaving a loop that joins array slots: every slot is joined, also on the path
            // that ran the loop zero times (the assumption of a join loop, see `exit_joins`).
            for handle in self.exit_joins.get(&(block, succ)).into_iter().flatten() {
                if let SymVal::Init(p) = self.eval(st, handle) {
                    if let Some(h) = self.normalize_lock(p) {
                        out.threads.join_thread(h);
                    }
                }
            }
        }
        if let (true, Terminator::Branch { cond, .. }) = (st.reachable, term) {
            if let SymVal::Try { lock, nonzero } = self.eval(st, cond) {
                let taken = succ == 0;
                if taken == nonzero {
                    out.locks.acquire(lock);
                }
            }
        }
        out
    }

    fn widen(&self, st: &mut State) {
        for (i, l) in self.body.locals.iter().enumerate() {
            if !l.flags.address_taken {
                st.env.insert(LocalId(i as u32), SymVal::Top);
            }
        }
    }
}
