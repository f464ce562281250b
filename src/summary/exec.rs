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

use super::access::{AccessKind, AccessSet, CallSite, Spawn, Witness, MAX_ACCESSES, MAX_CHAIN};
use super::lockset::{Lock, RelativeLockset};
use super::path::{Classes, Path, Root, Step};
use super::value::SymVal;
use super::{Context, Summary};
use crate::callgraph::IndirectCalls;
use crate::dataflow::{self, Analysis, JoinSemiLattice};
use crate::ir::*;
use crate::models::{LockTarget, Model, Success};
use crate::schedule::Lookup;

/// The dataflow state: tracked locals' values and the relative lockset.
#[derive(Clone, PartialEq, Debug)]
pub struct State {
    reachable: bool,
    /// Values of tracked locals; a missing local is ⊥ (not assigned yet). Formals start as
    /// `init(x)`.
    env: BTreeMap<LocalId, SymVal>,
    pub locks: RelativeLockset,
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
    /// Classes accessible from the function: escaping (globals, thread arguments) or reachable
    /// from its formals — RELAY's isAccessible.
    accessible: rustc_hash::FxHashSet<u32>,
}

/// What the collecting pass gathers.
#[derive(Default)]
struct Collector {
    accesses: AccessSet,
    spawns: Vec<Spawn>,
    /// The block being visited (for "is this thread creation in a loop").
    block: usize,
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
        let mut accessible = pta.reachable_from(formals);
        accessible.extend(ctx.escaping.iter().copied());
        FnAnalysis {
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
        }
    }

    /// Runs the fixpoint and the collecting pass.
    pub fn run(&self) -> Summary {
        let results = dataflow::solve(self, self.body);
        let mut col = Collector::default();
        let mut exit: Option<RelativeLockset> = None;
        let mut ret = SymVal::Bottom;
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
                    Some(e) => {
                        e.join(&st.locks);
                    }
                    None => exit = Some(st.locks.clone()),
                }
                let v = value.as_ref().map_or(SymVal::Top, |e| self.eval(&st, e));
                ret = ret.join(&self.exported_value(v));
            }
        }
        let spawns = merge_spawns(col.spawns);
        let mut set = col.accesses;
        let coarsened = set.len() > MAX_ACCESSES;
        if coarsened {
            // The object's representative and the member accessed: `p.f`.
            set = set.coarsen(|p| {
                let mut q = self.classes.collapse(p.clone())?;
                if q.steps.contains(&Step::Deref) || matches!(q.root, Root::Pseudo(_)) {
                    return None;
                }
                let object = self.classes.root_class(q.root)?;
                let member = q
                    .steps
                    .iter()
                    .rev()
                    .find(|s| matches!(s, Step::Field(..)))
                    .copied();
                q.root = Root::Rep(object);
                q.steps = member.into_iter().collect();
                Some(q)
            });
        }
        let (tables, accesses) = set.finish();
        Summary {
            lockset: exit.unwrap_or_default(),
            ret,
            accesses,
            tables,
            spawns,
            widened: results.widened,
            coarsened,
            modelled: false,
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
            Expr::Cast(_, a) => self.eval(st, a),
            Expr::Binary(BinOp::PtrAdd, a, _) => match self.eval(st, a) {
                v @ (SymVal::Init(_) | SymVal::Must(_) | SymVal::May(_)) => v,
                _ => SymVal::Top,
            },
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
                Offset::Index(_) => Step::Index,
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
            Some(c) if !self.accessible.contains(&c) => None,
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

    /// An address-taken local in summary form: its representative.
    fn address_taken_local(&self, l: LocalId, path: Path) -> Option<Path> {
        if !self.body.locals.get(l.index())?.flags.address_taken {
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
            SymVal::Init(p) if p == Path::new(p.root) && matches!(p.root, Root::Formal(_)) => {
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
        let atomic = self.is_atomic(lv);
        let class = self.ctx.pta.lval_class(self.func, lv);
        for p in self.lval_paths(st, lv) {
            self.push(st, col, p, kind, atomic, loc, class);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn push(
        &self,
        st: &State,
        col: &mut Collector,
        path: Path,
        kind: AccessKind,
        atomic: bool,
        loc: Loc,
        class: Option<u32>,
    ) {
        if let Some(path) = self.normalize(path) {
            // The class follows from the path when it can (deterministic: the first access
            // found with a path must not decide it).
            let class = self.classes.class(&path).or(class);
            let key = (
                col.accesses.path_id(path),
                col.accesses.lockset_id(&st.locks),
                kind,
                atomic,
            );
            col.accesses.insert(key, class, 0, loc, || Witness {
                loc,
                chain: Vec::new(),
            });
        }
    }

    /// Whether the lvalue is an `_Atomic` variable or member.
    fn is_atomic(&self, lv: &Lval) -> bool {
        let types = &self.ctx.program.types;
        if let Some(Offset::Field { record, name }) = lv
            .offsets
            .iter()
            .rev()
            .find(|o| matches!(o, Offset::Field { .. }))
        {
            if record.0 == u32::MAX {
                return false;
            }
            return types
                .record(*record)
                .fields
                .iter()
                .find(|f| f.name == *name)
                .is_some_and(|f| types.quals(f.ty).has(Quals::ATOMIC));
        }
        match &lv.host {
            Host::Var(VarRef::Global(g)) => self.ctx.program.globals[g.index()].global.flags.atomic,
            Host::Var(VarRef::Local(l)) => self.body.locals[l.index()].flags.atomic,
            Host::Mem(_) => false,
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
    }

    fn assign(&self, st: &mut State, dst: &Lval, v: SymVal) {
        if let Some(l) = self.tracked(dst) {
            st.env.insert(l, v);
        }
    }

    fn call(
        &self,
        st: &mut State,
        dst: Option<&Lval>,
        callee: &Expr,
        args: &[Expr],
        loc: Loc,
        sink: &mut Option<&mut Collector>,
    ) {
        self.reads(st, callee, loc, sink);
        for a in args {
            self.reads(st, a, loc, sink);
        }
        let targets = match callee {
            Expr::Func(FuncRef::Linked(g)) => vec![*g],
            _ => self
                .ctx
                .pta
                .targets(self.func, callee, args.len())
                .unwrap_or_default(),
        };
        let actuals: Vec<SymVal> = args.iter().map(|a| self.eval(st, a)).collect();
        let call = Call {
            args,
            actuals: &actuals,
            loc,
        };
        let mut after: Option<State> = None;
        let mut ret = SymVal::Bottom;
        for g in targets {
            let (locks, r) = self.apply_callee(st, g, &call, sink);
            ret = ret.join(&r);
            let next = State {
                locks,
                ..st.clone()
            };
            match &mut after {
                Some(a) => {
                    a.join(&next);
                }
                None => after = Some(next),
            }
        }
        if let Some(a) = after {
            *st = a;
        }
        if ret == SymVal::Bottom {
            ret = SymVal::Top;
        }
        if let Some(d) = dst {
            self.address_reads(st, d, loc, sink);
            self.record(st, d, AccessKind::Write, loc, sink);
            self.assign(st, d, ret);
        }
    }

    /// The lockset after calling `g` and the call's value.
    fn apply_callee(
        &self,
        st: &State,
        g: FuncId,
        call: &Call<'_>,
        sink: &mut Option<&mut Collector>,
    ) -> (RelativeLockset, SymVal) {
        if let Some(m) = self.ctx.model(g) {
            return self.apply_model(st, m, call, sink);
        }
        match self.callees.get(g) {
            Some(s) => self.apply_summary(st, g, s, call, sink),
            None => (st.locks.clone(), SymVal::Top),
        }
    }

    /// The locations argument `i` points to, in summary form.
    fn pointee(
        &self,
        st: &State,
        call: &Call<'_>,
        i: usize,
        normalize: fn(&Self, Path) -> Option<Path>,
    ) -> (Vec<Path>, bool) {
        let Some(a) = call.args.get(i) else {
            return (Vec::new(), false);
        };
        let must = call.actuals[i].is_must();
        let paths: Vec<Path> = self
            .deref_paths(st, a)
            .into_iter()
            .filter_map(|p| normalize(self, p))
            .collect();
        let must = (must || call.actuals[i].targets().is_empty()) && paths.len() == 1;
        (paths, must)
    }

    fn lock_paths(&self, st: &State, call: &Call<'_>, t: &LockTarget) -> (Vec<Path>, bool) {
        match t {
            LockTarget::Arg { arg } => self.pointee(st, call, *arg, Self::normalize_lock),
            LockTarget::Global { global } => (
                vec![Path::new(Root::Pseudo(
                    self.ctx.program.names.intern(global),
                ))],
                true,
            ),
        }
    }

    fn apply_model(
        &self,
        st: &State,
        m: &Model,
        call: &Call<'_>,
        sink: &mut Option<&mut Collector>,
    ) -> (RelativeLockset, SymVal) {
        let mut locks = st.locks.clone();
        let mut ret = SymVal::Top;
        // Unlock first: `downgrade_write` is "release, then hold shared".
        if let Some(u) = &m.unlock {
            for p in self.lock_paths(st, call, &u.target).0 {
                locks.release(&p);
            }
        }
        if let Some(l) = &m.lock {
            let (paths, must) = self.lock_paths(st, call, &l.target);
            if must {
                locks.acquire(Lock {
                    path: paths[0].clone(),
                    mode: l.mode,
                });
            }
        }
        if let Some(t) = &m.trylock {
            let (paths, must) = self.lock_paths(st, call, &t.target);
            if must {
                ret = SymVal::Try {
                    lock: Lock {
                        path: paths[0].clone(),
                        mode: t.mode,
                    },
                    nonzero: t.success == Success::Nonzero,
                };
            }
        }
        if let Some(i) = m.returns_arg {
            ret = call.actuals.get(i).cloned().unwrap_or(SymVal::Top);
        }
        if let Some(col) = sink.as_deref_mut() {
            self.model_accesses(st, m, call, col);
        }
        (locks, ret)
    }

    /// Accesses and thread creations a model performs.
    fn model_accesses(&self, st: &State, m: &Model, call: &Call<'_>, col: &mut Collector) {
        let mut touch = |i: usize, kind: AccessKind, atomic: bool| {
            let class = call
                .args
                .get(i)
                .and_then(|a| self.ctx.pta.value_class(self.func, a));
            for p in self.pointee(st, call, i, Self::normalize).0 {
                self.push(st, col, p, kind, atomic, call.loc, class);
            }
        };
        if let Some(a) = &m.atomic {
            if a.read || !a.write {
                touch(a.arg, AccessKind::Read, true);
            }
            if a.write {
                touch(a.arg, AccessKind::Write, true);
            }
        }
        if let Some(c) = &m.copy {
            touch(c.src, AccessKind::Read, false);
            touch(c.dst, AccessKind::Write, false);
        }
        if let Some(t) = &m.thread_create {
            let start = match call.actuals.get(t.start) {
                Some(SymVal::Func(f)) => vec![*f],
                _ => call
                    .args
                    .get(t.start)
                    .map(|e| self.ctx.pta.call_targets(self.func, e))
                    .unwrap_or_default(),
            };
            col.spawns.push(Spawn {
                start,
                loc: call.loc,
                in_loop: self.in_cycle(col.block),
                paths: 1,
                chain: Vec::new(),
            });
        }
    }

    fn apply_summary(
        &self,
        st: &State,
        g: FuncId,
        s: &Summary,
        call: &Call<'_>,
        sink: &mut Option<&mut Collector>,
    ) -> (RelativeLockset, SymVal) {
        let map = |p: &Path| self.rebind_path(st, g, p, call);
        let lock_map = |p: &Path| -> Vec<Path> {
            map(p)
                .into_iter()
                .filter_map(|q| self.normalize_lock(q))
                .collect()
        };
        let locks = st.locks.update(&s.lockset.rebind(lock_map));
        let ret = self.rebind_value(st, g, &s.ret, call);
        if let Some(col) = sink.as_deref_mut() {
            let site = CallSite {
                loc: call.loc,
                callee: g,
            };
            // Each distinct path and lockset of the callee is rebound once.
            let paths: Vec<Vec<(u32, Option<u32>)>> = s
                .tables
                .paths
                .iter()
                .map(|p| {
                    map(p)
                        .into_iter()
                        .filter_map(|q| self.normalize(q))
                        .map(|q| {
                            let class = self.classes.class(&q);
                            (col.accesses.path_id(q), class)
                        })
                        .collect()
                })
                .collect();
            let locksets: Vec<u32> = s
                .tables
                .locksets
                .iter()
                .map(|l| {
                    col.accesses
                        .lockset_id(&st.locks.update(&l.rebind(lock_map)))
                })
                .collect();
            for a in &s.accesses {
                let l = locksets[a.locks as usize];
                for &(p, class) in &paths[a.path as usize] {
                    for w in &a.witnesses {
                        let len = (w.chain.len() + 1).min(MAX_CHAIN);
                        let class = class.or(a.class);
                        col.accesses
                            .insert((p, l, a.kind, a.atomic), class, len, w.loc, || Witness {
                                loc: w.loc,
                                chain: prefixed(site, &w.chain),
                            });
                    }
                }
            }
            let in_loop = self.in_cycle(col.block);
            for sp in &s.spawns {
                col.spawns.push(Spawn {
                    start: sp.start.clone(),
                    loc: sp.loc,
                    in_loop: sp.in_loop || in_loop,
                    paths: sp.paths,
                    chain: prefixed(site, &sp.chain),
                });
            }
        }
        (locks, ret)
    }

    /// RELAY's rebind (Figure 5) for one path of callee `g`: the callee's formal is replaced by
    /// the symbolic value of the actual.
    fn rebind_path(&self, st: &State, g: FuncId, p: &Path, call: &Call<'_>) -> Vec<Path> {
        let Root::Formal(i) = p.root else {
            return vec![p.clone()];
        };
        if p.steps.first() != Some(&Step::Deref) {
            return Vec::new();
        }
        let rest = &p.steps[1..];
        let i = i as usize;
        let mut bases = match call.args.get(i) {
            Some(a) => self.deref_paths(st, a),
            None => Vec::new(),
        };
        if bases.is_empty() {
            // No actual (a variadic callee) or an unknown one: the callee's own class.
            let callee = Classes {
                program: self.ctx.program,
                pta: self.ctx.pta,
                func: g,
            };
            if let Some(c) = callee.class(&Path::new(Root::Formal(i as u32)).with(Step::Deref)) {
                bases.push(Path::new(Root::Rep(c)));
            }
        }
        let rebound = bases.into_iter().map(|b| b.extended(rest));
        if self.ctx.recursive_call(self.func, g) {
            // Inside a recursive SCC every round could lengthen the paths (`x->next->next...`),
            // and the combinations of members explode before the k-limit bites: recursive calls
            // rebind to representatives, which do not grow.
            rebound.filter_map(|p| self.classes.collapse(p)).collect()
        } else {
            rebound.filter_map(|p| self.classes.limit(p)).collect()
        }
    }

    fn rebind_value(&self, st: &State, g: FuncId, v: &SymVal, call: &Call<'_>) -> SymVal {
        let one = |p: &Path| -> Option<Path> {
            let mut ps = self.rebind_path(st, g, p, call);
            (ps.len() == 1).then(|| ps.pop().expect("one path"))
        };
        match v {
            SymVal::Init(p) => match p.root {
                Root::Formal(i) if p.steps.is_empty() => {
                    call.actuals.get(i as usize).cloned().unwrap_or(SymVal::Top)
                }
                _ => one(p).map_or(SymVal::Top, SymVal::Init),
            },
            SymVal::Must(_) | SymVal::May(_) => {
                let mut all = Vec::new();
                for t in v.targets() {
                    let ps = self.rebind_path(st, g, &t, call);
                    if ps.is_empty() {
                        return SymVal::Top;
                    }
                    all.extend(ps);
                }
                SymVal::pointing_to(all)
            }
            SymVal::Try { lock, nonzero } => match one(&lock.path) {
                Some(path) => SymVal::Try {
                    lock: Lock {
                        path,
                        mode: lock.mode,
                    },
                    nonzero: *nonzero,
                },
                None => SymVal::Top,
            },
            SymVal::Bottom => SymVal::Top,
            v => v.clone(),
        }
    }

    /// Whether block `b` lies on a cycle of the CFG (breadth-first search from its successors).
    fn in_cycle(&self, b: usize) -> bool {
        let blocks = &self.body.blocks;
        let mut seen = vec![false; blocks.len()];
        let mut stack: Vec<usize> = dataflow::successors(&blocks[b].term)
            .into_iter()
            .map(|s| s.index())
            .collect();
        while let Some(x) = stack.pop() {
            if x == b {
                return true;
            }
            if x >= blocks.len() || std::mem::replace(&mut seen[x], true) {
                continue;
            }
            stack.extend(
                dataflow::successors(&blocks[x].term)
                    .iter()
                    .map(|s| s.index()),
            );
        }
        false
    }
}

/// A call being applied: the IR arguments and their symbolic values before the call.
struct Call<'c> {
    args: &'c [Expr],
    actuals: &'c [SymVal],
    loc: Loc,
}

/// One spawn per (start routines, site): the shortest chain is kept, `paths` counts (up to 2)
/// the distinct call paths that reach the site, `in_loop` is their disjunction.
fn merge_spawns(mut spawns: Vec<Spawn>) -> Vec<Spawn> {
    spawns.sort_by(|a, b| {
        (&a.start, a.loc, a.chain.len(), &a.chain).cmp(&(&b.start, b.loc, b.chain.len(), &b.chain))
    });
    let mut out: Vec<Spawn> = Vec::new();
    for sp in spawns {
        match out.last_mut() {
            Some(last) if last.start == sp.start && last.loc == sp.loc => {
                last.in_loop |= sp.in_loop;
                last.paths = last.paths.saturating_add(sp.paths).min(2);
            }
            _ => out.push(sp),
        }
    }
    out
}

fn prefixed(site: CallSite, chain: &[CallSite]) -> Vec<CallSite> {
    std::iter::once(site)
        .chain(chain.iter().copied())
        .take(MAX_CHAIN)
        .collect()
}

impl Analysis for FnAnalysis<'_> {
    type Domain = State;

    fn bottom(&self) -> State {
        State {
            reachable: false,
            env: BTreeMap::new(),
            locks: RelativeLockset::default(),
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
        }
    }

    fn apply_instr(&self, st: &mut State, instr: &Instr) {
        self.instr(st, instr, &mut None);
    }

    /// A branch on the result of a conditional lock operation acquires the lock on the edge
    /// where the result says so.
    fn apply_edge(&self, st: &State, term: &Terminator, succ: usize) -> State {
        let mut out = st.clone();
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
