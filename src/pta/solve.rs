//! Building and solving the unification constraints.

use rustc_hash::FxHashMap;

use super::PointerOperand::{Either, First};
use super::{Lam, Origin, PointsTo, PtaStats, SignatureFilter, NONE};
use crate::ir::*;
use crate::link::Program;
use crate::models::{Model, Models};

mod asm;
mod external;
pub mod merges;
mod typed_reach;

use merges::Cause;

struct Solver<'p> {
    p: PointsTo,
    program: &'p Program,
    /// The model of each function (by `FuncId`), if any: models win over bodies.
    models: Vec<Option<&'p Model>>,
    /// Pending unifications (an explicit stack: no recursion however deep the types).
    pending: Vec<(u32, u32)>,
    /// For each function whose address is cast to a function-pointer type of another shape,
    /// those shapes (the program calls it through them).
    cast_shapes: FxHashMap<FuncId, Vec<super::signature::Shape>>,
    /// Functions cast to a data pointer or an integer somewhere (by `FuncId`).
    cast_to_data: Vec<bool>,
    /// Functions whose address is taken somewhere (by `FuncId`; [`super::liveness`]).
    address_taken: Vec<bool>,
    /// Calls of unknown externals, whose arguments may carry callbacks (bound after solving).
    unknown_calls: Vec<UnknownCall>,
    /// Callbacks handed to models: (the value's node, how it runs, the call).
    handed: Vec<Handed>,
    /// Records whose pointers unknown code was handed: their members join the unknown code's
    /// memory once the callbacks are bound (see `unknown_memory`).
    handed_records: Vec<RecordId>,
    /// The memory unknown externals see ([`Solver::unknown_memory`]), once one is called.
    world: Option<u32>,
    /// Which constraints joined large classes.
    trace: merges::MergeTrace,
}

/// Whether parameter `i` of the body-less function `g` may carry a function to call back, by
/// its declared type: not an arithmetic value nor a pointer to one (`dlopen(const char *)`,
/// `utimes(const char *, const struct timeval *)` take no callback, though Steensgaard may have
/// merged their strings with a class holding functions). Unprototyped functions and variadic
/// arguments may carry anything. (A function pointer cast to `char *` and back is not
/// followed, as in MLTA.)
fn may_carry_function(program: &Program, g: FuncId, i: usize) -> bool {
    let types = &program.types;
    let Some(f) = program.functions.get(g.index()) else {
        return true;
    };
    let crate::ir::types::TypeKind::Function {
        params, prototyped, ..
    } = types.kind(f.ty)
    else {
        return true;
    };
    let Some(&p) = params.get(i).filter(|_| *prototyped) else {
        return true;
    };
    let scalar = |t| types.is_arithmetic(t);
    !(scalar(p) || types.pointee(p).is_some_and(scalar))
}

/// Whether `e` is statically a number or a pointer to numbers (`__builtin_isinf_sign(x)` of a
/// `double`, a variadic `char *` of `redisAsyncCommand`): no function is found behind it,
/// whatever the callee's declaration says.
fn arithmetic_value(program: &Program, f: FuncId, e: &Expr) -> bool {
    let types = &program.types;
    super::signature::expr_type(program, f, e).is_some_and(|t| {
        types.is_arithmetic(t) || types.pointee(t).is_some_and(|p| types.is_arithmetic(p))
    })
}

/// A call of a function with no body and no model: the value node of each argument.
struct UnknownCall {
    caller: FuncId,
    via: FuncId,
    loc: Loc,
    args: Vec<Option<u32>>,
    /// Where the functions behind each argument are looked for, by its static type.
    reach: Vec<typed_reach::ArgReach>,
    /// Functions already bound as this call's callbacks.
    bound: rustc_hash::FxHashSet<FuncId>,
}

/// A callback argument of a modelled call.
struct Handed {
    node: u32,
    record: Option<RecordId>,
    via: FuncId,
    caller: FuncId,
    loc: Loc,
    /// `Some(loop)` for a registered callback, `None` for an asynchronous one.
    registry: Option<String>,
}

