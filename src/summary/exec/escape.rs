//! What an instruction does with the pointers locals hold, for thread escape (`fresh.rs`) and
//! for the formals' facts callers read (`Summary::formal_escapes` and its neighbours).
//!
//! A pointer *escapes* when its value is used other than as the base of a dereference (`p->f`,
//! `*(p + i)`), as an argument a callee keeps nothing of, or in a branch condition: stored,
//! copied, passed on, returned. `&p->f` carries `p`'s value (a pointer into its object).
//!
//! Self-references. Storing a pointer into the object it points into (`p->next = p`,
//! `p->cur = p->buf`, the kernel's `INIT_LIST_HEAD(&p->list)`) is no escape: whoever reaches
//! the object reached it already. But the object then holds pointers to itself, and a value
//! loaded from it (`t = p->next`) may be one: for an object that may hold such pointers, a
//! loaded value that is kept (stored, copied, passed on, returned) is an escape.

use super::FnAnalysis;
use crate::ir::types::AliasClass;
use crate::ir::*;

/// What one instruction does with the pointers the locals hold.
#[derive(Default)]
pub(super) struct PointerUses {
    /// Locals whose value escapes.
    pub escaped: Vec<LocalId>,
    /// Locals whose value is stored inside their own object (or handed to a callee's formal
    /// that may do that): the object may hold pointers to itself.
    pub self_referenced: Vec<LocalId>,
    /// Locals whose object a value is loaded from and kept: one of its pointers to itself, if
    /// it holds any.
    pub loaded: Vec<LocalId>,
    /// The instruction allocates into its destination.
    pub allocates: bool,
}

/// Per formal, what the function may do with the object its incoming value points to.
pub(super) struct FormalFacts {
    /// The value escapes.
    pub escapes: Vec<bool>,
    /// The object may be made to hold pointers to itself.
    pub self_refs: Vec<bool>,
    /// A value loaded from the object (or from what it leads to) is kept: if the object holds
    /// pointers to itself, it may escape that way.
    pub loads_escape: Vec<bool>,
}

impl FnAnalysis<'_> {
    pub(super) fn pointer_uses(&self, instr: &Instr) -> PointerUses {
        let mut uses = PointerUses::default();
        match instr {
            Instr::Assign { dst, src, .. } => {
                let own = object_local(dst);
                let mut values = Vec::new();
                value_uses(src, false, &mut values);
                let mut loads = Vec::new();
                self.loaded_values(src, &mut loads);
                for l in values {
                    if Some(l) == own {
                        uses.self_referenced.push(l);
                    } else {
                        uses.escaped.push(l);
                    }
                }
                // A value loaded from the object and stored back into it (`p->cur = p->next`)
                // moves the pointers it holds to itself, if any, and adds none.
                uses.loaded
                    .extend(loads.into_iter().filter(|&l| Some(l) != own));
                lval_uses(dst, &mut uses.escaped);
            }
            Instr::Call {
                dst, callee, args, ..
            } => self.call_uses(dst.as_ref(), callee, args, &mut uses),
            Instr::Asm {
                outputs, inputs, ..
            } => {
                for e in inputs {
                    value_uses(e, false, &mut uses.escaped);
                    self.loaded_values(e, &mut uses.loaded);
                }
                for o in outputs {
                    lval_uses(o, &mut uses.escaped);
                }
            }
        }
        uses
    }

    fn call_uses(&self, dst: Option<&Lval>, callee: &Expr, args: &[Expr], uses: &mut PointerUses) {
        let g = match callee {
            Expr::Func(FuncRef::Linked(g)) => Some(*g),
            _ => None,
        };
        let model = g.and_then(|g| self.ctx.model(g));
        uses.allocates = self.allocating_call(callee, args.len());
        let summary = g.and_then(|g| self.callees.get(g));
        value_uses(callee, false, &mut uses.escaped);
        for (j, a) in args.iter().enumerate() {
            // A model keeps its arguments (thread creation excepted); a summarised callee
            // keeps those of its formals that do not escape in it.
            let (keeps, self_refs, loads_escape) = match (model, &summary) {
                (Some(m), _) => (m.thread_create.is_none(), false, m.copy.is_some()),
                (None, Some(s)) => (
                    s.formal_escapes.get(j) == Some(&false),
                    s.formal_self_refs.get(j) == Some(&true),
                    s.formal_loads_escape.get(j) != Some(&false),
                ),
                (None, None) => (false, false, true),
            };
            value_uses(a, keeps, &mut uses.escaped);
            let mut values = Vec::new();
            value_uses(a, false, &mut values);
            if self_refs {
                uses.self_referenced.extend(values.iter().copied());
            }
            if loads_escape {
                uses.loaded.extend(values);
            }
            self.loaded_values(a, &mut uses.loaded);
        }
        if let Some(d) = dst {
            lval_uses(d, &mut uses.escaped);
        }
    }

    /// [`FormalFacts`], flow-insensitively over the whole body.
    pub(super) fn formal_facts(&self) -> FormalFacts {
        let mut all = PointerUses::default();
        for block in &self.body.blocks {
            for instr in &block.instrs {
                let u = self.pointer_uses(instr);
                all.escaped.extend(u.escaped);
                all.self_referenced.extend(u.self_referenced);
                all.loaded.extend(u.loaded);
            }
            if let Terminator::Return { value: Some(v), .. } = &block.term {
                value_uses(v, false, &mut all.escaped);
                self.loaded_values(v, &mut all.loaded);
            }
        }
        let params = &self.body.params;
        let tracked = |p: &LocalId| {
            self.body
                .locals
                .get(p.index())
                .is_some_and(|l| !l.flags.address_taken)
        };
        FormalFacts {
            escapes: params
                .iter()
                .map(|p| !tracked(p) || all.escaped.contains(p))
                .collect(),
            self_refs: params
                .iter()
                .map(|p| all.self_referenced.contains(p))
                .collect(),
            loads_escape: params
                .iter()
                .map(|p| !tracked(p) || all.loaded.contains(p))
                .collect(),
        }
    }

    /// The locals whose object (or memory reached from it) a value in `e` is loaded from, `e`'s
    /// value being kept: `p->next`, `p->a->b`, `&p->next->f`. A value loaded only to be
    /// dereferenced is not kept, and neither is one whose type holds no pointer (an integer
    /// narrower than a pointer, a floating value).
    pub(super) fn loaded_values(&self, e: &Expr, out: &mut Vec<LocalId>) {
        match e {
            Expr::Load(lv) => {
                if let (Host::Mem(base), true) = (&lv.host, self.may_hold_pointer(lv)) {
                    out.extend(root_locals(base));
                }
            }
            Expr::AddrOf(lv) | Expr::StartOf(lv) => {
                if let Host::Mem(base) = &lv.host {
                    self.loaded_values(base, out);
                }
            }
            Expr::Unary(_, a) | Expr::Cast(_, a) => self.loaded_values(a, out),
            Expr::Binary(_, a, b) => {
                self.loaded_values(a, out);
                self.loaded_values(b, out);
            }
            _ => {}
        }
    }

    /// Whether the value of `lv` may be (or hold) a pointer: not an integer narrower than one,
    /// nor a floating value.
    fn may_hold_pointer(&self, lv: &Lval) -> bool {
        let program = self.ctx.program;
        let Some(t) = crate::pta::signature::lval_type(program, self.func, lv) else {
            return true;
        };
        !matches!(
            program.types.alias_class(t),
            Some(AliasClass::Int(0..=4) | AliasClass::Float(_))
        )
    }
}

