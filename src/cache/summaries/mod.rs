//! The summaries cache: per call-graph SCC, an entry keyed by everything its summaries depend
//! on (RELAY's modularity: a function's summary depends only on its own body and its callees'
//! summaries):
//!
//! ```text
//! key(SCC) = H(context, for each function of the SCC: its label, declaration and body hash,
//!              for each callee outside the SCC: its label, declaration and the content hash
//!              of its summary)
//! context  = H(relay version and build, options, models)
//! ```
//!
//! The points-to partition and the records are not in the key: the entry keeps the classes
//! the SCC's analysis read and the records whose definitions it read, and the SCC is reused
//! only while they read the same ([`super::class_deps`]).
//!
//! (see [`super::fingerprint`]). The SCC's entry (kind `summary-meta`) is small: per function,
//! the *content hash* of its summary's stored form and the [`SummaryFacts`] the statistics
//! need. The summaries themselves are entries of kind `summary` keyed by their content hash
//! (identical ones stored once). So a stored SCC is reused without reading any summary — a
//! summary is loaded only when a re-analysed caller or the race stage reads it — and when a
//! re-analysed function's summary comes out identical, its callers' keys do not change and
//! they are reused (early cut-off). Summaries are stored in a portable form: interned names
//! become indices into the summary's own sorted name list, points-to classes indices into its
//! list of canonical class names ([`ClassTable`]); functions, globals and records become
//! indices into the summary's own tables of their labels ([`super::labels`]) and declaration
//! hashes, in id order (a run that finds them in another order does not use the summary: see
//! below).
//!
//! A location is stored as its rank among the *own locations* of the function whose body it
//! is in — the locations of that function's accesses and calls its own summary names — and
//! the SCC's entry keeps each function's own locations relative to the function's start. So
//! a caller's summary, which copies its callees' witnesses, does not change when lines move
//! inside a callee: an edit that adds a line re-analyses the edited function, and its callers'
//! stored summaries, loaded, name the new lines. (The program key names no location: the
//! saved findings are reused, rewritten to the new lines, see [`super::relocate`].) Ranks
//! keep the order of locations as long as functions keep theirs; function ids follow the order
//! of definitions, so a function moved past another changes the order of its sites and
//! another's: an SCC's callees are keyed in id order, and a summary whose functions' ids are
//! no longer in the stored order is not loaded (the run repeats without it). A summary naming
//! a location that is not among its function's own locations is not stored (counted as
//! unportable).
//!
//! A run's SCC entries are also packed into one, which the next run reads once instead of
//! an entry per SCC ([`metas`]). A collapsed SCC also keeps the steps of its latest fixpoint,
//! so that a re-run replays those an edit does not reach ([`steps`]).

mod constructors;
mod files;
mod finals;
mod metas;
mod portable;
mod steps;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use self::metas::SccEntry;
use self::portable::LoadError;
use super::class_deps::{ClassContext, ClassDeps, NodeNames, Read};
use super::classes::ClassTable;
use super::fingerprint::{self, ProgramText, RecordDefinitions};
use super::labels::Labels;
use super::relocate::LocTable;
use super::{Corruption, Key, KeyBuilder, Store};
use crate::callgraph::{CallGraph, Scc};
use crate::ir::{FuncId, Loc};
use crate::link::Program;
use crate::models::Models;
use crate::pta::PointsTo;
use crate::schedule::Digest;
use crate::summary::{SccSteps, SharedSets, Summary, SummaryFacts, SummaryStore};

/// Summaries in portable form, keyed by their content hash.
pub(crate) const KIND: &str = "summary";
/// Per SCC key, its functions' [`StoredFunction`]s (small: read without loading summaries).
pub(crate) const META: &str = "summary-meta";

pub(crate) use self::metas::{packed_keys, PACK, PREVIOUS};

/// What an SCC's entry holds for one of its functions.
#[derive(Clone, Serialize, Deserialize)]
struct StoredFunction {
    /// The content hash of its summary (the key of its `summary` entry), or of "no summary".
    content: [u8; 32],
    /// `None`: it has no summary.
    facts: Option<SummaryFacts>,
    /// Its own locations (see the module documentation), sorted, relative to its start
    /// ([`RELATIVE`]), or in another file ([`files`]).
    locs: Vec<Loc>,
    /// The other files `locs` name, by name.
    #[serde(default)]
    files: Vec<String>,
}

