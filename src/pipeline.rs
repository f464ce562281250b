//! The analysis pipeline after the front end, as one call: points-to → call graph → summaries
//! → thread entries → warnings. The CLI and the fixture tests both go through here.

use std::time::Instant;

use crate::callgraph::CallGraph;
use crate::link::Program;
use crate::models::Models;
use crate::pta::{FieldMode, PointsTo};
use crate::race::{self, RaceStats, ThreadEntry, Warning};
use crate::schedule;
use crate::summary::{self, Summaries};

#[derive(Clone, Debug)]
pub struct Options {
    pub fields: FieldMode,
    pub schedule: schedule::Options,
}

impl Default for Options {
    /// Field-based points-to, all CPUs, the summaries' round bound (as `relay summary`).
    fn default() -> Self {
        Options {
            fields: FieldMode::default(),
            schedule: schedule::Options {
                max_rounds: summary::DEFAULT_MAX_ROUNDS,
                ..Default::default()
            },
        }
    }
}

/// Wall-clock seconds of each stage.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct StageTimes {
    pub points_to: f64,
    pub callgraph: f64,
    pub summaries: f64,
}

pub struct Analysis {
    pub pta: PointsTo,
    pub cg: CallGraph,
    pub summaries: Summaries,
    pub entries: Vec<ThreadEntry>,
    pub times: StageTimes,
}

impl Analysis {
    /// The warnings between the thread entries (they borrow the summaries).
    pub fn warnings(&self, program: &Program) -> (Vec<Warning<'_>>, RaceStats) {
        race::warnings(program, &self.summaries, &self.entries)
    }
}

/// Points-to, call graph and summaries (everything `relay summary` needs).
pub fn summarize(
    program: &Program,
    models: &Models,
    options: &Options,
) -> (PointsTo, CallGraph, Summaries, StageTimes) {
    let t0 = Instant::now();
    let pta = PointsTo::analyze_with_models(program, options.fields, models);
    let t1 = Instant::now();
    let cg = CallGraph::build(program, &pta);
    let t2 = Instant::now();
    let sums = summary::compute(program, &pta, &cg, models, &options.schedule);
    let t3 = Instant::now();
    let times = StageTimes {
        points_to: (t1 - t0).as_secs_f64(),
        callgraph: (t2 - t1).as_secs_f64(),
        summaries: (t3 - t2).as_secs_f64(),
    };
    (pta, cg, sums, times)
}

/// The whole pipeline up to the thread entries; [`Analysis::warnings`] pairs their accesses.
pub fn analyze(program: &Program, models: &Models, options: &Options) -> Analysis {
    let (pta, cg, summaries, times) = summarize(program, models, options);
    let entries = race::thread_entries(program, &cg, &summaries, &[]);
    Analysis {
        pta,
        cg,
        summaries,
        entries,
        times,
    }
}
