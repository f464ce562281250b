//! `relay callgraph`: points-to analysis and the call graph (direct and indirect calls, SCCs).

use std::io::Write;
use std::time::Instant;

use anyhow::Result;
use clap::{Args, ValueEnum};
use serde::Serialize;

use super::PointsToArgs;
use super::{exit, Frontend, FrontendTotals, InputArgs};
use crate::callgraph::{CallGraph, CallGraphStats, EdgeKind};
use crate::ir::{Expr, FuncId, Instr, Loc};
use crate::link::Program;
use crate::pta::{Origin, PointsTo, PtaStats};

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    Text,
    Json,
    Dot,
}

#[derive(Args, Debug)]
pub struct CallGraphArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[arg(long, value_enum, default_value = "text")]
    pub format: GraphFormat,
    #[command(flatten)]
    pub pta: PointsToArgs,
    /// Also time the scheduler on a toy bottom-up analysis ("functions transitively called"),
    /// with 1 thread and with `-j` threads (a benchmark of the scheduler).
    #[arg(long)]
    pub bench_schedule: bool,
    /// In text output, list at most this many recursive SCCs and unresolved calls.
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
}

#[derive(Serialize)]
struct Site {
    file: String,
    line: u32,
    col: u32,
}

#[derive(Serialize)]
struct EdgeOut {
    caller: String,
    callee: String,
    kind: EdgeKind,
    #[serde(flatten)]
    site: Site,
}

#[derive(Serialize)]
struct Unresolved {
    caller: String,
    #[serde(flatten)]
    site: Site,
}

#[derive(Serialize)]
struct LargestClass {
    size: usize,
    /// Up to 50 members, described.
    members: Vec<String>,
    /// Up to 20 unifications of two large classes that built it, the most balanced first.
    merges: Vec<String>,
}

#[derive(Serialize)]
struct Timings {
    frontend_seconds: f64,
    points_to_seconds: f64,
    callgraph_seconds: f64,
    /// `--bench-schedule`: the toy analysis with 1 thread and with `jobs` threads.
    #[serde(skip_serializing_if = "Option::is_none")]
    schedule_toy: Option<ScheduleBench>,
}

#[derive(Serialize)]
struct ScheduleBench {
    jobs: usize,
    seconds_1: f64,
    seconds_n: f64,
}

/// The JSON report (version 1).
#[derive(Serialize)]
struct Report {
    version: u32,
    frontend: FrontendTotals,
    stats: CallGraphStats,
    points_to: PtaStats,
    /// The three largest classes.
    largest_classes: Vec<LargestClass>,
    recursive_sccs: Vec<Vec<String>>,
    unresolved: Vec<Unresolved>,
    edges: Vec<EdgeOut>,
    timings: Timings,
}

pub fn run(args: &CallGraphArgs) -> Result<i32> {
    let pool = args.input.pool()?;
    let models = crate::models::Models::builtin_ref();
    let t0 = Instant::now();
    let Frontend {
        program,
        totals: frontend,
        problems,
        ..
    } = super::build_program(&args.input, &pool, None, true, models)?;
    let t1 = Instant::now();
    let pta = PointsTo::analyze_with_options(&program, args.pta.fields, models, args.pta.world())
        .with_signature_filter(args.pta.signature_filter());
    let t2 = Instant::now();
    let cg = pool.install(|| CallGraph::build(&program, &pta));
    let t3 = Instant::now();
    let schedule_toy = args.bench_schedule.then(|| {
        let jobs = pool.current_num_threads();
        ScheduleBench {
            jobs,
            seconds_1: crate::schedule::bench_toy(&cg, 1).as_secs_f64(),
            seconds_n: crate::schedule::bench_toy(&cg, jobs).as_secs_f64(),
        }
    });
    let timings = Timings {
        frontend_seconds: (t1 - t0).as_secs_f64(),
        points_to_seconds: (t2 - t1).as_secs_f64(),
        callgraph_seconds: (t3 - t2).as_secs_f64(),
        schedule_toy,
    };
    let mut out = std::io::stdout().lock();
    match args.format {
        GraphFormat::Dot => write_dot(&mut out, &program, &cg)?,
        GraphFormat::Json => {
            let mut report = report(&program, &pta, &cg, timings);
            report.frontend = frontend;
            writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
        }
        GraphFormat::Text => write_text(&mut out, &program, &pta, &cg, &timings, args.limit)?,
    }
    Ok(if problems > 0 {
        exit::FINDINGS
    } else {
        exit::OK
    })
}

