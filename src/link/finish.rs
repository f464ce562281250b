//! [`Linker::finish`]: the provisional symbols become the program — globals and functions in
//! their deterministic order (see the module documentation of [`super`]), duplicates counted,
//! and every provisional id in bodies, globals and diagnostics rewritten to the program's.

use std::sync::Arc;

use rayon::prelude::*;

use super::types::FinalTypes;
use super::{
    FnSym, GSym, LinkStats, LinkedUnit, Linker, Program, ProgramFunction, ProgramGlobal, NONE,
};
use crate::ir::names::Names;
use crate::ir::rename::{Renamer, UsedNames, UNMAPPED};
use crate::ir::types::TypeTable;
use crate::ir::visit::{self, VisitMut};
use crate::ir::{Const, Expr, FuncRef, Linkage, Loc, RecordId, TypeId, VarRef};

/// The key functions are ordered by: (unit, 0, index) of the kept definition, (unit, 1, index)
/// of the first declaration, (unit, 2, n) of the first reference.
type FnOrder = Vec<((u32, u8, u32), u32)>;

impl Linker {
    pub fn finish(self) -> Program {
        let Linker {
            names,
            mut units,
            mut fn_syms,
            gsyms,
            files,
            strings,
            mut types,
            definitions,
            skipped_copies,
            ..
        } = self;
        units.sort_by_key(|u| u.index);
        assert!(
            units.windows(2).all(|w| w[0].index < w[1].index),
            "a unit index was added twice"
        );
        let indices: Vec<u32> = units.iter().map(|u| u.index).collect();
        let pos = |index: u32| indices.binary_search(&index).expect("unit") as u32;

        let (mut globals, gmap) = order_globals(gsyms, &pos);
        let ref_first = first_references(&mut fn_syms, &mut globals, &units);
        let (forder, fmap) = order_functions(&fn_syms, &ref_first);
        let mut stats = LinkStats {
            units: units.len(),
            definitions,
            globals: globals.len(),
            ..LinkStats::default()
        };
        count_duplicates(&fn_syms, &mut stats);
        // Each skipped copy is one more copy of a symbol whose kept copy another unit gave.
        stats.duplicates_removed += skipped_copies;
        let mut functions =
            program_functions(fn_syms, &forder, &pos, &mut || types.table.unknown());
        stats.functions_defined = functions.iter().filter(|f| f.body.is_some()).count();
        stats.externals = functions.len() - stats.functions_defined;

        let mut rw = FinalRewrite {
            fmap,
            gmap,
            files: FinalTable::new(files.list),
            strings: FinalTable::new(strings.list),
            types: FinalTypes::new(types),
        };
        rw.program(&mut globals, &mut functions, &mut units);
        let mut types = rw.types.finish();
        let names = canonical_names(&names, &mut types, &mut globals, &mut functions);
        Program {
            names,
            files: rw.files.out,
            strings: rw.strings.out,
            types,
            units,
            globals,
            functions,
            stats,
        }
    }
}

/// Globals in (unit, index) order of their representative, and the map from global symbols to
/// their ids.
fn order_globals(gsyms: Vec<GSym>, pos: &impl Fn(u32) -> u32) -> (Vec<ProgramGlobal>, Vec<u32>) {
    let mut order: Vec<(u32, u32, usize)> = gsyms
        .iter()
        .enumerate()
        .filter_map(|(s, g)| g.best.as_ref().map(|b| (b.unit, b.idx, s)))
        .collect();
    order.sort_unstable();
    let mut gmap = vec![NONE; gsyms.len()];
    for (id, &(_, _, s)) in order.iter().enumerate() {
        gmap[s] = id as u32;
    }
    let mut gsyms: Vec<Option<GSym>> = gsyms.into_iter().map(Some).collect();
    let globals = order
        .iter()
        .filter_map(|&(_, _, s)| {
            let sym = gsyms[s].take()?;
            let held = sym.best?;
            let mut global = held.global;
            global.defined = sym.defined;
            global.flags = sym.flags;
            Some(ProgramGlobal {
                unit: pos(held.unit),
                global,
            })
        })
        .collect();
    (globals, gmap)
}

