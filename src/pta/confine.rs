//! Indirect calls filtered by where the pointer was loaded from, the second layer of multi-layer
//! type analysis (MLTA, Lu & Hu, CCS 2019): a call through `f->f_op->read` reaches only functions
//! whose address the program stores into the `read` member of a `struct file_operations`.
//!
//! Steensgaard gives every function one class, so a function stored in two tables (the
//! kernel's `noop_llseek` sits in hundreds of `file_operations` and other ops structs) merges
//! the targets of every member it is stored in.
//!
//! A **slot** is a place that can hold a function's address — of function-pointer or `void *`
//! type, arrays of them included: a member of a struct (by tag and member name, so every object
//! of the struct shares it), a global variable, a local variable (formals included), or what a
//! defined function returns. Every store into a slot is classified by what is stored:
//! - a function's address: the function is one of the slot's targets;
//! - a load from another slot: the slot gets that slot's targets (`fn = ops->read; fn()`,
//!   `a->ops.read = b->ops.read`), a direct call's result its callee's return slot's
//!   (`cb = pm_op(ops, state); cb(dev)`);
//! - a constant (`NULL`, `(void *)~0L`): nothing;
//! - anything else (an indirect call's result, arithmetic, a load from a place that is not a
//!   slot): the slot is *open*, and calls through it are not filtered ([`Opened`] says why).
//!
//! A direct call stores its arguments into the callee's formals
//! (`init_waitqueue_func_entry(wq, f)` stores `f` into `wq->func` through its formal); the
//! formals of a function whose address is taken are open (calls through pointers pass values
//! not seen). An address only parked in a global no code reads (`__ADDRESSABLE(f)`, which the
//! kernel's `EXPORT_SYMBOL` expands to) is not taken: nothing calls through it. `*(T *)&x` is `x` (`READ_ONCE`, `WRITE_ONCE`). Taking a slot's address otherwise
//! (`&x->fn`, an array of function pointers decaying to a pointer) opens it: stores through the
//! pointer are not seen. Members of unions are not slots (another member of the union may write
//! them). A call through a slot with no store at all is not filtered either, and a slot read
//! but never stored is open — except a member in a whole program (`--closed-world`): it holds
//! no function, and a call through it or through a copy of it reaches none, as MLTA resolves
//! it (and as entry families' members hold none).
//!
//! What stays unsound, as in MLTA: function pointers written by `memcpy` or through a pointer
//! of another type (`*(void **)p = f` with `p` not derived from a slot's address), and struct
//! objects accessed through a cast to another struct type with a member of the same name.

use rustc_hash::{FxHashMap, FxHashSet};

use super::signature::Tag;
use crate::ir::types::{RecordId, RecordKind, TypeKind, TypeTable};
use crate::ir::{
    Expr, FuncId, FuncRef, GlobalId, Host, Instr, LocalId, Lval, Name, Offset, Terminator, TypeId,
    VarRef,
};
use crate::link::Program;

/// A place of function-pointer type whose stores are tracked.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Slot {
    /// A member of every object of a struct type.
    Member(Tag, Name),
    Global(GlobalId),
    Local(FuncId, LocalId),
    /// What a defined function returns, stored by its `return` statements and read by the
    /// direct calls to it (`fn = lookup_handler(op); fn(arg)`).
    Return(FuncId),
}

/// What a store puts into a slot.
enum Stored {
    Function(FuncId),
    From(Slot),
    Nothing,
    Unknown,
}

/// Why a slot is open (the first reason seen), for `relay callgraph`.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Opened {
    /// Its address is taken (`&x->fn`, an array decaying to a pointer).
    AddressTaken,
    /// It is written with a value that is no function, constant or slot (arithmetic, a load
    /// from a place that is not a slot).
    UnknownStore,
    /// It receives an indirect call's result.
    IndirectCallResult,
    /// It is an `asm` output.
    Asm,
    /// A formal of a function called through pointers.
    CalledThroughPointer,
    /// It is read, but no store into it is seen (a body-less function's result, a formal of a
    /// function nothing calls directly).
    NeverStored,
    /// It receives another open slot's values.
    FedByOpen,
}