fn site(program: &Program, loc: Loc) -> Site {
    let file = program
        .files
        .get(loc.file as usize)
        .cloned()
        .unwrap_or_default();
    Site {
        file,
        line: loc.line,
        col: loc.col,
    }
}

/// A human-readable description of an abstract location.
fn describe(program: &Program, o: Origin) -> String {
    let fname = |f: FuncId| program.function_label(f);
    match o {
        Origin::Global(g) => program.global_name(g),
        Origin::Local(f, l) => {
            let name = program.functions[f.index()]
                .body
                .as_ref()
                .and_then(|b| b.locals.get(l.index()))
                .map_or("?".to_string(), |l| program.names.get(l.name).to_string());
            format!("{}:{name}", fname(f))
        }
        Origin::Return(f) => format!("return value of {}", fname(f)),
        Origin::Function(f) => format!("function {}", fname(f)),
        Origin::Str(s) => format!(
            "string {:?}",
            program.strings.get(s.index()).map_or("", |s| s.as_str())
        ),
        Origin::Alloc(f, loc) => {
            let s = site(program, loc);
            format!("allocation in {} at {}:{}", fname(f), s.file, s.line)
        }
        Origin::Field(r, name) => {
            let tag = program
                .types
                .record(r)
                .tag
                .map_or("<anon>", |t| program.names.get(t));
            format!("member {tag}.{}", program.names.get(name))
        }
        Origin::Fresh => "(anonymous)".into(),
    }
}

fn largest_classes(program: &Program, pta: &PointsTo) -> Vec<LargestClass> {
    pta.largest_classes(3)
        .into_iter()
        .map(|(class, size)| {
            let members = pta
                .class_members(class)
                .into_iter()
                .take(50)
                .map(|o| describe(program, o))
                .collect();
            let merges = pta
                .merges_into(class)
                .into_iter()
                .take(20)
                .map(|m| describe_merge(program, m))
                .collect();
            LargestClass {
                size,
                members,
                merges,
            }
        })
        .collect()
}

/// `{a, 5000 lvalues} + {b, 300 lvalues} by f at file:line`.
fn describe_merge(program: &Program, m: &crate::pta::Merge) -> String {
    use crate::pta::MergeCause;
    let at = |loc: Loc| {
        let s = site(program, loc);
        format!("{}:{}", s.file, s.line)
    };
    let cause = match m.cause {
        MergeCause::Instr(f, loc) => format!("in {} at {}", program.function_label(f), at(loc)),
        MergeCause::GlobalInit(g) => format!("by the initializer of {}", program.global_name(g)),
        MergeCause::Signature(f) => format!("by the signature of {}", program.function_label(f)),
        MergeCause::UnknownCallback(f, loc) => format!(
            "binding callbacks of a call of unknown code in {} at {}",
            program.function_label(f),
            at(loc)
        ),
        MergeCause::UnknownMemory => "by records handed to unknown code".into(),
    };
    format!(
        "{{{}, {} lvalues}} + {{{}, {} lvalues}} {cause}",
        describe(program, m.samples.0),
        m.sizes.0,
        describe(program, m.samples.1),
        m.sizes.1
    )
}

fn recursive_sccs(program: &Program, cg: &CallGraph) -> Vec<Vec<String>> {
    cg.sccs
        .iter()
        .filter(|s| s.recursive)
        .map(|s| {
            s.functions
                .iter()
                .map(|f| program.function_label(*f))
                .collect()
        })
        .collect()
}

