//! `relay ir`: lower translation units and print their IR.

use std::io::Write;

use anyhow::Result;
use clap::Args;
use rayon::prelude::*;

use super::{exit, InputArgs};
use crate::frontend::lower::{lower_unit, LowerOutput};
use crate::ir::names::Names;
use crate::ir::print::Printer;

#[derive(Args, Debug)]
pub struct IrArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Print only the function(s) with this name.
    #[arg(long, value_name = "NAME")]
    pub function: Option<String>,
}

pub fn run(args: &IrArgs) -> Result<i32> {
    let inputs = args.input.inputs()?;
    let pool = args.input.pool()?;
    let names = Names::new();
    let units: Vec<Result<LowerOutput>> = pool.install(|| {
        inputs
            .par_iter()
            .map(|input| {
                let text = input.load()?;
                Ok(lower_unit(input.display_name(), &text, &names))
            })
            .collect()
    });
    let mut out = std::io::stdout().lock();
    let mut problems = 0;
    for (input, unit) in inputs.iter().zip(units) {
        let unit = match unit {
            Ok(u) => u,
            Err(e) => {
                eprintln!("error: {}: {e:#}", input.display_name());
                problems += 1;
                continue;
            }
        };
        for e in &unit.parse_errors {
            eprintln!("error: {e} (declaration skipped)");
            problems += 1;
        }
        let u = &unit.unit;
        let name_of = |_: crate::ir::FuncId| String::from("?");
        let p = Printer {
            names: &names,
            types: &u.types,
            globals: &u.globals,
            strings: &u.strings,
            files: &u.files,
            function_name: &name_of,
        };
        for d in &u.diagnostics {
            eprintln!("warning: {}: {}", p.loc(d.loc), d.message);
        }
        let wanted =
            |n: crate::ir::Name| args.function.as_deref().is_none_or(|f| names.get(n) == f);
        if args.function.is_none() {
            for g in &u.globals {
                write!(out, "{}", p.global(g))?;
            }
        }
        for f in u.functions.iter().filter(|f| wanted(f.name)) {
            writeln!(out)?;
            write!(out, "{}", p.function(f))?;
        }
    }
    Ok(if problems > 0 {
        exit::FINDINGS
    } else {
        exit::OK
    })
}