impl Opened {
    pub fn describe(self) -> &'static str {
        match self {
            Opened::AddressTaken => "address taken",
            Opened::UnknownStore => "unknown value stored",
            Opened::IndirectCallResult => "indirect call's result",
            Opened::Asm => "asm output",
            Opened::CalledThroughPointer => "formal of a function called through pointers",
            Opened::NeverStored => "read, never stored",
            Opened::FedByOpen => "copied from an open slot",
        }
    }
}

impl Slot {
    pub fn kind(self) -> &'static str {
        match self {
            Slot::Member(..) => "member",
            Slot::Global(_) => "global",
            Slot::Local(..) => "local",
            Slot::Return(_) => "return",
        }
    }
}

/// What a member holds, by its slot ([`SlotTargets::member_stores`]).
pub enum MemberStores<'a> {
    /// Not a slot (a union's member, or not of a type that holds functions): not tracked.
    NotASlot,
    /// A slot no store into is seen (nor a copy from it, nor its address taken).
    NoStore,
    /// A slot written in ways not seen.
    Open,
    /// The functions stored, sorted.
    Closed(&'a [FuncId]),
}

/// The targets of each slot: `None` if open.
#[derive(Default)]
pub struct SlotTargets {
    slots: FxHashMap<Slot, Option<Box<[FuncId]>>>,
    /// Why each open slot is open.
    opened: FxHashMap<Slot, Opened>,
    /// The open slot each [`Opened::FedByOpen`] slot was opened by.
    fed_by: FxHashMap<Slot, Slot>,
    /// The program's stores were scanned (not the `Default` of `--no-signature-filter`, which
    /// filters nothing).
    scanned: bool,
    /// The program is whole (`--closed-world`): a member no store into is seen holds no
    /// function, and a call through it reaches none.
    closed_world: bool,
}

impl SlotTargets {
    /// Scans every store of the program and closes the slots' target sets under copies. In a
    /// whole program (`closed_world`), a member no store into is seen holds no function.
    pub fn new(program: &Program, closed_world: bool) -> SlotTargets {
        let mut scan = Scan {
            program,
            direct: FxHashMap::default(),
            flows: FxHashMap::default(),
            address_taken: FxHashSet::default(),
            parked: Vec::new(),
            read_globals: FxHashSet::default(),
            opened: FxHashMap::default(),
            closed_world,
        };
        scan.program();
        scan.solve()
    }

    /// The functions a call through `callee` (in `caller`) may reach, sorted, if `callee` is a
    /// load from a slot that is closed — none through a member no store into is seen, in a
    /// whole program —; `None` (no filtering) otherwise.
    pub fn call_targets(
        &self,
        program: &Program,
        caller: FuncId,
        callee: &Expr,
    ) -> Option<&[FuncId]> {
        let Expr::Load(lv) = callee.strip_casts() else {
            return None;
        };
        let slot = slot_of(program, caller, lv)?;
        match self.slots.get(&slot) {
            Some(targets) => targets.as_deref(),
            None if self.scanned && unseen_holds_nothing(self.closed_world, slot) => Some(&[]),
            None => None,
        }
    }

