//! The inclusion constraints of the program: the same statements, models and calls the
//! unification solver reads ([`super::super::solve`]), as directed flows. Calls bind the targets
//! the pipeline resolved (Steensgaard's classes filtered by signatures and slots), so every edge
//! a summary composes is an edge here.

use rustc_hash::FxHashMap;

use super::solve::Graph;
use super::Site;
use crate::callgraph::IndirectCalls;
use crate::ir::*;
use crate::link::Program;
use crate::models::Model;
use crate::pta::PointerOperand::{Either, First};
use crate::pta::PointsTo;

/// The "function" of a global initializer's constraints.
pub(super) const NO_FUNCTION: FuncId = FuncId(u32::MAX);

/// Where an lvalue's storage is: one node, or the objects a value node points to.
#[derive(Copy, Clone)]
enum Place {
    Node(u32),
    Deref(u32),
}

pub(super) struct Builder<'p> {
    pub(super) graph: Graph,
    program: &'p Program,
    pta: &'p PointsTo,
    models: &'p [Option<&'p Model>],
    /// Where pointers handed to code relay cannot see go: its set is every object such code
    /// may reach (the escaped objects), and the opaque object.
    pub(super) world: u32,
    /// A value pointing to the opaque object: memory the program did not allocate (`argv`,
    /// `getenv`'s string, whatever unknown code returns), which stands for every escaped
    /// object too (see [`Graph::set_opaque`]).
    unknown: u32,
    /// The opaque object.
    pub(super) opaque: u32,
    /// An object standing for "somewhere unknown": the container of a member whose base
    /// pointer points nowhere known. A set holding it proves nothing.
    pub(super) nowhere: u32,
    /// Extra arguments of each variadic function, what `va_arg` reads.
    rest: FxHashMap<FuncId, u32>,
    /// The objects each access site's lvalues lie in: value nodes to union, or `None` when some
    /// access at the site lies elsewhere (a model's hidden state).
    pub(super) sites: FxHashMap<Site, Option<Vec<u32>>>,
    /// Allocation-site objects: each one's node, the function whose body holds its call (or
    /// `FuncId(u32::MAX)` for a global's initializer) and its rank among that function's
    /// allocation objects (the order the constraints are built in).
    pub(super) allocations: Vec<(u32, FuncId, u32)>,
    /// The function whose constraints are being built.
    current: FuncId,
    /// Functions whose calls are allocation sites (sorted).
    pub(super) constructors: &'p [FuncId],
}