/// An SCC's entry (kind `summary-meta`): its functions', and what their summaries read of the
/// points-to partition ([`crate::cache::class_deps`]).
#[derive(Serialize, Deserialize)]
struct StoredScc {
    functions: Vec<StoredFunction>,
    classes: ClassDeps,
}

/// Counters of one run, and the key of its result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SummaryCacheStats {
    pub reused: usize,
    pub stored: usize,
    /// Summaries read from the cache (of reused SCCs, those something read).
    pub loaded: usize,
    /// SCCs whose summaries could not be stored (an id without a portable form).
    pub unportable: usize,
    /// Summaries of re-analysed collapsed SCCs stored as their fixpoint's last run stored
    /// them, without encoding them again ([`finals`]).
    pub kept: usize,
    /// Summaries that earlier attempts of the run could not load (a corrupt or deleted entry,
    /// or functions since moved past each other): each such attempt was repeated without them.
    pub lost_before: usize,
    /// SCCs found under their key whose analysis read answers of the points-to partition that
    /// changed ([`crate::cache::class_deps`]): analysed again.
    pub repartitioned: usize,
}

/// The summaries cache of one run (see the module documentation).
pub struct SummaryCache<'a> {
    store: &'a Store,
    program: &'a Program,
    pta: &'a PointsTo,
    cg: &'a CallGraph,
    classes: Arc<ClassTable>,
    context: Key,
    labels: Arc<Labels>,
    /// Every record's definition: SCCs' reads of them are checked against it, and the program
    /// key holds it.
    records: RecordDefinitions,
    /// What SCCs' reads of the partition and the records are recorded under
    /// ([`ClassContext::fingerprint_of`]).
    reads_fingerprint: [u8; 32],
    /// The ids as they are ([`ProgramText::layout`]): in the program key only.
    layout: Key,
    function_decls: Vec<u64>,
    global_decls: Vec<u64>,
    bodies: Vec<Option<Key>>,
    /// Per function: the content hash of its final summary, once its SCC is done.
    content: Vec<OnceLock<Key>>,
    /// Per function: its own locations (sorted by [`files::FileNames::order`], absolute), once
    /// its SCC is done.
    own_locs: Vec<OnceLock<Vec<Loc>>>,
    files: files::FileNames,
    /// Per SCC: its key, once reused (a lost summary invalidates its SCC's entry).
    reused_keys: Vec<OnceLock<Key>>,
    /// The SCCs' entries, packed ([`metas`]).
    metas: metas::Metas,
    /// The run's nodes by name, for checking classes' answers ([`ClassContext`]).
    nodes: NodeNames,
    /// By a collapsed SCC's smallest function: what its stored steps read of the partition,
    /// when they are replayed ([`steps`]): this run records only what the steps it analyses
    /// read.
    replayed_classes: std::sync::Mutex<rustc_hash::FxHashMap<FuncId, Option<Vec<Read>>>>,
    reused: AtomicUsize,
    stored: AtomicUsize,
    loaded: AtomicUsize,
    lost: AtomicUsize,
    unportable: AtomicUsize,
    kept: AtomicUsize,
    repartitioned: AtomicUsize,
}

/// The options that change summaries.
#[derive(Debug, Clone)]
pub struct SummaryOptions {
    pub fields: crate::pta::FieldMode,
    pub signature_filter: crate::pta::SignatureFilter,
    pub world: crate::pta::World,
    pub max_rounds: u32,
    pub collapse_at: usize,
    pub strict_publication: bool,
}

/// What the summaries' keys read of the program besides the call graph: its text, and its
/// points-to classes by canonical name (computed apart, so that each can run beside another
/// stage: the text beside the points-to analysis, the classes beside the call graph).
pub struct KeyInputs {
    pub text: ProgramText,
    pub classes: ClassTable,
}

