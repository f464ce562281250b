//! The functions that may run at all.
//!
//! C gives a `static` function internal linkage: only its own unit can call it, by name or
//! through its address. One that no function that may run calls, and whose address is never
//! taken, never runs — the static inline helpers of a header that a unit does not use (every
//! kernel unit that includes `huge_mm.h` defines `vmf_insert_pfn_pmd`, which hands a
//! `struct vm_fault` to a function the defconfig does not build). What such a function would
//! do — hand callbacks to unknown code, start threads — does not happen.
//!
//! GNU extensions relay does not read can make one run all the same: a `constructor` or
//! `destructor` attribute, `cleanup(f)`, a name used inside `asm`. `--no-dead-statics` makes
//! every defined function a candidate again (README "What relay assumes").

use crate::ir::{Expr, FuncRef, Instr, Linkage};
use crate::link::Program;

/// Per function (by `FuncId`): whether it may run. Roots are the defined functions with
/// external linkage and those whose address is taken (`address_taken`, by `FuncId`), every
/// defined function when `dead_statics` is off; then whatever they call by name. Functions
/// without a body are `true` (relay does not run them either way).
pub fn may_run(program: &Program, address_taken: &[bool], dead_statics: bool) -> Vec<bool> {
    let n = program.functions.len();
    let mut runs: Vec<bool> = program
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| {
            f.body.is_none()
                || !dead_statics
                || f.linkage == Linkage::External
                || address_taken.get(i).copied().unwrap_or(true)
        })
        .collect();
    let mut work: Vec<usize> = (0..n).filter(|&i| runs[i]).collect();
    while let Some(f) = work.pop() {
        let Some(body) = &program.functions[f].body else {
            continue;
        };
        for ins in body.blocks.iter().flat_map(|b| &b.instrs) {
            let Instr::Call {
                callee: Expr::Func(FuncRef::Linked(g)),
                ..
            } = ins
            else {
                continue;
            };
            if let Some(r) = runs.get_mut(g.index()) {
                if !*r {
                    *r = true;
                    work.push(g.index());
                }
            }
        }
    }
    runs
}
