//! Steensgaard's points-to analysis over the linked program (RELAY §3.1, §4.1).
//!
//! Every abstract location (global, local, formal, return value, function, string literal,
//! allocation site) is a node; nodes are unified into classes (union-find), and each class has
//! at most one points-to successor class, so assignments unify targets instead of adding edges.
//! The analysis is field-insensitive (`x.f` is `x`), flow- and context-insensitive, and almost
//! linear. A function's class carries a signature (its formals and return node); calls through a
//! pointer unify actuals with the signature found in the pointer's target class, so functions
//! that may be called from the same pointer share formals — the standard Steensgaard treatment.
//!
//! Library functions are modelled by the declarative `models/` files ([`crate::models`]);
//! a function with a model is handled by the model even if it has a body (which is then not
//! analysed). Their points-to effects: allocation sites, copies (`memcpy`), returned arguments
//! (`strchr`, `spinlock_check`), `va_arg`, and thread creation (the start routine is called
//! with the argument, which also becomes an escape root).

mod by_class;
pub mod callbacks;
pub mod confine;
pub mod inclusion;
pub mod liveness;
mod models;
pub mod signature;
mod solve;
pub mod unionfind;

use rustc_hash::FxHashMap;

pub use by_class::ByClass;
use serde::Serialize;
pub use signature::SignatureFilter;
pub use solve::merges::{Cause as MergeCause, Merge};

use crate::callgraph::IndirectCalls;
use crate::ir::*;
use crate::link::Program;
use unionfind::UnionFind;

const NONE: u32 = u32::MAX;

/// What an abstract location stands for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Origin {
    Global(GlobalId),
    Local(FuncId, LocalId),
    /// The return value of a function.
    Return(FuncId),
    Function(FuncId),
    Str(StrId),
    /// An allocation site: the call to an allocator at this location in this function.
    Alloc(FuncId, Loc),
    /// A struct or union member in the field-based mode: `x.f` and `p->f` for every object of
    /// the record.
    Field(RecordId, Name),
    /// A node made by the analysis (the target of a pointer nothing points to yet).
    Fresh,
}

/// A function signature attached to a class: formal and return *locations*.
#[derive(Clone, Debug)]
struct Lam {
    args: Vec<u32>,
    ret: u32,
    /// Where arguments beyond `args` go (variadic calls), and what `va_arg` reads.
    rest: u32,
}

/// Counts for reports and benchmarks.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PtaStats {
    pub nodes: usize,
    pub classes: usize,
    pub unifications: usize,
    /// Program lvalues (non-fresh abstract locations) in the largest class.
    pub largest_class: usize,
    pub indirect_calls: usize,
    /// Indirect calls whose callee points to no function.
    pub unresolved_indirect_calls: usize,
    pub allocation_sites: usize,
    pub thread_creations: usize,
    /// Places of function-pointer type whose stores are tracked ([`confine`]), and how many of
    /// them are open (calls through them are not filtered by the functions stored).
    pub function_pointer_slots: usize,
    pub open_slots: usize,
    /// Open slots by kind (`member`, `global`, `local`, `return`) and reason.
    pub open_slot_reasons: Vec<OpenSlots>,
    /// Callbacks that are thread entries of their own (handed to an async model or to an
    /// unknown external), of which handed to an unknown external; callbacks registered with a
    /// loop ([`callbacks`]).
    pub escaped_callbacks: usize,
    pub escaped_to_unknown: usize,
    pub registered_callbacks: usize,
}

/// How many slots of one kind are open for one reason ([`confine::Opened`]).
#[derive(Clone, Debug, Serialize)]
pub struct OpenSlots {
    pub kind: &'static str,
    pub reason: &'static str,
    pub slots: usize,
}

