//! Calls in the per-function analysis: models applied directly, callee summaries rebound into
//! the caller (RELAY Figure 5: formals replaced by the symbolic values of the actuals) and
//! composed with the caller's lockset (Figure 3), callee accesses and thread creations added
//! with the call site prefixed to their chains (Figure 6).

use super::{Collector, FnAnalysis, How, State};
use crate::callgraph::IndirectCalls as _;
use crate::ir::*;
use crate::models::{LockTarget, Model, Success};
use crate::summary::access::{AccessKind, CallSite, Spawn, Witness, MAX_CHAIN};
use crate::summary::chain::ChainMemo;
use crate::summary::lockset::{Lock, RelativeLockset};
use crate::summary::path::{Classes, Path, Root, Step};
use crate::summary::threads::ThreadState;
use crate::summary::value::SymVal;
use crate::summary::Summary;

impl FnAnalysis<'_> {
    pub(super) fn call(
        &self,
        st: &mut State,
        dst: Option<&Lval>,
        callee: &Expr,
        args: &[Expr],
        loc: Loc,
        sink: &mut Option<&mut Collector>,
    ) {
        if !self.patched_call(callee) {
            self.reads(st, callee, loc, sink);
        }
        for a in args {
            self.reads(st, a, loc, sink);
        }
        let targets = self
            .ctx
            .pta
            .resolve(self.ctx.program, self.func, callee, args.len());
        // An integer argument is kept as zero or nonzero only: nothing reads more of it (a
        // branch follows only trylock results), and the summaries cache keys bodies without
        // nonzero constant arguments (`sqlite3CorruptError(__LINE__)`).
        let actuals: Vec<SymVal> = args
            .iter()
            .map(|a| match self.eval(st, a) {
                SymVal::Int(k) if k != 0 => SymVal::Int(1),
                v => v,
            })
            .collect();
        let call = Call {
            args,
            actuals: &actuals,
            loc,
            pointees: vec![std::cell::OnceCell::new(); args.len()],
        };
        self.note_member_call(st, callee, &call, sink);
        // Only the lockset and the thread state differ between targets: the locals' values
        // are not cloned per call.
        let mut after: Option<(RelativeLockset, ThreadState)> = None;
        let mut ret = SymVal::Bottom;
        for &g in &targets {
            let (locks, threads, r) = self.apply_callee(st, g, &call, sink);
            ret = ret.join(&r);
            join_effects(&mut after, locks, threads);
        }
        // Callbacks the callee runs (a comparator, an event loop's handlers): zero or more
        // times during the call, so their effects join with the call's own.
        for cb in self.ctx.pta.callbacks_of(self.func, &targets, args) {
            if let Some((locks, threads)) = self.apply_callback(st, &cb, &call, sink) {
                join_effects(&mut after, locks, threads);
            }
        }
        if let Some((locks, threads)) = after {
            st.locks = locks;
            st.threads = threads;
        }
        if ret == SymVal::Bottom {
            ret = SymVal::Top;
        }
        if let Some(d) = dst {
            self.address_reads(st, d, loc, sink);
            self.record(st, d, AccessKind::Write, loc, sink);
            self.assign(st, d, ret);
            if let Some(col) = sink.as_deref_mut() {
                let fills = targets.iter().any(|&g| {
                    self.ctx
                        .model(g)
                        .and_then(|m| m.alloc.as_ref())
                        .is_some_and(|a| a.fills)
                });
                if fills {
                    self.filling_write(st, d, loc, col);
                }
            }
        }
    }

    /// Records a direct call to another member of this function's collapsed SCC, with what
    /// each argument points to ([`crate::summary::owned`]).
    fn note_member_call(
        &self,
        st: &State,
        callee: &Expr,
        call: &Call<'_>,
        sink: &mut Option<&mut Collector>,
    ) {
        let (Some(col), Expr::Func(FuncRef::Linked(g))) =
            (sink.as_deref_mut(), callee.strip_casts())
        else {
            return;
        };
        if !self.ctx.collapsed_call(self.func, *g) {
            return;
        }
        let args = (0..call.args.len())
            .map(|j| self.arg_owner(st, &call.args[j], call.pointees(self, st, j)))
            .collect();
        col.member_calls
            .push(crate::summary::owned::MemberCall { callee: *g, args });
    }

    /// The lockset and thread state after callback `cb` of `call` runs, its formals bound to the
    /// arguments the model names (the others to nothing known); `None` without a summary.
    fn apply_callback(
        &self,
        st: &State,
        cb: &crate::pta::callbacks::CallbackCall,
        call: &Call<'_>,
        sink: &mut Option<&mut Collector>,
    ) -> Option<(RelativeLockset, ThreadState)> {
        let s = self.callees.get(cb.func)?;
        // Formal k gets the call's argument the model names, or nothing known.
        let (args, actuals): (Vec<Expr>, Vec<SymVal>) = cb
            .formals
            .iter()
            .map(
                |&i| match i.and_then(|i| Some((call.args.get(i)?, call.actuals.get(i)?))) {
                    Some((a, v)) => (a.clone(), v.clone()),
                    None => (Expr::Unknown, SymVal::Top),
                },
            )
            .unzip();
        let cb_call = Call {
            args: &args,
            actuals: &actuals,
            loc: call.loc,
            pointees: vec![std::cell::OnceCell::new(); args.len()],
        };
        let (locks, threads, _) = self.apply_summary(st, cb.func, &s, &cb_call, sink);
        Some((locks, threads))
    }

    /// The lockset and thread state after calling `g`, and the call's value.
    /// A call through a trampoline key's member ([`crate::ir::VarFlags::call_key`]): patched
    /// code, no load.
    fn patched_call(&self, callee: &Expr) -> bool {
        let Expr::Load(lv) = callee.strip_casts() else {
            return false;
        };
        matches!(lv.host, Host::Var(VarRef::Global(g))
            if self.ctx.program.globals[g.index()].global.flags.call_key)
    }

    fn apply_callee(
        &self,
        st: &State,
        g: FuncId,
        call: &Call<'_>,
        sink: &mut Option<&mut Collector>,
    ) -> (RelativeLockset, ThreadState, SymVal) {
        if let Some(m) = self.ctx.model(g) {
            return self.apply_model(st, m, call, sink);
        }
        match self.callees.get(g) {
            Some(s) => self.apply_summary(st, g, &s, call, sink),
            None => (st.locks.clone(), st.threads.clone(), SymVal::Top),
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
        if i >= call.args.len() {
            return (Vec::new(), false);
        }
        let must = call.actuals[i].is_must();
        let paths: Vec<Path> = call
            .pointees(self, st, i)
            .iter()
            .filter_map(|p| normalize(self, p.clone()))
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
    ) -> (RelativeLockset, ThreadState, SymVal) {
        let mut locks = st.locks.clone();
        let mut threads = st.threads.clone();
        let mut ret = SymVal::Top;
        // Unlock first: `downgrade_write` is "release, then hold shared".
        if let Some(u) = &m.unlock {
            let (paths, _) = self.lock_paths(st, call, &u.target);
            let passed = matches!(u.target, LockTarget::Arg { arg } if arg < call.args.len());
            if paths.is_empty() && passed {
                locks.release_any();
            }
            for p in paths {
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
        if let Some(t) = &m.thread_create {
            let handle =
                t.handle
                    .and_then(|h| match self.pointee(st, call, h, Self::normalize_lock) {
                        (mut ps, true) => ps.pop(),
                        _ => None,
                    });
            let start = self.start_routines(call, t);
            threads.create(
                handle.unwrap_or_else(|| self.anonymous_thread.clone()),
                &start,
            );
        }
        if let Some(j) = &m.thread_join {
            if let Some(h) = self.joined_handle(call, j.handle) {
                threads.join_thread(h);
            }
        }
        (locks, threads, ret)
    }

    /// The handle a join waits for: the lvalue its argument was read from (`t` in
    /// `pthread_join(t, 0)`). An array slot counts only in a loop (see [`ThreadState`]).
    fn joined_handle(&self, call: &Call<'_>, arg: usize) -> Option<Path> {
        let SymVal::Init(p) = call.actuals.get(arg)? else {
            return None;
        };
        let p = self.normalize_lock(p.clone())?;
        let slot = p.steps.contains(&Step::Index) || call.args.get(arg).is_some_and(array_slot);
        if slot && !self.joins_in_loop.contains(&call.loc) {
            return None;
        }
        Some(p)
    }

    /// Accesses and thread creations a model performs.
    fn model_accesses(&self, st: &State, m: &Model, call: &Call<'_>, col: &mut Collector) {
        let mut touch = |i: usize, kind: AccessKind, atomic: bool| {
            if call
                .args
                .get(i)
                .is_some_and(|a| self.private_pointer(st, a))
            {
                return;
            }
            let class = || {
                call.args
                    .get(i)
                    .and_then(|a| self.ctx.pta.value_class(self.func, a))
            };
            let record = call.args.get(i).and_then(|a| {
                crate::pta::signature::pointee_record(self.ctx.program, self.func, a)
            });
            // A library function touches bytes, of whatever type (`memset`, `memcpy`); the
            // members of a record it touches are accessed as their own types.
            let how = How {
                kind,
                atomic,
                value: None,
            };
            for p in self.pointee(st, call, i, Self::normalize).0 {
                let covered =
                    record.is_some_and(|r| self.push_members(st, col, &p, r, how, call.loc));
                if !covered {
                    self.push(st, col, p, how, call.loc, class);
                }
            }
        };
        // A lock operation reads and writes its lock atomically: it races with the lock's
        // initialisation and destruction (plain writes), not with other lock operations.
        let lock_args = [
            m.lock.as_ref().map(|l| &l.target),
            m.unlock.as_ref().map(|l| &l.target),
            m.trylock.as_ref().map(|t| &t.target),
        ];
        for target in lock_args.into_iter().flatten() {
            if let crate::models::LockTarget::Arg { arg } = target {
                touch(*arg, AccessKind::Read, true);
            }
        }
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
        for &i in &m.reads {
            touch(i, AccessKind::Read, false);
        }
        for &i in &m.writes {
            touch(i, AccessKind::Write, false);
        }
        // Variadic arguments: only those that may be pointers (`printf("%d", n)` reads no `*n`).
        let may_point = |i: usize| {
            let types = &self.ctx.program.types;
            crate::pta::signature::expr_type(self.ctx.program, self.func, &call.args[i])
                .is_none_or(|t| types.pointee(t).is_some())
        };
        for i in m.reads_from.map_or(0..0, |from| from..call.args.len()) {
            if may_point(i) {
                touch(i, AccessKind::Read, false);
            }
        }
        for i in m.writes_from.map_or(0..0, |from| from..call.args.len()) {
            if may_point(i) {
                touch(i, AccessKind::Write, false);
            }
        }
        if let Some(state) = &m.state {
            let path = Path::new(Root::Pseudo(self.ctx.program.names.intern(&state.name)));
            for (on, kind) in [
                (state.read, AccessKind::Read),
                (state.write, AccessKind::Write),
            ] {
                if on {
                    let how = How {
                        kind,
                        atomic: false,
                        value: None,
                    };
                    self.push(st, col, path.clone(), how, call.loc, || None);
                }
            }
        }
        if let Some(t) = &m.thread_create {
            let start = self.start_routines(call, t);
            let arg = t
                .arg
                .and_then(|i| match self.pointee(st, call, i, Self::normalize_lock) {
                    (mut ps, true) => ps.pop(),
                    _ => None,
                });
            let arg_expr = t.arg.and_then(|i| call.args.get(i));
            let fresh_arg = arg_expr.is_some_and(|e| self.fresh_site(st, e).is_some());
            let distinct_arg = arg_expr.is_some_and(|e| self.distinct_slot(e, col.block));
            col.spawns.push(Spawn {
                alone: !st.threads.may_run(&start),
                start,
                loc: call.loc,
                in_loop: self.in_cycle(col.block),
                paths: 1,
                chain: crate::summary::Chain::empty(),
                arg,
                func: Some(self.func),
                fresh_arg,
                distinct_arg,
            });
        }
    }

    /// The functions a thread creation may start.
    fn start_routines(
        &self,
        call: &Call<'_>,
        t: &crate::models::ThreadCreateEffect,
    ) -> Vec<FuncId> {
        match call.actuals.get(t.start) {
            Some(SymVal::Func(f)) => vec![*f],
            _ => call
                .args
                .get(t.start)
                .map(|e| {
                    // The new thread calls it with its one argument.
                    self.ctx
                        .pta
                        .function_argument(self.ctx.program, self.func, e, Some(1))
                })
                .unwrap_or_default(),
        }
    }

    fn apply_summary(
        &self,
        st: &State,
        g: FuncId,
        s: &Summary,
        call: &Call<'_>,
        sink: &mut Option<&mut Collector>,
    ) -> (RelativeLockset, ThreadState, SymVal) {
        let lock_map = |p: &Path| self.rebind_lock(st, g, p, call);
        let locks = st.locks.update(&s.lockset.rebind(lock_map));
        let threads = st
            .threads
            .update(&s.threads.rebind(lock_map, &self.anonymous_thread));
        let ret = self.rebind_value(st, g, &s.ret, call);
        if let Some(col) = sink.as_deref_mut() {
            crate::summary::shared::merge_into(&mut col.shared, &s.shared);
            let mut chains = ChainMemo::new(CallSite {
                loc: call.loc,
                callee: g,
            });
            // Inside a collapsed SCC a member's accesses reach its callers through the SCC's
            // shared set, not by copy.
            if !self.ctx.collapsed_call(self.func, g) {
                self.copy_accesses(st, g, s, call, col, &mut chains);
            }
            let in_loop = self.in_cycle(col.block);
            for sp in &s.spawns {
                col.spawns.push(Spawn {
                    start: sp.start.clone(),
                    loc: sp.loc,
                    in_loop: sp.in_loop || in_loop,
                    paths: sp.paths,
                    chain: chains.prefixed(&sp.chain),
                    arg: sp.arg.as_ref().and_then(|p| match lock_map(p).as_slice() {
                        [q] => Some(q.clone()),
                        _ => None,
                    }),
                    func: sp.func,
                    fresh_arg: sp.fresh_arg,
                    alone: sp.alone && !st.threads.may_run(&sp.start),
                    // A loop around the call runs the callee's loop again: the elements repeat.
                    distinct_arg: sp.distinct_arg && !in_loop,
                });
            }
        }
        (locks, threads, ret)
    }

    /// Adds the accesses of callee `g`'s summary `s` to the caller's, rebound (formals replaced
    /// by the actuals) and composed with the caller's lockset and phase, the call site prefixed
    /// to their chains.
    fn copy_accesses(
        &self,
        st: &State,
        g: FuncId,
        s: &Summary,
        call: &Call<'_>,
        col: &mut Collector,
        chains: &mut ChainMemo,
    ) {
        let map = |p: &Path| self.rebind_path(st, g, p, call);
        let lock_map = |p: &Path| self.rebind_lock(st, g, p, call);
        // Arguments that are fresh objects the callee does not let escape: its accesses
        // inside them are not shared. Only inside: a pointer the object holds (`j->c->n`) may
        // lead to shared memory.
        let private: Vec<bool> = (0..call.args.len())
            .map(|j| self.kept_private(st, s, j, &call.args[j]))
            .collect();
        let phase = st.threads.phase();
        let callee = Classes {
            program: self.ctx.program,
            pta: self.ctx.pta,
            func: g,
        };
        // Each distinct path and lockset of the callee is rebound once.
        let paths: Vec<Vec<(PathId, Option<u32>)>> = s
            .tables
            .paths
            .iter()
            .map(|p| {
                if let Root::Formal(j) = p.root {
                    if private.get(j as usize) == Some(&true) && p.derefs() == 1 {
                        return Vec::new();
                    }
                }
                map(p)
                    .into_iter()
                    .filter_map(|q| self.normalize(q))
                    .map(|q| {
                        let class = self.classes.access_class(&q);
                        if class.is_none() {
                            // The access keeps the callee's class, which may be the one its
                            // path has there: what that asked of the partition is read here.
                            callee.class(p);
                        }
                        (col.accesses.path_id(q), class)
                    })
                    .collect()
            })
            .collect();
        // A callee's locksets share most of their locks: each lock path is rebound once.
        let mut rebound: rustc_hash::FxHashMap<&Path, Vec<Path>> = Default::default();
        let mut lock_map_once = |p| rebound.entry(p).or_insert_with(|| lock_map(p)).clone();
        let locksets: Vec<u32> = s
            .tables
            .locksets
            .iter()
            .map(|l| {
                col.accesses
                    .lockset_id(&st.locks.update(&l.rebind(&mut lock_map_once)))
            })
            .collect();
        // A callee called again with the same rebinding (same actuals, lockset and phase)
        // brings only sites already added: every one meets its own program point, with a
        // chain as short, or stays behind the same better ones.
        let rebound = Rebound {
            paths,
            locksets,
            phase,
        };
        let copied = col.copied.entry((g, s as *const Summary)).or_default();
        if copied.contains(&rebound) {
            return;
        }
        copied.push(rebound);
        let Rebound {
            paths, locksets, ..
        } = &copied[copied.len() - 1];
        for a in &s.accesses {
            if a.witnesses.is_empty() {
                continue;
            }
            let l = locksets[a.locks as usize];
            for &(p, class) in &paths[a.path as usize] {
                let key = (p, l, a.kind, a.atomic, a.phase.max(phase));
                let expected = a.witnesses.len();
                let mut sites = col
                    .accesses
                    .sites(key, class.or(a.class), a.value, expected);
                for w in &a.witnesses {
                    let len = (w.chain_len() + 1).min(MAX_CHAIN);
                    sites.add(len, w.loc, || {
                        Witness::new(w.loc, chains.prefixed(w.chain()), w.func)
                    });
                }
            }
        }
    }

    /// [`Self::rebind_path`] for a lock path, normalised as a lock.
    fn rebind_lock(&self, st: &State, g: FuncId, p: &Path, call: &Call<'_>) -> Vec<Path> {
        self.rebind_path(st, g, p, call)
            .into_iter()
            .filter_map(|q| self.normalize_lock(q))
            .collect()
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
        let mut bases = call.pointees(self, st, i).to_vec();
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
}

/// How one call rebound its callee's tables ([`FnAnalysis::copy_accesses`]): per callee path, the
/// caller's paths (with their classes); per callee lockset, the caller's; the caller's phase.
#[derive(PartialEq)]
pub(super) struct Rebound {
    paths: Vec<Vec<(PathId, Option<u32>)>>,
    locksets: Vec<u32>,
    phase: crate::summary::threads::Phase,
}

/// A path's index in the caller's access table.
type PathId = u32;

/// Joins one alternative's lockset and thread state into those of a call's other alternatives.
fn join_effects(
    after: &mut Option<(RelativeLockset, ThreadState)>,
    locks: RelativeLockset,
    threads: ThreadState,
) {
    match after {
        Some((l, t)) => {
            l.join(&locks);
            t.join(&threads);
        }
        None => *after = Some((locks, threads)),
    }
}

/// Whether a handle is read from an array slot: `t[i]` on an array, or `t[1]` / `*(t + i)` on a
/// pointer (paths drop pointer arithmetic, so `t[1]` would otherwise name every slot).
pub(super) fn array_slot(e: &Expr) -> bool {
    let Expr::Load(lv) = e.strip_casts() else {
        return false;
    };
    let mut host = match &lv.host {
        Host::Mem(addr) => addr.as_ref(),
        // `t[0]` on an array variable is one element (`Step::Elem`); `t[i]` any.
        Host::Var(_) => {
            return lv.offsets.iter().any(
                |o| matches!(o, Offset::Index(e) if !matches!(**e, Expr::Const(Const::Int(_)))),
            )
        }
    };
    while let Expr::Cast(_, inner) = host {
        host = inner;
    }
    matches!(host, Expr::Binary(BinOp::PtrAdd, ..))
        || lv.offsets.iter().any(|o| matches!(o, Offset::Index(_)))
}

/// A call being applied: the IR arguments and their symbolic values before the call.
struct Call<'c> {
    args: &'c [Expr],
    actuals: &'c [SymVal],
    loc: Loc,
    /// What each argument points to ([`FnAnalysis::deref_paths`]), computed on first use: every
    /// path of every target's summary rooted at that formal is rebound through it.
    pointees: Vec<std::cell::OnceCell<Vec<Path>>>,
}

impl Call<'_> {
    fn pointees(&self, f: &FnAnalysis<'_>, st: &State, i: usize) -> &[Path] {
        match (self.pointees.get(i), self.args.get(i)) {
            (Some(cell), Some(a)) => cell.get_or_init(|| f.deref_paths(st, a)),
            _ => &[],
        }
    }
}

/// One spawn per (start routines, site): the shortest chain is kept, `paths` counts (up to 2)
/// the distinct call paths that reach the site, `in_loop` is their disjunction.
pub(super) fn merge_spawns(mut spawns: Vec<Spawn>) -> Vec<Spawn> {
    spawns.sort_by(|a, b| {
        (&a.start, a.loc, a.chain.len(), &a.chain).cmp(&(&b.start, b.loc, b.chain.len(), &b.chain))
    });
    let mut out: Vec<Spawn> = Vec::new();
    for sp in spawns {
        match out.last_mut() {
            Some(last) if last.start == sp.start && last.loc == sp.loc => {
                last.in_loop |= sp.in_loop;
                last.fresh_arg &= sp.fresh_arg;
                last.alone &= sp.alone;
                last.distinct_arg &= sp.distinct_arg;
                if last.arg != sp.arg {
                    last.arg = None;
                }
                last.paths = last.paths.saturating_add(sp.paths).min(2);
            }
            _ => out.push(sp),
        }
    }
    out
}
