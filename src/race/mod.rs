//! Warning generation (RELAY §3.4, Figure 7, and the analyses past it): thread entries
//! ([`entries`]), racing access pairs between them ([`pairs`]), RELAY's heuristic filters
//! ([`filters`]), the report built from the result ([`report`]), and the saved run
//! ([`saved`]) every report is made from, so that `relay report` needs no re-analysis.

mod candidates;
mod check;
pub mod entries;
pub mod families;
pub mod filters;
mod found;
pub mod memo;
mod objects;
pub mod pairs;
pub mod report;
mod rows;
pub mod saved;
mod types;
mod wholes;

use serde::Serialize;

use crate::callgraph::CallGraph;
use crate::link::Program;
use crate::pta::PointsTo;
use crate::summary::Summaries;

pub use entries::{thread_entries, ThreadEntry};
pub use filters::{FactFinder, Filter, FilterConfig, FilterFacts};
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
    /// Accesses of incompatible types are not paired ([`types`]).
    pub type_alias: bool,
    /// One warning per racing access, with its first conflicting access, instead of one per
    /// pair of sites (`--per-access`, [`pairs`]).
    pub per_access: bool,
    /// Accesses whose sites touch disjoint objects are not paired ([`objects`]).
    pub objects: Option<&'a crate::pta::inclusion::SiteObjects>,
    /// Progress of the pair stage on stderr.
    pub progress: bool,
    /// What a previous run's pair stage found by bucket ([`memo`]): its buckets are replayed,
    /// and this run's are returned for the next. `None`: neither (no cache).
    pub memo: Option<memo::MemoInput<'a>>,
}

/// Every racing pair before filters, sorted by access locations, with its filter facts; and,
/// when `input.memo` is given, what each bucket found ([`memo`]).
pub fn pairs_with_facts<'a>(
    input: &RaceInput<'a>,
) -> (
    Vec<(pairs::Pair<'a>, FilterFacts)>,
    PairStats,
    Option<memo::PairMemo>,
) {
    let (pairs, stats, memo) = pairs::racing_pairs(input, input.summaries);
    let mut finder = FactFinder::new(filters::FilterContext {
        program: input.program,
        pta: input.pta,
        cg: input.cg,
        entries: input.entries,
    });
    let pairs = pairs
        .into_iter()
        .map(|p| {
            let facts = finder.facts(&p);
            (p, facts)
        })
        .collect();
    (pairs, stats, memo)
}

/// All warnings (filtered ones included, marked), sorted by their access locations.
pub fn warnings<'a>(input: &RaceInput<'a>, config: &FilterConfig) -> (Vec<Warning<'a>>, RaceStats) {
    let (pairs, pair_stats, _) = pairs_with_facts(input);
    let warnings: Vec<Warning<'a>> = pairs
        .into_iter()
        .map(|(p, facts)| Warning {
            first: p.first,
            second: p.second,
            filtered_by: facts.matching(config),
        })
        .collect();
    let stats = RaceStats::count(
        pair_stats,
        config,
        warnings.iter().map(|w| w.filtered_by.as_slice()),
    );
    (warnings, stats)
}

impl RaceStats {
    /// The counts of a run: `filtered_by` gives, for every warning before filters, the filters
    /// that remove it (in RELAY's order).
    pub fn count<'f>(
        pairs: PairStats,
        config: &FilterConfig,
        filtered_by: impl Iterator<Item = &'f [Filter]>,
    ) -> RaceStats {
        let mut before = 0;
        // Removed by this filter and by no earlier one.
        let mut removed = [0usize; Filter::ALL.len()];
        for fs in filtered_by {
            before += 1;
            if let Some(f) = fs.first() {
                removed[f.index()] += 1;
            }
        }
        let mut remaining = before;
        let filters = Filter::ALL
            .into_iter()
            .map(|f| {
                remaining -= removed[f.index()];
                FilterCount {
                    filter: f.name(),
                    enabled: config.is_enabled(f),
                    removed: removed[f.index()],
                    remaining,
                }
            })
            .collect();
        RaceStats {
            pairs,
            before_filters: before,
            filters,
            after_filters: remaining,
        }
    }
}