/// The local whose object `lv` lies in, if its address is that local's value with no pointer
/// loaded on the way: `p->f`, `p->a.b[i]`, `*(T *)&p->f`, `*(p + 1)`.
pub(super) fn object_local(lv: &Lval) -> Option<LocalId> {
    let Host::Mem(base) = &lv.host else {
        return None;
    };
    let mut e: &Expr = base;
    loop {
        match e {
            Expr::Load(inner) if inner.offsets.is_empty() => {
                return match inner.host {
                    Host::Var(VarRef::Local(l)) => Some(l),
                    _ => None,
                };
            }
            Expr::Cast(_, a) | Expr::Binary(BinOp::Add | BinOp::Sub | BinOp::PtrAdd, a, _) => e = a,
            Expr::AddrOf(inner) | Expr::StartOf(inner) => match &inner.host {
                Host::Mem(base) => e = base,
                Host::Var(_) => return None,
            },
            _ => return None,
        }
    }
}

/// Locals whose value `e` uses; `as_base`: the value is dereferenced (or passed to a callee
/// that keeps nothing), which does not let it escape.
pub(super) fn value_uses(e: &Expr, as_base: bool, out: &mut Vec<LocalId>) {
    match e {
        Expr::Load(lv) => {
            if let (Host::Var(VarRef::Local(l)), true, false) =
                (&lv.host, lv.offsets.is_empty(), as_base)
            {
                out.push(*l);
            }
            lval_uses(lv, out);
        }
        // `&p->f` is a pointer into `p`'s object: it carries `p`'s value.
        Expr::AddrOf(lv) | Expr::StartOf(lv) => {
            if let Host::Mem(base) = &lv.host {
                value_uses(base, as_base, out);
            }
            index_uses(lv, out);
        }
        Expr::Unary(_, a) | Expr::Cast(_, a) => value_uses(a, as_base, out),
        Expr::Binary(_, a, b) => {
            value_uses(a, as_base, out);
            value_uses(b, as_base, out);
        }
        _ => {}
    }
}

/// The locals an address expression starts from, through any number of loads
/// (`p`, `p->next`, `(T *)p + 1`).
fn root_locals(e: &Expr) -> Vec<LocalId> {
    let mut out = Vec::new();
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match e {
            Expr::Load(lv) | Expr::AddrOf(lv) | Expr::StartOf(lv) => match &lv.host {
                Host::Var(VarRef::Local(l)) => out.push(*l),
                Host::Var(VarRef::Global(_)) => {}
                Host::Mem(base) => stack.push(base),
            },
            Expr::Unary(_, a) | Expr::Cast(_, a) => stack.push(a),
            Expr::Binary(_, a, b) => {
                stack.push(a);
                stack.push(b);
            }
            _ => {}
        }
    }
    out
}

/// Locals used in computing an lvalue's address: its base pointer is dereferenced.
pub(super) fn lval_uses(lv: &Lval, out: &mut Vec<LocalId>) {
    if let Host::Mem(e) = &lv.host {
        value_uses(e, true, out);
    }
    index_uses(lv, out);
}

/// Locals whose value an lvalue's indexes use.
fn index_uses(lv: &Lval, out: &mut Vec<LocalId>) {
    for o in &lv.offsets {
        if let Offset::Index(e) = o {
            value_uses(e, false, out);
        }
    }
}
