//! `relay ir`: lower and link translation units, print the program's IR.

use std::io::Write;

use anyhow::Result;
use clap::Args;

use super::{exit, InputArgs};
use crate::driver;

#[derive(Args, Debug)]
pub struct IrArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Print only the function(s) with this name (and no globals).
    #[arg(long, value_name = "NAME")]
    pub function: Option<String>,
}

pub fn run(args: &IrArgs) -> Result<i32> {
    let inputs = args.input.inputs()?;
    let pool = args.input.pool()?;
    let build = driver::build(&inputs, &pool, driver::BuildOptions::default());
    let program = &build.program;
    let mut problems = 0;
    for u in &build.units {
        if let Some(e) = &u.load_error {
            eprintln!("error: {}: {e}", u.tu);
            problems += 1;
        }
        for e in &u.parse_errors {
            eprintln!("error: {e} (declaration skipped)");
            problems += 1;
        }
    }
    let mut out = std::io::stdout().lock();
    let p = program.printer();
    for unit in &program.units {
        for d in &unit.diagnostics {
            eprintln!("warning: {}: {} (lowering)", p.loc(d.loc), d.message);
        }
    }
    if args.function.is_none() {
        for g in &program.globals {
            write!(out, "{}", p.global(&g.global))?;
        }
    }
    for f in &program.functions {
        let Some(body) = &f.body else { continue };
        if args
            .function
            .as_deref()
            .is_some_and(|n| program.names.get(f.name) != n)
        {
            continue;
        }
        writeln!(out)?;
        write!(out, "{}", p.function(body))?;
    }
    Ok(if problems > 0 {
        exit::FINDINGS
    } else {
        exit::OK
    })
}
