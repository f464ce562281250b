//! Thread-escape, intraprocedurally (the sound counterpart of RELAY's "thread-local
//! allocation" filter; Chord's escaping pairs): a tracked local that holds the only pointer to
//! an object allocated here, not yet stored anywhere or passed to a function, points to memory
//! no other thread can reach. Accesses through it are not shared and are not recorded.
//!
//! The pointer escapes when its value is used other than as the base of a dereference
//! (`p->f`, `*(p + i)`), as an argument of a modelled library function (`memset(p, …)`,
//! `pthread_mutex_init(&p->lock)`; thread creation excepted), or in a branch condition. Joins
//! intersect: a local is fresh only if it is on every path.
//!
//! Publication. The accesses made before the object escapes are ordered before every other
//! thread's only if the publication itself is: a thread that reads the pointer with a data race
//! (C11 5.1.2.4) sees the object's fields with no happens-before either (TSan reports both). So
//! an object stored into shared memory with no lock held (`conns[fd] = c` outside any critical
//! section) is a *racy publication*: the accesses through it before that store are recorded
//! after all, the zeroing write of `calloc` included. A store under a lock, a thread creation,
//! a call that passes the object on, a return and a store into what a formal points to (an
//! out-parameter, `*conn_out = conn`) are taken as ordered (the callee or caller may publish
//! under its own lock; not checked) — unless `--strict-publication`, where a call that keeps
//! the object, a return or an out-parameter store with no lock held is a racy publication too.

use rustc_hash::FxHashSet;

use super::{FnAnalysis, State};
use crate::ir::types::RecordId;
use crate::ir::*;
use crate::summary::owned::ArgOwner;
use crate::summary::path::{Path, Root};
use crate::summary::Summary;