pub(super) fn solve(
    program: &Program,
    mode: super::FieldMode,
    models: &Models,
    world: super::World,
) -> PointsTo {
    let mut s = Solver {
        p: empty(program, mode),
        program,
        models: super::models::resolve(program, models),
        pending: Vec::new(),
        cast_shapes: FxHashMap::default(),
        cast_to_data: vec![false; program.functions.len()],
        address_taken: vec![false; program.functions.len()],
        unknown_calls: Vec::new(),
        handed: Vec::new(),
        handed_records: Vec::new(),
        world: None,
        trace: merges::MergeTrace::default(),
    };
    for &o in &s.p.origin {
        s.trace.add_node(o);
    }
    s.p.callbacks = super::callbacks::CallbackTable::new(&s.models);
    for (i, f) in program.functions.iter().enumerate() {
        let fid = FuncId(i as u32);
        if let Some(body) = &f.body {
            let args = body
                .params
                .iter()
                .map(|l| s.p.local_node(fid, *l))
                .collect();
            let ret = s.p.return_node(fid);
            let node = s.p.function_node(fid);
            let rest = s.node(Origin::Fresh);
            s.trace.cause = Some(Cause::Signature(fid));
            s.set_lam(node, Lam { args, ret, rest });
        }
    }
    s.member_nodes();
    for (i, g) in program.globals.iter().enumerate() {
        // Initializers run in no function; their lvalues name only globals.
        let no_fn = FuncId(u32::MAX);
        s.trace.cause = Some(Cause::GlobalInit(GlobalId(i as u32)));
        for ins in &g.global.init {
            s.instr(no_fn, ins);
        }
    }
    for (i, f) in program.functions.iter().enumerate() {
        let fid = FuncId(i as u32);
        if s.models[i].is_some() {
            // Models win over bodies: calls never reach this body, so its constraints would
            // only merge classes inside it (kernel `mutex_lock`'s slow path, `kref_put`'s
            // release callback). Its signature above still serves calls through pointers.
            continue;
        }
        if let Some(body) = &f.body {
            for b in &body.blocks {
                for ins in &b.instrs {
                    s.trace.cause = Some(Cause::Instr(fid, ins.loc()));
                    s.instr(fid, ins);
                }
                if let Terminator::Return {
                    value: Some(e),
                    loc,
                } = &b.term
                {
                    s.trace.cause = Some(Cause::Instr(fid, *loc));
                    if let Some(v) = s.val(fid, e) {
                        let r = s.pts(s.p.return_node(fid));
                        s.join(r, v);
                    }
                }
            }
        }
    }
    s.p.may_run = super::liveness::may_run(program, &s.address_taken, world.dead_statics);
    if world.closed {
        // Unknown code calls nothing back: its calls bind no callback.
        s.unknown_calls.clear();
    }
    s.bind_unknown_callbacks();
    if !world.closed {
        // In a whole program, code without a body is assembly (or a call the compiler
        // removes): it may hand back what it is handed (`__switch_to_asm` returns `prev`), but
        // stores no pointer into the members of the records it is handed, nor reads one there
        // to hand back (it copies pages and user buffers, computes checksums, enters firmware).
        s.trace.cause = Some(Cause::UnknownMemory);
        s.members_to_unknown_memory();
    }
    s.finish(world.closed)
}

/// The node layout: globals, functions, return values, strings, then each function's locals.
fn empty(program: &Program, mode: super::FieldMode) -> PointsTo {
    let mut origin = Vec::new();
    origin.extend((0..program.globals.len()).map(|g| Origin::Global(GlobalId(g as u32))));
    let func_base = origin.len() as u32;
    origin.extend((0..program.functions.len()).map(|f| Origin::Function(FuncId(f as u32))));
    let ret_base = origin.len() as u32;
    origin.extend((0..program.functions.len()).map(|f| Origin::Return(FuncId(f as u32))));
    let str_base = origin.len() as u32;
    origin.extend((0..program.strings.len()).map(|s| Origin::Str(StrId(s as u32))));
    let mut local_base = Vec::with_capacity(program.functions.len());
    for (i, f) in program.functions.iter().enumerate() {
        local_base.push(origin.len() as u32);
        if let Some(body) = &f.body {
            origin.extend(
                (0..body.locals.len()).map(|l| Origin::Local(FuncId(i as u32), LocalId(l as u32))),
            );
        }
    }
    let mut uf = super::UnionFind::default();
    for _ in 0..origin.len() {
        uf.add();
    }
    PointsTo {
        mode,
        field_nodes: FxHashMap::default(),
        pts: vec![NONE; origin.len()],
        lam: vec![NONE; origin.len()],
        lams: Vec::new(),
        uf,
        origin,
        global_base: 0,
        func_base,
        ret_base,
        str_base,
        local_base,
        thread_args: Vec::new(),
        exposed_interiors: Vec::new(),
        class_size: FxHashMap::default(),
        class_functions: FxHashMap::default(),
        interior: Default::default(),
        arity: program
            .functions
            .iter()
            .map(|f| match program.types.kind(f.ty) {
                crate::ir::types::TypeKind::Function {
                    params,
                    variadic,
                    prototyped: true,
                    ..
                } if f.body.is_some() => Some((params.len(), *variadic)),
                _ => None,
            })
            .collect(),
        signatures: Default::default(),
        slots: Default::default(),
        callbacks: Default::default(),
        may_run: Vec::new(),
        merges: Vec::new(),
        stats: PtaStats::default(),
    }
}

