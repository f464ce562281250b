//! Trampolines: functions written in assembly that jump to a function pointer the program keeps
//! in a global, declared as data in the model files:
//!
//! ```toml
//! [[trampolines]]
//! functions = "__SCT__*"        # the trampolines, by name prefix
//! target = "__SCK__*.func"      # the global (same suffix) and member holding the pointer
//! ```
//!
//! The kernel's static calls are such: `static_call(name)(args)` calls `__SCT__name`, an
//! assembly stub patched to jump to `__SCK__name.func` (set by `DEFINE_STATIC_CALL`, changed by
//! `static_call_update`). A call to a trampoline is analysed as the call through that member
//! that it is ([`crate::link::trampolines`]); without the model the stub is an unknown external
//! that may call back anything its arguments reach, and never the function it jumps to.

use serde::Deserialize;
use toml::Spanned;

/// One family of trampolines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trampoline {
    /// Name prefix of the trampolines (`__SCT__`).
    pub prefix: String,
    /// Name prefix of the globals holding their targets (`__SCK__`); the rest of the name is
    /// the trampoline's.
    pub key_prefix: String,
    /// The member of the global that holds the function pointer.
    pub member: String,
}

impl Trampoline {
    /// The name of the global a trampoline called `function` jumps through, if it is one of
    /// this family's.
    pub fn key_of(&self, function: &str) -> Option<String> {
        let suffix = function.strip_prefix(&self.prefix)?;
        (!suffix.is_empty()).then(|| format!("{}{suffix}", self.key_prefix))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTrampoline {
    functions: Spanned<String>,
    target: Spanned<String>,
}

impl RawTrampoline {
    pub(super) fn validate(self) -> Result<Trampoline, super::entries::Invalid> {
        let prefix = self
            .functions
            .get_ref()
            .strip_suffix('*')
            .filter(|p| super::load::is_identifier(p));
        let Some(prefix) = prefix else {
            return Err((
                self.functions.span().start,
                format!(
                    "`{}` is not a function name prefix followed by `*`",
                    self.functions.get_ref()
                ),
            ));
        };
        let target = self
            .target
            .get_ref()
            .split_once("*.")
            .filter(|(key, member)| {
                super::load::is_identifier(key) && super::load::is_identifier(member)
            });
        let Some((key_prefix, member)) = target else {
            return Err((
                self.target.span().start,
                format!("`{}` is not `global_prefix*.member`", self.target.get_ref()),
            ));
        };
        Ok(Trampoline {
            prefix: prefix.to_string(),
            key_prefix: key_prefix.to_string(),
            member: member.to_string(),
        })
    }
}
