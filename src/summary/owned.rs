//! Formals that only ever receive objects no other thread can reach yet, inside a collapsed SCC
//! (RacerD's ownership preconditions, solved over the SCC's call sites).
//!
//! A collapsed SCC's shared set ([`super::shared`]) holds each member's own accesses whatever
//! the caller: `dst_init(dst, …)`'s writes of `dst->input` count as shared although every call
//! passes a `dst` just allocated (`dst = kmem_cache_alloc(…); dst_init(dst, …)`) or on the
//! caller's stack. Outside a collapsed SCC the caller drops such accesses when it copies the
//! callee's summary ([`super::exec`]'s `copy_accesses`); inside one, members do not copy each
//! other's accesses, so the question is answered here, once per SCC:
//!
//! formal `j` of member `f` is **owned** when
//! - `f` is called only by direct calls the call graph sees, all from members of its SCC (its
//!   address is never used — a parked `__ADDRESSABLE(f)` aside — and it is no named entry:
//!   [`super::Context`]'s `called_from_outside`);
//! - `f` does not let the formal escape (`Summary::formal_escapes`), nor keeps a value loaded
//!   from its object (which may hold pointers to itself: `Summary::formal_loads_escape`);
//! - at every call site, argument `j` is [`ArgOwner::Private`] (a fresh allocation the caller
//!   does not publish with a data race, or a private stack object) or
//!   [`ArgOwner::Formal`]`(k)` (inside the object the caller's own formal `k` points to) with
//!   `(caller, k)` owned in turn.
//!
//! The largest such set is a greatest fixpoint: start from every candidate and remove those a
//! call site refutes until none is. Then `f`'s accesses inside the object (`Formal(j)·*·…`
//! with no pointer followed after the first) touch memory only the calling thread reaches:
//! they are left out of the shared set. Accesses through a pointer the object holds
//! (`dst->dev->…`) are kept.

use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};

use super::Summary;
use crate::callgraph::{CallGraph, Scc};
use crate::ir::{Expr, FuncId, FuncRef, GlobalId, Host, Instr, Lval, Offset, Terminator, VarRef};
use crate::link::Program;

/// What one argument of a call to another member of a collapsed SCC points to.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum ArgOwner {
    /// Maybe memory other threads reach.
    Shared,
    /// An object only this thread reaches: fresh and not published with a data race, or a
    /// private stack object.
    Private,
    /// Inside the object the caller's formal `k` points to (`p`, `&p->f`, `(T *)p`).
    Formal(u32),
}

/// A call to another member of the caller's collapsed SCC, with what each argument points to.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct MemberCall {
    pub callee: FuncId,
    pub args: Vec<ArgOwner>,
}

/// The owned formals of one collapsed SCC: `(member, formal index)`.
pub struct OwnedFormals {
    owned: FxHashSet<(FuncId, u32)>,
}

impl OwnedFormals {
    /// Solves the SCC's ownership. `summaries` is parallel to `scc.functions`;
    /// `called_from_outside` (by `FuncId`) tells the functions that may be called other than by
    /// the direct calls of the call graph. A member without a summary proves nothing: its
    /// calls are not known.
    pub fn solve(
        cg: &CallGraph,
        scc: &Scc,
        summaries: &[Option<&Summary>],
        called_from_outside: &[bool],
    ) -> OwnedFormals {
        if summaries.iter().any(Option::is_none) {
            return OwnedFormals::none();
        }
        let members: FxHashSet<FuncId> = scc.functions.iter().copied().collect();
        let outside_callers = called_by_non_members(cg, &members);
        // The candidates: every non-escaping formal of a member called only from inside.
        let mut owned: FxHashSet<(FuncId, u32)> = FxHashSet::default();
        for (&f, s) in scc.functions.iter().zip(summaries) {
            let Some(s) = s else { continue };
            if called_from_outside.get(f.index()).copied().unwrap_or(true)
                || outside_callers.contains(&f)
            {
                continue;
            }
            // Nor one a value loaded from its object is kept from: the object may hold
            // pointers to itself (its caller's `INIT_LIST_HEAD`), and that value be one.
            let kept = |j: usize| s.formal_loads_escape.get(j) == Some(&false);
            for (j, escapes) in s.formal_escapes.iter().enumerate() {
                if !escapes && kept(j) {
                    owned.insert((f, j as u32));
                }
            }
        }
        // Every call site, with its caller; removal until no site refutes a candidate.
        let sites: Vec<(FuncId, &MemberCall)> = scc
            .functions
            .iter()
            .zip(summaries)
            .filter_map(|(&g, s)| Some((g, s.as_ref()?)))
            .flat_map(|(g, s)| s.member_calls.iter().map(move |c| (g, c)))
            .collect();
        let arity = |f: FuncId| {
            let i = scc.functions.binary_search(&f).ok()?;
            Some(summaries[i]?.formal_escapes.len())
        };
        loop {
            let before = owned.len();
            for &(g, call) in &sites {
                let formals = arity(call.callee).unwrap_or(0);
                for j in 0..formals {
                    let key = (call.callee, j as u32);
                    if !owned.contains(&key) {
                        continue;
                    }
                    let kept = match call.args.get(j) {
                        Some(ArgOwner::Private) => true,
                        Some(ArgOwner::Formal(k)) => owned.contains(&(g, *k)),
                        Some(ArgOwner::Shared) | None => false,
                    };
                    if !kept {
                        owned.remove(&key);
                    }
                }
            }
            if owned.len() == before {
                break;
            }
        }
        OwnedFormals { owned }
    }