/// How structs are treated.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Default, clap::ValueEnum)]
pub enum FieldMode {
    /// RELAY's treatment: `x.f` is `x`; every member of an object is one location.
    Insensitive,
    /// Each member of a record type is one location across all objects of that type
    /// (`x.f`, `p->f` and `q->f` are the node of `S.f`): members no longer pollute each other's
    /// targets (function-pointer tables stay apart), at the price of merging instances and of
    /// trusting the declared type of the access (a cast to another struct type is not followed).
    #[default]
    FieldBased,
}

/// The solved analysis: classes, their targets, and the queries later stages need.
pub struct PointsTo {
    pub mode: FieldMode,
    /// Member nodes of the field-based mode.
    field_nodes: FxHashMap<(RecordId, Name), u32>,
    /// Classes holding a member node (field-based mode): a pointer into one may point into
    /// the middle of an object, and a cast or `container_of` reaches the object around it.
    interior: rustc_hash::FxHashSet<u32>,
    uf: UnionFind,
    /// Points-to successor of each class (valid at representatives).
    pts: Vec<u32>,
    /// Index into `lams` (valid at representatives).
    lam: Vec<u32>,
    lams: Vec<Lam>,
    origin: Vec<Origin>,
    global_base: u32,
    func_base: u32,
    ret_base: u32,
    str_base: u32,
    /// First node of each function's locals.
    local_base: Vec<u32>,
    /// Values passed to thread start routines: escape roots.
    thread_args: Vec<u32>,
    /// Objects a member of which has its address taken (`&o->y`, field-based mode): the
    /// member's node stands for every object's, so the pointer no longer leads to this
    /// object's class — which is shared as soon as that address may be.
    exposed_interiors: Vec<u32>,
    /// Program lvalues per class representative.
    class_size: FxHashMap<u32, usize>,
    /// Functions per class representative (the possible targets of a pointer to the class).
    class_functions: FxHashMap<u32, Vec<FuncId>>,
    /// Parameter count and variadic flag of each defined, prototyped function.
    arity: Vec<Option<(usize, bool)>>,
    /// Parameter shapes for filtering indirect calls by signature.
    signatures: signature::Signatures,
    /// The functions stored into each function-pointer slot, for filtering indirect calls by
    /// the slot they load from.
    slots: confine::SlotTargets,
    /// Callbacks handed to library code: called synchronously, registered, or escaped.
    pub callbacks: callbacks::CallbackTable,
    /// Per function, whether it may run at all ([`liveness`]).
    may_run: Vec<bool>,
    /// Unifications of two large classes, by final class ([`Merge`]).
    merges: Vec<Merge>,
    pub stats: PtaStats,
}

/// What the points-to analysis may assume of the code it cannot see.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct World {
    /// A `static` function nothing calls and whose address is never taken never runs
    /// ([`liveness`]): calls in it hand no callback to unknown code (`--no-dead-statics` off).
    pub dead_statics: bool,
    /// The input is a whole linked program (`--closed-world`): a function with neither body
    /// nor model is assembly that calls no function of the program back, or is never called
    /// (the compiler removed the call: the kernel's calls under a configuration switch that is
    /// off). Then no callback escapes to unknown code.
    pub closed: bool,
}

impl Default for World {
    fn default() -> World {
        World {
            dead_statics: true,
            closed: false,
        }
    }
}

impl PointsTo {
    /// Runs the analysis over the whole program (field-based, built-in models).
    pub fn analyze(program: &Program) -> PointsTo {
        Self::analyze_with(program, FieldMode::default())
    }

    /// Where an indirect call loads its pointer from and what that slot holds
    /// ([`confine::SlotTargets::describe_call`]).
    pub fn describe_call_slot(&self, program: &Program, caller: FuncId, callee: &Expr) -> String {
        self.slots.describe_call(program, caller, callee)
    }

