//! `relay parse`: parse every translation unit and report totals and syntax errors.

use std::io::Write;
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use rayon::prelude::*;
use serde::Serialize;

use super::{exit, Format, InputArgs};
use crate::frontend::{self, FunctionInfo};

#[derive(Args, Debug)]
pub struct ParseArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Also list every file-scope function definition (name and original location).
    #[arg(long)]
    pub list_functions: bool,
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
    pub errors: Vec<ErrorEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function_list: Option<Vec<FunctionEntry>>,
}

/// What one worker learns from one unit; the tree itself is dropped before this is returned.
struct UnitResult {
    bytes: u64,
    external_decls: usize,
    functions: usize,
    errors: Vec<ErrorEntry>,
    failed: bool,
    function_list: Vec<FunctionEntry>,
}

pub fn run(args: &ParseArgs) -> Result<i32> {
    let inputs = args.input.inputs()?;
    let pool = args.input.pool()?;
    let start = Instant::now();
    let results: Vec<UnitResult> = pool.install(|| {
        inputs
            .par_iter()
            .map(|input| parse_unit(input, args.list_functions))
            .collect()
    });
    let mut report = ParseReport {
        version: 1,
        files: results.len(),
        ..Default::default()
    };
    let mut functions = Vec::new();
    for r in results {
        report.bytes += r.bytes;
        report.external_decls += r.external_decls;
        report.functions += r.functions;
        report.failed_files += r.failed as usize;
        report.clean_files += (!r.failed && r.errors.is_empty()) as usize;
        if !r.failed {
            report.skipped_decls += r.errors.len();
        }
        report.errors.extend(r.errors);
        functions.extend(r.function_list);
    }
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

fn parse_unit(input: &frontend::input::Input, list_functions: bool) -> UnitResult {
    let tu = input.display_name();
    let text = match input.load() {
        Ok(t) => t,
        Err(e) => {
            let error = ErrorEntry {
                tu: tu.clone(),
                file: tu,
                line: 0,
                col: 0,
                message: format!("{e:#}"),
            };
            return UnitResult {
                bytes: 0,
                external_decls: 0,
                functions: 0,
                errors: vec![error],
                failed: true,
                function_list: vec![],
            };
        }
    };
    let bytes = text.len() as u64;
    let mut functions = 0;
    let mut function_list = Vec::new();
    let summary = frontend::parse_streaming(tu.clone(), &text, |item| {
        if let Some(info) = item.function_info() {
            functions += 1;
            if list_functions {
                function_list.push(FunctionEntry {
                    tu: tu.clone(),
                    info,
                });
            }
        }
    });
    let errors = summary
        .errors
        .iter()
        .map(|d| ErrorEntry {
            tu: tu.clone(),
            file: d.location.file.clone(),
            line: d.location.line,
            col: d.location.col,
            message: d.message.clone(),
        })
        .collect();
    UnitResult {
        bytes,
        external_decls: summary.external_decls,
        functions,
        errors,
        failed: false,
        function_list,
    }
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
