//! Reading model files: the embedded `models/*.toml` and an optional user directory.
//!
//! Each file is one API family: `family = "..."`, an optional `description`, and `[[function]]`
//! tables that carry `name` or `names` plus the [`Model`] keys. Files are applied in order —
//! the built-in ones sorted by file name, then the user's sorted by file name — and a later
//! model for a name replaces an earlier one. A user file with the file name of a built-in one
//! replaces that whole built-in family. Errors name the file and the line:col of the problem.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rustc_hash::FxHashMap;
use serde::Deserialize;
use toml::Spanned;

use super::entries::{EntryFamily, RawEntryFamily};
use super::trampolines::{RawTrampoline, Trampoline};

use super::{
    AllocEffect, AllocOutEffect, AtomicEffect, CallbackEffect, CallbackRun, CopyEffect, LockEffect,
    LockMode, LockTarget, Model, StateEffect, Success, ThreadCreateEffect, ThreadJoinEffect,
    TryLockEffect,
};

/// The embedded model files (file name, text), sorted by file name.
pub const BUILTIN_FILES: &[(&str, &str)] = &[
    (
        "c11-threads.toml",
        include_str!("../../models/c11-threads.toml"),
    ),
    (
        "gcc-atomics.toml",
        include_str!("../../models/gcc-atomics.toml"),
    ),
    ("glib.toml", include_str!("../../models/glib.toml")),
    (
        "glibc-alloc.toml",
        include_str!("../../models/glibc-alloc.toml"),
    ),
    ("hiredis.toml", include_str!("../../models/hiredis.toml")),
    (
        "libarchive.toml",
        include_str!("../../models/libarchive.toml"),
    ),
    ("libc.toml", include_str!("../../models/libc.toml")),
    ("libevent.toml", include_str!("../../models/libevent.toml")),
    ("linux.toml", include_str!("../../models/linux.toml")),
    ("pthread.toml", include_str!("../../models/pthread.toml")),
    ("sqlite.toml", include_str!("../../models/sqlite.toml")),
];

/// Where a family file came from.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum ModelOrigin {
    /// Embedded in the binary (`models/` of the source tree).
    Builtin,
    /// A file of the user's `--models` directory.
    User(PathBuf),
}

/// One loaded family file.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct FamilyInfo {
    /// The file name (`pthread.toml`).
    pub file: String,
    /// The file's `family` key.
    pub family: String,
    pub description: String,
    /// How many function names the file models (some may be overridden by later files).
    pub functions: usize,
    pub origin: ModelOrigin,
}

/// A model file that cannot be read or is not valid.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{line}:{col}: {message}", path.display())]
    Invalid {
        path: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column (in characters) of the problem.
        col: usize,
        message: String,
    },
}

/// The model table: function name → model, plus the families it was read from.
#[derive(Clone, Debug, Default)]
pub struct Models {
    /// The model and the index of the family (in `families`) that defined it.
    map: FxHashMap<String, (Model, u32)>,
    families: Vec<FamilyInfo>,
    /// The entry families of all files; a later one replaces an earlier one of its name.
    entry_families: Vec<EntryFamily>,
    /// The trampolines of all files; a later one replaces an earlier one of its prefix.
    trampolines: Vec<Trampoline>,
}

impl Models {
    /// No models at all: every body-less function is an unknown external.
    pub fn empty() -> Models {
        Models::default()
    }

    /// The embedded models. Never fails (a unit test parses every built-in file).
    pub fn builtin() -> Models {
        Models::builtin_ref().clone()
    }

