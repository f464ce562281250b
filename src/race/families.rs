//! The functions of the models' entry families ([`crate::models::EntryFamily`]) in a program:
//! by name among the defined functions; by member — the functions whose address the points-to
//! analysis may store into that member of an object of the struct (field-based mode; in the
//! insensitive mode members are not told apart and a `members` family finds nothing); and by
//! argument — the functions a call to a given function may be passed there (its points-to
//! targets, as for a thread creation's start routine).

use rustc_hash::{FxHashMap, FxHashSet};

use crate::callgraph::IndirectCalls;
use crate::ir::types::{FieldDef, RecordId, TypeKind, TypeTable};
use crate::ir::{FuncId, Instr};
use crate::link::Program;
use crate::models::{EntryFamily, FamilySwitches};
use crate::pta::confine::holds_function_pointers;
use crate::pta::PointsTo;

/// A function an entry family found.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FamilyEntry {
    pub func: FuncId,
    /// The family's name.
    pub family: String,
    /// Two instances never run at once on the object the first argument points to (the family
    /// is `non_reentrant` and the handler's first parameter points to a struct): inside that
    /// object, two instances touch two objects (a thread-private argument).
    pub own_object: bool,
}

/// Every defined function of a switched-on family, with the family's name (the first family
/// that finds a function names it), sorted by function. `trust_non_reentrant`: honour the
/// families' `non_reentrant` (off: `--reentrant-families`).
pub fn family_entries(
    program: &Program,
    pta: &PointsTo,
    families: &[EntryFamily],
    switches: &FamilySwitches,
    trust_non_reentrant: bool,
) -> Vec<FamilyEntry> {
    let mut out: Vec<FamilyEntry> = Vec::new();
    let mut seen: FxHashSet<FuncId> = FxHashSet::default();
    let defined = |f: FuncId| program.functions[f.index()].body.is_some();
    let on: Vec<&EntryFamily> = families
        .iter()
        .filter(|f| switches.is_on(&f.name))
        .collect();
    let passed = passed_to(program, pta, &on);
    for (family, passed) in on.into_iter().zip(passed) {
        let mut found: Vec<FuncId> = (0..program.functions.len() as u32)
            .map(FuncId)
            .filter(|&f| defined(f) && family.names(program.function_name(f)))
            .collect();
        for (record, member) in &family.members {
            found.extend(stored_in(program, pta, record, member).filter(|&f| defined(f)));
        }
        found.extend(passed.into_iter().filter(|&f| defined(f)));
        let own_object = family.non_reentrant && trust_non_reentrant;
        for f in found {
            if seen.insert(f) {
                out.push(FamilyEntry {
                    func: f,
                    family: family.name.clone(),
                    own_object: own_object && first_param_points_to_struct(program, f),
                });
            }
        }
    }
    out.sort();
    out
}

/// The functions stored into `record.member` of any object of a struct tagged `record`, through
/// anonymous members (`tasklet_struct.callback` is in an anonymous union); `*`: any member that
/// can hold a function's address — a function pointer or `void *` —, not
/// `file_operations.owner`, a `struct module *` whose points-to class Steensgaard merged with
/// thirteen thousand functions.
fn stored_in<'p>(
    program: &'p Program,
    pta: &'p PointsTo,
    record: &'p str,
    member: &'p str,
) -> impl Iterator<Item = FuncId> + 'p {
    let names = &program.names;
    let types = &program.types;
    types
        .records()
        .iter()
        .enumerate()
        .filter(move |(_, r)| r.tag.is_some_and(|t| names.get(t) == record))
        .flat_map(move |(i, _)| {
            let rid = RecordId(i as u32);
            members(types, rid)
                .into_iter()
                .filter(move |fd| match member {
                    "*" => holds_function_pointers(types, fd.ty),
                    _ => names.get(fd.name) == member,
                })
                .flat_map(move |fd| pta.stored_functions(program, rid, fd.name))
        })
}

/// The members of a record, those of its anonymous members included (not the anonymous members
/// themselves).
fn members(types: &TypeTable, record: RecordId) -> Vec<&FieldDef> {
    let mut out = Vec::new();
    let mut stack = vec![record];
    while let Some(r) = stack.pop() {
        for f in &types.record(r).fields {
            match types.as_record(f.ty).filter(|_| f.anonymous) {
                Some(inner) => stack.push(inner),
                None => out.push(f),
            }
        }
    }
    out
}

/// For each family, the functions passed as argument `arg` of a call to a function called
/// `function`, for every (`function`, `arg`) of its `arguments`, in the order of the calls.
fn passed_to(program: &Program, pta: &PointsTo, families: &[&EntryFamily]) -> Vec<Vec<FuncId>> {
    let mut found: Vec<Vec<FuncId>> = vec![Vec::new(); families.len()];
    // Callee name → (family, argument index): one pass over the calls serves every family.
    let mut wanted: FxHashMap<&str, Vec<(usize, usize)>> = FxHashMap::default();
    for (i, family) in families.iter().enumerate() {
        for (name, k) in &family.arguments {
            wanted.entry(name.as_str()).or_default().push((i, *k));
        }
    }
    if wanted.is_empty() {
        return found;
    }
    for (i, func) in program.functions.iter().enumerate() {
        let f = FuncId(i as u32);
        let Some(body) = &func.body else { continue };
        for ins in body.blocks.iter().flat_map(|b| &b.instrs) {
            let Instr::Call { callee, args, .. } = ins else {
                continue;
            };
            for g in pta.resolve(program, f, callee, args.len()) {
                let Some(uses) = wanted.get(program.function_name(g)) else {
                    continue;
                };
                for &(family, k) in uses {
                    if let Some(a) = args.get(k) {
                        found[family].extend(pta.function_argument(program, f, a, None));
                    }
                }
            }
        }
    }
    found
}

/// Whether `f`'s first parameter is a pointer to a struct or union (a `struct work_struct *`,
/// not the `unsigned long data` of an old-style tasklet, which two tasklets may share).
fn first_param_points_to_struct(program: &Program, f: FuncId) -> bool {
    let types = &program.types;
    match types.kind(program.functions[f.index()].ty) {
        TypeKind::Function { params, .. } => params
            .first()
            .and_then(|&p| types.pointee(p))
            .is_some_and(|t| types.as_record(t).is_some()),
        _ => false,
    }
}
