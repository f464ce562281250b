//! The points-to side of the library models: which functions of the program have a model.
//! The models themselves are the declarative files of `models/`, loaded by
//! [`crate::models::Models`]; the solver (`solve.rs`) applies their points-to effects
//! (allocation sites, copies, returned arguments, `va_arg`, thread start routines).

use crate::link::Program;
use crate::models::{Model, Models};

/// The model of each function of the program, indexed by `FuncId`: names are looked up once,
/// so a call costs an index. A function with a model is handled by it even if it has a body.
pub(super) fn resolve<'m>(program: &Program, models: &'m Models) -> Vec<Option<&'m Model>> {
    program
        .functions
        .iter()
        .map(|f| models.get(program.names.get(f.name)))
        .collect()
}
