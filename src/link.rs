//! Linking: the lowered translation units become one [`Program`].
//!
//! - **Functions.** External-linkage functions are linked by name program-wide; `static` ones are
//!   keyed by (unit, name). Every `FuncRef::Named` becomes `FuncRef::Linked(FuncId)`: an internal
//!   reference goes to its unit's `static` definition (or, if the unit has none, is treated like
//!   an external one), an external reference to the program-wide definition, or to a body-less
//!   entry if the name is defined nowhere. Every name in a unit's `declared_functions` that is
//!   defined nowhere also gets a body-less entry.
//! - **Dedup.** Identical `static inline` functions from headers (same name, same content hash)
//!   are stored once: the copy of the lowest unit is kept and every unit's (unit, name) maps to it.
//!   A duplicate body is dropped in [`Linker::add`] as soon as it is known to lose, so peak memory
//!   is one copy of each distinct function plus the type tables. Two external definitions of one
//!   name: the lowest unit's is kept; a conflict is counted unless the hashes are equal.
//! - **Globals.** External globals are merged by name; the representative (whose type, location,
//!   initializer and unit are kept) is the lowest unit that defines it with a non-empty
//!   initializer, else the lowest defining unit, else the lowest declaring unit. `defined` and the
//!   [`VarFlags`] are or-ed over all units. Internal globals (file-scope `static`s and static
//!   locals) stay per unit.
//! - **Files and strings** are merged into program tables (equal strings stored once, in order of
//!   first use), and every `Loc::file` and `Const::Str` is rewritten.
//! - **Determinism.** Units may be added in any order; the program is the same. Function ids are
//!   ordered by (unit, 0, index in `functions`) of the kept definition, else (unit, 1, index in
//!   `declared_functions`) of the first declaration, else (unit, 2, n) of the first reference (a
//!   name referenced by a kept body but declared nowhere; its type is `Unknown`). Global ids are
//!   ordered by (unit, index in `globals`) of the representative.
//!
//! `unit` fields of the program index [`Program::units`], which is sorted by the unit index given
//! to [`Linker::add`] (the two coincide when the indices are `0..n`).

use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::hash_table::{Entry, HashTable};
use rustc_hash::{FxBuildHasher, FxHashMap};
use serde::{Deserialize, Serialize};

use crate::ir::names::Names;
use crate::ir::print::Printer;
use crate::ir::types::TypeTable;
use crate::ir::visit::{self, VisitMut};
use crate::ir::{
    Const, Expr, FuncId, FuncRef, Function, Global, GlobalId, Linkage, Loc, LowerDiagnostic, Name,
    TypeId, UnitIr, VarFlags, VarRef,
};

/// Marks an unmapped or out-of-range index.
const NONE: u32 = u32::MAX;

/// The linked program.
pub struct Program {
    pub names: Arc<Names>,
    /// Every `Loc::file` indexes this.
    pub files: Vec<String>,
    /// Every `StrId` indexes this.
    pub strings: Vec<String>,
    /// Sorted by [`LinkedUnit::index`]; the `unit` fields below index this vector.
    pub units: Vec<LinkedUnit>,
    /// `VarRef::Global` indexes this.
    pub globals: Vec<ProgramGlobal>,
    /// `FuncRef::Linked` indexes this.
    pub functions: Vec<ProgramFunction>,
    pub stats: LinkStats,
}