    /// The embedded models, parsed once per process.
    pub fn builtin_ref() -> &'static Models {
        static BUILTIN: OnceLock<Models> = OnceLock::new();
        BUILTIN.get_or_init(|| {
            let mut m = Models::empty();
            for (file, parsed) in builtin_parsed() {
                m.add(file, parsed, ModelOrigin::Builtin);
            }
            m
        })
    }

    /// The embedded models plus the files of `extra`: every `*.toml` of that directory, sorted
    /// by file name (or that one file, if `extra` is a file). A user file with the file name of
    /// a built-in one replaces the whole built-in family; otherwise user files apply after all
    /// built-in ones, and a later model for a name replaces the earlier one.
    pub fn load(extra: Option<&Path>) -> Result<Models, ModelError> {
        let Some(extra) = extra else {
            return Ok(Models::builtin());
        };
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| ModelError::Io { path, source }
        };
        let mut user: Vec<PathBuf> = if extra.is_file() {
            vec![extra.to_path_buf()]
        } else {
            let mut v = Vec::new();
            for entry in std::fs::read_dir(extra).map_err(io(extra))? {
                let path = entry.map_err(io(extra))?.path();
                if path.extension().is_some_and(|e| e == "toml") && path.is_file() {
                    v.push(path);
                }
            }
            v
        };
        user.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
        let mut parsed_user = Vec::with_capacity(user.len());
        for path in user {
            let text = std::fs::read_to_string(&path).map_err(io(&path))?;
            let parsed = parse_file(&path, &text)?;
            let file = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            parsed_user.push((file, parsed, path));
        }
        let mut m = Models::empty();
        for (file, parsed) in builtin_parsed() {
            if !parsed_user.iter().any(|(f, ..)| f == file) {
                m.add(file, parsed, ModelOrigin::Builtin);
            }
        }
        for (file, parsed, path) in &parsed_user {
            m.add(file, parsed, ModelOrigin::User(path.clone()));
        }
        Ok(m)
    }

    fn add(&mut self, file: &str, parsed: &ParsedFile, origin: ModelOrigin) {
        let index = self.families.len() as u32;
        self.families.push(FamilyInfo {
            file: file.to_string(),
            family: parsed.family.clone(),
            description: parsed.description.clone(),
            functions: parsed.functions.len(),
            origin,
        });
        for e in &parsed.entries {
            push_replacing(&mut self.entry_families, e.clone(), family_name);
        }
        for t in &parsed.trampolines {
            push_replacing(&mut self.trampolines, t.clone(), prefix);
        }
        for (name, model) in &parsed.functions {
            match model {
                Some(m) => {
                    self.map.insert(name.clone(), (m.clone(), index));
                }
                None => {
                    self.map.remove(name);
                }
            }
        }
    }

    /// The model of the function called `name`, if any.
    #[inline]
    pub fn get(&self, name: &str) -> Option<&Model> {
        self.map.get(name).map(|(m, _)| m)
    }

    /// The family file whose model for `name` is in force.
    pub fn family_of(&self, name: &str) -> Option<&FamilyInfo> {
        self.map.get(name).map(|&(_, f)| &self.families[f as usize])
    }

    /// The number of modelled function names.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The family files in the order they were applied.
    pub fn families(&self) -> &[FamilyInfo] {
        &self.families
    }

    /// The entry families ([`super::entries`]), in the order their files were applied.
    pub fn entry_families(&self) -> &[EntryFamily] {
        &self.entry_families
    }

    /// The trampolines ([`super::trampolines`]), in the order their files were applied.
    pub fn trampolines(&self) -> &[Trampoline] {
        &self.trampolines
    }

    /// Every (name, model), in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Model)> {
        self.map.iter().map(|(n, (m, _))| (n.as_str(), m))
    }
}

/// Appends `item` and drops an earlier one of the same key: a later `[[entries]]` family of a
/// name, or `[[trampolines]]` table of a prefix, replaces the earlier one.
fn push_replacing<T>(items: &mut Vec<T>, item: T, key: fn(&T) -> &str) {
    items.retain(|i| key(i) != key(&item));
    items.push(item);
}

fn family_name(f: &EntryFamily) -> &str {
    &f.name
}

fn prefix(t: &Trampoline) -> &str {
    &t.prefix
}