/// Per function symbol referenced by kept bodies but neither defined nor declared anywhere:
/// the (unit, order) of its first reference.
fn first_references(
    fn_syms: &mut [FnSym],
    globals: &mut [ProgramGlobal],
    units: &[LinkedUnit],
) -> Vec<Option<(u32, u32)>> {
    let ref_only: Vec<bool> = fn_syms
        .iter()
        .map(|s| s.def.is_none() && s.decl.is_none())
        .collect();
    let mut first: Vec<Option<(u32, u32)>> = vec![None; fn_syms.len()];
    if !ref_only.iter().any(|&r| r) {
        return first;
    }
    let mut defs: Vec<(u32, u32, usize)> = fn_syms
        .iter()
        .enumerate()
        .filter_map(|(s, f)| f.def.as_ref().map(|d| (d.unit, d.idx, s)))
        .collect();
    defs.sort_unstable();
    let mut scan = RefScan {
        ref_only: &ref_only,
        first: &mut first,
        unit: 0,
        seq: 0,
    };
    for g in globals.iter_mut() {
        scan.unit = units[g.unit as usize].index;
        visit::walk_global_mut(&mut scan, &mut g.global);
    }
    for (unit, _, s) in defs {
        scan.unit = unit;
        if let Some(def) = fn_syms[s].def.as_mut() {
            visit::walk_function_mut(&mut scan, &mut def.func);
        }
    }
    first
}

/// Functions in (unit, kind, index) order ([`FnOrder`]), and the map from function symbols to
/// their ids.
fn order_functions(fn_syms: &[FnSym], ref_first: &[Option<(u32, u32)>]) -> (FnOrder, Vec<u32>) {
    let mut order: FnOrder = Vec::new();
    for (s, sym) in fn_syms.iter().enumerate() {
        let key = if let Some(d) = &sym.def {
            (d.unit, 0, d.idx)
        } else if let Some((u, i, _)) = sym.decl {
            (u, 1, i)
        } else if let Some((u, seq)) = ref_first[s] {
            (u, 2, seq)
        } else {
            continue;
        };
        order.push((key, s as u32));
    }
    order.sort_unstable();
    let mut fmap = vec![NONE; fn_syms.len()];
    for (id, &(_, s)) in order.iter().enumerate() {
        fmap[s as usize] = id as u32;
    }
    (order, fmap)
}

/// Identical copies removed and conflicting external definitions.
fn count_duplicates(fn_syms: &[FnSym], stats: &mut LinkStats) {
    for sym in fn_syms {
        if sym.internal {
            stats.duplicates_removed += sym.copies.saturating_sub(1) as usize;
        } else if let Some(kept) = &sym.def {
            // The kept definition is among `def_hashes`; every other one was dropped.
            let equal = sym
                .def_hashes
                .iter()
                .filter(|h| h.is_some() && **h == kept.hash)
                .count();
            let identical = equal.saturating_sub(1);
            let dropped = sym.def_hashes.len().saturating_sub(1);
            stats.duplicates_removed += identical;
            stats.conflicts += dropped - identical;
        }
    }
}

/// The program's functions in `order`: the kept definition, else the first declaration, else a
/// body-less entry of unknown type (interned only when needed: the type table is the program's).
fn program_functions(
    fn_syms: Vec<FnSym>,
    order: &FnOrder,
    pos: &impl Fn(u32) -> u32,
    unknown: &mut impl FnMut() -> TypeId,
) -> Vec<ProgramFunction> {
    let mut fn_syms: Vec<Option<FnSym>> = fn_syms.into_iter().map(Some).collect();
    order
        .iter()
        .filter_map(|&((unit, _, _), s)| {
            let sym = fn_syms[s as usize].take()?;
            let unit = pos(unit);
            let (linkage, ty, body) = match (sym.def, sym.decl) {
                (Some(d), _) => (d.func.linkage, d.func.ty, Some(d.func)),
                (None, Some((_, _, ty))) => (Linkage::External, ty, None),
                (None, None) => (Linkage::External, unknown(), None),
            };
            Some(ProgramFunction {
                name: sym.name,
                unit,
                linkage,
                ty,
                body,
            })
        })
        .collect()
}

/// Finds the symbols referenced by kept bodies that have neither a definition nor a declaration.
struct RefScan<'a> {
    ref_only: &'a [bool],
    first: &'a mut [Option<(u32, u32)>],
    unit: u32,
    seq: u32,
}

impl VisitMut for RefScan<'_> {
    fn expr(&mut self, e: &mut Expr) {
        if let Expr::Func(FuncRef::Linked(f)) = e {
            let i = f.index();
            if self.ref_only.get(i) == Some(&true) && self.first[i].is_none() {
                self.first[i] = Some((self.unit, self.seq));
                self.seq += 1;
            }
        }
    }
}

/// A provisional table mapped to the program's on first use.
struct FinalTable {
    prov: Vec<String>,
    map: Vec<u32>,
    out: Vec<String>,
}

