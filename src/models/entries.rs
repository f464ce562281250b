//! Entry families: the concurrency entry points of a code base that no thread creation in it
//! shows — a kernel's system calls, work items, timers, interrupt handlers — declared as data in
//! the model files:
//!
//! ```toml
//! [[entries]]
//! name = "workqueue"
//! description = "work items: the handler INIT_WORK stores in work_struct.func"
//! functions = ["__x64_sys_*"]        # defined functions by name (`*` at the end: a prefix)
//! members = ["work_struct.func"]     # functions stored into this member of this struct
//!                                    # (`file_operations.*`: into any member)
//! arguments = [{ function = "call_rcu", arg = 1 }]   # functions passed as this argument
//! non_reentrant = true               # one handler never runs twice at once on one object
//! ```
//!
//! Every function a family names is a thread entry that may run in several threads at once and
//! is ordered with nothing (as `--entry`). `members` go by the points-to classes: the functions
//! whose address may be stored in that member of any object of the struct (field-based mode);
//! `arguments` by the call sites: the functions argument `arg` (0-based) of a call to
//! `function` may point to.

use serde::Deserialize;
use toml::Spanned;

/// One family of entry points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryFamily {
    pub name: String,
    pub description: String,
    /// Function name patterns: a name, or a prefix followed by `*`.
    pub functions: Vec<String>,
    /// (struct tag, member name or `*`): the functions stored into that member (any member).
    pub members: Vec<(String, String)>,
    /// (function name, argument index): the functions passed there.
    pub arguments: Vec<(String, usize)>,
    /// Two instances of one handler never run at once on the same object, the one their first
    /// argument points to (a work item, a timer, an RCU head): the kernel does not re-enter
    /// them.
    pub non_reentrant: bool,
}

impl EntryFamily {
    /// Whether a function called `name` is one of the family's by name.
    pub fn names(&self, name: &str) -> bool {
        self.functions.iter().any(|p| match p.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == p,
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEntryFamily {
    name: Spanned<String>,
    #[serde(default)]
    description: String,
    #[serde(default)]
    functions: Vec<Spanned<String>>,
    #[serde(default)]
    members: Vec<Spanned<String>>,
    #[serde(default)]
    arguments: Vec<Spanned<RawArgument>>,
    #[serde(default)]
    non_reentrant: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArgument {
    function: String,
    arg: usize,
}

/// A problem in an `[[entries]]` table: the byte offset it is at and what it is.
pub(super) type Invalid = (usize, String);

impl RawEntryFamily {
    pub(super) fn validate(self) -> Result<EntryFamily, Invalid> {
        let name = self.name.get_ref().trim();
        if name.is_empty() || name.contains(['=', ',']) || name == "all" {
            return Err((
                self.name.span().start,
                "an entry family needs a `name` (no `=`, `,`, and not `all`)".into(),
            ));
        }
        if self.functions.is_empty() && self.members.is_empty() && self.arguments.is_empty() {
            return Err((
                self.name.span().start,
                "an entry family needs `functions`, `members` or `arguments`".into(),
            ));
        }
        let mut arguments = Vec::new();
        for a in self.arguments {
            let at = a.span().start;
            let a = a.into_inner();
            if !super::load::is_identifier(&a.function) {
                return Err((at, format!("`{}` is not a function name", a.function)));
            }
            arguments.push((a.function, a.arg));
        }
        let mut functions = Vec::new();
        for f in self.functions {
            let pattern = f.get_ref();
            let stem = pattern.strip_suffix('*').unwrap_or(pattern);
            if !super::load::is_identifier(stem) {
                return Err((
                    f.span().start,
                    format!("`{pattern}` is not a function name or a name prefix followed by `*`"),
                ));
            }
            functions.push(f.into_inner());
        }
        let mut members = Vec::new();
        for m in self.members {
            let member = m.get_ref().split_once('.').filter(|(r, f)| {
                super::load::is_identifier(r) && (*f == "*" || super::load::is_identifier(f))
            });
            let Some((record, field)) = member else {
                return Err((
                    m.span().start,
                    format!(
                        "`{}` is not `struct_tag.member` or `struct_tag.*`",
                        m.get_ref()
                    ),
                ));
            };
            members.push((record.to_string(), field.to_string()));
        }
        Ok(EntryFamily {
            name: self.name.into_inner(),
            description: self.description,
            functions,
            members,
            arguments,
            non_reentrant: self.non_reentrant,
        })
    }
}

/// Which families are on: all but those switched off (`--entry-family NAME=off`, `all=off`
/// then `NAME=on` for some).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FamilySwitches {
    /// `NAME=on|off` in command-line order; `all` stands for every family.
    pub settings: Vec<(String, bool)>,
}

impl FamilySwitches {
    /// Parses `NAME=on|off` words, checking names against `known`.
    pub fn parse(words: &[String], known: &[EntryFamily]) -> Result<FamilySwitches, String> {
        let mut settings = Vec::new();
        for w in words {
            let (name, value) = w
                .split_once('=')
                .ok_or_else(|| format!("--entry-family `{w}`: expected NAME=on|off"))?;
            let on = match value {
                "on" => true,
                "off" => false,
                _ => return Err(format!("--entry-family `{w}`: the value is `on` or `off`")),
            };
            if name != "all" && !known.iter().any(|f| f.name == name) {
                let names: Vec<&str> = known.iter().map(|f| f.name.as_str()).collect();
                return Err(format!(
                    "--entry-family `{name}`: no such entry family (known: all, {})",
                    names.join(", ")
                ));
            }
            settings.push((name.to_string(), on));
        }
        Ok(FamilySwitches { settings })
    }

    pub fn is_on(&self, family: &str) -> bool {
        self.settings
            .iter()
            .rev()
            .find(|(n, _)| n == family || n == "all")
            .is_none_or(|&(_, on)| on)
    }
}