    /// What the program stores into member `name` of a `record` object (through anonymous
    /// members, as the lowering names them).
    pub fn member_stores(
        &self,
        program: &Program,
        record: RecordId,
        name: Name,
    ) -> MemberStores<'_> {
        let types = &program.types;
        let slot = member_slot(types, record, name)
            .filter(|&(_, ty)| self.scanned && holds_function_pointers(types, ty));
        let Some((slot, _)) = slot else {
            return MemberStores::NotASlot;
        };
        match self.slots.get(&slot) {
            None => MemberStores::NoStore,
            Some(None) => MemberStores::Open,
            Some(Some(stored)) => MemberStores::Closed(stored),
        }
    }

    /// Number of slots, and of open ones (statistics).
    pub fn counts(&self) -> (usize, usize) {
        let open = self.slots.values().filter(|t| t.is_none()).count();
        (self.slots.len(), open)
    }

    /// Where a call through `callee` (in `caller`) loads its pointer from, and what that slot
    /// holds: `through member ops.read (closed: 3 functions)`, `… (open: address taken)`; or
    /// `not through a slot`. For `relay callgraph`.
    pub fn describe_call(&self, program: &Program, caller: FuncId, callee: &Expr) -> String {
        let slot = match callee.strip_casts() {
            Expr::Load(lv) => slot_of(program, caller, lv),
            _ => None,
        };
        let Some(slot) = slot else {
            return "not through a slot".into();
        };
        let holds = match (self.slots.get(&slot), self.opened.get(&slot)) {
            (Some(Some(targets)), _) => format!("closed: {} functions", targets.len()),
            (Some(None), Some(Opened::FedByOpen)) => match self.origin(slot) {
                Some((from, why)) => format!(
                    "open: copied from {}, {}",
                    place(program, from),
                    why.describe()
                ),
                None => format!("open: {}", Opened::FedByOpen.describe()),
            },
            (Some(None), Some(why)) => format!("open: {}", why.describe()),
            (Some(None), None) => "open".into(),
            (None, _) => "no store seen".into(),
        };
        format!("through {} ({holds})", place(program, slot))
    }

    /// The slot opened for a reason of its own that `slot`'s openness was copied from, with
    /// that reason (the chain is followed a bounded number of steps).
    fn origin(&self, mut slot: Slot) -> Option<(Slot, Opened)> {
        for _ in 0..1024 {
            slot = *self.fed_by.get(&slot)?;
            match self.opened.get(&slot)? {
                Opened::FedByOpen => continue,
                why => return Some((slot, *why)),
            }
        }
        None
    }

    /// Open slots by kind and reason, sorted.
    pub fn open_reasons(&self) -> Vec<(&'static str, Opened, usize)> {
        let mut counts: FxHashMap<(&'static str, Opened), usize> = FxHashMap::default();
        for (slot, why) in &self.opened {
            *counts.entry((slot.kind(), *why)).or_default() += 1;
        }
        let mut v: Vec<_> = counts.into_iter().map(|((k, w), n)| (k, w, n)).collect();
        v.sort_unstable();
        v
    }
}

/// A slot, named for a reader: `member ops.read`, `global hooks`, `a local of f`, `what f
/// returns`.
fn place(program: &Program, slot: Slot) -> String {
    match slot {
        Slot::Member(tag, name) => {
            let tag = match tag {
                Tag::Named(n) => program.names.get(n).to_string(),
                Tag::Anonymous(_) => "<anonymous>".into(),
            };
            format!("member {tag}.{}", program.names.get(name))
        }
        Slot::Global(g) => format!("global {}", program.global_name(g)),
        Slot::Local(f, _) => format!("a local of {}", program.function_label(f)),
        Slot::Return(f) => format!("what {} returns", program.function_label(f)),
    }
}

/// Whether `slot`, when no store into it is seen, holds no function: a member of a whole
/// program (`--closed-world`; MLTA's rule — a `memcpy` from another type is not seen).
fn unseen_holds_nothing(closed_world: bool, slot: Slot) -> bool {
    closed_world && matches!(slot, Slot::Member(..))
}

/// Whether `ty` can hold a function's address: a function pointer, `void *` (the type of
/// `cond ? f : NULL` and of generic callback slots), or an array (of arrays) of them.
pub fn holds_function_pointers(types: &TypeTable, mut ty: TypeId) -> bool {
    loop {
        match types.kind(ty) {
            TypeKind::Array { elem, .. } => ty = *elem,
            TypeKind::Pointer(p) => {
                return matches!(types.kind(*p), TypeKind::Function { .. } | TypeKind::Void)
            }
            _ => return false,
        }
    }
}

/// `*(T *)&x` is `x` (`READ_ONCE(ops->fn)`, `WRITE_ONCE(p->cb, f)`): the lvalue with such
/// hosts replaced by what they point to.
fn see_through(lv: &Lval) -> std::borrow::Cow<'_, Lval> {
    let Host::Mem(e) = &lv.host else {
        return std::borrow::Cow::Borrowed(lv);
    };
    let Expr::AddrOf(inner) = e.strip_casts() else {
        return std::borrow::Cow::Borrowed(lv);
    };
    let mut merged = see_through(inner).into_owned();
    merged.offsets.extend(lv.offsets.iter().cloned());
    std::borrow::Cow::Owned(merged)
}