impl FnAnalysis<'_> {
    /// The address-taken locals (formals included) whose address is used only to access them
    /// and as an argument of callees that keep nothing: a summarised callee whose formal does
    /// not escape, or a model that neither starts a thread nor registers a callback. No other
    /// thread can reach them (flow-insensitive: any other use of the address — stored, cast
    /// into a pointer variable, returned, an `asm` operand — and the local is shared).
    pub(super) fn find_private_locals(&self) -> FxHashSet<LocalId> {
        let mut escaped: FxHashSet<LocalId> = FxHashSet::default();
        for block in &self.body.blocks {
            for instr in &block.instrs {
                match instr {
                    Instr::Assign { dst, src, .. } => {
                        address_uses(src, &mut escaped);
                        lval_address_uses(dst, &mut escaped);
                    }
                    Instr::Call {
                        dst, callee, args, ..
                    } => {
                        address_uses(callee, &mut escaped);
                        let g = match callee {
                            Expr::Func(FuncRef::Linked(g)) => Some(*g),
                            _ => None,
                        };
                        let model = g.and_then(|g| self.ctx.model(g));
                        let summary = g.and_then(|g| self.callees.get(g));
                        let keeps_nothing = |j: usize| match (model, &summary) {
                            (Some(m), _) => {
                                m.thread_create.is_none()
                                    && m.callbacks.is_empty()
                                    && m.runs_callbacks.is_none()
                            }
                            // Not one that stores the address into the object itself: loads
                            // from it are not followed here.
                            (None, Some(s)) => {
                                s.formal_escapes.get(j) == Some(&false)
                                    && s.formal_self_refs.get(j) != Some(&true)
                            }
                            (None, None) => false,
                        };
                        for (j, a) in args.iter().enumerate() {
                            match (keeps_nothing(j), a.strip_casts()) {
                                (true, Expr::AddrOf(lv) | Expr::StartOf(lv)) => {
                                    lval_address_uses(lv, &mut escaped)
                                }
                                _ => address_uses(a, &mut escaped),
                            }
                        }
                        if let Some(d) = dst {
                            lval_address_uses(d, &mut escaped);
                        }
                    }
                    Instr::Asm {
                        outputs, inputs, ..
                    } => {
                        for e in inputs {
                            address_uses(e, &mut escaped);
                        }
                        for o in outputs {
                            lval_address_uses(o, &mut escaped);
                            if let Host::Var(VarRef::Local(l)) = o.host {
                                escaped.insert(l);
                            }
                        }
                    }
                }
            }
            match &block.term {
                Terminator::Return { value: Some(v), .. } => address_uses(v, &mut escaped),
                Terminator::Branch { cond, .. } => address_uses(cond, &mut escaped),
                _ => {}
            }
        }
        self.body
            .locals
            .iter()
            .enumerate()
            .filter(|(i, l)| l.flags.address_taken && !escaped.contains(&LocalId(*i as u32)))
            .map(|(i, _)| LocalId(i as u32))
            .collect()
    }

    /// Updates the fresh locals after `instr` (whose accesses were recorded with the state
    /// before it).
    pub(super) fn update_fresh(&self, st: &mut State, instr: &Instr) {
        let uses = self.pointer_uses(instr);
        let allocates = uses.allocates;
        if st.fresh.is_empty() && !allocates {
            return;
        }
        for l in &uses.self_referenced {
            if let Some(&at) = st.fresh.get(l) {
                st.self_refs.insert(at);
            }
        }
        // A value kept from an object that may hold pointers to itself may be one of them.
        let holds_itself =
            |l: &LocalId| st.fresh.get(l).is_some_and(|at| st.self_refs.contains(at));
        let mut escaped = uses.escaped;
        escaped.extend(uses.loaded.iter().copied().filter(holds_itself));
        // `j = tmp` (the IR's temporary for `malloc`'s result, maybe cast), `q = &p->f`: the
        // destination points into the same fresh object. Locals holding one object's pointers
        // are fresh together: when one escapes, all stop being fresh (the object is reachable
        // only through them).
        let moved = match instr {
            Instr::Assign { dst, src, .. } if self.tracked(dst).is_some() => {
                self.fresh_site(st, src)
            }
            _ => None,
        };
        for l in escaped {
            match st.fresh.get(&l).copied() {
                Some(at) if moved == Some(at) => {}
                Some(at) => st.fresh.retain(|_, site| *site != at),
                None => {}
            }
        }
        let dst = match instr {
            Instr::Assign { dst, .. } => Some(dst),
            Instr::Call { dst, .. } => dst.as_ref(),
            Instr::Asm { .. } => None,
        };
        if let Some(l) = dst.and_then(|d| self.tracked(d)) {
            match moved {
                Some(at) => {
                    st.fresh.insert(l, at);
                }
                None if allocates && matches!(instr, Instr::Call { .. }) => {
                    st.fresh.insert(l, instr.loc());
                }
                None => {
                    st.fresh.remove(&l);
                }
            }
        }
    }

    /// The allocations this function publishes with no lock held: a fresh pointer stored
    /// into memory another thread may read (a global, or through a pointer that is not itself
    /// fresh) while the function holds no lock. `entry`: the dataflow state at each block.
    pub(super) fn find_racy_publications(&self, entry: &[State]) -> FxHashSet<Loc> {
        let mut racy = FxHashSet::default();
        // Objects are fresh only from an allocation in this function: without one there is
        // nothing to publish, and the walk (every transfer function again) is skipped.
        let allocates = |i: &Instr| matches!(i, Instr::Call { callee, args, .. } if self.allocating_call(callee, args.len()));
        if !self
            .body
            .blocks
            .iter()
            .flat_map(|b| &b.instrs)
            .any(allocates)
        {
            return racy;
        }
        for (block, st) in self.body.blocks.iter().zip(entry) {
            if !st.reachable {
                continue;
            }
            let mut st = st.clone();
            for instr in &block.instrs {
                let unlocked = st.locks.plus.is_empty();
                match instr {
                    Instr::Assign { dst, src, .. } => {
                        if let Some(at) = self.fresh_site(&st, src) {
                            let handed_back =
                                !self.ctx.strict_publication && self.out_parameter(&st, dst);
                            if unlocked && !handed_back && self.shared_memory(&st, dst) {
                                racy.insert(at);
                            }
                        }
                    }
                    Instr::Call { callee, .. }
                        if unlocked
                            && self.ctx.strict_publication
                            && !self.creates_thread(callee) =>
                    {
                        for l in self.pointer_uses(instr).escaped {
                            racy.extend(st.fresh.get(&l).copied());
                        }
                    }
                    _ => {}
                }
                self.instr(&mut st, instr, &mut None);
            }
            if let (Terminator::Return { value: Some(v), .. }, true) =
                (&block.term, self.ctx.strict_publication)
            {
                racy.extend(self.fresh_site(&st, v));
                // A pointer the object holds to itself, returned.
                let mut loaded = Vec::new();
                self.loaded_values(v, &mut loaded);
                racy.extend(
                    loaded
                        .iter()
                        .filter_map(|l| st.fresh.get(l))
                        .filter(|at| st.self_refs.contains(at)),
                );
            }
        }
        racy
    }

    /// The write an allocator makes into the object it returns into `dst` (`calloc`'s zeroing),
    /// recorded only when the object is published with a data race (otherwise private). The
    /// object is its allocation site's class; its members are those of the record `dst` is,
    /// or is first converted to in this block (`c = (conn *)tmp`).
    pub(super) fn filling_write(
        &self,
        st: &State,
        dst: &Lval,
        loc: Loc,
        col: &mut super::Collector,
    ) {
        let racy = self
            .racy_publications
            .get()
            .is_some_and(|racy| racy.contains(&loc));
        let Some(l) = self.tracked(dst).filter(|_| racy) else {
            return;
        };
        let Some(c) = self
            .ctx
            .pta
            .value_class(self.func, &Expr::Load(Box::new(dst.clone())))
        else {
            return;
        };
        let path = crate::summary::path::Path::new(crate::summary::path::Root::Rep(c));
        // The allocator's fill writes bytes (of whatever type), a record's members as theirs.
        let how = super::How {
            kind: super::AccessKind::Write,
            atomic: false,
            value: None,
        };
        let covered = self
            .converted_record(col.block, l, dst)
            .is_some_and(|r| self.push_members(st, col, &path, r, how, loc));
        if !covered {
            self.push(st, col, path, how, loc, || Some(c));
        }
    }

    /// The record a pointer local points to: its own type's, or that of the first copy of its
    /// value in block `b` (`c = tmp`, `c = (conn *)tmp`: the cast's or the copy's type).
    fn converted_record(&self, b: usize, l: LocalId, dst: &Lval) -> Option<RecordId> {
        let program = self.ctx.program;
        let types = &program.types;
        let record = |t: TypeId| types.pointee(t).and_then(|p| types.as_record(p));
        let lval_record =
            |lv: &Lval| crate::pta::signature::lval_type(program, self.func, lv).and_then(record);
        let is_l = |e: &Expr| {
            matches!(e, Expr::Load(lv) if lv.offsets.is_empty()
                && matches!(lv.host, Host::Var(VarRef::Local(x)) if x == l))
        };
        lval_record(dst).or_else(|| {
            self.body
                .blocks
                .get(b)?
                .instrs
                .iter()
                .find_map(|i| match i {
                    Instr::Assign {
                        src: Expr::Cast(t, e),
                        ..
                    } if is_l(e) => record(*t),
                    Instr::Assign { dst, src, .. } if is_l(src) => lval_record(dst),
                    _ => None,
                })
        })
    }

    /// Whether `callee` is a thread creation (which orders what came before it).
    fn creates_thread(&self, callee: &Expr) -> bool {
        matches!(callee, Expr::Func(FuncRef::Linked(g))
            if self.ctx.model(*g).is_some_and(|m| m.thread_create.is_some()))
    }

    /// Whether `dst` is what a formal's incoming value points to (`*out = obj`): the object is
    /// handed to the caller, as by a return.
    fn out_parameter(&self, st: &State, dst: &Lval) -> bool {
        let Host::Mem(base) = &dst.host else {
            return false;
        };
        matches!(self.eval(st, base),
            crate::summary::SymVal::Init(p) if p.steps.is_empty() && matches!(p.root, Root::Formal(_)))
    }

    /// Whether a store to `dst` may be read by another thread.
    fn shared_memory(&self, st: &State, dst: &Lval) -> bool {
        match &dst.host {
            Host::Var(VarRef::Global(g)) => {
                !self.ctx.program.globals[g.index()]
                    .global
                    .flags
                    .thread_local
            }
            Host::Var(VarRef::Local(_)) => false,
            Host::Mem(_) => !self.through_fresh(st, dst),
        }
    }

    /// Whether the expression's value points to an object no other thread can reach yet:
    /// fresh, and not published with a data race later.
    pub(super) fn private_pointer(&self, st: &State, e: &Expr) -> bool {
        self.fresh_site(st, e).is_some_and(|at| {
            self.racy_publications
                .get()
                .is_none_or(|racy| !racy.contains(&at))
        })
    }

    /// What a call's argument `e` points to, for ownership ([`crate::summary::owned`]):
    /// `pointees` are its targets (`deref_paths`).
    pub(super) fn arg_owner(&self, st: &State, e: &Expr, pointees: &[Path]) -> ArgOwner {
        if self.private_pointer(st, e) {
            return ArgOwner::Private;
        }
        let Some(first) = pointees.first() else {
            return ArgOwner::Shared;
        };
        // Inside one object: the pointer followed is the argument's own.
        let inside = |p: &Path| p.derefs() == usize::from(matches!(p.root, Root::Formal(_)));
        if !pointees.iter().all(|p| p.root == first.root && inside(p)) {
            return ArgOwner::Shared;
        }
        match first.root {
            Root::Formal(k) => ArgOwner::Formal(k),
            // A private stack object (or one no thread reaches): not in summary form.
            Root::Local(_) if pointees.iter().all(|p| self.normalize(p.clone()).is_none()) => {
                ArgOwner::Private
            }
            _ => ArgOwner::Shared,
        }
    }

    /// Whether argument `j` of a call to a function summarised by `s` points to an object that
    /// stays private during the call: fresh, not let escape — and, if the object may hold
    /// pointers to itself, no value loaded from it kept.
    pub(super) fn kept_private(&self, st: &State, s: &Summary, j: usize, arg: &Expr) -> bool {
        let holds_itself = || {
            self.fresh_site(st, arg)
                .is_some_and(|at| st.self_refs.contains(&at))
        };
        s.formal_escapes.get(j) == Some(&false)
            && self.private_pointer(st, arg)
            && (s.formal_loads_escape.get(j) == Some(&false) || !holds_itself())
    }

    /// Whether `lv` is memory reached through a private pointer (`p->f`, `p[i]`, `*p`).
    pub(super) fn through_private(&self, st: &State, lv: &Lval) -> bool {
        match &lv.host {
            Host::Mem(e) => self.private_pointer(st, e),
            Host::Var(_) => false,
        }
    }

    /// Whether `lv` is memory reached through a fresh local, published or not.
    fn through_fresh(&self, st: &State, lv: &Lval) -> bool {
        match &lv.host {
            Host::Mem(e) => self.fresh_site(st, e).is_some(),
            Host::Var(_) => false,
        }
    }

    /// The allocation site of the object the expression points to, if it is a fresh local's
    /// value (possibly cast or offset).
    pub(super) fn fresh_site(&self, st: &State, e: &Expr) -> Option<Loc> {
        if st.fresh.is_empty() {
            return None;
        }
        match e {
            Expr::Load(lv) => match (&lv.host, lv.offsets.is_empty()) {
                (Host::Var(VarRef::Local(l)), true) => st.fresh.get(l).copied(),
                _ => None,
            },
            Expr::Cast(_, a) | Expr::Binary(BinOp::Add | BinOp::Sub | BinOp::PtrAdd, a, _) => {
                self.fresh_site(st, a)
            }
            // `&p->f`: inside the object.
            Expr::AddrOf(lv) | Expr::StartOf(lv) => match &lv.host {
                Host::Mem(base) => self.fresh_site(st, base),
                Host::Var(_) => None,
            },
            _ => None,
        }
    }
}

