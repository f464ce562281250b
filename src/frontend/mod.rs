//! The C front end: input collection and preprocessing, lexing, parsing, and the map from
//! preprocessed offsets back to original source locations.
//!
//! One translation unit at a time: [`parse_source`] turns preprocessed text into a [`ParsedTu`]
//! (syntax tree, interner, line map, diagnostics). Callers parse TUs in parallel and drop each tree
//! once it has been used.

pub mod ast;
pub mod input;
pub mod intern;
pub mod lexer;
pub mod linemap;
pub mod parser;
pub mod token;

use ast::{Ast, ExternalDecl};
use intern::Interner;
use linemap::{LineMap, Location};

/// A syntax error mapped to its original location.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Diagnostic {
    #[serde(flatten)]
    pub location: Location,
    pub message: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

/// A parsed translation unit.
pub struct ParsedTu {
    /// The input as the user named it (`.i`, `.c`, or compile_commands entry).
    pub name: String,
    pub text: String,
    pub linemap: LineMap,
    pub ast: Ast,
    pub interner: Interner,
    /// One per skipped external declaration.
    pub errors: Vec<Diagnostic>,
    /// External declarations that parsed cleanly.
    pub external_decls: usize,
}

/// A function definition found at file scope, for listings and cross-checks.
#[derive(Clone, Debug, serde::Serialize)]
pub struct FunctionInfo {
    pub name: String,
    #[serde(flatten)]
    pub location: Location,
}

pub fn parse_source(name: String, text: String) -> ParsedTu {
    let linemap = LineMap::new(&text, &name);
    let out = parser::parse(&text);
    let errors = out
        .errors
        .iter()
        .map(|e| Diagnostic {
            location: linemap.location(e.offset),
            message: e.message.clone(),
        })
        .collect();
    ParsedTu {
        name,
        text,
        linemap,
        ast: out.ast,
        interner: out.interner,
        errors,
        external_decls: out.external_decls,
    }
}

impl ParsedTu {
    pub fn function_count(&self) -> usize {
        self.ast
            .items
            .iter()
            .filter(|i| matches!(i, ExternalDecl::Function(_)))
            .count()
    }

    /// File-scope function definitions with the location of their name.
    pub fn functions(&self) -> Vec<FunctionInfo> {
        self.ast
            .items
            .iter()
            .filter_map(|item| match *item {
                ExternalDecl::Function(f) => {
                    let d = &self.ast.functions[f].declarator;
                    let name = self.interner.get(d.name?).to_string();
                    let location = self.linemap.location(self.name_offset(d.span.lo, &name));
                    Some(FunctionInfo { name, location })
                }
                _ => None,
            })
            .collect()
    }

    /// Offset of `name` at or after `from` (the declarator may start with `*` or attributes).
    fn name_offset(&self, from: u32, name: &str) -> u32 {
        let rest = &self.text.as_bytes()[from as usize..];
        let at = memchr::memmem::find_iter(rest, name.as_bytes()).find(|&i| {
            let before = if i == 0 { None } else { rest.get(i - 1) };
            let after = rest.get(i + name.len());
            let word = |c: Option<&u8>| c.is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_');
            !word(before) && !word(after)
        });
        from + at.unwrap_or(0) as u32
    }

    /// Heap bytes of the tree, interner and line map (not the text).
    pub fn heap_bytes(&self) -> usize {
        self.ast.heap_bytes() + self.interner.heap_bytes() + self.linemap.heap_bytes()
    }
}
