//! The `tu` cache kind: one translation unit parsed and lowered to IR.
//!
//! The key is a hash of the unit's name (locations in a unit without line markers are reported
//! under it) and its preprocessed text, on top of the relay version and build that every key has.
//! Lowering has no options today; any that appear must be added to [`unit_key`].
//!
//! [`Name`]s are program-wide interned ids, numbered in whatever order the parallel units reach
//! the interner, so a unit's IR cannot be stored with them. A cached unit is lowered with its own
//! interner instead and stored with that interner's strings ([`CachedUnit::names`]); loading it
//! interns the strings into the program's [`Names`] and renames every `Name` in the unit. The
//! driver takes the same path for a unit it has just lowered, so a cold and a warm run link the
//! same units.

use anyhow::{ensure, Result};
use serde::{Deserialize, Serialize};

use super::store::{Key, KeyBuilder};
use crate::frontend::linemap::Location;
use crate::frontend::lower::LowerOutput;
use crate::frontend::{Diagnostic, FunctionInfo};
use crate::ir::names::Names;
use crate::ir::types::{FieldDef, RecordDef, TypeKind};
use crate::ir::visit::{walk_function_mut, walk_global_mut, VisitMut};
use crate::ir::{
    Declared, Expr, FuncRef, Function, Global, GlobalKind, Local, Lval, Name, Offset, TypeId,
    TypeTable, UnitIr,
};

/// The kind name of cached units.
pub const KIND: &str = "tu";

/// The key of a unit named `tu` whose preprocessed text is `text`.
pub fn unit_key(tu: &str, text: &str) -> Key {
    KeyBuilder::new(KIND).str(tu).str(text).finish()
}

/// A source location, as stored (the front end's own type is not deserializable).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
struct CachedLocation {
    file: String,
    line: u32,
    col: u32,
}

impl From<Location> for CachedLocation {
    fn from(l: Location) -> Self {
        CachedLocation {
            file: l.file,
            line: l.line,
            col: l.col,
        }
    }
}

impl From<CachedLocation> for Location {
    fn from(l: CachedLocation) -> Self {
        Location {
            file: l.file,
            line: l.line,
            col: l.col,
        }
    }
}

/// Everything the driver reports about a unit, with the unit's IR under its own names.
#[derive(Serialize, Deserialize)]
pub struct CachedUnit {
    /// The unit's interner: `Name(i)` in `unit` is `names[i]`.
    names: Vec<String>,
    unit: UnitIr,
    external_decls: usize,
    function_definitions: usize,
    /// Syntax errors (one per skipped declaration), in order.
    parse_errors: Vec<(CachedLocation, String)>,
    /// File-scope function definitions, in order.
    functions: Vec<(String, CachedLocation)>,
}

/// A unit ready for the linker: its IR under the program's names.
pub struct LoadedUnit {
    pub unit: UnitIr,
    pub external_decls: usize,
    pub function_definitions: usize,
    pub parse_errors: Vec<Diagnostic>,
    pub functions: Vec<FunctionInfo>,
}

impl CachedUnit {
    /// A unit just lowered with its own interner `names` (every file-scope function definition
    /// listed in `functions`).
    pub fn from_lowered(names: &Names, out: LowerOutput, functions: Vec<FunctionInfo>) -> Self {
        CachedUnit {
            names: (0..names.len())
                .map(|i| names.get(Name(i as u32)).to_string())
                .collect(),
            unit: out.unit,
            external_decls: out.external_decls,
            function_definitions: out.function_definitions,
            parse_errors: out
                .parse_errors
                .into_iter()
                .map(|d| (d.location.into(), d.message))
                .collect(),
            functions: functions
                .into_iter()
                .map(|f| (f.name, f.location.into()))
                .collect(),
        }
    }

    /// The unit under the program's `names`. Fails only on an entry that does not describe a
    /// unit (a name out of range, a type table that is not hash-consed).
    pub fn into_program(self, names: &Names) -> Result<LoadedUnit> {
        let map: Vec<Name> = self.names.iter().map(|s| names.intern(s)).collect();
        let mut unit = self.unit;
        rename_unit(&mut unit, &map)?;
        Ok(LoadedUnit {
            unit,
            external_decls: self.external_decls,
            function_definitions: self.function_definitions,
            parse_errors: self
                .parse_errors
                .into_iter()
                .map(|(location, message)| Diagnostic {
                    location: location.into(),
                    message,
                })
                .collect(),
            functions: self
                .functions
                .into_iter()
                .map(|(name, location)| FunctionInfo {
                    name,
                    location: location.into(),
                })
                .collect(),
        })
    }
}

/// Renames every [`Name`] through `map` (old id → new name). Structs are destructured in full
/// so that a new field holding a name cannot be missed silently.
struct Renamer<'a> {
    map: &'a [Name],
    out_of_range: bool,
}

impl Renamer<'_> {
    fn name(&mut self, n: &mut Name) {
        match self.map.get(n.0 as usize) {
            Some(m) => *n = *m,
            None => self.out_of_range = true,
        }
    }

    fn function(&mut self, f: &mut Function) {
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

    fn global(&mut self, g: &mut Global) {
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

    /// The same table with its names renamed: types are re-interned in order (renaming is
    /// one-to-one, so every type keeps its id), records are copied in order.
    fn types(&mut self, old: &TypeTable) -> Result<TypeTable> {
        let mut table = TypeTable::new();
        for i in 0..old.len() {
            let t = old.get(TypeId(i as u32));
            let kind = match t.kind.clone() {
                TypeKind::Enum { tag } => TypeKind::Enum {
                    tag: tag.map(|mut n| {
                        self.name(&mut n);
                        n
                    }),
                },
                k @ (TypeKind::Void
                | TypeKind::Bool
                | TypeKind::Int { .. }
                | TypeKind::Float(_)
                | TypeKind::Complex(_)
                | TypeKind::Pointer(_)
                | TypeKind::Array { .. }
                | TypeKind::Function { .. }
                | TypeKind::Record(_)
                | TypeKind::Vector { .. }
                | TypeKind::Unknown) => k,
            };
            let id = table.intern(kind, t.quals);
            ensure!(id.0 as usize == i, "type {i} is a duplicate");
        }
        for r in old.records() {
            let RecordDef {
                kind,
                mut tag,
                fields,
                complete,
                packed,
            } = r.clone();
            if let Some(t) = &mut tag {
                self.name(t);
            }
            let fields = fields
                .into_iter()
                .map(
                    |FieldDef {
                         mut name,
                         anonymous,
                         ty,
                         bit_width,
                     }| {
                        self.name(&mut name);
                        FieldDef {
                            name,
                            anonymous,
                            ty,
                            bit_width,
                        }
                    },
                )
                .collect();
            let id = table.new_record(kind, tag);
            *table.record_mut(id) = RecordDef {
                kind,
                tag,
                fields,
                complete,
                packed,
            };
        }
        table.freeze();
        Ok(table)
    }
}

impl VisitMut for Renamer<'_> {
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

fn rename_unit(unit: &mut UnitIr, map: &[Name]) -> Result<()> {
    let mut r = Renamer {
        map,
        out_of_range: false,
    };
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
    *types = r.types(types)?;
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
    ensure!(!r.out_of_range, "a name is out of range");
    Ok(())
}
