//! Warning generation (RELAY §3.4, Figure 7, and the analyses past it): thread entries
//! ([`entries`]), racing access pairs between them ([`pairs`]), RELAY's heuristic filters
//! ([`filters`]), and the report built from the result ([`report`]).

pub mod entries;
pub mod filters;
pub mod pairs;
pub mod report;

use serde::Serialize;

use crate::callgraph::CallGraph;
use crate::link::Program;
use crate::pta::PointsTo;
use crate::summary::Summaries;

pub use entries::{thread_entries, ThreadEntry};
pub use filters::{Filter, FilterConfig};
pub use pairs::{PairStats, Side};

/// A race: two accesses from concurrent entries, and the enabled filters that remove it.
#[derive(Clone, Debug)]
pub struct Warning<'a> {
    pub first: Side<'a>,
    pub second: Side<'a>,
    /// Empty: reported. Otherwise the filters that remove it, in RELAY's order.
    pub filtered_by: Vec<Filter>,
}

/// One row of the filter table: applied in order, each counts what it removes among the
/// warnings the earlier ones kept.
#[derive(Clone, Debug, Serialize)]
pub struct FilterCount {
    pub filter: &'static str,
    pub enabled: bool,
    pub removed: usize,
    pub remaining: usize,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct RaceStats {
    pub pairs: PairStats,
    pub before_filters: usize,
    pub filters: Vec<FilterCount>,
    /// Warnings no filter removes.
    pub after_filters: usize,
}

/// What warning generation reads.
pub struct RaceInput<'a> {
    pub program: &'a Program,
    pub pta: &'a PointsTo,
    pub cg: &'a CallGraph,
    pub summaries: &'a Summaries,
    pub entries: &'a [ThreadEntry],
}

/// All warnings (filtered ones included, marked), sorted by their access locations.
pub fn warnings<'a>(input: &RaceInput<'a>, config: &FilterConfig) -> (Vec<Warning<'a>>, RaceStats) {
    let (pairs, pair_stats) = pairs::racing_pairs(input.program, input.summaries, input.entries);
    let mut filters = filters::Filters::new(
        filters::FilterContext {
            program: input.program,
            pta: input.pta,
            cg: input.cg,
            entries: input.entries,
        },
        config,
    );
    let warnings: Vec<Warning<'a>> = pairs
        .into_iter()
        .map(|p| {
            let filtered_by = filters.matching(&p);
            Warning {
                first: p.first,
                second: p.second,
                filtered_by,
            }
        })
        .collect();
    let mut remaining = warnings.len();
    let counts = Filter::ALL
        .into_iter()
        .map(|f| {
            let enabled = config.is_enabled(f);
            // Removed by this filter and by no earlier one.
            let removed = warnings
                .iter()
                .filter(|w| w.filtered_by.first() == Some(&f))
                .count();
            remaining -= removed;
            FilterCount {
                filter: f.name(),
                enabled,
                removed,
                remaining,
            }
        })
        .collect();
    let stats = RaceStats {
        pairs: pair_stats,
        before_filters: warnings.len(),
        filters: counts,
        after_filters: remaining,
    };
    (warnings, stats)
}