/// What stays per unit after linking: the types (every `TypeId` of a function or global refers to
/// the table of its `unit`) and the lowering diagnostics (locations rewritten to program files).
#[derive(Serialize, Deserialize)]
pub struct LinkedUnit {
    /// The index the unit was added with.
    pub index: u32,
    /// The unit's path.
    pub name: String,
    pub types: TypeTable,
    pub diagnostics: Vec<LowerDiagnostic>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProgramGlobal {
    /// The unit whose type table `global.ty` and the initializer's types refer to.
    pub unit: u32,
    pub global: Global,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProgramFunction {
    pub name: Name,
    /// The unit whose type table `ty` and the body's types refer to (the kept copy's unit).
    pub unit: u32,
    /// The definition's linkage; body-less entries are linked by name and are `External`.
    pub linkage: Linkage,
    /// The function type (for a body-less entry: the first declaration's, or `Unknown` if the
    /// name was referenced without any declaration).
    pub ty: TypeId,
    /// `None`: external, declared or called but defined in no unit.
    pub body: Option<Function>,
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkStats {
    pub units: usize,
    /// Function definitions in all units, before dedup
    /// (= `functions_defined + duplicates_removed + conflicts`).
    pub definitions: usize,
    /// Program functions with a body.
    pub functions_defined: usize,
    /// Identical definitions dropped: duplicated `static` functions (same name and hash) and
    /// external definitions identical to the kept one.
    pub duplicates_removed: usize,
    /// Body-less program functions.
    pub externals: usize,
    /// Program globals.
    pub globals: usize,
    /// External definitions dropped because a lower unit defines the same name differently.
    pub conflicts: usize,
}

impl Program {
    pub fn function_name(&self, id: FuncId) -> &str {
        self.names.get(self.functions[id.index()].name)
    }

    /// A printer for IR that belongs to `unit` (an index into `units`).
    pub fn printer(&self, unit: u32) -> Printer<'_> {
        Printer {
            names: &self.names,
            types: &self.units[unit as usize].types,
            global_name: Box::new(|g| self.global_name(g)),
            strings: &self.strings,
            files: &self.files,
            function_name: Box::new(|f| self.function_label(f)),
        }
    }

    /// A function's printed name: static functions are `name@unit`.
    pub fn function_label(&self, id: FuncId) -> String {
        match self.functions.get(id.index()) {
            Some(f) if f.linkage == Linkage::Internal => {
                format!("{}@{}", self.names.get(f.name), f.unit)
            }
            Some(f) => self.names.get(f.name).to_string(),
            None => format!("fn#{}", id.0),
        }
    }

    pub fn global_name(&self, id: GlobalId) -> String {
        match self.globals.get(id.index()) {
            Some(g) => self.names.get(g.global.name).to_string(),
            None => format!("global#{}", id.0),
        }
    }

    /// The whole program in the [`Printer`] format, for `relay ir` and tests: files, strings,
    /// globals and functions in id order. Static functions print as `name@unit`.
    pub fn dump(&self) -> String {
        use std::fmt::Write;
        let printer = |unit: u32| self.printer(unit);
        let mut out = String::new();
        for (i, u) in self.units.iter().enumerate() {
            writeln!(out, "unit {i} (#{}): {}", u.index, u.name).unwrap();
        }
        for (i, f) in self.files.iter().enumerate() {
            writeln!(out, "file {i}: {f}").unwrap();
        }
        for (i, s) in self.strings.iter().enumerate() {
            writeln!(out, "string {i}: {s:?}").unwrap();
        }
        for (i, g) in self.globals.iter().enumerate() {
            write!(
                out,
                "global#{i} unit {}: {}",
                g.unit,
                printer(g.unit).global(&g.global)
            )
            .unwrap();
        }
        for (i, f) in self.functions.iter().enumerate() {
            let p = printer(f.unit);
            match &f.body {
                Some(body) => write!(out, "fn#{i} unit {}: {}", f.unit, p.function(body)).unwrap(),
                None => writeln!(
                    out,
                    "fn#{i} unit {}: extern {}: {}",
                    f.unit,
                    self.names.get(f.name),
                    p.ty(f.ty)
                )
                .unwrap(),
            }
        }
        writeln!(out, "{:?}", self.stats).unwrap();
        out
    }
}

/// Collects lowered units (in any order) and links them; see the module documentation.
pub struct Linker {
    names: Arc<Names>,
    units: Vec<LinkedUnit>,
    fn_syms: Vec<FnSym>,
    /// (name, hash, NONE) for hashed static functions; (name, index, unit) for unhashed ones.
    internal_keys: FxHashMap<(Name, u64, u32), u32>,
    external_keys: FxHashMap<Name, u32>,
    gsyms: Vec<GSym>,
    global_keys: FxHashMap<Name, u32>,
    /// Provisional file and string tables: bodies hold indices into these until `finish`.
    files: Interner,
    strings: Interner,
    definitions: usize,
}

/// A provisional function: a static definition (by name and hash) or an external name. Bodies
/// held here have provisional ids everywhere (`FuncRef::Linked` = symbol, `VarRef::Global` =
/// global symbol, files and strings = provisional tables).
struct FnSym {
    name: Name,
    internal: bool,
    /// The best definition so far: the lowest (unit, index).
    def: Option<HeldFn>,
    /// The lowest declaration (unit, index in `declared_functions`, type) (external symbols only).
    decl: Option<(u32, u32, TypeId)>,
    /// Static symbols: definitions seen.
    copies: u32,
    /// External symbols: hash of every definition seen (`None`: the unit gave no hash).
    def_hashes: Vec<Option<u64>>,
}

struct HeldFn {
    unit: u32,
    idx: u32,
    hash: Option<u64>,
    func: Function,
}

/// A provisional global: one external name, or one internal global of one unit.
#[derive(Default)]
struct GSym {
    best: Option<HeldGlobal>,
    defined: bool,
    flags: VarFlags,
}

struct HeldGlobal {
    /// 0: defined with an initializer, 1: defined, 2: declared.
    rank: u8,
    unit: u32,
    idx: u32,
    global: Global,
}

#[derive(Default)]
struct Interner {
    list: Vec<String>,
    table: HashTable<u32>,
}

impl Interner {
    fn intern(&mut self, s: String) -> u32 {
        let hash = FxBuildHasher.hash_one(s.as_str());
        let list = &self.list;
        match self.table.entry(
            hash,
            |&i| list[i as usize] == s,
            |&i| FxBuildHasher.hash_one(list[i as usize].as_str()),
        ) {
            Entry::Occupied(o) => *o.get(),
            Entry::Vacant(v) => {
                let id = self.list.len() as u32;
                v.insert(id);
                self.list.push(s);
                id
            }
        }
    }
}

fn or_flags(a: VarFlags, b: VarFlags) -> VarFlags {
    VarFlags {
        address_taken: a.address_taken || b.address_taken,
        thread_local: a.thread_local || b.thread_local,
        atomic: a.atomic || b.atomic,
        volatile: a.volatile || b.volatile,
    }
}

fn external_sym(keys: &mut FxHashMap<Name, u32>, syms: &mut Vec<FnSym>, name: Name) -> u32 {
    *keys
        .entry(name)
        .or_insert_with(|| new_sym(syms, name, false))
}

fn new_sym(syms: &mut Vec<FnSym>, name: Name, internal: bool) -> u32 {
    syms.push(FnSym {
        name,
        internal,
        def: None,
        decl: None,
        copies: 0,
        def_hashes: Vec::new(),
    });
    (syms.len() - 1) as u32
}

/// A unit's file or string table, moved into the provisional table on first use.
struct LocalTable<'a> {
    local: Vec<String>,
    map: Vec<u32>,
    out: &'a mut Interner,
}

impl<'a> LocalTable<'a> {
    fn new(local: Vec<String>, out: &'a mut Interner) -> Self {
        LocalTable {
            map: vec![NONE; local.len()],
            local,
            out,
        }
    }
    fn map(&mut self, i: u32) -> u32 {
        let Some(m) = self.map.get_mut(i as usize) else {
            return NONE;
        };
        if *m == NONE {
            *m = self.out.intern(std::mem::take(&mut self.local[i as usize]));
        }
        *m
    }
}

/// Rewrites a unit's kept bodies and initializers to provisional ids.
struct AddRewrite<'a> {
    static_defs: &'a FxHashMap<Name, u32>,
    external_keys: &'a mut FxHashMap<Name, u32>,
    fn_syms: &'a mut Vec<FnSym>,
    gmap: &'a [u32],
    files: LocalTable<'a>,
    strings: LocalTable<'a>,
}

