//! Whole runs keyed by their inputs: a `relay analyze` whose every input unit has the same
//! preprocessed text as a saved run's, with the same analysis arguments, models and build of
//! relay, computes the same findings — so it reuses them without loading a unit's IR, solving
//! points-to or keying a summary. What it still costs is reading and hashing the inputs (the
//! preprocessor's work, for `compile_commands.json` entries).
//!
//! The entry (kind `inputs`) keeps the key of the findings (`findings` entries are pruned to
//! the latest few: a pruned one is a miss) and the front end's messages, which the reusing run
//! prints again as the front end would have.

use serde::{Deserialize, Serialize};

use super::{Key, KeyBuilder, Store};

pub const KIND: &str = "inputs";

/// What a run whose inputs are unchanged needs from the run that saved it.
#[derive(Serialize, Deserialize, Debug, PartialEq, Eq)]
pub struct UnchangedInputs {
    /// The key of the saved findings ([`crate::race::saved::SavedRun::find`]).
    pub findings: [u8; 32],
    /// The front end's messages about the input (syntax errors, skipped statements), in order.
    pub messages: Vec<String>,
    /// Units with input problems.
    pub problems: usize,
}

/// The key of a run: its units' keys ([`super::tu::unit_key`]: name and preprocessed text) in
/// input order, the analysis arguments and `context` (the options and models).
pub fn run_key(units: &[Key], arguments: &[String], context: &Key) -> Key {
    let mut k = KeyBuilder::new(KIND);
    k.u64(units.len() as u64);
    for u in units {
        k.key(u);
    }
    k.u64(arguments.len() as u64);
    for a in arguments {
        k.str(a);
    }
    k.key(context).finish()
}

impl UnchangedInputs {
    pub fn find(store: &Store, key: &Key) -> Option<UnchangedInputs> {
        store.get_value(KIND, key)
    }

    pub fn save(&self, store: &Store, key: &Key) {
        store.put_value_or_warn(KIND, key, self);
    }

    pub fn findings_key(&self) -> Key {
        Key(self.findings)
    }
}