/// Whether `e` is a constant (`NULL`, `(void *)~0L`): it stores no function.
fn is_constant(e: &Expr) -> bool {
    match e {
        Expr::Const(_) | Expr::SizeOf(_) | Expr::AlignOf(_) => true,
        Expr::Unary(_, a) | Expr::Cast(_, a) => is_constant(a),
        Expr::Binary(_, a, b) => is_constant(a) && is_constant(b),
        _ => false,
    }
}

/// The slot `lv` designates (trailing indexes dropped: `ops->arr[i]` is `ops.arr`), if it is
/// one: a struct member, global or local of function-pointer type.
fn slot_of(program: &Program, func: FuncId, lv: &Lval) -> Option<Slot> {
    let types = &program.types;
    let lv = &*see_through(lv);
    let offsets = match lv
        .offsets
        .iter()
        .rposition(|o| matches!(o, Offset::Field { .. }))
    {
        Some(i) => &lv.offsets[..=i],
        None if lv.offsets.iter().all(|o| matches!(o, Offset::Index(_))) => &[][..],
        None => return None,
    };
    let (slot, ty) = match (offsets.last(), &lv.host) {
        (Some(Offset::Field { record, name }), _) => member_slot(types, *record, *name)?,
        (_, Host::Var(VarRef::Global(g))) => {
            (Slot::Global(*g), program.globals.get(g.index())?.global.ty)
        }
        (_, Host::Var(VarRef::Local(l))) => {
            let body = program.functions.get(func.index())?.body.as_ref()?;
            (Slot::Local(func, *l), body.locals.get(l.index())?.ty)
        }
        _ => return None,
    };
    holds_function_pointers(types, ty).then_some(slot)
}

/// The slot of member `name` of a `record` object and the member's type: by the tag of the
/// record that declares it (an anonymous member's own record); none for a union's member
/// (another member of the union may write it).
fn member_slot(types: &TypeTable, record: RecordId, name: Name) -> Option<(Slot, TypeId)> {
    let (r, i) = *types.find_field(record, name)?.last()?;
    let rec = types.record(r);
    if rec.kind == RecordKind::Union {
        return None;
    }
    Some((Slot::Member(Tag::of(types, r), name), rec.fields.get(i)?.ty))
}

struct Scan<'p> {
    program: &'p Program,
    /// Functions stored directly into each slot; `None`: open.
    direct: FxHashMap<Slot, Option<FxHashSet<FuncId>>>,
    /// `flows[a]`: slots that receive `a`'s values.
    flows: FxHashMap<Slot, Vec<Slot>>,
    /// Functions whose address is used other than to call them directly or to park it in a
    /// global slot.
    address_taken: FxHashSet<FuncId>,
    /// Functions whose address is stored into a global slot (`__ADDRESSABLE(f)`, the kernel's
    /// `EXPORT_SYMBOL`): taken only if the global is read.
    parked: Vec<(GlobalId, FuncId)>,
    /// Globals whose value or address is used.
    read_globals: FxHashSet<GlobalId>,
    /// Why each slot opened directly is open.
    opened: FxHashMap<Slot, Opened>,
    /// [`SlotTargets::closed_world`].
    closed_world: bool,
}

