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

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::store::{Key, KeyBuilder};
use crate::frontend::linemap::Location;
use crate::frontend::lower::LowerOutput;
use crate::frontend::{Diagnostic, FunctionInfo};
use crate::ir::names::Names;
use crate::ir::rename::rename_unit;
use crate::ir::{Name, UnitIr};

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
