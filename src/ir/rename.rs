//! Renaming every [`Name`] of IR through a map from old ids to new ones: a unit lowered with
//! its own interner is brought under the program's names (the cache), and the linked program's
//! names are renumbered in a canonical order (the linker).

use anyhow::{ensure, Result};

use super::visit::{walk_function_mut, walk_global_mut, VisitMut};
use super::{
    Declared, Expr, FuncRef, Function, Global, GlobalKind, Local, Lval, Name, Offset, TypeTable,
    UnitIr,
};
use crate::ir::names::{Names, StringTable};

/// Where a [`Renamer`] finds each name's new id.
pub trait NameMap {
    /// The new name of `old`, or `None` if `old` is not one of the names mapped.
    fn new_name(&mut self, old: Name) -> Option<Name>;
}

/// Marks a name that a table of new names leaves unmapped.
pub const UNMAPPED: Name = Name(u32::MAX);

/// A table of new names by old id ([`UNMAPPED`] for none).
impl NameMap for &[Name] {
    fn new_name(&mut self, old: Name) -> Option<Name> {
        self.get(old.0 as usize).copied().filter(|&n| n != UNMAPPED)
    }
}

/// Old names as strings, interned into `names` the first time one of their run is met
/// ([`Names::intern_run`]): a cached unit's runs of names that only its skipped definitions use
/// are never interned.
pub struct InternOnUse<'a> {
    strings: &'a StringTable<'a>,
    names: &'a Names,
    map: Vec<Name>,
    /// The end of each run of strings ([`StringTable::runs`]).
    runs: Vec<usize>,
}

impl<'a> InternOnUse<'a> {
    pub fn new(strings: &'a StringTable<'a>, names: &'a Names) -> Self {
        InternOnUse {
            strings,
            names,
            map: vec![UNMAPPED; strings.len()],
            runs: strings.runs(),
        }
    }

    /// The new name of `old` if its run was interned already (some name of it met), without
    /// interning anything.
    pub fn interned(&self, old: Name) -> Option<Name> {
        self.map
            .get(old.0 as usize)
            .copied()
            .filter(|&n| n != UNMAPPED)
    }
}

impl NameMap for InternOnUse<'_> {
    fn new_name(&mut self, old: Name) -> Option<Name> {
        let i = old.0 as usize;
        if *self.map.get(i)? == UNMAPPED {
            let run = self.runs.partition_point(|&end| end <= i);
            let start = run.checked_sub(1).map_or(0, |r| self.runs[r]);
            let end = *self.runs.get(run)?;
            let out = self.map.get_mut(start..end)?;
            self.names.intern_run(self.strings, start..end, out)?;
        }
        self.map.get(i).copied()
    }
}

/// Records which names are met, renaming nothing.
pub struct UsedNames(pub Vec<bool>);

impl NameMap for UsedNames {
    fn new_name(&mut self, old: Name) -> Option<Name> {
        *self.0.get_mut(old.0 as usize)? = true;
        Some(old)
    }
}

/// Renames every [`Name`] through `map` (old id → new name). Structs are destructured in full
/// so that a new field holding a name cannot be missed silently.
pub struct Renamer<M> {
    map: M,
    out_of_range: bool,
}

impl<M: NameMap> Renamer<M> {
    pub fn new(map: M) -> Self {
        Renamer {
            map,
            out_of_range: false,
        }
    }

    /// Fails if some name was not in the map.
    pub fn finish(self) -> Result<()> {
        self.into_map().map(drop)
    }

    /// The map, once every name was renamed; fails if some name was not in it.
    pub fn into_map(self) -> Result<M> {
        ensure!(!self.out_of_range, "a name is out of range");
        Ok(self.map)
    }

    pub fn name(&mut self, n: &mut Name) {
        match self.map.new_name(*n) {
            Some(m) => *n = m,
            None => self.out_of_range = true,
        }
    }

    pub fn function(&mut self, f: &mut Function) {
        let Function {
            name,
            linkage: _,
            ty: _,
            params: _,
            locals,
            blocks: _,
            loc: _,
        } = f;
        self.name(name);
        for Local {
            name,
            ty: _,
            kind: _,
            flags: _,
        } in locals
        {
            self.name(name);
        }
        walk_function_mut(self, f);
    }

    pub fn global(&mut self, g: &mut Global) {
        let Global {
            name,
            ty: _,
            kind,
            linkage: _,
            flags: _,
            defined: _,
            init: _,
            loc: _,
        } = g;
        self.name(name);
        match kind {
            GlobalKind::StaticLocal { function } => self.name(function),
            GlobalKind::Global => {}
        }
        walk_global_mut(self, g);
    }

    /// Renames the table's names in place (enum and record tags, member names): every type and
    /// record keeps its id. Re-interning a kernel unit's thousands of header types, one by one,
    /// was a quarter of loading it from the cache.
    pub fn types(&mut self, table: &mut TypeTable) {
        table.rename_names(|n| self.name(n));
    }
}

impl<M: NameMap> VisitMut for Renamer<M> {
    fn expr(&mut self, e: &mut Expr) {
        match e {
            Expr::Func(FuncRef::Named { name, internal: _ }) => self.name(name),
            Expr::Func(FuncRef::Linked(_))
            | Expr::Const(_)
            | Expr::Load(_)
            | Expr::AddrOf(_)
            | Expr::StartOf(_)
            | Expr::Label(_)
            | Expr::Unary(..)
            | Expr::Binary(..)
            | Expr::Cast(..)
            | Expr::SizeOf(_)
            | Expr::AlignOf(_)
            | Expr::Unknown => {}
        }
    }

    fn lval(&mut self, lv: &mut Lval) {
        for off in &mut lv.offsets {
            match off {
                Offset::Field { record: _, name } => self.name(name),
                Offset::Index(_) => {}
            }
        }
    }
}

/// Renames every name of `unit` through `map`, and gives the map back.
pub fn rename_unit<M: NameMap>(unit: &mut UnitIr, map: M) -> Result<M> {
    let mut r = Renamer::new(map);
    let UnitIr {
        name: _,
        files: _,
        types,
        strings: _,
        globals,
        functions,
        function_hashes: _,
        declared_functions,
        diagnostics: _,
    } = unit;
    r.types(types);
    for g in globals {
        r.global(g);
    }
    for f in functions {
        r.function(f);
    }
    for Declared {
        name,
        ty: _,
        linkage: _,
    } in declared_functions
    {
        r.name(name);
    }
    r.into_map()
}