    /// How indirect calls are matched against their targets' types: with `Off`, by class and
    /// arity only (neither [`signature`] nor [`confine`] filtering).
    pub fn with_signature_filter(mut self, filter: SignatureFilter) -> PointsTo {
        if filter == SignatureFilter::Off {
            self.signatures = signature::Signatures::default();
            self.slots = confine::SlotTargets::default();
        } else {
            self.signatures = std::mem::take(&mut self.signatures).with_filter(filter);
        }
        self
    }

    /// Runs the analysis with the built-in models.
    pub fn analyze_with(program: &Program, mode: FieldMode) -> PointsTo {
        Self::analyze_with_models(program, mode, crate::models::Models::builtin_ref())
    }

    /// Runs the analysis with the given library models (built-in plus `--models`).
    pub fn analyze_with_models(
        program: &Program,
        mode: FieldMode,
        models: &crate::models::Models,
    ) -> PointsTo {
        Self::analyze_with_options(program, mode, models, World::default())
    }

    /// … and what it may assume of the code it cannot see ([`World`]).
    pub fn analyze_with_options(
        program: &Program,
        mode: FieldMode,
        models: &crate::models::Models,
        world: World,
    ) -> PointsTo {
        solve::solve(program, mode, models, world)
    }

    /// Whether `f` may run at all ([`liveness`]).
    pub fn may_run(&self, f: FuncId) -> bool {
        self.may_run.get(f.index()).copied().unwrap_or(true)
    }

    /// The member a field-based lvalue denotes: its last field offset.
    pub(crate) fn member_key(&self, lv: &Lval) -> Option<(RecordId, Name)> {
        if self.mode != FieldMode::FieldBased {
            return None;
        }
        lv.offsets.iter().rev().find_map(|o| match o {
            Offset::Field { record, name } if record.0 != u32::MAX => Some((*record, *name)),
            _ => None,
        })
    }

    /// The class a node belongs to (after solving, paths are flat: this is O(1)).
    pub fn class(&self, node: u32) -> u32 {
        crate::reads::note(node);
        self.uf.find_const(node)
    }

    /// The functions in a class (the targets of a pointer to it).
    pub fn class_functions(&self, class: u32) -> &[FuncId] {
        self.class_functions
            .get(&self.class(class))
            .map_or(&[], Vec::as_slice)
    }

    /// The class the members of `class` point to, if any.
    pub fn deref_class(&self, class: u32) -> Option<u32> {
        self.target(class)
    }

    /// Whether objects of `class` may be members of other objects (the class holds a member
    /// node): two different classes then do not prove two objects apart — `container_of` on a
    /// pointer to `x.m` reaches `x`, whose class is another.
    pub fn is_interior(&self, class: u32) -> bool {
        self.interior.contains(&self.class(class))
    }

    /// The class of a record member in the field-based mode (`None` in the insensitive mode, or
    /// for a member no lvalue of the program names).
    pub fn field_class(&self, record: RecordId, name: Name) -> Option<u32> {
        if self.mode != FieldMode::FieldBased {
            return None;
        }
        self.field_nodes
            .get(&(record, name))
            .map(|&n| self.class(n))
    }

    fn target(&self, node: u32) -> Option<u32> {
        let t = self.pts[self.class(node) as usize];
        (t != NONE).then(|| self.class(t))
    }

    pub fn global_node(&self, g: GlobalId) -> u32 {
        self.global_base + g.0
    }

    pub fn local_node(&self, f: FuncId, l: LocalId) -> u32 {
        self.local_base[f.index()] + l.0
    }

    pub fn function_node(&self, f: FuncId) -> u32 {
        self.func_base + f.0
    }

    pub fn return_node(&self, f: FuncId) -> u32 {
        self.ret_base + f.0
    }

    pub fn string_node(&self, s: StrId) -> u32 {
        self.str_base + s.0
    }