impl VisitMut for AddRewrite<'_> {
    fn expr(&mut self, e: &mut Expr) {
        match e {
            Expr::Func(FuncRef::Named { name, internal }) => {
                let local = if *internal {
                    self.static_defs.get(name).copied()
                } else {
                    None
                };
                let sym =
                    local.unwrap_or_else(|| external_sym(self.external_keys, self.fn_syms, *name));
                *e = Expr::Func(FuncRef::Linked(FuncId(sym)));
            }
            Expr::Func(FuncRef::Linked(_)) => {
                debug_assert!(false, "a unit refers to a linked function");
                *e = Expr::Unknown;
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
}

impl Linker {
    pub fn new(names: Arc<Names>) -> Self {
        Linker {
            names,
            units: Vec::new(),
            fn_syms: Vec::new(),
            internal_keys: FxHashMap::default(),
            external_keys: FxHashMap::default(),
            gsyms: Vec::new(),
            global_keys: FxHashMap::default(),
            files: Interner::default(),
            strings: Interner::default(),
            definitions: 0,
        }
    }

    /// Adds one lowered unit. Units may come in any order, but each `unit_index` at most once.
    /// Duplicate bodies that lose to a copy already held are dropped here without being walked.
    pub fn add(&mut self, unit_index: u32, unit: UnitIr) {
        let u = unit_index;
        let UnitIr {
            name,
            files,
            types,
            strings,
            globals,
            functions,
            function_hashes,
            declared_functions,
            mut diagnostics,
        } = unit;

        // Globals: one symbol per external name, one per internal global.
        let mut gmap = Vec::with_capacity(globals.len());
        let mut g_walk = Vec::new();
        for (i, g) in globals.into_iter().enumerate() {
            let sym = if g.linkage == Linkage::External {
                let gsyms = &mut self.gsyms;
                *self.global_keys.entry(g.name).or_insert_with(|| {
                    gsyms.push(GSym::default());
                    (gsyms.len() - 1) as u32
                })
            } else {
                self.gsyms.push(GSym::default());
                (self.gsyms.len() - 1) as u32
            };
            gmap.push(sym);
            let s = &mut self.gsyms[sym as usize];
            s.defined |= g.defined;
            s.flags = or_flags(s.flags, g.flags);
            let rank = match (g.defined, g.init.is_empty()) {
                (true, false) => 0,
                (true, true) => 1,
                (false, _) => 2,
            };
            let key = (rank, u, i as u32);
            if s.best
                .as_ref()
                .is_none_or(|b| key < (b.rank, b.unit, b.idx))
            {
                s.best = Some(HeldGlobal {
                    rank,
                    unit: u,
                    idx: i as u32,
                    global: g,
                });
                g_walk.push(sym);
            }
        }

        // Function definitions: keep a body only if it beats the copy held so far.
        let mut static_defs: FxHashMap<Name, u32> = FxHashMap::default();
        let mut f_walk = Vec::new();
        for (i, f) in functions.into_iter().enumerate() {
            self.definitions += 1;
            let hash = function_hashes.get(i).copied();
            let sym = if f.linkage == Linkage::Internal {
                let key = match hash {
                    Some(h) => (f.name, h, NONE),
                    None => (f.name, i as u64, u),
                };
                let syms = &mut self.fn_syms;
                let sym = *self
                    .internal_keys
                    .entry(key)
                    .or_insert_with(|| new_sym(syms, f.name, true));
                static_defs.entry(f.name).or_insert(sym);
                self.fn_syms[sym as usize].copies += 1;
                sym
            } else {
                let sym = external_sym(&mut self.external_keys, &mut self.fn_syms, f.name);
                self.fn_syms[sym as usize].def_hashes.push(hash);
                sym
            };
            let s = &mut self.fn_syms[sym as usize];
            if s.def
                .as_ref()
                .is_none_or(|d| (u, i as u32) < (d.unit, d.idx))
            {
                s.def = Some(HeldFn {
                    unit: u,
                    idx: i as u32,
                    hash,
                    func: f,
                });
                f_walk.push(sym);
            }
        }

        // Declarations: every name gets an entry unless it is this unit's own static function.
        for (i, d) in declared_functions.into_iter().enumerate() {
            if d.linkage == Linkage::Internal && static_defs.contains_key(&d.name) {
                continue;
            }
            let sym = external_sym(&mut self.external_keys, &mut self.fn_syms, d.name);
            let s = &mut self.fn_syms[sym as usize];
            if s.decl.is_none_or(|(du, di, _)| (u, i as u32) < (du, di)) {
                s.decl = Some((u, i as u32, d.ty));
            }
        }

        // Rewrite what this unit contributed to provisional ids.
        let mut rw = AddRewrite {
            static_defs: &static_defs,
            external_keys: &mut self.external_keys,
            fn_syms: &mut self.fn_syms,
            gmap: &gmap,
            files: LocalTable::new(files, &mut self.files),
            strings: LocalTable::new(strings, &mut self.strings),
        };
        g_walk.sort_unstable();
        g_walk.dedup();
        for sym in g_walk {
            if let Some(held) = self.gsyms[sym as usize]
                .best
                .as_mut()
                .filter(|h| h.unit == u)
            {
                visit::walk_global_mut(&mut rw, &mut held.global);
            }
        }
        f_walk.sort_unstable();
        f_walk.dedup();
        for sym in f_walk {
            let Some(mut held) = rw.fn_syms[sym as usize].def.take() else {
                continue;
            };
            if held.unit == u {
                visit::walk_function_mut(&mut rw, &mut held.func);
            }
            rw.fn_syms[sym as usize].def = Some(held);
        }
        for d in &mut diagnostics {
            rw.loc(&mut d.loc);
        }

        self.units.push(LinkedUnit {
            index: u,
            name,
            types,
            diagnostics,
        });
    }

    pub fn finish(self) -> Program {
        let Linker {
            names,
            mut units,
            mut fn_syms,
            gsyms,
            files,
            strings,
            definitions,
            ..
        } = self;
        units.sort_by_key(|u| u.index);
        assert!(
            units.windows(2).all(|w| w[0].index < w[1].index),
            "a unit index was added twice"
        );
        let indices: Vec<u32> = units.iter().map(|u| u.index).collect();
        let pos = |index: u32| indices.binary_search(&index).expect("unit") as u32;

        // Globals in (unit, index) order of their representative.
        let mut gorder: Vec<(u32, u32, u32)> = gsyms
            .iter()
            .enumerate()
            .filter_map(|(s, g)| g.best.as_ref().map(|b| (b.unit, b.idx, s as u32)))
            .collect();
        gorder.sort_unstable();
        let mut gmap = vec![NONE; gsyms.len()];
        for (id, &(_, _, s)) in gorder.iter().enumerate() {
            gmap[s as usize] = id as u32;
        }
        let mut gsyms: Vec<Option<GSym>> = gsyms.into_iter().map(Some).collect();
        let mut globals: Vec<ProgramGlobal> = gorder
            .iter()
            .map(|&(_, _, s)| {
                let sym = gsyms[s as usize].take().unwrap();
                let held = sym.best.unwrap();
                let mut global = held.global;
                global.defined = sym.defined;
                global.flags = sym.flags;
                ProgramGlobal {
                    unit: pos(held.unit),
                    global,
                }
            })
            .collect();

        // Names referenced by kept bodies but neither defined nor declared anywhere.
        let ref_only: Vec<bool> = fn_syms
            .iter()
            .map(|s| s.def.is_none() && s.decl.is_none())
            .collect();
        let mut ref_first: Vec<Option<(u32, u32)>> = vec![None; fn_syms.len()];
        if ref_only.iter().any(|&r| r) {
            let mut defs: Vec<(u32, u32, usize)> = fn_syms
                .iter()
                .enumerate()
                .filter_map(|(s, f)| f.def.as_ref().map(|d| (d.unit, d.idx, s)))
                .collect();
            defs.sort_unstable();
            let mut scan = RefScan {
                ref_only: &ref_only,
                first: &mut ref_first,
                unit: 0,
                seq: 0,
            };
            for g in &mut globals {
                scan.unit = units[g.unit as usize].index;
                visit::walk_global_mut(&mut scan, &mut g.global);
            }
            for (unit, _, s) in defs {
                scan.unit = unit;
                visit::walk_function_mut(&mut scan, &mut fn_syms[s].def.as_mut().unwrap().func);
            }
        }

        // Functions in (unit, kind, index) order.
        let mut forder: Vec<((u32, u8, u32), u32)> = Vec::new();
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
            forder.push((key, s as u32));
        }
        forder.sort_unstable();
        let mut fmap = vec![NONE; fn_syms.len()];
        for (id, &(_, s)) in forder.iter().enumerate() {
            fmap[s as usize] = id as u32;
        }

        let mut stats = LinkStats {
            units: units.len(),
            definitions,
            globals: globals.len(),
            ..LinkStats::default()
        };
        for sym in &fn_syms {
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

        let mut fn_syms: Vec<Option<FnSym>> = fn_syms.into_iter().map(Some).collect();
        let mut functions: Vec<ProgramFunction> = forder
            .iter()
            .map(|&((unit, _, _), s)| {
                let sym = fn_syms[s as usize].take().unwrap();
                let unit_pos = pos(unit);
                match (sym.def, sym.decl) {
                    (Some(d), _) => ProgramFunction {
                        name: sym.name,
                        unit: unit_pos,
                        linkage: d.func.linkage,
                        ty: d.func.ty,
                        body: Some(d.func),
                    },
                    (None, Some((_, _, ty))) => ProgramFunction {
                        name: sym.name,
                        unit: unit_pos,
                        linkage: Linkage::External,
                        ty,
                        body: None,
                    },
                    (None, None) => {
                        let ty = units[unit_pos as usize].types.unknown();
                        ProgramFunction {
                            name: sym.name,
                            unit: unit_pos,
                            linkage: Linkage::External,
                            ty,
                            body: None,
                        }
                    }
                }
            })
            .collect();
        stats.functions_defined = functions.iter().filter(|f| f.body.is_some()).count();
        stats.externals = functions.len() - stats.functions_defined;

        let mut rw = FinalRewrite {
            fmap,
            gmap,
            files: FinalTable::new(files.list),
            strings: FinalTable::new(strings.list),
        };
        for g in &mut globals {
            visit::walk_global_mut(&mut rw, &mut g.global);
        }
        for f in &mut functions {
            if let Some(body) = &mut f.body {
                visit::walk_function_mut(&mut rw, body);
            }
        }
        for u in &mut units {
            for d in &mut u.diagnostics {
                rw.loc(&mut d.loc);
            }
        }

        Program {
            names,
            files: rw.files.out,
            strings: rw.strings.out,
            units,
            globals,
            functions,
            stats,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::types::TypeKind;
    use crate::ir::visit::{for_each_expr_mut, for_each_loc_mut};
    use crate::ir::{Block, Declared, GlobalKind, Instr, Lval, Quals, StrId, Terminator};

    fn loc(file: u32, line: u32) -> Loc {
        Loc { file, line, col: 1 }
    }

    /// A unit under construction.
    struct U {
        ir: UnitIr,
        names: Arc<Names>,
    }

    impl U {
        fn new(names: &Arc<Names>, name: &str, files: &[&str], strings: &[&str]) -> U {
            let ir = UnitIr {
                name: name.into(),
                files: files.iter().map(|s| s.to_string()).collect(),
                strings: strings.iter().map(|s| s.to_string()).collect(),
                types: TypeTable::new(),
                ..UnitIr::default()
            };
            U {
                ir,
                names: names.clone(),
            }
        }
        fn fn_ty(&mut self, variadic: bool) -> TypeId {
            let v = self.ir.types.void();
            self.ir.types.intern(
                TypeKind::Function {
                    ret: v,
                    params: vec![],
                    variadic,
                    prototyped: true,
                },
                Quals::default(),
            )
        }
        fn def(&mut self, name: &str, linkage: Linkage, hash: u64, instrs: Vec<Instr>) {
            let ty = self.fn_ty(false);
            let l = instrs.first().map_or(loc(0, 1), |i| i.loc());
            let f = Function {
                name: self.names.intern(name),
                linkage,
                ty,
                params: vec![],
                locals: vec![],
                blocks: vec![Block {
                    instrs,
                    term: Terminator::Return {
                        value: None,
                        loc: l,
                    },
                }],
                loc: l,
            };
            self.ir.functions.push(f);
            self.ir.function_hashes.push(hash);
        }
        fn global(&mut self, name: &str, linkage: Linkage, defined: bool, init: Vec<Instr>) -> u32 {
            let ty = self.ir.types.int();
            let g = Global {
                name: self.names.intern(name),
                ty,
                kind: GlobalKind::Global,
                linkage,
                flags: VarFlags::default(),
                defined,
                init,
                loc: loc(0, 1),
            };
            self.ir.globals.push(g);
            self.ir.globals.len() as u32 - 1
        }
        fn declare(&mut self, name: &str, linkage: Linkage, variadic: bool) {
            let ty = self.fn_ty(variadic);
            self.ir.declared_functions.push(Declared {
                name: self.names.intern(name),
                ty,
                linkage,
            });
        }
    }

    fn call(names: &Names, name: &str, internal: bool, l: Loc) -> Instr {
        Instr::Call {
            dst: None,
            callee: Expr::Func(FuncRef::Named {
                name: names.intern(name),
                internal,
            }),
            args: vec![],
            loc: l,
        }
    }

    fn set_global(g: u32, src: Expr, l: Loc) -> Instr {
        Instr::Assign {
            dst: Lval::var(VarRef::Global(crate::ir::GlobalId(g))),
            src,
            loc: l,
        }
    }

    fn str_const(s: u32) -> Expr {
        Expr::Const(Const::Str(StrId(s)))
    }

    fn link(names: &Arc<Names>, units: Vec<(u32, UnitIr)>) -> Program {
        let mut l = Linker::new(names.clone());
        for (i, u) in units {
            l.add(i, u);
        }
        l.finish()
    }

    /// Links `make()` in every order of its units; asserts all results are identical.
    fn link_all_orders(names: &Arc<Names>, make: impl Fn() -> Vec<UnitIr>) -> Program {
        let n = make().len();
        fn permutations(rest: Vec<usize>, prefix: Vec<usize>, out: &mut Vec<Vec<usize>>) {
            if rest.is_empty() {
                out.push(prefix);
                return;
            }
            for (i, &x) in rest.iter().enumerate() {
                let mut r = rest.clone();
                r.remove(i);
                let mut p = prefix.clone();
                p.push(x);
                permutations(r, p, out);
            }
        }
        let mut orders = vec![];
        permutations((0..n).collect(), vec![], &mut orders);
        let mut first: Option<(String, Program)> = None;
        for order in orders {
            let mut units: Vec<Option<UnitIr>> = make().into_iter().map(Some).collect();
            let p = link(
                names,
                order
                    .iter()
                    .map(|&i| (i as u32, units[i].take().unwrap()))
                    .collect(),
            );
            let fp = fingerprint(&p);
            match &first {
                None => first = Some((fp, p)),
                Some((f, _)) => assert_eq!(f, &fp, "order {order:?} differs"),
            }
        }
        first.unwrap().1
    }

    fn fingerprint(p: &Program) -> String {
        let units: Vec<_> = p
            .units
            .iter()
            .map(|u| {
                (
                    u.index,
                    &u.name,
                    u.types.len(),
                    format!("{:?}", u.diagnostics),
                )
            })
            .collect();
        let stats = p.stats;
        format!(
            "{}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{stats:?}",
            p.dump(),
            p.functions,
            p.globals,
            p.files,
            p.strings,
            units
        )
    }

    fn ids(p: &Program, name: &str) -> Vec<FuncId> {
        let n = p.names.intern(name);
        (0..p.functions.len())
            .filter(|&i| p.functions[i].name == n)
            .map(|i| FuncId(i as u32))
            .collect()
    }

    fn the(p: &Program, name: &str) -> FuncId {
        let v = ids(p, name);
        assert_eq!(v.len(), 1, "{name}: {v:?}");
        v[0]
    }

    fn body(p: &Program, id: FuncId) -> &Function {
        p.functions[id.index()].body.as_ref().expect("defined")
    }

    /// The functions referenced by a body, in walk order.
    fn callees(p: &Program, id: FuncId) -> Vec<FuncId> {
        let mut f = body(p, id).clone();
        let mut out = vec![];
        for_each_expr_mut(&mut f, |e| {
            if let Expr::Func(r) = e {
                match r {
                    FuncRef::Linked(id) => out.push(*id),
                    FuncRef::Named { .. } => panic!("unlinked reference"),
                }
            }
        });
        out
    }

    fn globals_written(p: &Program, id: FuncId) -> Vec<u32> {
        let f = body(p, id);
        let mut out = vec![];
        for i in &f.blocks[0].instrs {
            if let Instr::Assign {
                dst:
                    Lval {
                        host: crate::ir::Host::Var(VarRef::Global(g)),
                        ..
                    },
                ..
            } = i
            {
                out.push(g.0);
            }
        }
        out
    }

    fn check_invariant(p: &Program) {
        let s = p.stats;
        assert_eq!(
            s.definitions,
            s.functions_defined + s.duplicates_removed + s.conflicts,
            "{s:?}"
        );
        assert_eq!(s.functions_defined + s.externals, p.functions.len());
        assert_eq!(s.globals, p.globals.len());
    }

    #[test]
    fn static_inline_dedup_is_order_independent() {
        let names = Arc::new(Names::new());
        let make = || {
            let n = &names;
            let mut a = U::new(n, "a.c", &["a.c", "inc.h"], &["hello"]);
            let c = a.global("counter", Linkage::Internal, true, vec![]);
            a.def(
                "helper",
                Linkage::Internal,
                0xab,
                vec![set_global(c, str_const(0), loc(1, 10))],
            );
            a.def(
                "main",
                Linkage::External,
                1,
                vec![call(n, "helper", true, loc(0, 5))],
            );

            let mut b = U::new(n, "b.c", &["inc.h", "b.c"], &["x", "hello"]);
            let c = b.global("counter", Linkage::Internal, true, vec![]);
            b.def("only_b", Linkage::Internal, 0xcd, vec![]);
            b.def(
                "helper",
                Linkage::Internal,
                0xab,
                vec![set_global(c, str_const(1), loc(0, 10))],
            );
            b.def(
                "f1",
                Linkage::External,
                2,
                vec![call(n, "helper", true, loc(1, 5))],
            );

            let mut c = U::new(n, "c.c", &["c.c", "inc.h"], &["hello"]);
            c.global("other", Linkage::Internal, true, vec![]);
            let g = c.global("counter", Linkage::Internal, true, vec![]);
            c.def(
                "f2",
                Linkage::External,
                3,
                vec![call(n, "helper", true, loc(0, 5))],
            );
            c.def(
                "helper",
                Linkage::Internal,
                0xab,
                vec![set_global(g, str_const(0), loc(1, 10))],
            );
            vec![a.ir, b.ir, c.ir]
        };
        let p = link_all_orders(&names, make);
        check_invariant(&p);
        let helper = the(&p, "helper");
        assert_eq!(p.functions[helper.index()].unit, 0);
        assert_eq!(p.functions[helper.index()].linkage, Linkage::Internal);
        for caller in ["main", "f1", "f2"] {
            assert_eq!(callees(&p, the(&p, caller)), vec![helper], "{caller}");
        }
        // The kept copy writes unit 0's counter; every unit keeps its own statics.
        let written = globals_written(&p, helper);
        assert_eq!(p.globals[written[0] as usize].unit, 0);
        assert_eq!(p.globals.len(), 4);
        assert_eq!(p.stats.duplicates_removed, 2);
        assert_eq!(p.stats.definitions, 7);
        assert_eq!(p.stats.functions_defined, 5);
        assert_eq!(p.stats.externals, 0);
        assert_eq!(p.stats.units, 3);
        // Ids follow (unit, index): a's helper, main; b's only_b, f1; c's f2.
        let order: Vec<&str> = p.functions.iter().map(|f| p.names.get(f.name)).collect();
        assert_eq!(order, ["helper", "main", "only_b", "f1", "f2"]);
        // Only strings used by kept bodies are in the table; files are merged.
        assert_eq!(p.strings, ["hello"]);
        let mut files = p.files.clone();
        files.sort();
        assert_eq!(files, ["a.c", "b.c", "c.c", "inc.h"]);
        let h = body(&p, helper);
        assert_eq!(p.files[h.loc.file as usize], "inc.h");
    }

    #[test]
    fn dropped_duplicate_leaves_no_reference() {
        // b's copy of `h` would call an external `k` (b has no static k); a's calls a's static k.
        let names = Arc::new(Names::new());
        let make = || {
            let n = &names;
            let mut a = U::new(n, "a.c", &["a.c"], &[]);
            a.def("k", Linkage::Internal, 1, vec![]);
            a.def(
                "h",
                Linkage::Internal,
                7,
                vec![call(n, "k", true, loc(0, 3))],
            );
            let mut b = U::new(n, "b.c", &["b.c"], &[]);
            b.def(
                "h",
                Linkage::Internal,
                7,
                vec![call(n, "k", true, loc(0, 3))],
            );
            vec![a.ir, b.ir]
        };
        let p = link_all_orders(&names, make);
        check_invariant(&p);
        assert_eq!(p.stats.externals, 0);
        let k = the(&p, "k");
        assert_eq!(callees(&p, the(&p, "h")), vec![k]);
    }

    #[test]
    fn same_name_statics_with_different_hashes_stay_separate() {
        let names = Arc::new(Names::new());
        let make = || {
            let n = &names;
            let mut u0 = U::new(n, "u0.c", &["u0.c"], &[]);
            u0.def("g", Linkage::Internal, 1, vec![]);
            u0.def(
                "a",
                Linkage::External,
                10,
                vec![call(n, "g", true, loc(0, 2))],
            );
            let mut u1 = U::new(n, "u1.c", &["u1.c"], &[]);
            u1.def("g", Linkage::Internal, 2, vec![]);
            u1.def(
                "b",
                Linkage::External,
                11,
                vec![call(n, "g", true, loc(0, 2))],
            );
            let mut u2 = U::new(n, "u2.c", &["u2.c"], &[]);
            u2.declare("g", Linkage::Internal, false);
            u2.def(
                "c",
                Linkage::External,
                12,
                vec![call(n, "g", true, loc(0, 2))],
            );
            let mut u3 = U::new(n, "u3.c", &["u3.c"], &[]);
            u3.def("g", Linkage::Internal, 1, vec![]);
            u3.def(
                "d",
                Linkage::External,
                13,
                vec![call(n, "g", true, loc(0, 2))],
            );
            vec![u0.ir, u1.ir, u2.ir, u3.ir]
        };
        let p = link_all_orders(&names, make);
        check_invariant(&p);
        let gs = ids(&p, "g");
        assert_eq!(gs.len(), 3);
        let g_of = |unit: u32, defined: bool| {
            *gs.iter()
                .find(|g| {
                    p.functions[g.index()].unit == unit
                        && p.functions[g.index()].body.is_some() == defined
                })
                .unwrap()
        };
        assert_eq!(callees(&p, the(&p, "a")), vec![g_of(0, true)]);
        assert_eq!(callees(&p, the(&p, "b")), vec![g_of(1, true)]);
        // u2 has no static g: its call falls back to the program-wide name, defined nowhere.
        let ext = g_of(2, false);
        assert_eq!(p.functions[ext.index()].linkage, Linkage::External);
        assert_eq!(callees(&p, the(&p, "c")), vec![ext]);
        // u3's g is identical to u0's.
        assert_eq!(callees(&p, the(&p, "d")), vec![g_of(0, true)]);
        assert_eq!(p.stats.duplicates_removed, 1);
        assert_eq!(p.stats.externals, 1);
    }

    #[test]
    fn external_call_resolves_to_defining_unit() {
        let names = Arc::new(Names::new());
        let n = &names;
        let mut m = U::new(n, "main.c", &["main.c"], &[]);
        m.declare("foo", Linkage::External, false);
        m.declare("bar", Linkage::Internal, false);
        m.def(
            "main",
            Linkage::External,
            1,
            vec![
                call(n, "foo", false, loc(0, 2)),
                call(n, "bar", true, loc(0, 3)),
            ],
        );
        let mut f = U::new(n, "foo.c", &["foo.c"], &[]);
        f.def("foo", Linkage::External, 2, vec![]);
        let mut b = U::new(n, "bar.c", &["bar.c"], &[]);
        b.def("bar", Linkage::External, 3, vec![]);
        // Sparse unit indices: `unit` fields index `Program::units`.
        let p = link(n, vec![(9, b.ir), (5, f.ir), (0, m.ir)]);
        check_invariant(&p);
        let (foo, bar) = (the(&p, "foo"), the(&p, "bar"));
        assert_eq!(callees(&p, the(&p, "main")), vec![foo, bar]);
        assert_eq!(
            p.units[p.functions[foo.index()].unit as usize].name,
            "foo.c"
        );
        assert_eq!(p.units[p.functions[foo.index()].unit as usize].index, 5);
        assert_eq!(
            p.units[p.functions[bar.index()].unit as usize].name,
            "bar.c"
        );
        assert!(p.functions[foo.index()].body.is_some() && p.functions[bar.index()].body.is_some());
        assert_eq!(p.stats.externals, 0);
        assert_eq!(
            p.units.iter().map(|u| u.index).collect::<Vec<_>>(),
            [0, 5, 9]
        );
    }

    #[test]
    fn undefined_external_becomes_bodyless_entry() {
        let names = Arc::new(Names::new());
        let n = &names;
        let mut m = U::new(n, "main.c", &["main.c"], &[]);
        m.declare("printf", Linkage::External, true);
        m.declare("unused", Linkage::External, false);
        m.def(
            "main",
            Linkage::External,
            1,
            vec![
                call(n, "mystery", false, loc(0, 2)),
                call(n, "printf", false, loc(0, 3)),
            ],
        );
        let mut o = U::new(n, "other.c", &["other.c"], &[]);
        o.declare("printf", Linkage::External, true);
        o.def(
            "other",
            Linkage::External,
            2,
            vec![call(n, "printf", false, loc(0, 2))],
        );
        let p = link(n, vec![(1, o.ir), (0, m.ir)]);
        check_invariant(&p);
        let order: Vec<&str> = p.functions.iter().map(|f| p.names.get(f.name)).collect();
        assert_eq!(order, ["main", "printf", "unused", "mystery", "other"]);
        let printf = the(&p, "printf");
        let pf = &p.functions[printf.index()];
        assert!(pf.body.is_none());
        assert_eq!(pf.unit, 0);
        assert_eq!(pf.linkage, Linkage::External);
        assert!(matches!(
            p.units[0].types.kind(pf.ty),
            TypeKind::Function { variadic: true, .. }
        ));
        let mystery = the(&p, "mystery");
        assert_eq!(
            p.units[0].types.kind(p.functions[mystery.index()].ty),
            &TypeKind::Unknown
        );
        assert_eq!(callees(&p, the(&p, "main")), vec![mystery, printf]);
        assert_eq!(callees(&p, the(&p, "other")), vec![printf]);
        assert_eq!(p.stats.externals, 3);
        assert_eq!(p.stats.functions_defined, 2);
    }

    #[test]
    fn extern_and_defined_globals_merge() {
        let names = Arc::new(Names::new());
        let make = || {
            let n = &names;
            let mut a = U::new(n, "a.c", &["a.c"], &[]);
            let x = a.global("x", Linkage::External, false, vec![]);
            a.ir.globals[x as usize].flags.address_taken = true;
            let y = a.global("y", Linkage::Internal, true, vec![]);
            let z = a.global("z", Linkage::External, false, vec![]);
            a.def(
                "f0",
                Linkage::External,
                1,
                vec![
                    set_global(x, Expr::Const(Const::Int(1)), loc(0, 2)),
                    set_global(y, Expr::Unknown, loc(0, 3)),
                    set_global(z, Expr::Unknown, loc(0, 4)),
                ],
            );
            let mut b = U::new(n, "b.c", &["b.c"], &[]);
            let y = b.global("y", Linkage::Internal, true, vec![]);
            let x = b.global("x", Linkage::External, true, vec![]);
            b.def(
                "f1",
                Linkage::External,
                2,
                vec![
                    set_global(x, Expr::Unknown, loc(0, 2)),
                    set_global(y, Expr::Unknown, loc(0, 3)),
                ],
            );
            let mut c = U::new(n, "c.c", &["c.c"], &[]);
            c.global(
                "x",
                Linkage::External,
                true,
                vec![set_global(0, Expr::Const(Const::Int(5)), loc(0, 1))],
            );
            vec![a.ir, b.ir, c.ir]
        };
        let p = link_all_orders(&names, make);
        check_invariant(&p);
        let named = |s: &str| -> Vec<u32> {
            let n = p.names.intern(s);
            (0..p.globals.len() as u32)
                .filter(|&i| p.globals[i as usize].global.name == n)
                .collect()
        };
        let x = named("x");
        assert_eq!(x.len(), 1);
        let gx = &p.globals[x[0] as usize];
        assert!(gx.global.defined);
        assert!(gx.global.flags.address_taken);
        assert_eq!(gx.unit, 2);
        assert_eq!(gx.global.init.len(), 1);
        // The initializer now refers to the program's x.
        match &gx.global.init[0] {
            Instr::Assign { dst, .. } => {
                assert_eq!(dst, &Lval::var(VarRef::Global(crate::ir::GlobalId(x[0]))))
            }
            other => panic!("{other:?}"),
        }
        let y = named("y");
        assert_eq!(y.len(), 2);
        let z = named("z");
        assert_eq!(z.len(), 1);
        assert!(!p.globals[z[0] as usize].global.defined);
        assert_eq!(globals_written(&p, the(&p, "f0")), vec![x[0], y[0], z[0]]);
        assert_eq!(globals_written(&p, the(&p, "f1")), vec![x[0], y[1]]);
        // Ids follow the representative's (unit, index): a's y, z; b's y; c's x.
        assert_eq!(p.globals.len(), 4);
        assert_eq!(x[0], 3);
        assert_eq!(p.stats.globals, 4);
    }

    #[test]
    fn tentative_definitions_keep_lowest_nonempty_init() {
        let names = Arc::new(Names::new());
        let n = &names;
        let mut a = U::new(n, "a.c", &["a.c"], &[]);
        a.global("t", Linkage::External, true, vec![]);
        let mut b = U::new(n, "b.c", &["b.c"], &[]);
        b.global(
            "t",
            Linkage::External,
            true,
            vec![set_global(0, Expr::Const(Const::Int(2)), loc(0, 1))],
        );
        let mut c = U::new(n, "c.c", &["c.c"], &[]);
        c.global(
            "t",
            Linkage::External,
            true,
            vec![set_global(0, Expr::Const(Const::Int(3)), loc(0, 1))],
        );
        let p = link(n, vec![(2, c.ir), (1, b.ir), (0, a.ir)]);
        assert_eq!(p.globals.len(), 1);
        assert_eq!(p.globals[0].unit, 1);
        match &p.globals[0].global.init[0] {
            Instr::Assign { src, .. } => assert_eq!(src, &Expr::Const(Const::Int(2))),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn files_and_strings_are_remapped() {
        let names = Arc::new(Names::new());
        let n = &names;
        let mut a = U::new(n, "a.c", &["a.c", "common.h"], &["s0", "shared"]);
        let g = a.global("msg", Linkage::Internal, true, vec![]);
        a.ir.globals[g as usize]
            .init
            .push(set_global(g, str_const(0), loc(0, 3)));
        a.def(
            "fa",
            Linkage::External,
            1,
            vec![set_global(g, str_const(1), loc(1, 7))],
        );
        a.ir.diagnostics.push(LowerDiagnostic {
            loc: loc(1, 9),
            message: "unsupported".into(),
        });
        let mut b = U::new(n, "b.c", &["common.h", "b.c"], &["shared", "s1"]);
        let g = b.global("msg", Linkage::Internal, true, vec![]);
        b.def(
            "fb",
            Linkage::External,
            2,
            vec![
                set_global(g, str_const(0), loc(0, 7)),
                set_global(g, str_const(1), loc(1, 8)),
            ],
        );
        let p = link(n, vec![(1, b.ir), (0, a.ir)]);
        check_invariant(&p);
        assert_eq!(p.files.len(), 3);
        assert_eq!(p.strings.len(), 3);
        let instr = |f: &str, i: usize| -> (Loc, String) {
            match &body(&p, the(&p, f)).blocks[0].instrs[i] {
                Instr::Assign {
                    src: Expr::Const(Const::Str(s)),
                    loc,
                    ..
                } => (*loc, p.strings[s.index()].clone()),
                other => panic!("{other:?}"),
            }
        };
        let (l, s) = instr("fb", 0);
        assert_eq!(
            (p.files[l.file as usize].as_str(), l.line, s.as_str()),
            ("common.h", 7, "shared")
        );
        let (l, s) = instr("fb", 1);
        assert_eq!(
            (p.files[l.file as usize].as_str(), l.line, s.as_str()),
            ("b.c", 8, "s1")
        );
        let (l, s) = instr("fa", 0);
        assert_eq!(
            (p.files[l.file as usize].as_str(), l.line, s.as_str()),
            ("common.h", 7, "shared")
        );
        assert_eq!(instr("fa", 0), instr("fb", 0));
        // Function loc and terminator loc too.
        let fb = body(&p, the(&p, "fb"));
        assert_eq!(p.files[fb.loc.file as usize], "common.h");
        match &fb.blocks[0].term {
            Terminator::Return { loc, .. } => assert_eq!(p.files[loc.file as usize], "common.h"),
            other => panic!("{other:?}"),
        }
        // A global's loc and initializer.
        let ga = p.globals.iter().find(|g| g.unit == 0).unwrap();
        assert_eq!(p.files[ga.global.loc.file as usize], "a.c");
        match &ga.global.init[0] {
            Instr::Assign {
                src: Expr::Const(Const::Str(s)),
                loc,
                ..
            } => {
                assert_eq!(p.strings[s.index()], "s0");
                assert_eq!(p.files[loc.file as usize], "a.c");
            }
            other => panic!("{other:?}"),
        }
        // Diagnostics.
        assert_eq!(
            p.files[p.units[0].diagnostics[0].loc.file as usize],
            "common.h"
        );
    }

    #[test]
    fn external_conflicts_and_identical_redefinitions() {
        let names = Arc::new(Names::new());
        let make = || {
            let n = &names;
            let mut a = U::new(n, "a.c", &["a.c"], &[]);
            a.def("dup", Linkage::External, 1, vec![]);
            a.def("same", Linkage::External, 5, vec![]);
            let mut b = U::new(n, "b.c", &["b.c"], &[]);
            b.def("dup", Linkage::External, 2, vec![]);
            b.def("same", Linkage::External, 5, vec![]);
            let mut c = U::new(n, "c.c", &["c.c"], &[]);
            c.def("dup", Linkage::External, 1, vec![]);
            c.def(
                "user",
                Linkage::External,
                6,
                vec![call(n, "dup", false, loc(0, 1))],
            );
            vec![a.ir, b.ir, c.ir]
        };
        let p = link_all_orders(&names, make);
        check_invariant(&p);
        let dup = the(&p, "dup");
        assert_eq!(p.functions[dup.index()].unit, 0);
        assert_eq!(callees(&p, the(&p, "user")), vec![dup]);
        assert_eq!(p.stats.conflicts, 1);
        assert_eq!(p.stats.duplicates_removed, 2);
        assert_eq!(p.stats.definitions, 6);
    }

    #[test]
    fn walker_visits_everything() {
        let names = Names::new();
        let x = names.intern("x");
        let nested = Expr::Binary(
            crate::ir::BinOp::Add,
            Box::new(Expr::Load(Box::new(Lval {
                host: crate::ir::Host::Mem(Box::new(Expr::Func(FuncRef::Named {
                    name: x,
                    internal: false,
                }))),
                offsets: vec![crate::ir::Offset::Index(Box::new(str_const(0)))],
            }))),
            Box::new(Expr::Const(Const::Int(1))),
        );
        let mut f = Function {
            name: x,
            linkage: Linkage::External,
            ty: TypeId(0),
            params: vec![],
            locals: vec![],
            blocks: vec![
                Block {
                    instrs: vec![Instr::Asm {
                        outputs: vec![],
                        inputs: vec![nested.clone()],
                        volatile: true,
                        loc: loc(0, 2),
                    }],
                    term: Terminator::Goto(crate::ir::BlockId(1)),
                },
                Block {
                    instrs: vec![],
                    term: Terminator::Return {
                        value: Some(nested),
                        loc: loc(0, 3),
                    },
                },
            ],
            loc: loc(0, 1),
        };
        let mut lines = vec![];
        for_each_loc_mut(&mut f, |l| lines.push(l.line));
        assert_eq!(lines, [1, 2, 3]);
        let mut kinds = vec![];
        for_each_expr_mut(&mut f, |e| {
            kinds.push(match e {
                Expr::Binary(..) => "bin",
                Expr::Load(_) => "load",
                Expr::Func(_) => "func",
                Expr::Const(Const::Str(_)) => "str",
                Expr::Const(_) => "const",
                _ => "other",
            });
            if let Expr::Const(Const::Int(v)) = e {
                *v += 1;
            }
        });
        assert_eq!(
            kinds,
            ["bin", "load", "func", "str", "const", "bin", "load", "func", "str", "const"]
        );
        match &f.blocks[1].term {
            Terminator::Return {
                value: Some(Expr::Binary(_, _, b)),
                ..
            } => assert_eq!(**b, Expr::Const(Const::Int(2))),
            other => panic!("{other:?}"),
        }
    }
}