/// The built-in files, parsed once.
fn builtin_parsed() -> &'static [(&'static str, ParsedFile)] {
    static PARSED: OnceLock<Vec<(&'static str, ParsedFile)>> = OnceLock::new();
    PARSED.get_or_init(|| {
        BUILTIN_FILES
            .iter()
            .map(|&(file, text)| {
                let path = PathBuf::from("models").join(file);
                match parse_file(&path, text) {
                    Ok(p) => (file, p),
                    // Guarded by the `builtin_files_parse` unit test.
                    Err(e) => panic!("built-in model file is invalid: {e}"),
                }
            })
            .collect()
    })
}

/// One file, validated.
#[derive(Debug)]
struct ParsedFile {
    family: String,
    description: String,
    /// `None`: `use_body = true`, drop an earlier model of the name.
    functions: Vec<(String, Option<Model>)>,
    entries: Vec<EntryFamily>,
    trampolines: Vec<Trampoline>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    family: Spanned<String>,
    #[serde(default)]
    description: String,
    #[serde(default)]
    function: Vec<Spanned<RawFunction>>,
    #[serde(default)]
    entries: Vec<RawEntryFamily>,
    #[serde(default)]
    trampolines: Vec<RawTrampoline>,
}

/// A `[[function]]` table: the names plus the [`Model`] keys, spelled out (serde cannot combine
/// `flatten` with `deny_unknown_fields`). `into_model` lists every field of `Model`, so a new
/// model field that is not added here is a compile error.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFunction {
    #[serde(default)]
    name: Option<Spanned<String>>,
    #[serde(default)]
    names: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    lock: Option<LockEffect>,
    #[serde(default)]
    unlock: Option<LockEffect>,
    #[serde(default)]
    trylock: Option<TryLockEffect>,
    #[serde(default)]
    thread_create: Option<ThreadCreateEffect>,
    #[serde(default)]
    thread_join: Option<ThreadJoinEffect>,
    #[serde(default)]
    alloc: Option<AllocEffect>,
    #[serde(default)]
    alloc_out: Option<AllocOutEffect>,
    #[serde(default)]
    copy: Option<CopyEffect>,
    #[serde(default)]
    atomic: Option<Spanned<AtomicEffect>>,
    #[serde(default)]
    returns_arg: Option<usize>,
    #[serde(default)]
    va_arg: bool,
    #[serde(default)]
    reads: Vec<usize>,
    #[serde(default)]
    writes: Vec<usize>,
    #[serde(default)]
    reads_from: Option<usize>,
    #[serde(default)]
    writes_from: Option<usize>,
    #[serde(default)]
    state: Option<Spanned<StateEffect>>,
    #[serde(default)]
    callback: Option<Spanned<CallbackEffect>>,
    /// Several callbacks (libarchive's `archive_read_open`: open, read and close).
    #[serde(default)]
    callbacks: Vec<Spanned<CallbackEffect>>,
    #[serde(default)]
    runs_callbacks: Option<String>,
    #[serde(default)]
    pure: bool,
    /// Not a model key: drops an earlier model of these names, so calls are analysed from the
    /// function's body again (for a program whose own `up()` is no kernel semaphore).
    #[serde(default)]
    use_body: bool,
}

impl RawFunction {
    fn into_model(self) -> Model {
        Model {
            lock: self.lock,
            unlock: self.unlock,
            trylock: self.trylock,
            thread_create: self.thread_create,
            thread_join: self.thread_join,
            alloc: self.alloc,
            alloc_out: self.alloc_out,
            copy: self.copy,
            atomic: self.atomic.map(Spanned::into_inner),
            returns_arg: self.returns_arg,
            va_arg: self.va_arg,
            reads: self.reads,
            writes: self.writes,
            reads_from: self.reads_from,
            writes_from: self.writes_from,
            state: self.state.map(Spanned::into_inner),
            callbacks: self
                .callback
                .into_iter()
                .chain(self.callbacks)
                .map(Spanned::into_inner)
                .collect(),
            runs_callbacks: self.runs_callbacks,
            pure: self.pure,
        }
    }
}

/// `lock`/`unlock` as written: exactly one of `arg` and `global`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLock {
    #[serde(default)]
    arg: Option<usize>,
    #[serde(default)]
    global: Option<String>,
    #[serde(default)]
    mode: LockMode,
}

/// `trylock` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTryLock {
    #[serde(default)]
    arg: Option<usize>,
    #[serde(default)]
    global: Option<String>,
    #[serde(default)]
    mode: LockMode,
    success: Success,
}

fn lock_target(arg: Option<usize>, global: Option<String>) -> Result<LockTarget, String> {
    match (arg, global) {
        (Some(arg), None) => Ok(LockTarget::Arg { arg }),
        (None, Some(global)) if !global.is_empty() => Ok(LockTarget::Global { global }),
        (None, Some(_)) => Err("`global` must name the pseudo lock".into()),
        (Some(_), Some(_)) => {
            Err("a lock is either `arg = N` or `global = \"name\"`, not both".into())
        }
        (None, None) => Err(
            "a lock needs `arg = N` (the argument pointing to the lock) or `global = \"name\"`"
                .into(),
        ),
    }
}

impl TryFrom<RawLock> for LockEffect {
    type Error = String;

    fn try_from(r: RawLock) -> Result<Self, String> {
        Ok(LockEffect {
            target: lock_target(r.arg, r.global)?,
            mode: r.mode,
        })
    }
}

impl TryFrom<RawTryLock> for TryLockEffect {
    type Error = String;

    fn try_from(r: RawTryLock) -> Result<Self, String> {
        Ok(TryLockEffect {
            target: lock_target(r.arg, r.global)?,
            mode: r.mode,
            success: r.success,
        })
    }
}

/// 1-based line and column (in characters) of byte `offset` of `text`.
pub(super) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

fn invalid(path: &Path, text: &str, offset: usize, message: impl Into<String>) -> ModelError {
    let (line, col) = line_col(text, offset);
    ModelError::Invalid {
        path: path.to_path_buf(),
        line,
        col,
        message: message.into(),
    }
}

