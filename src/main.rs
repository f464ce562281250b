use clap::{Parser, Subcommand};

use relay::cli::{self, exit};

/// The analyses allocate and free millions of small paths, locksets and witnesses from two or
/// more threads; mimalloc's thread-local free lists make that about twice as fast as glibc's
/// malloc (measured on SQLite's summaries, see scripts/bench-summaries.sh).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (its position in `mi_option_t`, v2 and v3 alike; the sys
/// crate has no constant for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Never give freed memory back to the OS before exit. By default mimalloc does so 10 ms after
/// it is freed, and relay frees and reallocates gigabytes between stages (each cached unit
/// decoded, linked and dropped): every page given back is faulted in and zeroed again when
/// reused. Measured on a one-line edit of the kernel defconfig: 63,253 → 1,792 page faults,
/// 42.9 → 37.9 s CPU. The peak is unchanged: kept pages are what the next allocations reuse.
fn keep_freed_memory() {
    // SAFETY: sets one of mimalloc's integer options; any value is valid for this one.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
}

/// relay: a static data-race detector for C.
#[derive(Parser, Debug)]
#[command(name = "relay", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Parse translation units and report totals and syntax errors.
    Parse(cli::parse::ParseArgs),
    /// Lower translation units to the IR and print it.
    Ir(cli::ir::IrArgs),
    /// Points-to analysis and the call graph: edges, SCCs, unresolved indirect calls.
    Callgraph(cli::callgraph::CallGraphArgs),
    /// Function summaries: relative locksets and guarded accesses (RELAY Figure 1).
    Summary(cli::summary::SummaryArgs),
    /// Find data races: the whole pipeline, filters, and a report (text, JSON, SARIF).
    Analyze(Box<cli::analyze::AnalyzeArgs>),
    /// Report the last `relay analyze` run again from the cache, with other filters, group,
    /// baseline or format: no C is read or analysed.
    Report(cli::report::ReportCommand),
    /// The cache of a directory's runs (parsed units, summaries, findings): `stats` (entries
    /// and bytes per kind) or `clear`.
    Cache(cli::cache::CacheCommand),
}

fn main() {
    keep_freed_memory();
    let args = match Cli::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let result = match &args.command {
        Command::Parse(a) => cli::parse::run(a),
        Command::Ir(a) => cli::ir::run(a),
        Command::Callgraph(a) => cli::callgraph::run(a),
        Command::Summary(a) => cli::summary::run(a),
        Command::Analyze(a) => cli::analyze::run(a),
        Command::Report(a) => cli::report::run(a),
        Command::Cache(a) => cli::cache::run(a),
    };
    match result {
        Ok(code) => std::process::exit(code),
        // A closed pipe (`relay ... | head`) is not an error worth reporting.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            std::process::exit(exit::OK)
        }
        Err(e) => {
            eprintln!("relay: error: {e:#}");
            std::process::exit(exit::USAGE);
        }
    }
}
