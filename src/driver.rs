//! The front half of the pipeline: inputs → preprocessed text → syntax tree → IR → linked
//! program, with units read, parsed and lowered in parallel and linked as they finish.

use std::sync::{Arc, Mutex};

use rayon::prelude::*;

use crate::frontend::ast::ExternalDecl;
use crate::frontend::input::Input;
use crate::frontend::lower::lower_unit_with;
use crate::frontend::{parse_streaming, Diagnostic, FunctionInfo, ItemView};
use crate::ir::names::Names;
use crate::link::{Linker, Program};

/// What one unit contributed, besides its IR.
#[derive(Debug, Default)]
pub struct UnitReport {
    pub tu: String,
    pub bytes: u64,
    /// The unit could not be read or preprocessed.
    pub load_error: Option<String>,
    pub external_decls: usize,
    pub function_definitions: usize,
    /// One per skipped external declaration.
    pub parse_errors: Vec<Diagnostic>,
    /// File-scope function definitions, when asked for.
    pub functions: Vec<FunctionInfo>,
}

/// What to do with each unit.
#[derive(Copy, Clone, Debug, Default)]
pub struct BuildOptions {
    /// Collect the file-scope function definitions of each unit.
    pub list_functions: bool,
    /// Parse only: no lowering, and an empty program.
    pub syntax_only: bool,
}

pub struct Build {
    pub program: Program,
    /// In input order.
    pub units: Vec<UnitReport>,
}

/// Reads, parses, lowers and links every input on `pool`.
pub fn build(inputs: &[Input], pool: &rayon::ThreadPool, options: BuildOptions) -> Build {
    let names = Arc::new(Names::new());
    let linker = Mutex::new(Linker::new(names.clone()));
    let units: Vec<UnitReport> = pool.install(|| {
        inputs
            .par_iter()
            .enumerate()
            .map(|(i, input)| {
                let mut report = UnitReport {
                    tu: input.display_name(),
                    ..Default::default()
                };
                let text = match input.load() {
                    Ok(t) => t,
                    Err(e) => {
                        report.load_error = Some(format!("{e:#}"));
                        return report;
                    }
                };
                report.bytes = text.len() as u64;
                let mut functions = Vec::new();
                let mut on_item = |item: &ItemView<'_>| {
                    if options.list_functions {
                        functions.extend(item.function_info());
                    }
                };
                if options.syntax_only {
                    let summary = parse_streaming(report.tu.clone(), &text, |item| {
                        on_item(item);
                        report.function_definitions +=
                            matches!(item.item, ExternalDecl::Function(_)) as usize;
                    });
                    report.functions = functions;
                    report.external_decls = summary.external_decls;
                    report.parse_errors = summary.errors;
                    return report;
                }
                let out = lower_unit_with(report.tu.clone(), &text, &names, on_item);
                drop(text);
                report.functions = functions;
                report.external_decls = out.external_decls;
                report.function_definitions = out.function_definitions;
                report.parse_errors = out.parse_errors;
                linker
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .add(i as u32, out.unit);
                report
            })
            .collect()
    });
    let program = linker
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .finish();
    Build { program, units }
}