/// What holds the largest recursive SCC together: its edges inside it, direct and indirect,
/// and the indirect call sites with the most targets inside it (by caller and site). A
/// collapsed SCC shares one summary, so every entry that reaches it is credited with all of
/// its accesses: these sites are where a more precise call graph would split it.
fn write_widest_calls_in_largest_scc(
    out: &mut impl Write,
    program: &Program,
    pta: &PointsTo,
    cg: &CallGraph,
    limit: usize,
) -> Result<()> {
    let Some(largest) = cg
        .sccs
        .iter()
        .enumerate()
        .filter(|(_, s)| s.recursive)
        .max_by_key(|(_, s)| s.functions.len())
        .map(|(i, _)| i)
    else {
        return Ok(());
    };
    let inside = |f: FuncId| cg.scc_of[f.index()].0 as usize == largest;
    let (mut direct, mut indirect) = (0usize, 0usize);
    let mut by_site: std::collections::BTreeMap<(FuncId, Loc), usize> = Default::default();
    for &caller in &cg.sccs[largest].functions {
        for e in cg.edges[caller.index()].iter().filter(|e| inside(e.callee)) {
            match e.kind {
                EdgeKind::Direct => direct += 1,
                _ => {
                    indirect += 1;
                    *by_site.entry((caller, e.loc)).or_default() += 1;
                }
            }
        }
    }
    writeln!(
        out,
        "largest recursive SCC: {} functions, {direct} direct and {indirect} indirect edges inside it; widest indirect calls inside it:",
        cg.sccs[largest].functions.len()
    )?;
    let mut sites: Vec<((FuncId, Loc), usize)> = by_site.into_iter().collect();
    sites.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for ((caller, loc), n) in sites.iter().take(limit) {
        let st = site(program, *loc);
        let through = indirect_callee(program, *caller, *loc)
            .map(|callee| format!("; {}", pta.describe_call_slot(program, *caller, callee)))
            .unwrap_or_default();
        writeln!(
            out,
            "  {}:{}:{}: in {}: {n} targets inside{through}",
            st.file,
            st.line,
            st.col,
            program.function_label(*caller)
        )?;
    }
    Ok(())
}

/// The callee expression of the indirect call at `loc` in `caller`.
fn indirect_callee(program: &Program, caller: FuncId, loc: Loc) -> Option<&Expr> {
    let body = program.functions.get(caller.index())?.body.as_ref()?;
    body.blocks
        .iter()
        .flat_map(|b| &b.instrs)
        .find_map(|i| match i {
            Instr::Call {
                callee, loc: at, ..
            } if *at == loc && callee.named_function().is_none() => Some(callee),
            _ => None,
        })
}

fn report(program: &Program, pta: &PointsTo, cg: &CallGraph, timings: Timings) -> Report {
    let edges = cg
        .edges
        .iter()
        .enumerate()
        .flat_map(|(caller, es)| {
            es.iter().map(move |e| EdgeOut {
                caller: program.function_label(FuncId(caller as u32)),
                callee: program.function_label(e.callee),
                kind: e.kind,
                site: site(program, e.loc),
            })
        })
        .collect();
    let unresolved = cg
        .unresolved
        .iter()
        .map(|u| Unresolved {
            caller: program.function_label(u.caller),
            site: site(program, u.loc),
        })
        .collect();
    Report {
        version: 1,
        frontend: FrontendTotals::default(),
        stats: cg.stats,
        points_to: pta.stats.clone(),
        largest_classes: largest_classes(program, pta),
        recursive_sccs: recursive_sccs(program, cg),
        unresolved,
        edges,
        timings,
    }
}