impl<'a> SummaryCache<'a> {
    /// The cache of a program whose text and points-to classes are `inputs`.
    pub fn new(
        store: &'a Store,
        program: &'a Program,
        pta: &'a PointsTo,
        cg: &'a CallGraph,
        models: &Models,
        options: &SummaryOptions,
        inputs: KeyInputs,
    ) -> SummaryCache<'a> {
        let KeyInputs { text, classes } = inputs;
        let ProgramText {
            labels,
            layout,
            records,
            function_decls,
            global_decls,
            bodies,
        } = text;
        let labels = Arc::new(labels);
        let classes = Arc::new(classes);
        let context = KeyBuilder::new("summary context")
            .str(&format!("{:?}", options.fields))
            .str(&format!("{:?}", options.signature_filter))
            .u64(options.world.dead_statics.into())
            .u64(options.world.closed.into())
            .u64(options.max_rounds.into())
            .u64(options.collapse_at as u64)
            .u64(options.strict_publication.into())
            .key(&fingerprint::models(models))
            .finish();
        let reads_fingerprint = ClassContext::fingerprint_of(&classes, &records);
        SummaryCache {
            store,
            program,
            pta,
            cg,
            classes,
            context,
            labels,
            records,
            reads_fingerprint,
            layout,
            function_decls,
            global_decls,
            bodies,
            content: unset(program.functions.len()),
            own_locs: unset(program.functions.len()),
            files: files::FileNames::new(program),
            reused_keys: unset(cg.sccs.len()),
            metas: metas::Metas::new(cg.sccs.len()),
            nodes: NodeNames::default(),
            replayed_classes: Default::default(),
            reused: AtomicUsize::new(0),
            stored: AtomicUsize::new(0),
            loaded: AtomicUsize::new(0),
            lost: AtomicUsize::new(0),
            unportable: AtomicUsize::new(0),
            kept: AtomicUsize::new(0),
            repartitioned: AtomicUsize::new(0),
        }
    }

    /// The counters; call after the schedule has run.
    pub fn stats(&self) -> SummaryCacheStats {
        SummaryCacheStats {
            reused: self.reused.load(Ordering::Relaxed),
            stored: self.stored.load(Ordering::Relaxed),
            loaded: self.loaded.load(Ordering::Relaxed),
            unportable: self.unportable.load(Ordering::Relaxed),
            kept: self.kept.load(Ordering::Relaxed),
            repartitioned: self.repartitioned.load(Ordering::Relaxed),
            lost_before: 0,
        }
    }

    /// A hash of the analysis context, the call graph and every summary's content, which
    /// names locations by their rank among their function's own: later stages key what they
    /// derive from the whole analysis with it, and with where the locations are
    /// ([`SummaryCache::loc_table`]). Call after the schedule has run.
    pub fn program_key(&self) -> Key {
        self.program_key_with(&|f| self.content[f.index()].get().copied())
    }

    /// `content`: per function, the content hash of its summary.
    fn program_key_with(&self, content: &dyn Fn(FuncId) -> Option<Key>) -> Key {
        let mut k = KeyBuilder::new("program summaries");
        // The ids as they are: the findings store them so. The whole partition: the race
        // stage reads it.
        k.key(&self.context)
            .key(&self.layout)
            .key(&self.records.key)
            .key(&self.classes.fingerprint);
        // The call graph, not the bodies: what the race stage reads of the program besides
        // the summaries is who calls whom (entries, reachability) and names.
        for f in 0..self.program.functions.len() {
            let mut callees: Vec<FuncId> = self.cg.callees(FuncId(f as u32)).collect();
            callees.sort_unstable();
            k.u64(callees.len() as u64);
            for g in callees {
                k.u64(g.0.into());
            }
        }
        for f in 0..self.program.functions.len() {
            match content(FuncId(f as u32)) {
                Some(c) => k.key(&c),
                None => k.u64(0),
            };
        }
        k.finish()
    }

    /// Every location the race stage's findings can name: each function's own locations
    /// recorded so far (all of them once the schedule has run, or once
    /// [`SummaryCache::stored_program_key`] recorded them) and the escaped callbacks'.
    pub fn loc_table(&self) -> LocTable {
        LocTable::new(
            self.program.functions.len(),
            |f| {
                self.own_locs[f.index()]
                    .get()
                    .map_or(&[][..], Vec::as_slice)
            },
            self.pta.callbacks.escaped(),
        )
    }

    /// What an SCC's reads of the points-to partition are named and checked with.
    fn class_context(&self) -> ClassContext<'_> {
        ClassContext {
            program: self.program,
            pta: self.pta,
            labels: &self.labels,
            classes: &self.classes,
            nodes: &self.nodes,
            records: &self.records,
            fingerprint: self.reads_fingerprint,
        }
    }

    /// An SCC entry found under its key, if what its summaries read of the points-to
    /// partition reads the same; recorded under this run's partition (so the next run does
    /// not check).
    fn holding(&self, stored: SccEntry) -> Option<SccEntry> {
        let classes = self.class_context();
        if !classes.still_hold(&stored.classes) {
            return None;
        }
        let refreshed = classes.refreshed(&stored.classes);
        if refreshed == stored.classes {
            return Some(stored);
        }
        let functions = stored.functions.clone();
        Some(Arc::new(StoredScc {
            functions,
            classes: refreshed,
        }))
    }

    /// Remembers what collapsed SCC `first`'s replayed steps read of the partition: the
    /// union of `reads` (`None` if one is: unnamed).
    fn note_replayed_classes<'r>(
        &self,
        first: FuncId,
        reads: impl Iterator<Item = Option<&'r [Read]>>,
    ) {
        let mut union = Some(Vec::new());
        for r in reads {
            match (r, &mut union) {
                (Some(r), Some(union)) => union.extend_from_slice(r),
                _ => union = None,
            }
        }
        if let Some(union) = &mut union {
            union.sort_unstable();
            union.dedup();
        }
        let mut replayed = self
            .replayed_classes
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        replayed.insert(first, union);
    }

    /// Records `f`'s content hash; its own locations are recorded already.
    fn set_content(&self, f: FuncId, content: Key) {
        let _ = self.content[f.index()].set(content);
    }

    /// The SCC's key; its callee SCCs are done, so their content hashes are known.
    fn key(&self, scc: &Scc) -> Key {
        self.key_with(scc, &|g| self.content[g.index()].get().copied())
    }

    /// The SCC's key, with the callees' content hashes from `content`.
    fn key_with(&self, scc: &Scc, content: &dyn Fn(FuncId) -> Option<Key>) -> Key {
        let mut k = KeyBuilder::new(KIND);
        k.key(&self.context);
        for &f in &scc.functions {
            k.u64(self.labels.function(f))
                .u64(self.function_decls[f.index()]);
            match &self.bodies[f.index()] {
                Some(b) => k.key(b),
                None => k.u64(0),
            };
        }
        let mut callees: Vec<FuncId> = scc
            .functions
            .iter()
            .flat_map(|&f| self.cg.callees(f))
            .filter(|g| scc.functions.binary_search(g).is_err())
            .collect();
        callees.sort_unstable();
        callees.dedup();
        for g in callees {
            k.u64(self.labels.function(g))
                .u64(self.function_decls[g.index()]);
            match content(g) {
                Some(c) => k.key(&c),
                // Body-less, or its SCC failed: no summary either way.
                None => k.u64(0),
            };
        }
        k.finish()
    }

    /// The program key ([`SummaryCache::program_key`]) computed from the stored content hashes
    /// alone, without loading or computing any summary, and the functions that return a fresh
    /// object (sorted): `None` unless every SCC with a defined function is stored under its
    /// current key. Bottom-up over the SCCs, sequentially. Each function's own locations are
    /// recorded too ([`SummaryCache::loc_table`] reads them).
    pub fn stored_program_key(&self) -> Option<(Key, Vec<FuncId>)> {
        let mut content: Vec<Option<Key>> = vec![None; self.content.len()];
        let mut constructors = Vec::new();
        for (i, scc) in self.cg.sccs.iter().enumerate() {
            if !scc.functions.iter().any(|f| self.cg.defined[f.index()]) {
                continue;
            }
            let key = self.key_with(scc, &|g| content[g.index()]);
            let found = self.metas.get(self.store, &self.context, &key)?;
            let stored = self.holding(found.clone())?;
            if stored.functions.len() != scc.functions.len() {
                return None;
            }
            let refreshed = !Arc::ptr_eq(&found, &stored);
            self.metas.record(i, key, stored.clone(), refreshed);
            for (&f, s) in scc.functions.iter().zip(stored.functions.iter()) {
                content[f.index()] = Some(Key(s.content));
                if s.facts.as_ref().is_some_and(|x| x.returns_fresh) {
                    constructors.push(f);
                }
                let _ = self.own_locs[f.index()].set(self.own_locs_of(&s.locs, &s.files, f)?);
            }
        }
        constructors.sort_unstable();
        Some((self.program_key_with(&|f| content[f.index()]), constructors))
    }

    /// Writes the SCCs' entries of this run as one pack, for the next run ([`metas`]). Call
    /// after the schedule (or [`SummaryCache::stored_program_key`]) has run.
    pub fn save_metas(&self) {
        self.metas.save(self.store, &self.context);
    }

    /// [`fingerprint::site_objects`] over the own locations recorded so far (every function's,
    /// once the schedule has run or [`SummaryCache::stored_program_key`] recorded them): the
    /// key, and the objects' names when they have names of their own.
    pub fn site_objects_key(
        &self,
        objects: &crate::pta::inclusion::SiteObjects,
    ) -> (Key, Option<crate::race::memo::ObjectNames>) {
        fingerprint::site_objects(
            self.program,
            self.pta,
            &self.labels,
            objects,
            |f| {
                self.own_locs[f.index()]
                    .get()
                    .map_or(&[][..], Vec::as_slice)
            },
            &self.bodies,
        )
    }

    /// This run's ids as the pair stage's digests name them: functions and globals by label,
    /// points-to classes by their canonical names.
    pub fn stable_ids(&self) -> crate::race::memo::StableIds {
        crate::race::memo::StableIds {
            functions: self.labels.functions.all().to_vec(),
            globals: self.labels.globals.all().to_vec(),
            classes: self
                .classes
                .stable_names(self.program, self.pta, &self.labels),
            private: Some(Arc::new(PrivateClassNames {
                classes: self.classes.clone(),
                labels: self.labels.clone(),
                made: Default::default(),
            })),
            // Known once the inclusion-based points-to has been computed and named
            // ([`SummaryCache::site_objects_key`]).
            objects: None,
        }
    }

    /// How many SCCs have a defined function (what a run analyses or reuses).
    pub fn sccs_with_bodies(&self) -> usize {
        self.cg
            .sccs
            .iter()
            .filter(|s| s.functions.iter().any(|f| self.cg.defined[f.index()]))
            .count()
    }

    /// The index of `scc` in the call graph.
    fn index_of(&self, scc: &Scc) -> Option<usize> {
        let f = scc.functions.first()?;
        self.cg.scc_of.get(f.index()).map(|s| s.index())
    }

    fn function_loc(&self, f: FuncId) -> Option<Loc> {
        Some(self.program.functions.get(f.index())?.body.as_ref()?.loc)
    }

    /// A summary of a reused SCC could not be loaded: its SCC's entry goes too, so the run
    /// that repeats this one analyses the SCC again.
    fn lose(&self, f: FuncId) {
        self.lost.fetch_add(1, Ordering::Relaxed);
        let scc = self.cg.scc_of.get(f.index()).map(|s| s.index());
        if let Some(scc) = scc {
            self.metas.lose(scc);
        }
        if let Some(key) = scc.and_then(|s| self.reused_keys[s].get()) {
            let _ = std::fs::remove_file(self.store.entry_path(META, key));
        }
    }
}