/// What one `return` hands the caller, for [`Summary::returns_fresh`](crate::summary::Summary).
#[derive(Copy, Clone, PartialEq, Eq)]
pub(super) enum Returned {
    /// A pointer to an object allocated in this call that nothing else points to.
    Fresh,
    /// A null pointer.
    Null,
    Other,
}

/// The returns of a function, joined: fresh only if every return is fresh or null (a `void`
/// return counts as other) and one is fresh.
#[derive(Default)]
pub(super) struct FreshReturns {
    fresh: bool,
    other: bool,
}

impl FreshReturns {
    /// One reachable `return`; `None` when it returns no value.
    pub(super) fn add(&mut self, r: Option<Returned>) {
        match r {
            Some(Returned::Fresh) => self.fresh = true,
            Some(Returned::Null) => {}
            Some(Returned::Other) | None => self.other = true,
        }
    }

    pub(super) fn all_fresh(&self) -> bool {
        self.fresh && !self.other
    }
}

impl FnAnalysis<'_> {
    /// What `return e` hands the caller. A fresh object returned is private to the caller
    /// (this function drops its own accesses to it, a return being an ordered publication),
    /// unless it was published with a data race here already (`private_pointer`; under
    /// `--strict-publication` a return with no lock held is one).
    pub(super) fn returned_freshness(&self, st: &State, e: &Expr) -> Returned {
        if self.private_pointer(st, e) {
            return Returned::Fresh;
        }
        match e.strip_casts() {
            Expr::Const(Const::Int(0)) => Returned::Null,
            _ => Returned::Other,
        }
    }

    /// Whether a call allocates into its destination: every function it may call (one at
    /// least; through a pointer, every resolved target) is an allocator's model or a
    /// constructor, a callee whose summary returns only fresh objects (a custom allocator
    /// through a function pointer: `mem.alloc(opaque, n)`).
    pub(super) fn allocating_call(&self, callee: &Expr, args: usize) -> bool {
        use crate::callgraph::IndirectCalls as _;
        let targets = self
            .ctx
            .pta
            .resolve(self.ctx.program, self.func, callee, args);
        !targets.is_empty()
            && targets.iter().all(|&g| match self.ctx.model(g) {
                Some(m) => m.alloc.is_some(),
                None => self.callees.get(g).is_some_and(|s| s.returns_fresh),
            })
    }
}