impl Solver<'_> {
    /// In the field-based mode, a node for every member of every record, so every member
    /// access has the class of its member (`S.f` for all objects of `S`), whether or not a
    /// pointer ever flows through it: a member reached through a cast or `container_of` from
    /// a pointer into another object is still the same location.
    fn member_nodes(&mut self) {
        if self.p.mode != super::FieldMode::FieldBased {
            return;
        }
        for (r, def) in self.program.types.records().iter().enumerate() {
            for f in &def.fields {
                let key = (RecordId(r as u32), f.name);
                if !self.p.field_nodes.contains_key(&key) {
                    let n = self.node(Origin::Field(key.0, key.1));
                    self.p.field_nodes.insert(key, n);
                }
            }
        }
    }

    fn node(&mut self, origin: Origin) -> u32 {
        self.trace.add_node(origin);
        self.p.origin.push(origin);
        self.p.pts.push(NONE);
        self.p.lam.push(NONE);
        self.p.uf.add()
    }

    /// The points-to successor of `n`'s class, created on demand.
    fn pts(&mut self, n: u32) -> u32 {
        let r = self.p.uf.find(n);
        if self.p.pts[r as usize] == NONE {
            let fresh = self.node(Origin::Fresh);
            self.p.pts[r as usize] = fresh;
        }
        self.p.pts[r as usize]
    }

    fn set_lam(&mut self, n: u32, lam: Lam) {
        let r = self.p.uf.find(n);
        match self.p.lam[r as usize] {
            NONE => {
                self.p.lams.push(lam);
                self.p.lam[r as usize] = self.p.lams.len() as u32 - 1;
            }
            existing => {
                let old = self.p.lams[existing as usize].clone();
                self.unify_lams(&old, &lam);
                if lam.args.len() > old.args.len() {
                    self.p.lams[existing as usize] = lam;
                }
                self.drain();
            }
        }
    }

    /// The signature of the class `n` belongs to, created with `arity` fresh formals if absent.
    fn lam_of(&mut self, n: u32, arity: usize) -> Lam {
        let r = self.p.uf.find(n);
        if self.p.lam[r as usize] == NONE {
            let lam = self.fresh_lam(arity);
            self.p.lams.push(lam);
            let r = self.p.uf.find(n);
            self.p.lam[r as usize] = self.p.lams.len() as u32 - 1;
        }
        let r = self.p.uf.find(n);
        self.p.lams[self.p.lam[r as usize] as usize].clone()
    }

    fn fresh_lam(&mut self, arity: usize) -> Lam {
        let args = (0..arity).map(|_| self.node(Origin::Fresh)).collect();
        let ret = self.node(Origin::Fresh);
        let rest = self.node(Origin::Fresh);
        Lam { args, ret, rest }
    }

    /// Unifies two signatures position by position; the shorter one's `rest` stands for the
    /// positions it lacks.
    fn unify_lams(&mut self, a: &Lam, b: &Lam) {
        for i in 0..a.args.len().max(b.args.len()) {
            let x = a.args.get(i).copied().unwrap_or(a.rest);
            let y = b.args.get(i).copied().unwrap_or(b.rest);
            self.pending.push((x, y));
        }
        self.pending.push((a.ret, b.ret));
        self.pending.push((a.rest, b.rest));
    }

    /// Unifies the classes of `a` and `b`, and then their targets and signatures.
    fn join(&mut self, a: u32, b: u32) {
        self.pending.push((a, b));
        self.drain();
    }

    fn drain(&mut self) {
        while let Some((a, b)) = self.pending.pop() {
            let (ra, rb) = (self.p.uf.find(a), self.p.uf.find(b));
            if ra == rb {
                continue;
            }
            let (pa, pb) = (self.p.pts[ra as usize], self.p.pts[rb as usize]);
            let (la, lb) = (self.p.lam[ra as usize], self.p.lam[rb as usize]);
            let Some((root, child)) = self.p.uf.union(ra, rb) else {
                continue;
            };
            self.trace.union(root, child, &self.p.origin);
            self.p.stats.unifications += 1;
            self.p.pts[root as usize] = match (pa, pb) {
                (NONE, x) | (x, NONE) => x,
                (x, y) => {
                    self.pending.push((x, y));
                    x
                }
            };
            self.p.lam[root as usize] = match (la, lb) {
                (NONE, x) | (x, NONE) => x,
                (x, y) => {
                    let (lx, ly) = (
                        self.p.lams[x as usize].clone(),
                        self.p.lams[y as usize].clone(),
                    );
                    self.unify_lams(&lx, &ly);
                    if ly.args.len() > lx.args.len() {
                        y
                    } else {
                        x
                    }
                }
            };
        }
    }

    /// The node of the location an lvalue denotes: its member node in the field-based mode, else
    /// its base (offsets are ignored).
    fn loc(&mut self, f: FuncId, lv: &Lval) -> u32 {
        self.loc_and_object(f, lv).0
    }

    /// [`Self::loc`], and for a member in the field-based mode the node of the object it lies
    /// in (which the member's node does not lead to).
    fn loc_and_object(&mut self, f: FuncId, lv: &Lval) -> (u32, Option<u32>) {
        if let Some(key) = self.p.member_key(lv) {
            // The base is still evaluated: `p->f` reads `p`, and a call in it has effects.
            let object = match &lv.host {
                Host::Mem(e) => self.val(f, e),
                Host::Var(VarRef::Global(g)) => Some(self.p.global_node(*g)),
                Host::Var(VarRef::Local(l)) => self.p.local_base.get(f.index()).map(|b| b + l.0),
            };
            if let Some(&n) = self.p.field_nodes.get(&key) {
                return (n, object);
            }
            let n = self.node(Origin::Field(key.0, key.1));
            self.p.field_nodes.insert(key, n);
            return (n, object);
        }
        let n = self.lval_node(f, lv);
        (n, None)
    }

    /// The node of an lvalue that names no member (field-based) or any lvalue (insensitive).
    fn lval_node(&mut self, f: FuncId, lv: &Lval) -> u32 {
        match &lv.host {
            Host::Var(VarRef::Global(g)) => self.p.global_node(*g),
            Host::Var(VarRef::Local(l)) => match self.p.local_base.get(f.index()) {
                Some(base) => base + l.0,
                None => self.node(Origin::Fresh),
            },
            Host::Mem(e) => match self.val(f, e) {
                Some(v) => v,
                // Dereferencing something that points nowhere known (an integer address).
                None => self.node(Origin::Fresh),
            },
        }
    }

    /// The node an expression's value points to, if it may be a pointer.
    fn val(&mut self, f: FuncId, e: &Expr) -> Option<u32> {
        match e {
            Expr::Load(lv) => {
                let l = self.loc(f, lv);
                Some(self.pts(l))
            }
            Expr::AddrOf(lv) | Expr::StartOf(lv) => {
                let (n, object) = self.loc_and_object(f, lv);
                self.p.exposed_interiors.extend(object);
                Some(n)
            }
            Expr::Func(FuncRef::Linked(g)) => {
                self.take_address(*g);
                Some(self.p.function_node(*g))
            }
            Expr::Const(Const::Str(s)) => Some(self.p.string_node(*s)),
            Expr::Binary(op, a, b) => match super::pointer_operand(*op) {
                Some(First) => self.val(f, a),
                Some(Either) => {
                    let x = self.val(f, a);
                    x.or_else(|| self.val(f, b))
                }
                None => None,
            },
            Expr::Unary(UnOp::LogNot, _) => None,
            Expr::Cast(t, a) => {
                self.note_function_cast(*t, a);
                self.val(f, a)
            }
            Expr::Unary(_, a) => self.val(f, a),
            _ => None,
        }
    }

    /// Notes that `g`'s address is taken ([`super::liveness`]).
    fn take_address(&mut self, g: FuncId) {
        if let Some(taken) = self.address_taken.get_mut(g.index()) {
            *taken = true;
        }
    }

    /// `(T)fn` with `T` a function-pointer type of another shape than `fn`'s: `fn` is also
    /// called through that shape (see [`super::signature`]).
    fn note_function_cast(&mut self, to: crate::ir::TypeId, e: &Expr) {
        let Some(g) = e.named_function() else {
            return;
        };
        let types = &self.program.types;
        let to_function = |t| matches!(types.kind(t), crate::ir::types::TypeKind::Function { .. });
        if !to_function(to) && !types.pointee(to).is_some_and(to_function) {
            // To a `void *` or an integer: a `void *` handed to unknown code may be it.
            if let Some(slot) = self.cast_to_data.get_mut(g.index()) {
                *slot = true;
            }
            return;
        }
        let Some(to) = super::signature::shape_of(types, to) else {
            return;
        };
        let own = self.program.functions.get(g.index()).map(|f| f.ty);
        let fits = own
            .and_then(|t| super::signature::shape_of(types, t))
            .is_some_and(|own| super::signature::compatible(&own, &to, SignatureFilter::Strict));
        if !fits {
            let shapes = self.cast_shapes.entry(g).or_default();
            if !shapes.contains(&to) {
                shapes.push(to);
            }
        }
    }

    /// `*pts(loc(dst)) ⊇ v`: unify the target of `dst` with `v`.
    fn assign(&mut self, dst_loc: u32, v: u32) {
        let t = self.pts(dst_loc);
        self.join(t, v);
    }

    fn instr(&mut self, f: FuncId, ins: &Instr) {
        match ins {
            Instr::Assign { dst, src, .. } => {
                if let Some(v) = self.val(f, src) {
                    let l = self.loc(f, dst);
                    self.assign(l, v);
                }
            }
            Instr::Call {
                dst,
                callee,
                args,
                loc,
            } => self.call(f, dst.as_ref(), callee, args, *loc),
            Instr::Asm {
                outputs, inputs, ..
            } => {
                // A function handed to `asm` may be called from it.
                for g in inputs.iter().filter_map(Expr::named_function) {
                    self.take_address(g);
                }
                self.asm(f, outputs, inputs);
            }
        }
    }

    fn call(&mut self, f: FuncId, dst: Option<&Lval>, callee: &Expr, args: &[Expr], loc: Loc) {
        if let Expr::Func(FuncRef::Linked(g)) = callee {
            // A model wins over a body (kernel `mutex_lock`, a program's own `xmalloc`).
            if let Some(m) = self.models[g.index()] {
                self.external(f, *g, m, dst, args, loc);
                return;
            }
            if self.program.functions[g.index()].body.is_none() {
                // An unknown external: no points-to effect, but a function reachable from an
                // argument may be called back at any time (bound after solving).
                let reach = args.iter().map(|a| self.argument_reach(f, a)).collect();
                let carriers: Vec<bool> = (0..args.len())
                    .map(|i| {
                        may_carry_function(self.program, *g, i)
                            && !arithmetic_value(self.program, f, &args[i])
                    })
                    .collect();
                let args_of_call = args;
                let args = args
                    .iter()
                    .zip(carriers)
                    .map(|(a, carrier)| {
                        let v = self.val(f, a);
                        v.filter(|_| carrier)
                    })
                    .collect();
                self.unknown_calls.push(UnknownCall {
                    caller: f,
                    via: *g,
                    loc,
                    args,
                    reach,
                    bound: Default::default(),
                });
                self.unknown_memory(f, *g, dst, args_of_call);
                return;
            }
            let node = self.p.function_node(*g);
            let lam = self.lam_of(node, args.len());
            self.bind(f, &lam, dst, args);
            return;
        }
        self.p.stats.indirect_calls += 1;
        match self.val(f, callee) {
            Some(fnode) => {
                let lam = self.lam_of(fnode, args.len());
                self.bind(f, &lam, dst, args);
            }
            None => self.p.stats.unresolved_indirect_calls += 1,
        }
    }

    /// Actuals flow into formals, the return value into `dst`.
    fn bind(&mut self, f: FuncId, lam: &Lam, dst: Option<&Lval>, args: &[Expr]) {
        for (i, a) in args.iter().enumerate() {
            if let Some(v) = self.val(f, a) {
                let formal = lam.args.get(i).copied().unwrap_or(lam.rest);
                self.assign(formal, v);
            }
        }
        if let Some(d) = dst {
            let l = self.loc(f, d);
            let (lt, rt) = (self.pts(l), self.pts(lam.ret));
            self.join(lt, rt);
        }
    }

    /// Functions reachable (through points-to edges) from each class that holds functions,
    /// for the current partition.
    fn function_classes(&mut self) -> FxHashMap<u32, Vec<FuncId>> {
        let mut by_class: FxHashMap<u32, Vec<FuncId>> = FxHashMap::default();
        for i in 0..self.program.functions.len() {
            let f = FuncId(i as u32);
            let c = self.p.uf.find(self.p.function_node(f));
            by_class.entry(c).or_default().push(f);
        }
        by_class
    }

    /// The functions reachable from the value node `v`: in its class or behind pointers from it.
    fn reachable_functions(
        &mut self,
        v: u32,
        by_class: &FxHashMap<u32, Vec<FuncId>>,
    ) -> Vec<FuncId> {
        let mut seen = rustc_hash::FxHashSet::default();
        let mut out = Vec::new();
        let mut c = self.p.uf.find(v);
        while seen.insert(c) {
            out.extend(by_class.get(&c).into_iter().flatten().copied());
            match self.p.pts[c as usize] {
                NONE => break,
                t => c = self.p.uf.find(t),
            }
        }
        out
    }

    /// Every function reachable from an argument of an unknown external may be called back
    /// with the call's other arguments, at any time: each of its formals receives every other
    /// argument (which escapes), and it becomes an escaped callback. Binding unifies classes,
    /// which may make more functions reachable: repeated until nothing changes.
    fn bind_unknown_callbacks(&mut self) {
        let mut calls = std::mem::take(&mut self.unknown_calls);
        // A call in a function that never runs hands nothing to anyone.
        calls.retain(|c| self.p.may_run(c.caller));
        loop {
            // Per round, what each class and record reaches is computed once. Bindings unify
            // classes, so a round's answers may miss functions: the next round finds them, and
            // the last round binds nothing (no unification), so its answers are exact.
            let by_class = self.function_classes();
            let mut by_root: FxHashMap<u32, std::rc::Rc<Vec<FuncId>>> = FxHashMap::default();
            let mut by_record: FxHashMap<RecordId, std::rc::Rc<Vec<FuncId>>> = FxHashMap::default();
            let mut changed = false;
            for call in &mut calls {
                self.trace.cause = Some(Cause::UnknownCallback(call.caller, call.loc));
                for (i, v) in call.args.clone().into_iter().enumerate() {
                    let Some(v) = v else { continue };
                    let root = self.p.uf.find(v);
                    use typed_reach::ArgReach;
                    let reached = if self.typed_reach() {
                        // A record is reached through its members by their types instead
                        // (`member_functions`). Functions merged into a class by untyped
                        // flows are not looked for behind an argument (see `typed_reach`).
                        std::rc::Rc::new(match call.reach[i] {
                            ArgReach::Record(_) | ArgReach::DataPointer => Vec::new(),
                            ArgReach::VoidPointer => self.untyped_functions(root, &by_class),
                            ArgReach::Any => by_class.get(&root).cloned().unwrap_or_default(),
                        })
                    } else {
                        match by_root.get(&root) {
                            Some(f) => f.clone(),
                            None => {
                                let f = std::rc::Rc::new(self.reachable_functions(v, &by_class));
                                by_root.insert(root, f.clone());
                                f
                            }
                        }
                    };
                    let members = match call.reach[i] {
                        ArgReach::DataPointer | ArgReach::VoidPointer | ArgReach::Any => {
                            std::rc::Rc::new(Vec::new())
                        }
                        ArgReach::Record(r) => match by_record.get(&r) {
                            Some(f) => f.clone(),
                            None => {
                                let f = std::rc::Rc::new(self.member_functions(r, &by_class));
                                by_record.insert(r, f.clone());
                                f
                            }
                        },
                    };
                    for &func in reached.iter().chain(members.iter()) {
                        if !call.bound.insert(func) {
                            continue;
                        }
                        changed = true;
                        let lam = self.lam_of(self.p.function_node(func), 0);
                        for (j, w) in call.args.iter().enumerate() {
                            let Some(w) = *w else { continue };
                            if j == i {
                                continue;
                            }
                            self.p.thread_args.push(w);
                            for &formal in lam.args.iter().chain([&lam.rest]) {
                                self.assign(formal, w);
                            }
                        }
                        self.p.callbacks.escape(super::callbacks::EscapedCallback {
                            func,
                            via: call.via,
                            caller: call.caller,
                            loc: call.loc,
                            unknown: true,
                        });
                    }
                }
            }
            if !changed {
                break;
            }
        }
        // Callbacks handed to models, once the partition is final.
        let by_class = self.function_classes();
        for h in std::mem::take(&mut self.handed) {
            if !self.p.may_run(h.caller) {
                continue;
            }
            let c = self.p.uf.find(h.node);
            let mut funcs = by_class.get(&c).cloned().unwrap_or_default();
            if let Some(r) = h.record {
                funcs.extend(self.member_functions(r, &by_class));
            }
            match &h.registry {
                Some(name) => self.p.callbacks.register(name, funcs),
                None => {
                    for func in funcs {
                        self.p.callbacks.escape(super::callbacks::EscapedCallback {
                            func,
                            via: h.via,
                            caller: h.caller,
                            loc: h.loc,
                            unknown: false,
                        });
                    }
                }
            }
        }
        self.p.callbacks.finish();
        (
            self.p.stats.escaped_callbacks,
            self.p.stats.escaped_to_unknown,
            self.p.stats.registered_callbacks,
        ) = self.p.callbacks.counts();
    }

    /// `closed_world`: the program is whole ([`super::World::closed`]).
    fn finish(mut self, closed_world: bool) -> PointsTo {
        let n = self.p.uf.len() as u32;
        for i in 0..n {
            self.p.uf.find(i);
        }
        let mut p = self.p;
        p.signatures =
            super::signature::Signatures::new(self.program, std::mem::take(&mut self.cast_shapes));
        p.slots = super::confine::SlotTargets::new(self.program, closed_world);
        (p.stats.function_pointer_slots, p.stats.open_slots) = p.slots.counts();
        p.stats.open_slot_reasons = p
            .slots
            .open_reasons()
            .into_iter()
            .map(|(kind, why, slots)| super::OpenSlots {
                kind,
                reason: why.describe(),
                slots,
            })
            .collect();
        for i in 0..n {
            let c = p.uf.find_const(i);
            match p.origin[i as usize] {
                Origin::Fresh => {}
                Origin::Function(fid) => {
                    *p.class_size.entry(c).or_default() += 1;
                    p.class_functions.entry(c).or_default().push(fid);
                }
                Origin::Field(..) => {
                    *p.class_size.entry(c).or_default() += 1;
                    p.interior.insert(c);
                }
                _ => *p.class_size.entry(c).or_default() += 1,
            }
        }
        p.stats.nodes = n as usize;
        p.stats.classes = (0..n).filter(|&i| p.uf.find_const(i) == i).count();
        p.stats.largest_class = p.class_size.values().copied().max().unwrap_or(0);
        p.thread_args = p.thread_args.iter().map(|&t| p.uf.find_const(t)).collect();
        p.exposed_interiors = p
            .exposed_interiors
            .iter()
            .map(|&t| p.uf.find_const(t))
            .collect();
        p.exposed_interiors.sort_unstable();
        p.exposed_interiors.dedup();
        p.merges = std::mem::take(&mut self.trace.merges);
        for m in &mut p.merges {
            m.root = p.uf.find_const(m.root);
        }
        p
    }
}