impl Scan<'_> {
    fn program(&mut self) {
        let program = self.program;
        // Initialisers belong to no function; no local appears in them.
        let owner = FuncId(u32::MAX);
        for g in &program.globals {
            for instr in &g.global.init {
                self.instr(owner, instr);
            }
        }
        for (fi, f) in program.functions.iter().enumerate() {
            let Some(body) = &f.body else { continue };
            let fid = FuncId(fi as u32);
            for block in &body.blocks {
                for instr in &block.instrs {
                    self.instr(fid, instr);
                }
                self.terminator(fid, &block.term);
            }
        }
        // A function called through a pointer takes values from calls not seen here. Its
        // address parked in a global nobody reads reaches no call.
        let mut taken = std::mem::take(&mut self.address_taken);
        taken.extend(
            self.parked
                .iter()
                .filter(|(g, _)| self.read_globals.contains(g))
                .map(|&(_, f)| f),
        );
        for f in taken {
            for p in self.program.functions[f.index()]
                .body
                .iter()
                .flat_map(|b| &b.params)
            {
                self.open_lval(
                    f,
                    &Lval::var(VarRef::Local(*p)),
                    Opened::CalledThroughPointer,
                );
            }
        }
    }

    fn instr(&mut self, func: FuncId, instr: &Instr) {
        match instr {
            Instr::Assign { dst, src, .. } => {
                self.lval(func, dst);
                let Some(s) = slot_of(self.program, func, dst) else {
                    self.expr(func, src);
                    return;
                };
                let stored = self.stored(func, src);
                match (s, &stored) {
                    (Slot::Global(g), &Stored::Function(f)) => self.parked.push((g, f)),
                    _ => self.expr(func, src),
                }
                self.store(s, stored);
            }
            Instr::Call {
                dst, callee, args, ..
            } => {
                let direct = match callee.strip_casts() {
                    Expr::Func(FuncRef::Linked(g)) => Some(*g),
                    _ => None,
                };
                if let Some(d) = dst {
                    self.lval(func, d);
                    if let Some(s) = slot_of(self.program, func, d) {
                        // What an indirect call returns is not seen.
                        match direct {
                            Some(g) => self.store(s, Stored::From(Slot::Return(g))),
                            None => self.open(s, Opened::IndirectCallResult),
                        }
                    }
                }
                match direct {
                    Some(g) => self.pass_arguments(func, g, args),
                    None => self.expr(func, callee),
                }
                args.iter().for_each(|a| self.expr(func, a));
            }
            Instr::Asm {
                outputs, inputs, ..
            } => {
                for o in outputs {
                    self.lval(func, o);
                    self.open_lval(func, o, Opened::Asm);
                }
                inputs.iter().for_each(|i| self.expr(func, i));
            }
        }
    }

    /// A direct call stores its arguments into the callee's formals.
    fn pass_arguments(&mut self, func: FuncId, callee: FuncId, args: &[Expr]) {
        let program = self.program;
        let Some(body) = program
            .functions
            .get(callee.index())
            .and_then(|f| f.body.as_ref())
        else {
            return;
        };
        for (&p, arg) in body.params.iter().zip(args) {
            if let Some(s) = slot_of(program, callee, &Lval::var(VarRef::Local(p))) {
                let stored = self.stored(func, arg);
                self.store(s, stored);
            }
        }
    }

    fn terminator(&mut self, func: FuncId, t: &Terminator) {
        if let Terminator::Return { value: Some(e), .. } = t {
            self.store_return(func, e);
        }
        match t {
            Terminator::Branch { cond: e, .. }
            | Terminator::Switch { value: e, .. }
            | Terminator::Return { value: Some(e), .. }
            | Terminator::IndirectGoto { target: e, .. } => self.expr(func, e),
            _ => {}
        }
    }

    /// `return e;` stores `e` into the function's return slot, if it returns a type that can
    /// hold a function's address. A call reading a return slot no `return` stores into (a
    /// body-less function's) gets an open slot.
    fn store_return(&mut self, func: FuncId, e: &Expr) {
        let types = &self.program.types;
        let Some(f) = self.program.functions.get(func.index()) else {
            return;
        };
        if let TypeKind::Function { ret, .. } = types.kind(f.ty) {
            if holds_function_pointers(types, *ret) {
                let stored = self.stored(func, e);
                self.store(Slot::Return(func), stored);
            }
        }
    }

    fn stored(&self, func: FuncId, src: &Expr) -> Stored {
        match src.strip_casts() {
            Expr::Func(FuncRef::Linked(f)) => Stored::Function(*f),
            e if is_constant(e) => Stored::Nothing,
            Expr::Load(lv) => match slot_of(self.program, func, lv) {
                Some(s) => Stored::From(s),
                None => Stored::Unknown,
            },
            _ => Stored::Unknown,
        }
    }

    fn store(&mut self, slot: Slot, stored: Stored) {
        match stored {
            Stored::Function(f) => {
                if let Some(set) = self
                    .direct
                    .entry(slot)
                    .or_insert_with(|| Some(Default::default()))
                {
                    set.insert(f);
                }
            }
            Stored::From(from) => {
                self.direct
                    .entry(slot)
                    .or_insert_with(|| Some(Default::default()));
                self.flows.entry(from).or_default().push(slot);
            }
            Stored::Nothing => {
                self.direct
                    .entry(slot)
                    .or_insert_with(|| Some(Default::default()));
            }
            Stored::Unknown => self.open(slot, Opened::UnknownStore),
        }
    }

    fn open(&mut self, slot: Slot, why: Opened) {
        self.direct.insert(slot, None);
        self.opened.entry(slot).or_insert(why);
    }

    fn open_lval(&mut self, func: FuncId, lv: &Lval, why: Opened) {
        if let Some(s) = slot_of(self.program, func, lv) {
            self.open(s, why);
        }
    }

    /// Walks an lvalue's sub-expressions (its address and indexes).
    fn lval(&mut self, func: FuncId, lv: &Lval) {
        if let Host::Mem(e) = &lv.host {
            match e.strip_casts() {
                // `*&x` reads or writes `x`: its address does not escape.
                Expr::AddrOf(inner) => self.lval(func, inner),
                _ => self.expr(func, e),
            }
        }
        for off in &lv.offsets {
            if let Offset::Index(e) = off {
                self.expr(func, e);
            }
        }
    }

    /// Notes a global read (or whose address is taken) by `lv`, `*(T *)&g` included.
    fn mark_read(&mut self, lv: &Lval) {
        if let Host::Var(VarRef::Global(g)) = &see_through(lv).host {
            self.read_globals.insert(*g);
        }
    }

    /// Opens every slot whose address the expression takes.
    fn expr(&mut self, func: FuncId, e: &Expr) {
        match e {
            Expr::AddrOf(lv) | Expr::StartOf(lv) => {
                self.mark_read(lv);
                self.open_lval(func, lv, Opened::AddressTaken);
                self.lval(func, lv);
            }
            Expr::Load(lv) => {
                self.mark_read(lv);
                self.lval(func, lv);
            }
            Expr::Unary(_, a) | Expr::Cast(_, a) => self.expr(func, a),
            Expr::Binary(_, a, b) => {
                self.expr(func, a);
                self.expr(func, b);
            }
            Expr::Func(FuncRef::Linked(f)) => {
                self.address_taken.insert(*f);
            }
            Expr::Const(_)
            | Expr::Func(_)
            | Expr::Label(_)
            | Expr::SizeOf(_)
            | Expr::AlignOf(_)
            | Expr::Unknown => {}
        }
    }

    /// Closes the direct sets under the flows: a slot's targets include those of every slot
    /// stored into it; a slot fed by an open slot is open.
    fn solve(self) -> SlotTargets {
        let Scan {
            mut direct,
            flows,
            mut opened,
            closed_world,
            ..
        } = self;
        // A slot read but never stored to is written in a way not seen: open — but for a
        // member of a whole program, which holds nothing.
        for from in flows.keys() {
            direct.entry(*from).or_insert_with(|| {
                if unseen_holds_nothing(closed_world, *from) {
                    return Some(FxHashSet::default());
                }
                opened.insert(*from, Opened::NeverStored);
                None
            });
        }
        let mut fed_by = FxHashMap::default();
        let mut work: Vec<Slot> = direct.keys().copied().collect();
        while let Some(from) = work.pop() {
            let Some(succs) = flows.get(&from) else {
                continue;
            };
            let src = direct.get(&from).cloned().flatten();
            for &to in succs {
                let changed = match (&src, direct.get_mut(&to)) {
                    (_, None) | (_, Some(None)) => false,
                    (None, Some(t)) => {
                        *t = None;
                        if let std::collections::hash_map::Entry::Vacant(e) = opened.entry(to) {
                            e.insert(Opened::FedByOpen);
                            fed_by.insert(to, from);
                        }
                        true
                    }
                    (Some(s), Some(Some(t))) => {
                        let before = t.len();
                        t.extend(s.iter().copied());
                        t.len() != before
                    }
                };
                if changed {
                    work.push(to);
                }
            }
        }
        let slots = direct
            .into_iter()
            .map(|(s, t)| {
                let t = t.map(|set| {
                    let mut v: Vec<FuncId> = set.into_iter().collect();
                    v.sort_unstable();
                    v.into_boxed_slice()
                });
                (s, t)
            })
            .collect();
        SlotTargets {
            slots,
            opened,
            fed_by,
            scanned: true,
            closed_world,
        }
    }
}