    /// The class of the memory an lvalue of function `f` denotes: its representative. `None` when
    /// the lvalue dereferences a value that points nowhere known (an integer cast to a pointer).
    pub fn lval_class(&self, f: FuncId, lv: &Lval) -> Option<u32> {
        if let Some(key) = self.member_key(lv) {
            return self.field_nodes.get(&key).map(|&n| self.class(n));
        }
        match &lv.host {
            Host::Var(VarRef::Global(g)) => Some(self.class(self.global_node(*g))),
            Host::Var(VarRef::Local(l)) => Some(self.class(self.local_node(f, *l))),
            Host::Mem(e) => self.value_class(f, e),
        }
    }

    /// The class an expression's value points to, if any.
    pub fn value_class(&self, f: FuncId, e: &Expr) -> Option<u32> {
        match e {
            Expr::Load(lv) => self.target(self.lval_class(f, lv)?),
            Expr::AddrOf(lv) | Expr::StartOf(lv) => self.lval_class(f, lv),
            Expr::Func(FuncRef::Linked(g)) => Some(self.class(self.function_node(*g))),
            Expr::Const(Const::Str(s)) => Some(self.class(self.string_node(*s))),
            Expr::Binary(op, a, b) => match pointer_operand(*op) {
                Some(PointerOperand::First) => self.value_class(f, a),
                Some(PointerOperand::Either) => {
                    self.value_class(f, a).or_else(|| self.value_class(f, b))
                }
                None => None,
            },
            Expr::Unary(UnOp::LogNot, _) => None,
            Expr::Unary(_, a) | Expr::Cast(_, a) => self.value_class(f, a),
            _ => None,
        }
    }

    /// How many program lvalues (variables, allocation sites, strings, functions) a class
    /// stands for: RELAY's "large representative" filter uses it.
    pub fn class_size(&self, class: u32) -> usize {
        self.class_size
            .get(&self.class(class))
            .copied()
            .unwrap_or(0)
    }

    /// The abstract locations in a class, for reports (linear in the number of nodes).
    pub fn class_members(&self, class: u32) -> Vec<Origin> {
        let c = self.class(class);
        (0..self.uf.len() as u32)
            .filter(|&n| self.class(n) == c && self.origin[n as usize] != Origin::Fresh)
            .map(|n| self.origin[n as usize])
            .collect()
    }

    /// The class with the most program lvalues, and its size.
    pub fn largest_class(&self) -> Option<(u32, usize)> {
        self.class_size
            .iter()
            .map(|(&c, &n)| (c, n))
            .max_by_key(|&(c, n)| (n, std::cmp::Reverse(c)))
    }

    /// The `n` classes with the most program lvalues, largest first, with their sizes.
    pub fn largest_classes(&self, n: usize) -> Vec<(u32, usize)> {
        let mut classes: Vec<(u32, usize)> =
            self.class_size.iter().map(|(&c, &n)| (c, n)).collect();
        classes.sort_unstable_by_key(|&(c, size)| (std::cmp::Reverse(size), c));
        classes.truncate(n);
        classes
    }

    /// The unifications of two large classes that built `class`, the most balanced first (its
    /// smaller side largest): the constraints that made it big.
    pub fn merges_into(&self, class: u32) -> Vec<&Merge> {
        let c = self.class(class);
        let mut merges: Vec<&Merge> = self.merges.iter().filter(|m| m.root == c).collect();
        merges.sort_by_key(|m| std::cmp::Reverse(m.sizes.1));
        merges
    }

    /// Functions a call through `callee` (a function pointer value in `caller`) may reach.
    pub fn call_targets(&self, caller: FuncId, callee: &Expr) -> Vec<FuncId> {
        self.value_class(caller, callee)
            .and_then(|c| self.class_functions.get(&c))
            .cloned()
            .unwrap_or_default()
    }

    /// The functions whose address may be stored in member `name` of an object of `record`
    /// (field-based mode only: otherwise none).
    pub fn member_functions(&self, record: RecordId, name: Name) -> Vec<FuncId> {
        self.field_class(record, name)
            .and_then(|c| self.target(c))
            .and_then(|t| self.class_functions.get(&t))
            .cloned()
            .unwrap_or_default()
    }

