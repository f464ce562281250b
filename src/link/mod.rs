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
//!   is one copy of each distinct function plus the staging type table. Two external definitions
//!   of one name: the lowest unit's is kept; a conflict is counted unless the hashes are equal.
//! - **Globals.** External globals are merged by name; the representative (whose type, location,
//!   initializer and unit are kept) is the lowest unit that defines it with a non-empty
//!   initializer, else the lowest defining unit, else the lowest declaring unit. `defined` and the
//!   [`VarFlags`] are or-ed over all units. Internal globals (file-scope `static`s and static
//!   locals) stay per unit.
//! - **Types** are merged into one program table ([`Program::types`]): structurally for non-record
//!   types, by definition (kind, tag, field names and widths) for structs and unions, with a
//!   declared-only `struct s` resolved to a definition of `s`. See [`types`] for the details.
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
    RecordId, TypeId, UnitIr, VarFlags, VarRef,
};

mod finish;
pub mod trampolines;
pub mod types;
use types::{Staging, UnitTypes};

/// Marks an unmapped or out-of-range index.
const NONE: u32 = u32::MAX;

/// The linked program.
pub struct Program {
    pub names: Arc<Names>,
    /// Every `Loc::file` indexes this.
    pub files: Vec<String>,
    /// Every `StrId` indexes this.
    pub strings: Vec<String>,
    /// Every `TypeId` and `RecordId` of the program indexes this one table.
    pub types: TypeTable,
    /// Sorted by [`LinkedUnit::index`]; the `unit` fields below index this vector.
    pub units: Vec<LinkedUnit>,
    /// `VarRef::Global` indexes this.
    pub globals: Vec<ProgramGlobal>,
    /// `FuncRef::Linked` indexes this.
    pub functions: Vec<ProgramFunction>,
    pub stats: LinkStats,
}

/// What stays per unit after linking: its name and the lowering diagnostics (locations rewritten
/// to program files).
#[derive(Serialize, Deserialize)]
pub struct LinkedUnit {
    /// The index the unit was added with.
    pub index: u32,
    /// The unit's path.
    pub name: String,
    pub diagnostics: Vec<LowerDiagnostic>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProgramGlobal {
    /// The unit the representative declaration came from.
    pub unit: u32,
    pub global: Global,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProgramFunction {
    pub name: Name,
    /// The unit the kept definition (else the first declaration or reference) came from.
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

    /// A printer for the program's IR.
    pub fn printer(&self) -> Printer<'_> {
        Printer {
            names: &self.names,
            types: &self.types,
            global_name: Box::new(|g| self.global_name(g)),
            strings: &self.strings,
            files: &self.files,
            function_name: Box::new(|f| self.function_label(f)),
            record_name: None,
            relative_to: None,
            hide_asm_constants: false,
            hide_call_constants: false,
            member_records: false,
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
        let p = self.printer();
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
            write!(out, "global#{i} unit {}: {}", g.unit, p.global(&g.global)).unwrap();
        }
        for (i, f) in self.functions.iter().enumerate() {
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
/// A unit's `static` definition that the driver did not load because a unit with a lower index
/// holds the same one (same name, same text hash), which the linker keeps instead: it counts as
/// a copy and names the unit's own static function, but carries no body.
#[derive(Copy, Clone, Debug)]
pub struct SkippedCopy {
    pub name: Name,
    pub hash: u64,
}

/// The `static` definitions the driver left out of one unit ([`SkippedCopy`]): how many, and
/// those whose names the rest of the unit uses. Only those can be named by what the linker
/// walks (the unit's loaded bodies, initializers and declarations), so only those get a symbol
/// here; the kernel's units skip ~4,000 header copies each, 11 million in all, and the linker
/// runs one unit at a time.
#[derive(Clone, Debug, Default)]
pub struct SkippedCopies {
    pub count: usize,
    pub named: Vec<SkippedCopy>,
}

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
    /// Provisional type table: held items' types index this until `finish`.
    types: Staging,
    definitions: usize,
    /// Definitions linked as [`SkippedCopies`]: each a duplicate of a body another unit gives.
    skipped_copies: usize,
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
        call_key: a.call_key || b.call_key,
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
    types: UnitTypes<'a>,
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
    fn type_id(&mut self, t: &mut TypeId) {
        *t = self.types.ty(*t);
    }
    fn record_id(&mut self, r: &mut RecordId) {
        if r.0 != NONE {
            *r = self.types.record(*r);
        }
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
            types: Staging::default(),
            definitions: 0,
            skipped_copies: 0,
        }
    }

    /// Adds one lowered unit. Units may come in any order, but each `unit_index` at most once.
    /// Duplicate bodies that lose to a copy already held are dropped here without being walked.
    pub fn add(&mut self, unit_index: u32, unit: UnitIr) {
        self.add_skipping(unit_index, unit, &SkippedCopies::default());
    }

    /// [`Linker::add`] of a unit whose definitions `skipped` were left out of it: a unit with
    /// a lower index provides each of them, and counts it as one of its copies.
    pub fn add_skipping(&mut self, unit_index: u32, unit: UnitIr, skipped: &SkippedCopies) {
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
        let mut types = UnitTypes::new(u, types, &mut self.types);

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
                let sym = static_sym(
                    &mut self.internal_keys,
                    &mut self.fn_syms,
                    key,
                    &mut static_defs,
                );
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

        // A skipped copy's symbol is its provider's: only those this unit names are looked up.
        self.definitions += skipped.count;
        self.skipped_copies += skipped.count;
        for copy in &skipped.named {
            static_sym(
                &mut self.internal_keys,
                &mut self.fn_syms,
                (copy.name, copy.hash, NONE),
                &mut static_defs,
            );
        }

        // Declarations: every name gets an entry unless it is this unit's own static function.
        for (i, d) in declared_functions.into_iter().enumerate() {
            if d.linkage == Linkage::Internal && static_defs.contains_key(&d.name) {
                continue;
            }
            let sym = external_sym(&mut self.external_keys, &mut self.fn_syms, d.name);
            let s = &mut self.fn_syms[sym as usize];
            if s.decl.is_none_or(|(du, di, _)| (u, i as u32) < (du, di)) {
                s.decl = Some((u, i as u32, types.ty(d.ty)));
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
            types,
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
            diagnostics,
        });
    }
}

/// The symbol of a `static` definition keyed `(name, text hash or index, unit)`, recorded as
/// its unit's function of that name (its copies are counted by the caller).
fn static_sym(
    keys: &mut FxHashMap<(Name, u64, u32), u32>,
    syms: &mut Vec<FnSym>,
    key: (Name, u64, u32),
    static_defs: &mut FxHashMap<Name, u32>,
) -> u32 {
    let sym = *keys
        .entry(key)
        .or_insert_with(|| new_sym(syms, key.0, true));
    static_defs.entry(key.0).or_insert(sym);
    sym
}

#[cfg(test)]
mod tests;