/// Locals whose address the expression's value may carry: `&x`, `&x.f[i]`, an array `x`
/// decaying, anywhere in it but as the base of an access (`x.f`, `(&x)->f`).
fn address_uses(e: &Expr, out: &mut FxHashSet<LocalId>) {
    match e {
        Expr::AddrOf(lv) | Expr::StartOf(lv) => {
            if let Host::Var(VarRef::Local(l)) = lv.host {
                out.insert(l);
            }
            lval_address_uses(lv, out);
        }
        Expr::Load(lv) => lval_address_uses(lv, out),
        Expr::Unary(_, a) | Expr::Cast(_, a) => address_uses(a, out),
        Expr::Binary(_, a, b) => {
            address_uses(a, out);
            address_uses(b, out);
        }
        _ => {}
    }
}

/// Addresses of locals an lvalue's address computation carries on: in its indices, and in a
/// base pointer that is not itself `&x` (an access `(&x)->f` or `*&x` is an access of `x`).
fn lval_address_uses(lv: &Lval, out: &mut FxHashSet<LocalId>) {
    if let Host::Mem(e) = &lv.host {
        match e.strip_casts() {
            Expr::AddrOf(inner) | Expr::StartOf(inner) => lval_address_uses(inner, out),
            Expr::Binary(_, a, b) => {
                // `&x[0] + i`: still an access of `x`; the offset is a value.
                match a.strip_casts() {
                    Expr::AddrOf(inner) | Expr::StartOf(inner) => lval_address_uses(inner, out),
                    other => address_uses(other, out),
                }
                address_uses(b, out);
            }
            other => address_uses(other, out),
        }
    }
    for o in &lv.offsets {
        if let Offset::Index(e) = o {
            address_uses(e, out);
        }
    }
}