    /// The functions the program stores into member `name` of a `record` object: those of
    /// [`PointsTo::member_functions`] that a call through the member's function-pointer type
    /// may reach ([`signature`]: its own type, or one its address is cast to) and that MLTA's
    /// slot of the member holds ([`confine`]) when every store into it is seen; none when no
    /// store into it is seen at all (as for closed slots, `memcpy` is not seen). Steensgaard
    /// puts the kernel's `work_struct.func` in one class with thirteen thousand functions
    /// that `void *` hubs merged.
    pub fn stored_functions(&self, program: &Program, record: RecordId, name: Name) -> Vec<FuncId> {
        // The record that declares the member (an anonymous union or struct inside `record`).
        let Some(&(record, _)) = program
            .types
            .find_field(record, name)
            .as_ref()
            .and_then(|p| p.last())
        else {
            return Vec::new();
        };
        let mut functions = self.member_functions(record, name);
        if let Some(shape) = member_shape(program, record, name) {
            functions.retain(|&f| {
                self.accepts(f, signature::arity(&shape))
                    && self.signatures.accepts(f, Some(&shape))
            });
        }
        match self.slots.member_stores(program, record, name) {
            // No store into the member is seen: it holds no function (the kernel's
            // `net_device_ops` has dozens of members no defconfig driver sets).
            confine::MemberStores::NoStore => functions.clear(),
            confine::MemberStores::Closed(stored) => {
                functions.retain(|f| stored.binary_search(f).is_ok())
            }
            confine::MemberStores::Open | confine::MemberStores::NotASlot => {}
        }
        functions
    }

    /// Classes reachable from `roots` through points-to edges (roots included): RELAY's
    /// isAccessible.
    pub fn reachable_from(
        &self,
        roots: impl IntoIterator<Item = u32>,
    ) -> rustc_hash::FxHashSet<u32> {
        let mut seen = rustc_hash::FxHashSet::default();
        let mut stack: Vec<u32> = roots.into_iter().map(|r| self.class(r)).collect();
        while let Some(c) = stack.pop() {
            if !seen.insert(c) {
                continue;
            }
            if let Some(t) = self.target(c) {
                stack.push(t);
            }
        }
        seen
    }

    /// Classes that may be shared between threads: reachable from a global, from a value
    /// passed to a thread start routine, or — in the field-based mode, where one node stands
    /// for a member of every object of its struct type, globals' members included — from a
    /// struct member (`reg.cur = s` publishes `s`), or an object a member's address was taken
    /// of (`shared_y = &o->y` publishes `o`'s `y`, and the member node says nothing of `o`).
    pub fn escaping(&self) -> rustc_hash::FxHashSet<u32> {
        let globals = (0..(self.func_base - self.global_base)).map(|g| self.global_base + g);
        let members = (0..self.origin.len() as u32)
            .filter(|&n| matches!(self.origin[n as usize], Origin::Field(..)));
        self.reachable_from(
            globals
                .chain(self.thread_args.iter().copied())
                .chain(self.exposed_interiors.iter().copied())
                .chain(members),
        )
    }

    pub fn origin(&self, node: u32) -> Origin {
        self.origin[node as usize]
    }

    /// Abstract locations, numbered `0..node_count()`.
    pub fn node_count(&self) -> usize {
        self.origin.len()
    }
}

/// Which operand of a binary operation may carry a pointer value.
#[derive(Copy, Clone)]
pub(crate) enum PointerOperand {
    First,
    /// Integer arithmetic on an address (`(unsigned long)p & ~3`, `off + (long)base`): whichever
    /// operand points somewhere. Operands are never unified: `a == b` must not make `a`, `b` alias.
    Either,
}