    /// No formal owned.
    pub fn none() -> OwnedFormals {
        OwnedFormals {
            owned: FxHashSet::default(),
        }
    }

    /// Whether formal `j` of `f` only ever points to an object no other thread reaches.
    pub fn owned(&self, f: FuncId, j: u32) -> bool {
        self.owned.contains(&(f, j))
    }

    pub fn len(&self) -> usize {
        self.owned.len()
    }

    pub fn is_empty(&self) -> bool {
        self.owned.is_empty()
    }
}

/// The members some function outside `members` calls directly.
fn called_by_non_members(cg: &CallGraph, members: &FxHashSet<FuncId>) -> FxHashSet<FuncId> {
    let mut called = FxHashSet::default();
    for (caller, edges) in cg.edges.iter().enumerate() {
        if members.contains(&FuncId(caller as u32)) {
            continue;
        }
        for e in edges {
            if members.contains(&e.callee) {
                called.insert(e.callee);
            }
        }
    }
    called
}

/// By `FuncId`: whether the function may be called other than by a direct call the call graph
/// sees — its address is used in a function body or in the initializer of a global that some
/// code reads (an address only parked in a global nothing reads, as `__ADDRESSABLE(f)`, reaches
/// no call), or it is `named` (`main`, `--entry`, an entry family's function names).
pub fn called_from_outside(program: &Program, named: impl Fn(&str) -> bool) -> Vec<bool> {
    let mut outside: Vec<bool> = (0..program.functions.len())
        .map(|i| named(program.function_name(FuncId(i as u32))))
        .collect();
    let mut read_globals = vec![false; program.globals.len()];
    let mut parked: Vec<(GlobalId, FuncId)> = Vec::new();
    for (gi, g) in program.globals.iter().enumerate() {
        for instr in &g.global.init {
            let mut m = Mentions::default();
            match instr {
                // The initialiser's own destination is not a read of it.
                Instr::Assign { dst, src, .. } => {
                    m.lval_parts(dst);
                    m.expr(src);
                }
                other => m.instr(other),
            }
            parked.extend(m.functions.iter().map(|&f| (GlobalId(gi as u32), f)));
            for r in m.globals {
                read_globals[r.index()] = true;
            }
        }
    }
    for f in &program.functions {
        let Some(body) = &f.body else { continue };
        let mut m = Mentions::default();
        for block in &body.blocks {
            block.instrs.iter().for_each(|i| m.instr(i));
            m.terminator(&block.term);
        }
        for g in m.globals {
            read_globals[g.index()] = true;
        }
        for f in m.functions {
            outside[f.index()] = true;
        }
    }
    for (g, f) in parked {
        if read_globals[g.index()] {
            outside[f.index()] = true;
        }
    }
    outside
}

/// The functions whose address an IR fragment uses (a direct call's callee excepted) and the
/// globals it names.
#[derive(Default)]
struct Mentions {
    functions: Vec<FuncId>,
    globals: Vec<GlobalId>,
}

impl Mentions {
    fn instr(&mut self, i: &Instr) {
        match i {
            Instr::Assign { dst, src, .. } => {
                self.lval(dst);
                self.expr(src);
            }
            Instr::Call {
                dst, callee, args, ..
            } => {
                if let Some(d) = dst {
                    self.lval(d);
                }
                if !matches!(callee.strip_casts(), Expr::Func(FuncRef::Linked(_))) {
                    self.expr(callee);
                }
                args.iter().for_each(|a| self.expr(a));
            }
            Instr::Asm {
                outputs, inputs, ..
            } => {
                outputs.iter().for_each(|o| self.lval(o));
                inputs.iter().for_each(|e| self.expr(e));
            }
        }
    }

    fn terminator(&mut self, t: &Terminator) {
        match t {
            Terminator::Return { value: Some(v), .. } => self.expr(v),
            Terminator::Branch { cond, .. } => self.expr(cond),
            Terminator::Switch { value, .. } => self.expr(value),
            Terminator::IndirectGoto { target, .. } => self.expr(target),
            Terminator::Return { value: None, .. }
            | Terminator::Goto(_)
            | Terminator::Unreachable => {}
        }
    }

    fn lval(&mut self, lv: &Lval) {
        if let Host::Var(VarRef::Global(g)) = lv.host {
            self.globals.push(g);
        }
        self.lval_parts(lv);
    }

    /// An lvalue's address expression and indexes, not its variable.
    fn lval_parts(&mut self, lv: &Lval) {
        if let Host::Mem(e) = &lv.host {
            self.expr(e);
        }
        for off in &lv.offsets {
            if let Offset::Index(e) = off {
                self.expr(e);
            }
        }
    }

    /// Walks with an explicit stack: expression depth is the input's.
    fn expr(&mut self, e: &Expr) {
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            match e {
                Expr::Func(FuncRef::Linked(f)) => self.functions.push(*f),
                Expr::Load(lv) | Expr::AddrOf(lv) | Expr::StartOf(lv) => {
                    if let Host::Var(VarRef::Global(g)) = lv.host {
                        self.globals.push(g);
                    }
                    if let Host::Mem(a) = &lv.host {
                        stack.push(a);
                    }
                    for off in &lv.offsets {
                        if let Offset::Index(i) = off {
                            stack.push(i);
                        }
                    }
                }
                Expr::Unary(_, a) | Expr::Cast(_, a) => stack.push(a),
                Expr::Binary(_, a, b) => {
                    stack.push(a);
                    stack.push(b);
                }
                _ => {}
            }
        }
    }
}