impl FinalTable {
    fn new(prov: Vec<String>) -> Self {
        FinalTable {
            map: vec![NONE; prov.len()],
            prov,
            out: Vec::new(),
        }
    }
    fn map(&mut self, i: u32) -> u32 {
        let Some(m) = self.map.get_mut(i as usize) else {
            return NONE;
        };
        if *m == NONE {
            *m = self.out.len() as u32;
            self.out.push(std::mem::take(&mut self.prov[i as usize]));
        }
        *m
    }
}

/// Rewrites provisional ids to program ids.
struct FinalRewrite {
    fmap: Vec<u32>,
    gmap: Vec<u32>,
    files: FinalTable,
    strings: FinalTable,
    types: FinalTypes,
}

impl VisitMut for FinalRewrite {
    fn expr(&mut self, e: &mut Expr) {
        match e {
            Expr::Func(FuncRef::Linked(f)) => {
                f.0 = self.fmap.get(f.index()).copied().unwrap_or(NONE)
            }
            Expr::Const(Const::Str(s)) => s.0 = self.strings.map(s.0),
            _ => {}
        }
    }
    fn var(&mut self, v: &mut VarRef) {
        if let VarRef::Global(g) = v {
            g.0 = self.gmap.get(g.index()).copied().unwrap_or(NONE);
        }
    }
    fn loc(&mut self, l: &mut Loc) {
        l.file = self.files.map(l.file);
    }
    fn type_id(&mut self, t: &mut TypeId) {
        *t = self.types.ty(*t);
    }
    fn record_id(&mut self, r: &mut RecordId) {
        if r.0 != NONE {
            *r = self.types.record(*r);
        }
    }
}

impl FinalRewrite {
    /// Rewrites every global, function and diagnostic to program ids.
    fn program(
        &mut self,
        globals: &mut [ProgramGlobal],
        functions: &mut [ProgramFunction],
        units: &mut [LinkedUnit],
    ) {
        for g in globals {
            visit::walk_global_mut(self, &mut g.global);
        }
        for f in functions {
            match &mut f.body {
                Some(body) => {
                    visit::walk_function_mut(self, body);
                    f.ty = body.ty;
                }
                None => f.ty = self.types.ty(f.ty),
            }
        }
        for u in units {
            for d in &mut u.diagnostics {
                self.loc(&mut d.loc);
            }
        }
    }
}

/// The program's names renumbered in the order of their strings, with every name in the
/// program renamed. Units reach the interner in whatever order their threads run, and name ids
/// order members in paths, so locksets and summaries' accesses: numbered by string, they are
/// the same in every run.
fn canonical_names(
    names: &Names,
    types: &mut TypeTable,
    globals: &mut [ProgramGlobal],
    functions: &mut [ProgramFunction],
) -> Arc<Names> {
    let used = used_names(names.len(), types, globals, functions);
    let mut order: Vec<(&str, u32)> = (0..names.len() as u32)
        .filter(|&i| used[i as usize])
        .map(|i| (names.get(crate::ir::Name(i)), i))
        .collect();
    order.sort_unstable();
    let canonical = Names::new();
    let mut map = vec![UNMAPPED; names.len()];
    for (s, old) in order {
        map[old as usize] = canonical.intern(s);
    }
    let map = map.as_slice();
    // Every name of the program is one of `used`: the map has them all.
    let mut r = Renamer::new(map);
    r.types(types);
    for g in globals.iter_mut() {
        r.global(&mut g.global);
    }
    r.finish().expect("every name is in the map");
    functions.par_iter_mut().for_each(|f| {
        let mut r = Renamer::new(map);
        r.name(&mut f.name);
        if let Some(body) = &mut f.body {
            r.function(body);
        }
        r.finish().expect("every name is in the map");
    });
    Arc::new(canonical)
}

/// Which of `n` names the program uses. Only those are numbered: the names a run interned
/// besides them depend on how its units were loaded (a cached unit's skipped definitions'
/// names are never interned), and must not shift the ids.
fn used_names(
    n: usize,
    types: &mut TypeTable,
    globals: &mut [ProgramGlobal],
    functions: &mut [ProgramFunction],
) -> Vec<bool> {
    let mut r = Renamer::new(UsedNames(vec![false; n]));
    r.types(types);
    for g in globals.iter_mut() {
        r.global(&mut g.global);
    }
    let UsedNames(in_data) = r.into_map().expect("every name is below n");
    functions
        .par_iter_mut()
        .fold(
            || Renamer::new(UsedNames(vec![false; n])),
            |mut r, f| {
                r.name(&mut f.name);
                if let Some(body) = &mut f.body {
                    r.function(body);
                }
                r
            },
        )
        .map(|r| r.into_map().expect("every name is below n").0)
        .reduce(
            || in_data.clone(),
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x |= y);
                a
            },
        )
}