/// The own locations of each function of `scc` (`summaries` parallel to its functions),
/// sorted: those its summary names, and in a recursive SCC those any member's summary names (a
/// member may keep a witness from another's summary of an earlier round of the fixpoint).
fn scc_own_locs(
    scc: &Scc,
    summaries: &[Option<&Summary>],
    files: &files::FileNames,
) -> Vec<Vec<Loc>> {
    let mut locs = vec![Vec::new(); scc.functions.len()];
    for (&f, s) in scc.functions.iter().zip(summaries) {
        let Some(s) = s else { continue };
        s.visit_locs(f, &mut |l, owner| {
            if let Ok(i) = scc.functions.binary_search(&owner) {
                locs[i].push(l);
            }
        });
    }
    for l in &mut locs {
        l.sort_unstable_by_key(|l| files.order(l));
        l.dedup();
    }
    locs
}

/// `n` values not set yet.
fn unset<T>(n: usize) -> Vec<OnceLock<T>> {
    (0..n).map(|_| OnceLock::new()).collect()
}

/// The content hash of a stored summary.
fn content_key(bytes: &[u8]) -> Key {
    KeyBuilder::new("summary content").bytes(bytes).finish()
}

/// The content hash of "no summary" in an SCC (a failed SCC publishes none).
fn none_key(scc: &Key) -> Key {
    KeyBuilder::new("no summary").key(scc).finish()
}