impl<'p> Builder<'p> {
    pub(super) fn new(
        program: &'p Program,
        pta: &'p PointsTo,
        models: &'p [Option<&'p Model>],
    ) -> Self {
        let mut graph = Graph::with_nodes(pta.node_count());
        let world = graph.node();
        let opaque = graph.node();
        graph.set_opaque(opaque, world);
        graph.set_records(super::handed::HandedRecords::new(program, pta));
        graph.add_object(world, opaque);
        let unknown = graph.address(opaque);
        let nowhere = graph.node();
        // What unknown code reaches, it may change and hand back: anything stored in the
        // objects it holds is reachable to it, and it may store unknown pointers into them.
        graph.load(world, world);
        graph.store(unknown, world);
        Builder {
            graph,
            program,
            pta,
            models,
            world,
            unknown,
            opaque,
            nowhere,
            rest: FxHashMap::default(),
            sites: FxHashMap::default(),
            allocations: Vec::new(),
            current: NO_FUNCTION,
            constructors: &[],
        }
    }

    /// The constraints of every function body and global initializer.
    pub(super) fn program(&mut self, roots: &[bool]) {
        for g in &self.program.globals {
            for ins in &g.global.init {
                self.instr(NO_FUNCTION, ins);
            }
        }
        for (i, f) in self.program.functions.iter().enumerate() {
            let fid = FuncId(i as u32);
            let Some(body) = &f.body else { continue };
            self.current = fid;
            if self.models[i].is_some() {
                continue;
            }
            if roots.get(i) == Some(&true) {
                // Called from outside the program (`main`, a library's API): its formals
                // hold whatever the caller passes.
                for &p in &body.params {
                    let n = self.pta.local_node(fid, p);
                    self.graph.copy(self.unknown, n);
                }
            }
            for b in &body.blocks {
                for ins in &b.instrs {
                    self.instr(fid, ins);
                }
                self.terminator(fid, &b.term);
            }
        }
        self.current = NO_FUNCTION;
        for cb in self.pta.callbacks.escaped() {
            // Called by unknown code, with whatever it holds.
            self.formals_from_world(cb.func);
        }
    }

    fn formals_from_world(&mut self, g: FuncId) {
        let Some(body) = self
            .program
            .functions
            .get(g.index())
            .and_then(|f| f.body.as_ref())
        else {
            return;
        };
        for &p in &body.params {
            let n = self.pta.local_node(g, p);
            self.graph.copy(self.unknown, n);
        }
        let rest = self.rest_of(g);
        self.graph.copy(self.unknown, rest);
    }

    fn rest_of(&mut self, g: FuncId) -> u32 {
        if let Some(&r) = self.rest.get(&g) {
            return r;
        }
        let r = self.graph.node();
        self.rest.insert(g, r);
        r
    }

    fn site(&mut self, f: FuncId, loc: Loc, value: Option<u32>) {
        let entry = self
            .sites
            .entry((f, loc))
            .or_insert_with(|| Some(Vec::new()));
        match (entry, value) {
            (Some(v), Some(n)) => v.push(n),
            (Some(_), None) => {}
            (None, _) => {}
        }
    }

    fn unknown_site(&mut self, f: FuncId, loc: Loc) {
        self.sites.insert((f, loc), None);
    }

    /// Where `lv` is; `record`: `lv` itself is accessed at `loc` (not under `&`), and the
    /// object it lies in is recorded for the site. What computes its address (the base
    /// pointer, indices) is read in any case.
    fn place(&mut self, f: FuncId, loc: Loc, lv: &Lval, record: bool) -> Place {
        for o in &lv.offsets {
            if let Offset::Index(e) = o {
                self.val(f, loc, e);
            }
        }
        let host = match &lv.host {
            Host::Var(VarRef::Global(g)) => Some(Place::Node(self.pta.global_node(*g))),
            Host::Var(VarRef::Local(l)) => self
                .pta
                .local_base
                .get(f.index())
                .map(|base| Place::Node(base + l.0)),
            Host::Mem(e) => self.val(f, loc, e).map(Place::Deref),
        };
        if record {
            match host {
                Some(Place::Node(n)) => {
                    let object = self.graph.address(n);
                    self.site(f, loc, Some(object));
                }
                Some(Place::Deref(v)) => self.site(f, loc, Some(v)),
                // Dereferencing something that points nowhere known: no object proves the
                // access apart from others.
                None => self.unknown_site(f, loc),
            }
        }
        if let Some(&n) = self
            .pta
            .member_key(lv)
            .and_then(|key| self.pta.field_nodes.get(&key))
        {
            return Place::Node(n);
        }
        match host {
            Some(p) => p,
            None => Place::Deref(self.graph.node()),
        }
    }

    /// A node whose set is the value of `e`'s pointers; `None` for no pointer.
    fn val(&mut self, f: FuncId, loc: Loc, e: &Expr) -> Option<u32> {
        match e {
            Expr::Load(lv) => match self.place(f, loc, lv, true) {
                Place::Node(n) => Some(n),
                Place::Deref(p) => {
                    let t = self.graph.node();
                    self.graph.load(p, t);
                    Some(t)
                }
            },
            Expr::AddrOf(lv) | Expr::StartOf(lv) => {
                let address = match self.place(f, loc, lv, false) {
                    Place::Node(n) => Some(self.graph.address(n)),
                    Place::Deref(p) => Some(p),
                };
                let container = self.pta.member_key(lv).map(|_| {
                    self.container(f, loc, lv)
                        .unwrap_or_else(|| self.graph.address(self.nowhere))
                });
                self.either(address, container)
            }
            Expr::Func(FuncRef::Linked(g)) => Some(self.graph.address(self.pta.function_node(*g))),
            Expr::Const(Const::Str(s)) => Some(self.graph.address(self.pta.string_node(*s))),
            Expr::Binary(op, a, b) => match crate::pta::pointer_operand(*op) {
                Some(First) => {
                    let x = self.val(f, loc, a);
                    self.val(f, loc, b);
                    x
                }
                Some(Either) => {
                    let x = self.val(f, loc, a);
                    let y = self.val(f, loc, b);
                    self.either(x, y)
                }
                None => {
                    self.val(f, loc, a);
                    self.val(f, loc, b);
                    None
                }
            },
            Expr::Unary(UnOp::LogNot, a) => {
                self.val(f, loc, a);
                None
            }
            Expr::Cast(_, a) | Expr::Unary(_, a) => self.val(f, loc, a),
            _ => None,
        }
    }

    /// For the address of a member (`&p->m`, whose object is the member's node): the objects
    /// around it too. A pointer into a member leads back to its object (`container_of`), so
    /// what it reaches — unknown code it is handed, above all — reaches the object.
    fn container(&mut self, f: FuncId, loc: Loc, lv: &Lval) -> Option<u32> {
        match &lv.host {
            Host::Var(VarRef::Global(g)) => Some(self.graph.address(self.pta.global_node(*g))),
            Host::Var(VarRef::Local(l)) => {
                let base = *self.pta.local_base.get(f.index())?;
                Some(self.graph.address(base + l.0))
            }
            Host::Mem(e) => self.val(f, loc, e),
        }
    }

    fn either(&mut self, x: Option<u32>, y: Option<u32>) -> Option<u32> {
        match (x, y) {
            (Some(x), Some(y)) => {
                let t = self.graph.node();
                self.graph.copy(x, t);
                self.graph.copy(y, t);
                Some(t)
            }
            (x, y) => x.or(y),
        }
    }

    /// `lv = value`.
    fn assign(&mut self, f: FuncId, loc: Loc, lv: &Lval, value: u32) {
        match self.place(f, loc, lv, true) {
            Place::Node(n) => self.graph.copy(value, n),
            Place::Deref(p) => self.graph.store(value, p),
        }
    }

    fn instr(&mut self, f: FuncId, ins: &Instr) {
        match ins {
            Instr::Assign { dst, src, loc } => {
                let v = self.val(f, *loc, src);
                match v {
                    Some(v) => self.assign(f, *loc, dst, v),
                    None => {
                        self.place(f, *loc, dst, true);
                    }
                }
            }
            Instr::Call {
                dst,
                callee,
                args,
                loc,
            } => self.call(f, *loc, dst.as_ref(), callee, args),
            Instr::Asm {
                outputs,
                inputs,
                loc,
                ..
            } => {
                for e in inputs {
                    if let Some(v) = self.val(f, *loc, e) {
                        self.graph.copy(v, self.world);
                    }
                }
                for o in outputs {
                    self.assign(f, *loc, o, self.unknown);
                }
            }
        }
    }

    fn terminator(&mut self, f: FuncId, t: &Terminator) {
        match t {
            Terminator::Return { value, loc } => {
                if let Some(v) = value.as_ref().and_then(|e| self.val(f, *loc, e)) {
                    self.graph.copy(v, self.pta.return_node(f));
                } else {
                    self.site(f, *loc, None);
                }
            }
            Terminator::Branch { cond: e, loc, .. }
            | Terminator::Switch { value: e, loc, .. }
            | Terminator::IndirectGoto { target: e, loc, .. } => {
                self.val(f, *loc, e);
            }
            Terminator::Goto(_) | Terminator::Unreachable => {}
        }
    }

    fn call(&mut self, f: FuncId, loc: Loc, dst: Option<&Lval>, callee: &Expr, args: &[Expr]) {
        self.site(f, loc, None);
        let values: Vec<Option<u32>> = args.iter().map(|a| self.val(f, loc, a)).collect();
        // A library function accesses what its arguments point to (`memset(p, …)`, an atomic
        // builtin on `&x`), at the call.
        for v in values.iter().flatten() {
            self.site(f, loc, Some(*v));
        }
        let mut stripped = callee;
        while let Expr::Cast(_, inner) = stripped {
            stripped = inner;
        }
        let result = self.graph.node();
        let targets = match stripped {
            Expr::Func(FuncRef::Linked(g)) => vec![*g],
            _ => {
                // A pointer from unknown code calls unknown code; one that points to no
                // function and nowhere unknown is never called (whatever it is, nothing in the
                // program stores a function there).
                let passed: Vec<u32> = values.iter().flatten().copied().collect();
                let records = self.records_of_args(f, args);
                match self.val(f, loc, callee) {
                    Some(p) => self.graph.call_if_opaque(p, passed, records, result),
                    None => self.unknown(f, &values, args, result),
                }
                self.pta
                    .targets(self.program, f, callee, args.len())
                    .unwrap_or_default()
            }
        };
        for g in targets {
            match (self.models.get(g.index()).copied().flatten(), self.body(g)) {
                (Some(m), _) => self.model(f, loc, m, args, &values, result),
                (None, Some(_)) => self.bind(g, &values, result),
                (None, None) => self.unknown(f, &values, args, result),
            }
        }
        for cb in self.pta.callbacks(self.program, f, callee, args) {
            for (k, actual) in cb.formals.iter().enumerate() {
                let value = match actual {
                    Some(i) => values.get(*i).copied().flatten(),
                    None => Some(self.unknown),
                };
                if let Some(v) = value {
                    self.formal(cb.func, k, v);
                }
            }
        }
        if let Some(d) = dst {
            self.assign(f, loc, d, result);
        }
    }

    fn body(&self, g: FuncId) -> Option<&'p Function> {
        self.program.functions.get(g.index())?.body.as_ref()
    }

    /// Formal `k` of `g` (its extra arguments past the last) receives `value`.
    fn formal(&mut self, g: FuncId, k: usize, value: u32) {
        let Some(body) = self.body(g) else { return };
        let node = match body.params.get(k) {
            Some(&p) => self.pta.local_node(g, p),
            None => self.rest_of(g),
        };
        self.graph.copy(value, node);
    }

    fn bind(&mut self, g: FuncId, values: &[Option<u32>], result: u32) {
        for (k, v) in values.iter().enumerate() {
            if let Some(v) = *v {
                self.formal(g, k, v);
            }
        }
        let ret = self.pta.return_node(g);
        if self.constructors.binary_search(&g).is_ok() {
            // Heap cloning: each call returns a new object, which nothing else points to yet;
            // it holds what the objects the constructor returns hold.
            let object = self.allocation();
            let site = self.graph.address(object);
            self.graph.copy(site, result);
            self.graph.load(ret, object);
        } else {
            self.graph.copy(ret, result);
        }
    }

    /// A function relay cannot see: what it is handed escapes to the unknown code's memory, and
    /// what it returns comes from there. It reaches the members of a record it is handed (by
    /// type): what they hold escapes, and it may set them to such memory.
    fn unknown(&mut self, f: FuncId, values: &[Option<u32>], args: &[Expr], result: u32) {
        for v in values.iter().flatten() {
            self.graph.copy(*v, self.world);
        }
        let records = self.records_of_args(f, args);
        self.graph.hand_records(&records);
        self.graph.copy(self.unknown, result);
    }

    /// The records the arguments point to (record ids).
    fn records_of_args(&self, f: FuncId, args: &[Expr]) -> Vec<u32> {
        args.iter()
            .filter_map(|a| crate::pta::signature::pointee_record(self.program, f, a))
            .map(|r| r.0)
            .collect()
    }

    fn model(
        &mut self,
        f: FuncId,
        loc: Loc,
        m: &Model,
        args: &[Expr],
        values: &[Option<u32>],
        result: u32,
    ) {
        let arg = |i: usize| values.get(i).copied().flatten();
        if m.state.is_some() {
            self.unknown_site(f, loc);
        }
        for cb in &m.callbacks {
            let Some(routine) = args.get(cb.arg) else {
                continue;
            };
            for g in self.pta.call_targets(f, routine) {
                for k in 0..cb.args.len().max(1) {
                    let v = match cb.actual_for(k) {
                        Some(i) => arg(i),
                        None => Some(self.unknown),
                    };
                    if let Some(v) = v {
                        self.formal(g, k, v);
                    }
                }
            }
        }
        let mut returns = false;
        if let Some(alloc) = &m.alloc {
            let object = self.allocation();
            let site = self.graph.address(object);
            // `calloc` zeroes the new object at the call.
            self.site(f, loc, Some(site));
            self.graph.copy(site, result);
            if let Some(v) = alloc.copies_arg.and_then(arg) {
                self.graph.copy(v, result);
                self.graph.load(v, object);
            }
            returns = true;
        }
        if let Some(out) = &m.alloc_out {
            let object = self.allocation();
            let site = self.graph.address(object);
            self.site(f, loc, Some(site));
            if let Some(p) = arg(out.arg) {
                self.graph.store(site, p);
            }
        }
        if let Some(copy) = &m.copy {
            if let (Some(d), Some(s)) = (arg(copy.dst), arg(copy.src)) {
                let t = self.graph.node();
                self.graph.load(s, t);
                self.graph.store(t, d);
                self.graph.copy(d, result);
            }
            returns = true;
        }
        if let Some(v) = m.returns_arg.and_then(arg) {
            self.graph.copy(v, result);
            returns = true;
        }
        if m.va_arg {
            match self.body(f).filter(|_| self.variadic(f)) {
                Some(_) => {
                    let rest = self.rest_of(f);
                    self.graph.copy(rest, result);
                }
                // A `va_list` handed in from elsewhere (`vfprintf`-style).
                None => self.graph.copy(self.unknown, result),
            }
            returns = true;
        }
        if let Some(tc) = &m.thread_create {
            if let (Some(routine), Some(v)) = (args.get(tc.start), tc.arg.and_then(arg)) {
                for g in self.pta.call_targets(f, routine) {
                    self.formal(g, 0, v);
                }
            }
        }
        // A model that declares what it does with its arguments (locks, reads, writes,
        // copies) keeps no pointer; one that only says `pure` (`pthread_setspecific`), keeps
        // hidden state (`strtok`), or takes callbacks or starts threads may keep what it is
        // handed and hand it back from another call.
        let may_keep = m.pure
            || !m.has_effect()
            || m.state.is_some()
            || !m.callbacks.is_empty()
            || m.runs_callbacks.is_some()
            || m.thread_create.is_some();
        if may_keep {
            for (a, v) in args.iter().zip(values) {
                // A number is not kept as a pointer (`__builtin_bswap32(x)` of a word read
                // from a buffer that also holds pointers).
                let number = crate::pta::signature::pointer_type(self.program, f, a)
                    .is_some_and(|t| self.program.types.is_arithmetic(t));
                if let (Some(v), false) = (v, number) {
                    self.graph.copy(*v, self.world);
                }
            }
        }
        if !returns {
            self.graph.copy(self.unknown, result);
        }
    }

    fn variadic(&self, f: FuncId) -> bool {
        let Some(func) = self.program.functions.get(f.index()) else {
            return false;
        };
        matches!(
            self.program.types.kind(func.ty),
            crate::ir::types::TypeKind::Function { variadic: true, .. }
        )
    }

    fn allocation(&mut self) -> u32 {
        let node = self.graph.node();
        let rank = match self.allocations.last() {
            Some(&(_, f, r)) if f == self.current => r + 1,
            _ => 0,
        };
        self.allocations.push((node, self.current, rank));
        node
    }
}