/// Pointer arithmetic keeps the pointer operand's target; comparisons, multiplications, shifts
/// and pointer differences produce no pointer.
pub(crate) fn pointer_operand(op: BinOp) -> Option<PointerOperand> {
    match op {
        BinOp::PtrAdd => Some(PointerOperand::First),
        BinOp::Add | BinOp::Sub | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
            Some(PointerOperand::Either)
        }
        _ => None,
    }
}

impl PointsTo {
    /// The functions a function-pointer argument `e` of a call in `caller` may be, when the
    /// callee calls it with `args` arguments (`None`: as many as the pointer's static type
    /// takes, when it has one): the function `e` names (through casts), else the targets of a
    /// call through `e` ([`IndirectCalls::targets`]: a thread's start routine, called with its
    /// one argument, is not a three-parameter fault handler Steensgaard merged with it).
    pub fn function_argument(
        &self,
        program: &Program,
        caller: FuncId,
        e: &Expr,
        args: Option<usize>,
    ) -> Vec<FuncId> {
        if let Some(f) = e.named_function() {
            return vec![f];
        }
        match args
            .or_else(|| signature::call_shape(program, caller, e).map(|s| signature::arity(&s)))
        {
            Some(n) => self.targets(program, caller, e, n).unwrap_or_default(),
            None => self.call_targets(caller, e),
        }
    }

    /// Whether `f` can be called with `args` arguments: its prototype has that many parameters,
    /// or fewer and `...`. Unprototyped functions accept any count.
    pub fn accepts(&self, f: FuncId, args: usize) -> bool {
        match self.arity.get(f.index()).copied().flatten() {
            Some((n, variadic)) => args == n || (variadic && args > n),
            None => true,
        }
    }
}

impl IndirectCalls for PointsTo {
    /// Targets in the callee's class that can take the call's arguments: Steensgaard merges the
    /// function pointers of a class; a call with three arguments does not reach a one-parameter
    /// function stored in a merged pointer, nor a call through a `void (*)(struct a *)` a
    /// function taking a `struct b *` ([`signature`]).
    fn targets(
        &self,
        program: &Program,
        caller: FuncId,
        callee: &Expr,
        args: usize,
    ) -> Option<Vec<FuncId>> {
        let mut t = self.call_targets(caller, callee);
        t.retain(|&f| self.accepts(f, args));
        if !t.is_empty() {
            let shape = signature::call_shape(program, caller, callee);
            t.retain(|&f| self.signatures.accepts(f, shape.as_deref()));
        }
        if !t.is_empty() {
            if let Some(allowed) = self.slots.call_targets(program, caller, callee) {
                t.retain(|f| allowed.binary_search(f).is_ok());
            }
        }
        (!t.is_empty()).then_some(t)
    }

    fn callbacks(
        &self,
        program: &Program,
        caller: FuncId,
        callee: &Expr,
        args: &[Expr],
    ) -> Vec<callbacks::CallbackCall> {
        let targets = self.resolve(program, caller, callee, args.len());
        self.callbacks_of(caller, &targets, args)
    }
}

impl PointsTo {
    /// The callbacks a call in `caller` to any of `targets` (already resolved) makes.
    pub fn callbacks_of(
        &self,
        caller: FuncId,
        targets: &[FuncId],
        args: &[Expr],
    ) -> Vec<callbacks::CallbackCall> {
        targets
            .iter()
            .filter(|&&g| self.callbacks.has_spec(g))
            .flat_map(|&g| {
                self.callbacks
                    .calls(g, args, |a| self.call_targets(caller, a))
            })
            .collect()
    }
}

/// The shape of member `name` of `record`, if it is a pointer to a prototyped function.
fn member_shape(program: &Program, record: RecordId, name: Name) -> Option<signature::Shape> {
    let types = &program.types;
    let (r, i) = *types.find_field(record, name)?.last()?;
    signature::shape_of(types, types.record(r).fields.get(i)?.ty)
}

#[cfg(test)]
mod tests;
