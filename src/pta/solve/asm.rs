//! Inline assembly's pointer flow.
//!
//! An `asm` statement's effect is opaque, but the kernel moves pointers through it all the
//! time: `RELOC_HIDE` (behind `per_cpu_ptr`) hands a pointer through an `unsigned long`
//! output, `this_cpu_read`/`this_cpu_write` read and write per-CPU pointer variables,
//! `xchg`/`cmpxchg` swap a pointer with memory, `get_current()` reads `current_task` through
//! an address operand (`"p" (&current_task)`). Without a model, an output holds nothing and a
//! dereference of it falls back to whatever the rest of its expression points to (for
//! `per_cpu_ptr`, the class of `__per_cpu_offset`, which holds every per-CPU area).
//!
//! The model: the operands of one `asm` that can carry a pointer — pointers and pointer-sized
//! integers, outputs and inputs; for an input `&v`, `v`'s value as well as its address — may
//! exchange their values. Their values are unified into one class. Integers narrower than a
//! pointer carry none (LP64), and when a pointer is handed in, an integer input beside it is an
//! offset added to it (`this_cpu_ptr`: `this_cpu_off`), as in pointer arithmetic.

use super::super::signature::{lval_type, pointer_type};
use super::Solver;
use crate::ir::*;

impl Solver<'_> {
    pub(super) fn asm(&mut self, f: FuncId, outputs: &[Lval], inputs: &[Expr]) {
        // Pointer inputs, else pointer-sized integer ones: when a pointer is handed in, an
        // integer beside it is an offset (`this_cpu_ptr`'s `this_cpu_off`), as in `p + i`.
        let (mut pointers, mut integers) = (Vec::new(), Vec::new());
        for e in inputs {
            if let Expr::AddrOf(lv) = e {
                if self.may_carry_pointer(lval_type(self.program, f, lv)) {
                    pointers.extend(self.val(f, &Expr::Load(lv.clone())));
                }
            }
            let ty = pointer_type(self.program, f, e);
            let pointer = matches!(e, Expr::AddrOf(_) | Expr::StartOf(_))
                || ty.is_some_and(|t| self.program.types.pointee(t).is_some());
            if pointer {
                pointers.extend(self.val(f, e));
            } else if self.may_carry_pointer(ty) {
                integers.extend(self.val(f, e));
            }
        }
        let values = if pointers.is_empty() {
            integers
        } else {
            pointers
        };
        let mut carriers = Vec::new();
        for lv in outputs {
            if self.may_carry_pointer(lval_type(self.program, f, lv)) {
                let l = self.loc(f, lv);
                carriers.push(self.pts(l));
            }
        }
        // Inputs flow only into outputs (an `asm` without outputs, `barrier_data(p)`, hands
        // nothing on), and a lone output exchanges its value with nothing.
        let Some(&first) = carriers.first() else {
            return;
        };
        if values.is_empty() && carriers.len() < 2 {
            return;
        }
        for v in values.into_iter().chain(carriers) {
            self.join(first, v);
        }
    }

    /// Whether a value of type `t` may hold a pointer: a pointer or a pointer-sized integer
    /// (an unknown type may).
    fn may_carry_pointer(&self, t: Option<TypeId>) -> bool {
        let types = &self.program.types;
        t.is_none_or(|t| {
            types.pointee(t).is_some() || super::external::pointer_sized_integer(types, t)
        })
    }
}
