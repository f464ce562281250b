//! `relay parse`: parse every translation unit and report totals and syntax errors.

use std::io::Write;
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use serde::Serialize;

use super::{exit, Format, InputArgs};
use crate::driver;
use crate::frontend::FunctionInfo;

#[derive(Args, Debug)]
pub struct ParseArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Also list every file-scope function definition (name and original location).
    #[arg(long)]
    pub list_functions: bool,
    /// Parse only: skip lowering to the IR (the `ir` totals stay zero).
    #[arg(long)]
    pub syntax_only: bool,
    #[command(flatten)]
    pub cache: super::cache::CacheArgs,
}

/// One syntax error or unreadable input.
#[derive(Serialize, Debug)]
pub struct ErrorEntry {
    /// The translation unit (input path).
    pub tu: String,
    /// The original source file (from line markers).
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub message: String,
}

#[derive(Serialize, Debug)]
pub struct FunctionEntry {
    pub tu: String,
    #[serde(flatten)]
    pub info: FunctionInfo,
}

/// IR totals: what lowering and linking produced.
#[derive(Serialize, Debug, Default)]
pub struct IrTotals {
    /// Function definitions lowered, after identical header copies were merged.
    pub functions_lowered: usize,
    /// Identical `static inline` copies merged away by the linker.
    pub duplicates_removed: usize,
    pub instructions: usize,
    pub globals: usize,
    /// Functions called or declared but defined in no unit.
    pub externals: usize,
    /// Constructs that could not be lowered faithfully (listed in `lowering_errors`).
    pub lowering_failures: usize,
}

/// Totals of a parse run. Field names are part of the JSON contract (version 1).
#[derive(Serialize, Debug, Default)]
pub struct ParseReport {
    pub version: u32,
    pub files: usize,
    pub clean_files: usize,
    /// Inputs that could not be read or preprocessed.
    pub failed_files: usize,
    pub external_decls: usize,
    pub functions: usize,
    pub skipped_decls: usize,
    pub bytes: u64,
    pub seconds: f64,
    /// Units parsed by this run, and units loaded from the cache instead.
    pub units_parsed: usize,
    pub units_reused: usize,
    pub errors: Vec<ErrorEntry>,
    pub ir: IrTotals,
    pub lowering_errors: Vec<ErrorEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function_list: Option<Vec<FunctionEntry>>,
}

pub fn run(args: &ParseArgs) -> Result<i32> {
    let inputs = args.input.inputs()?;
    let pool = args.input.pool()?;
    let start = Instant::now();
    let store = args.cache.open()?;
    let options = driver::BuildOptions {
        list_functions: args.list_functions,
        syntax_only: args.syntax_only,
        cache: store.as_ref(),
        progress: true,
        probed: &[],
        file_status: None,
    };
    let build = driver::build(&inputs, &pool, options);
    super::cache::collect_after_run(store.as_ref(), false);
    let mut report = ParseReport {
        version: 1,
        files: build.units.len(),
        units_parsed: build.units_parsed,
        units_reused: build.units_reused,
        ..Default::default()
    };
    let mut functions = Vec::new();
    for u in build.units {
        report.bytes += u.bytes;
        report.external_decls += u.external_decls;
        report.functions += u.function_definitions;
        if let Some(e) = u.load_error {
            report.failed_files += 1;
            report.errors.push(ErrorEntry {
                tu: u.tu.clone(),
                file: u.tu,
                line: 0,
                col: 0,
                message: e,
            });
            continue;
        }
        report.clean_files += u.parse_errors.is_empty() as usize;
        report.skipped_decls += u.parse_errors.len();
        report
            .errors
            .extend(u.parse_errors.into_iter().map(|d| ErrorEntry {
                tu: u.tu.clone(),
                file: d.location.file,
                line: d.location.line,
                col: d.location.col,
                message: d.message,
            }));
        functions.extend(u.functions.into_iter().map(|info| FunctionEntry {
            tu: u.tu.clone(),
            info,
        }));
    }
    let program = &build.program;
    report.ir = IrTotals {
        functions_lowered: program.stats.functions_defined,
        duplicates_removed: program.stats.duplicates_removed,
        instructions: program
            .functions
            .iter()
            .filter_map(|f| f.body.as_ref())
            .map(instruction_count)
            .sum(),
        globals: program.globals.len(),
        externals: program.stats.externals,
        lowering_failures: 0,
    };
    for unit in &program.units {
        for d in &unit.diagnostics {
            let file = program
                .files
                .get(d.loc.file as usize)
                .cloned()
                .unwrap_or_default();
            report.lowering_errors.push(ErrorEntry {
                tu: unit.name.clone(),
                file,
                line: d.loc.line,
                col: d.loc.col,
                message: d.message.clone(),
            });
        }
    }
    report.ir.lowering_failures = report.lowering_errors.len();
    report.seconds = start.elapsed().as_secs_f64();
    if args.list_functions {
        report.function_list = Some(functions);
    }
    print_report(&report, args.format)?;
    Ok(if report.failed_files > 0 {
        exit::USAGE
    } else if report.skipped_decls > 0 {
        exit::FINDINGS
    } else {
        exit::OK
    })
}

fn instruction_count(f: &crate::ir::Function) -> usize {
    f.blocks.iter().map(|b| b.instrs.len() + 1).sum()
}

fn print_report(r: &ParseReport, format: Format) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match format {
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(r)?)?,
        Format::Text => {
            if let Some(list) = &r.function_list {
                for f in list {
                    writeln!(
                        out,
                        "{}\t{}:{}\t{}",
                        f.tu, f.info.location.file, f.info.location.line, f.info.name
                    )?;
                }
            }
            for e in &r.errors {
                if e.line == 0 {
                    eprintln!("error: {}: {}", e.tu, e.message);
                } else {
                    eprintln!(
                        "error: {}:{}:{}: {} (declaration skipped; in {})",
                        e.file, e.line, e.col, e.message, e.tu
                    );
                }
            }
            for e in &r.lowering_errors {
                eprintln!(
                    "warning: {}:{}:{}: {} (lowering; in {})",
                    e.file, e.line, e.col, e.message, e.tu
                );
            }
            let ir = &r.ir;
            writeln!(
                out,
                "lowered {} functions ({} identical copies merged), {} instructions, {} globals, {} external functions, \
                 {} lowering failures",
                ir.functions_lowered, ir.duplicates_removed, ir.instructions, ir.globals, ir.externals, ir.lowering_failures
            )?;
            if r.units_reused > 0 {
                writeln!(
                    out,
                    "units reused from cache: {} ({} parsed)",
                    r.units_reused, r.units_parsed
                )?;
            }
            let mb = r.bytes as f64 / 1e6;
            writeln!(
                out,
                "parsed {} files ({} clean, {} unreadable): {} external declarations, {} function definitions, \
                 {} skipped declarations; {:.1} MB in {:.2} s ({:.1} MB/s)",
                r.files,
                r.clean_files,
                r.failed_files,
                r.external_decls,
                r.functions,
                r.skipped_decls,
                mb,
                r.seconds,
                if r.seconds > 0.0 { mb / r.seconds } else { 0.0 }
            )?;
        }
    }
    Ok(())
}