impl SummaryStore for SummaryCache<'_> {
    fn reuse(&self, scc: &Scc) -> Option<Vec<Option<SummaryFacts>>> {
        let key = self.key(scc);
        let found = self.metas.get(self.store, &self.context, &key)?;
        let Some(stored) = self.holding(found.clone()) else {
            self.repartitioned.fetch_add(1, Ordering::Relaxed);
            return None;
        };
        if stored.functions.len() != scc.functions.len() {
            return None;
        }
        let refreshed = !Arc::ptr_eq(&found, &stored);
        // Checked now, not read: a summary lost after this costs a repeated run (`lost`).
        let present = |s: &StoredFunction| {
            s.facts.is_none() || self.store.entry_path(KIND, &Key(s.content)).exists()
        };
        if !stored.functions.iter().all(present) {
            return None;
        }
        // Every location first: nothing is recorded for an SCC that is then analysed.
        let locs: Vec<Vec<Loc>> = scc
            .functions
            .iter()
            .zip(stored.functions.iter())
            .map(|(&f, s)| self.own_locs_of(&s.locs, &s.files, f))
            .collect::<Option<_>>()?;
        if let Some(id) = self.index_of(scc) {
            let _ = self.reused_keys[id].set(key);
            self.metas.record(id, key, stored.clone(), refreshed);
        }
        let mut facts = Vec::with_capacity(stored.functions.len());
        let functions = stored.functions.iter();
        for ((&f, s), locs) in scc.functions.iter().zip(functions).zip(locs) {
            let _ = self.own_locs[f.index()].set(locs);
            self.set_content(f, Key(s.content));
            facts.push(s.facts.clone());
        }
        self.reused.fetch_add(1, Ordering::Relaxed);
        Some(facts)
    }

    fn load(&self, f: FuncId, sets: &SharedSets) -> Option<Summary> {
        let Some(content) = self.content.get(f.index()).and_then(OnceLock::get) else {
            self.lose(f);
            return None;
        };
        let decoded = match self.store.read(KIND, content) {
            Ok(Some(bytes)) => self.decode(f, &bytes, sets),
            Ok(None) => Err(Corruption::Unreadable("the entry is missing".into()).into()),
            Err(c) => Err(c.into()),
        };
        match decoded {
            Ok(s) => {
                self.loaded.fetch_add(1, Ordering::Relaxed);
                Some(s)
            }
            Err(LoadError::Corrupt(c)) => {
                self.store.invalidate(KIND, content, &c);
                self.lose(f);
                None
            }
            Err(LoadError::Stale) => {
                self.lose(f);
                None
            }
        }
    }

    fn lost(&self) -> usize {
        self.lost.load(Ordering::Relaxed)
    }

    fn scc_steps(&self, scc: &Scc) -> Option<Box<dyn SccSteps + '_>> {
        let steps = SummaryCache::scc_steps(self, scc)?;
        Some(Box::new(steps))
    }

    fn finished(
        &self,
        scc: &Scc,
        summaries: &[Option<&Summary>],
        digests: Option<&[Option<Digest>]>,
        read: &[u32],
    ) {
        let key = self.key(scc);
        // The classes the summaries name are among what they depend on.
        let named: std::sync::Mutex<Vec<u32>> = Default::default();
        // Before encoding: a member's summary names the other members' own locations.
        for (&f, locs) in scc
            .functions
            .iter()
            .zip(scc_own_locs(scc, summaries, &self.files))
        {
            let _ = self.own_locs[f.index()].set(locs);
        }
        // Each summary is written as soon as it is encoded, in parallel: an SCC's summaries
        // encoded at once took SQLite's largest SCC past 3 GB. A collapsed SCC's member whose
        // fixpoint ended on the summary it ended on last time is not encoded again
        // ([`finals`]).
        let finals = digests.map(|d| (self.finals(scc), d));
        let stored: Option<Vec<StoredMember>> = scc
            .functions
            .par_iter()
            .zip(summaries.par_iter())
            .enumerate()
            .map(|(i, (&f, s))| match s {
                Some(s) => {
                    let step = finals.as_ref().and_then(|(fin, d)| Some((fin, d[i]?)));
                    let (c, made) = match step.and_then(|(fin, d)| fin.reuse(f, &d)) {
                        Some(made) => (Key(made.content), made),
                        None => {
                            let (encoded, classes) =
                                crate::reads::recording(|| self.encode_naming_owners(f, s));
                            named
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .extend(classes);
                            let (blob, owners) = encoded?;
                            let c = content_key(&blob);
                            // Content-addressed: an entry already there holds these very bytes.
                            if !self.store.entry_path(KIND, &c).exists() {
                                self.store.put_or_warn(KIND, &c, &blob);
                            }
                            let made = self.new_final(f, step.map(|(_, d)| d), c, &owners);
                            (c, made)
                        }
                    };
                    Some((c, Some(SummaryFacts::of(s)), Some(made)))
                }
                None => Some((none_key(&key), None, None)),
            })
            .collect();
        let Some(stored) = stored else {
            // Deterministic in the key: callers may still be cached.
            for &f in &scc.functions {
                let c = KeyBuilder::new("unportable")
                    .key(&key)
                    .u64(self.labels.function(f))
                    .finish();
                self.set_content(f, c);
            }
            self.unportable.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let (stored, made): (Vec<_>, Vec<_>) = stored
            .into_iter()
            .map(|(content, facts, made)| ((content, facts), made))
            .unzip();
        if let Some((finals, _)) = &finals {
            finals.save(made.into_iter().flatten());
        }
        let mut entry = Vec::with_capacity(stored.len());
        for (&f, (content, facts)) in scc.functions.iter().zip(stored) {
            self.set_content(f, content);
            let own = self.own_locs[f.index()]
                .get()
                .map_or(&[][..], Vec::as_slice);
            let (locs, files) = self.stored_locs(own, f);
            entry.push(StoredFunction {
                content: content.0,
                facts,
                locs,
                files,
            });
        }
        let replayed = scc.functions.first().and_then(|first| {
            let mut replayed = self
                .replayed_classes
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            replayed.remove(first)
        });
        let named = named.into_inner().unwrap_or_else(|e| e.into_inner());
        let classes = self.class_context().deps(
            read.iter().copied().chain(named),
            replayed.unwrap_or(Some(Vec::new())).as_deref(),
        );
        let entry = StoredScc {
            functions: entry,
            classes,
        };
        self.store.put_value_or_warn(META, &key, &entry);
        if let Some(id) = self.index_of(scc) {
            self.metas.record(id, key, Arc::new(entry), true);
        }
        self.stored.fetch_add(1, Ordering::Relaxed);
    }
}

/// A member of a finished SCC as stored: its content key, its facts, and (with a summary) its
/// [`finals::Final`].
type StoredMember = (Key, Option<SummaryFacts>, Option<finals::Final>);

/// The names of classes private to one function (`l<label>.name#n`, `r<label>`), made when
/// the pair stage's digests meet one (an address-taken local accessed through its class):
/// there are millions, a few reach the race stage, each in many groups and locksets — so a
/// name is made once per run.
struct PrivateClassNames {
    classes: Arc<ClassTable>,
    labels: Arc<Labels>,
    made: dashmap::DashMap<u32, Option<String>, rustc_hash::FxBuildHasher>,
}

impl crate::race::memo::PrivateNames for PrivateClassNames {
    fn name(&self, program: &Program, pta: &PointsTo, class: u32) -> Option<String> {
        self.made
            .entry(class)
            .or_insert_with(|| self.classes.private_name(program, pta, &self.labels, class))
            .clone()
    }
}