fn write_text(
    out: &mut impl Write,
    program: &Program,
    pta: &PointsTo,
    cg: &CallGraph,
    timings: &Timings,
    limit: usize,
) -> Result<()> {
    let s = &cg.stats;
    writeln!(
        out,
        "call graph: {} functions ({} defined), {} direct and {} indirect edges, {} SCCs ({} recursive, largest {})",
        s.functions, s.defined, s.edges_direct, s.edges_indirect, s.sccs, s.recursive_sccs, s.largest_scc
    )?;
    let p = &pta.stats;
    writeln!(
        out,
        "points-to: {} nodes in {} classes, {} unifications, {} allocation sites, {} thread creations; {} function-pointer slots ({} open)",
        p.nodes, p.classes, p.unifications, p.allocation_sites, p.thread_creations,
        p.function_pointer_slots, p.open_slots
    )?;
    if !p.open_slot_reasons.is_empty() {
        let reasons: Vec<String> = p
            .open_slot_reasons
            .iter()
            .map(|o| format!("{} {}: {}", o.kind, o.reason, o.slots))
            .collect();
        writeln!(out, "open slots by reason: {}", reasons.join(", "))?;
    }
    writeln!(
        out,
        "callbacks: {} escaped (thread entries of their own; {} handed to unknown externals), {} registered with a loop",
        p.escaped_callbacks, p.escaped_to_unknown, p.registered_callbacks
    )?;
    for (rank, l) in largest_classes(program, pta).iter().enumerate() {
        let shown = l
            .members
            .iter()
            .take(limit)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        let more = l.size.saturating_sub(limit.min(l.members.len()));
        let which = ["largest", "second largest", "third largest"][rank];
        writeln!(
            out,
            "{which} points-to class: {} lvalues: {shown}{}",
            l.size,
            more_note(more)
        )?;
        for m in l.merges.iter().take(limit) {
            writeln!(out, "  merged {m}")?;
        }
    }
    let rec = recursive_sccs(program, cg);
    for scc in rec.iter().take(limit) {
        writeln!(out, "recursive SCC: {}", scc.join(", "))?;
    }
    if rec.len() > limit {
        writeln!(
            out,
            "... and {} more recursive SCCs (--limit, or --format json for all)",
            rec.len() - limit
        )?;
    }
    write_widest_calls_in_largest_scc(out, program, pta, cg, limit)?;
    writeln!(
        out,
        "unresolved indirect calls: {} (of {} indirect call sites)",
        cg.unresolved.len(),
        s.call_sites_indirect
    )?;
    for u in cg.unresolved.iter().take(limit) {
        let st = site(program, u.loc);
        writeln!(
            out,
            "  {}:{}:{}: in {}",
            st.file,
            st.line,
            st.col,
            program.function_label(u.caller)
        )?;
    }
    if cg.unresolved.len() > limit {
        writeln!(out, "  ... and {} more", cg.unresolved.len() - limit)?;
    }
    writeln!(
        out,
        "time: front end {:.2} s, points-to {:.2} s, call graph + SCCs {:.2} s",
        timings.frontend_seconds, timings.points_to_seconds, timings.callgraph_seconds
    )?;
    if let Some(b) = &timings.schedule_toy {
        writeln!(
            out,
            "scheduler (toy analysis): {:.3} s with 1 thread, {:.3} s with {} ({:.2}x)",
            b.seconds_1,
            b.seconds_n,
            b.jobs,
            b.seconds_1 / b.seconds_n.max(1e-9)
        )?;
    }
    Ok(())
}

fn more_note(n: usize) -> String {
    if n > 0 {
        format!(", ... and {n} more")
    } else {
        String::new()
    }
}

fn write_dot(out: &mut impl Write, program: &Program, cg: &CallGraph) -> Result<()> {
    writeln!(out, "digraph callgraph {{")?;
    writeln!(out, "  node [shape=box, fontname=monospace];")?;
    for (i, f) in program.functions.iter().enumerate() {
        let style = if f.body.is_some() {
            ""
        } else {
            ", style=dashed"
        };
        writeln!(
            out,
            "  f{i} [label={:?}{style}];",
            program.function_label(FuncId(i as u32))
        )?;
    }
    for (caller, es) in cg.edges.iter().enumerate() {
        for e in es {
            let style = if e.kind == EdgeKind::Indirect {
                " [style=dashed]"
            } else {
                ""
            };
            writeln!(out, "  f{caller} -> f{}{style};", e.callee.0)?;
        }
    }
    writeln!(out, "}}")?;
    Ok(())
}
