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
pub mod lower;
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
    let errors = diagnostics(&linemap, &out.errors);
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

/// Everything a streamed parse leaves behind once the trees are gone.
pub struct TuSummary {
    pub name: String,
    pub linemap: LineMap,
    pub interner: Interner,
    pub errors: Vec<Diagnostic>,
    pub external_decls: usize,
}

/// One external declaration, handed to the caller of [`parse_streaming`] while its tree exists.
pub struct ItemView<'a> {
    pub item: ExternalDecl,
    pub ast: &'a Ast,
    pub interner: &'a Interner,
    pub linemap: &'a LineMap,
    pub text: &'a str,
}

impl ItemView<'_> {
    /// Name and location if the item is a function definition.
    pub fn function_info(&self) -> Option<FunctionInfo> {
        let ExternalDecl::Function(f) = self.item else {
            return None;
        };
        let d = &self.ast.functions[f].declarator;
        let name = self.interner.get(d.name?).to_string();
        let location = self.linemap.location(d.name_at);
        Some(FunctionInfo { name, location })
    }
}

/// Parses one unit declaration by declaration, clearing the tree after `on_item` has seen each
/// one: peak memory is the text, the line map, the interner and the largest declaration.
pub fn parse_streaming(
    name: String,
    text: &str,
    mut on_item: impl FnMut(&ItemView<'_>),
) -> TuSummary {
    let linemap = LineMap::new(text, &name);
    let mut p = parser::Parser::new(text);
    while let Some(item) = p.next_item() {
        if let Ok(item) = item {
            on_item(&ItemView {
                item,
                ast: p.ast(),
                interner: p.interner(),
                linemap: &linemap,
                text,
            });
        }
        p.clear_tree();
    }
    let out = p.finish();
    let errors = diagnostics(&linemap, &out.errors);
    TuSummary {
        name,
        linemap,
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
        let view = |item| ItemView {
            item,
            ast: &self.ast,
            interner: &self.interner,
            linemap: &self.linemap,
            text: &self.text,
        };
        self.ast
            .items
            .iter()
            .filter_map(|&item| view(item).function_info())
            .collect()
    }

    /// Heap bytes of the tree, interner and line map (not the text).
    pub fn heap_bytes(&self) -> usize {
        self.ast.heap_bytes() + self.interner.heap_bytes() + self.linemap.heap_bytes()
    }
}

/// Syntax errors mapped to their original locations.
fn diagnostics(linemap: &LineMap, errors: &[parser::SyntaxError]) -> Vec<Diagnostic> {
    errors
        .iter()
        .map(|e| Diagnostic {
            location: linemap.location(e.offset),
            message: e.message.clone(),
        })
        .collect()
}
