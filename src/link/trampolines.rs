//! Calls to trampolines ([`crate::models::trampolines`]) become the calls through a member that
//! they are: `__SCT__name(args)` is rewritten to `((typeof(__SCT__name) *)__SCK__name.func)(args)`.
//! This is the last step of building the program, before any analysis, so points-to, MLTA's
//! slots, the call graph and the summaries all see one indirect call, filtered like any other
//! by the trampoline's declared type.
//!
//! The key is flagged ([`crate::ir::VarFlags::call_key`]): the patched call loads nothing from
//! it, so the call records no read of the member (`__static_call_update`'s write of
//! `key->func` would pair with every `static_call()` site).
//!
//! Only body-less trampolines are rewritten (a C definition of the name is what it says), and
//! only when the program declares the key global with that member; the others stay unknown
//! externals.

use rustc_hash::FxHashMap;

use crate::ir::{Expr, FuncId, GlobalId, Host, Instr, Lval, Offset, VarRef};
use crate::link::Program;
use crate::models::Trampoline;

/// Rewrites every call to a trampoline; returns how many calls were rewritten.
pub fn rewrite(program: &mut Program, trampolines: &[Trampoline]) -> usize {
    if trampolines.is_empty() {
        return 0;
    }
    let callees = trampoline_callees(program, trampolines);
    if callees.is_empty() {
        return 0;
    }
    let mut rewritten = 0;
    for body in program.functions.iter_mut().filter_map(|f| f.body.as_mut()) {
        for ins in body.blocks.iter_mut().flat_map(|b| b.instrs.iter_mut()) {
            let Instr::Call { callee, .. } = ins else {
                continue;
            };
            if let Some(through) = callee.named_function().and_then(|f| callees.get(&f)) {
                *callee = through.clone();
                rewritten += 1;
            }
        }
    }
    rewritten
}

/// For each trampoline of the program, the expression it calls through.
fn trampoline_callees(
    program: &mut Program,
    trampolines: &[Trampoline],
) -> FxHashMap<FuncId, Expr> {
    let names = program.names.clone();
    let globals: FxHashMap<&str, GlobalId> = program
        .globals
        .iter()
        .enumerate()
        .map(|(i, g)| (names.get(g.global.name), GlobalId(i as u32)))
        .collect();
    let mut found = Vec::new();
    for (i, f) in program.functions.iter().enumerate() {
        if f.body.is_some() {
            continue;
        }
        let name = names.get(f.name);
        let Some((t, key)) = trampolines
            .iter()
            .find_map(|t| Some((t, globals.get(t.key_of(name)?.as_str())?)))
        else {
            continue;
        };
        let Some(offsets) = member_path(program, *key, &t.member) else {
            continue;
        };
        found.push((FuncId(i as u32), *key, offsets));
    }
    for &(_, key, _) in &found {
        program.globals[key.index()].global.flags.call_key = true;
    }
    found
        .into_iter()
        .map(|(f, key, offsets)| {
            let pointer = program.types.pointer_to(program.functions[f.index()].ty);
            let member = Lval {
                host: Host::Var(VarRef::Global(key)),
                offsets,
            };
            (
                f,
                Expr::Cast(pointer, Box::new(Expr::Load(Box::new(member)))),
            )
        })
        .collect()
}

/// The offsets of member `member` of the struct global `key` is (through anonymous members).
fn member_path(program: &Program, key: GlobalId, member: &str) -> Option<Vec<Offset>> {
    let types = &program.types;
    let record = types.as_record(program.globals.get(key.index())?.global.ty)?;
    let path = types.find_field(record, program.names.intern(member))?;
    Some(
        path.into_iter()
            .map(|(r, i)| Offset::Field {
                record: r,
                name: types.record(r).fields[i].name,
            })
            .collect(),
    )
}