/// A C identifier (GNU C also allows `$`).
pub(super) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

fn parse_file(path: &Path, text: &str) -> Result<ParsedFile, ModelError> {
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        invalid(path, text, offset, e.message().trim_end())
    })?;
    if raw.family.get_ref().trim().is_empty() {
        return Err(invalid(
            path,
            text,
            raw.family.span().start,
            "`family` must not be empty",
        ));
    }
    let mut functions = Vec::new();
    let mut seen: FxHashMap<String, usize> = FxHashMap::default();
    for entry in raw.function {
        let at = entry.span().start;
        let mut f = entry.into_inner();
        let names: Vec<Spanned<String>> = match (f.name.take(), f.names.take()) {
            (Some(n), None) => vec![n],
            (None, Some(ns)) => {
                if ns.get_ref().is_empty() {
                    return Err(invalid(path, text, ns.span().start, "`names` is empty"));
                }
                ns.into_inner()
            }
            (Some(n), Some(_)) => {
                return Err(invalid(
                    path,
                    text,
                    n.span().start,
                    "a [[function]] has either `name` or `names`, not both",
                ))
            }
            (None, None) => {
                return Err(invalid(
                    path,
                    text,
                    at,
                    "a [[function]] needs `name = \"...\"` or `names = [...]`",
                ))
            }
        };
        if let Some(a) = &f.atomic {
            if !a.get_ref().read && !a.get_ref().write {
                return Err(invalid(
                    path,
                    text,
                    a.span().start,
                    "an atomic access needs `read = true`, `write = true` or both",
                ));
            }
        }
        if let Some(st) = &f.state {
            if !st.get_ref().read && !st.get_ref().write {
                return Err(invalid(
                    path,
                    text,
                    st.span().start,
                    "hidden state needs `read = true`, `write = true` or both",
                ));
            }
        }
        for cb in f.callback.iter().chain(&f.callbacks) {
            let c = cb.get_ref();
            let problem = match (c.run, &c.loop_name) {
                (CallbackRun::Loop, None) => Some("`run = \"loop\"` needs `loop = \"name\"`"),
                (CallbackRun::Sync | CallbackRun::Async, Some(_)) => {
                    Some("`loop` is only for `run = \"loop\"`")
                }
                _ if c.args.iter().any(|&a| a < -1) => {
                    Some("callback `args` are argument indices or -1")
                }
                _ => None,
            };
            if let Some(message) = problem {
                return Err(invalid(path, text, cb.span().start, message));
            }
        }
        let use_body = f.use_body;
        let model = f.into_model();
        if model.pure && model.has_effect() {
            return Err(invalid(
                path,
                text,
                names[0].span().start,
                "`pure = true` cannot be combined with an effect",
            ));
        }
        if use_body && (model.pure || model.has_effect()) {
            return Err(invalid(
                path,
                text,
                names[0].span().start,
                "`use_body = true` drops the model: it cannot be combined with model keys",
            ));
        }
        let model = (!use_body).then_some(model);
        for n in names {
            let span = n.span();
            let name = n.into_inner();
            if !is_identifier(&name) {
                return Err(invalid(
                    path,
                    text,
                    span.start,
                    format!("`{name}` is not a C identifier"),
                ));
            }
            if let Some(&first) = seen.get(&name) {
                let (line, _) = line_col(text, first);
                return Err(invalid(
                    path,
                    text,
                    span.start,
                    format!("duplicate model for `{name}` (first modelled on line {line})"),
                ));
            }
            seen.insert(name.clone(), span.start);
            functions.push((name, model.clone()));
        }
    }
    let invalid_at = |(at, message)| invalid(path, text, at, message);
    let mut entries: Vec<EntryFamily> = Vec::new();
    for e in raw.entries {
        push_replacing(&mut entries, e.validate().map_err(invalid_at)?, family_name);
    }
    let mut trampolines: Vec<Trampoline> = Vec::new();
    for t in raw.trampolines {
        push_replacing(&mut trampolines, t.validate().map_err(invalid_at)?, prefix);
    }
    Ok(ParsedFile {
        family: raw.family.into_inner(),
        description: raw.description,
        functions,
        entries,
        trampolines,
    })
}

/// Parses one file's text (the unit tests check single files with it).
#[cfg(test)]
pub(super) fn parse_for_test(
    path: &Path,
    text: &str,
) -> Result<Vec<(String, Option<Model>)>, ModelError> {
    parse_file(path, text).map(|p| p.functions)
}
