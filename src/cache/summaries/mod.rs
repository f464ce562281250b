//! The summaries cache: per call-graph SCC, an entry keyed by everything its summaries depend
//! on (RELAY's modularity: a function's summary depends only on its own body and its callees'
//! summaries):
//!
//! ```text
//! key(SCC) = H(context, for each function of the SCC: its label, declaration and body hash,
//!              for each callee outside the SCC: its label, declaration and the content hash
//!              of its summary)
//! context  = H(relay version and build, options, models, files and records, points-to
//!              fingerprint)
//! ```
//!
//! (see [`super::fingerprint`]). The SCC's entry (kind `summary-meta`) is small: per function,
//! the *content hash* of its summary's stored form and the [`SummaryFacts`] the statistics
//! need. The summaries themselves are entries of kind `summary` keyed by their content hash
//! (identical ones stored once). So a stored SCC is reused without reading any summary — a
//! summary is loaded only when a re-analysed caller or the race stage reads it — and when a
//! re-analysed function's summary comes out identical, its callers' keys do not change and
//! they are reused (early cut-off). Summaries are stored in a portable form: interned names
//! become indices into the summary's own sorted name list, points-to classes become canonical
//! ranks ([`ClassTable`]); functions, globals and records become indices into the summary's
//! own tables of their labels ([`super::labels`]) and declaration hashes, in id order (a run
//! that finds them in another order does not use the summary: see below).
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

mod finals;
mod metas;
mod steps;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::classes::ClassTable;
use super::fingerprint::{self, ProgramText};
use super::labels::Labels;
use super::relocate::LocTable;
use super::{store, Corruption, Key, KeyBuilder, Store};
use crate::callgraph::{CallGraph, Scc};
use crate::ir::{FuncId, GlobalId, Loc, Name, RecordId};
use crate::link::Program;
use crate::models::Models;
use crate::pta::PointsTo;
use crate::schedule::Digest;
use crate::summary::chain::{self, ChainTable};
use crate::summary::intern;
use crate::summary::remap::IdMap;
use crate::summary::{shared_set, SccSteps, SharedSets, Summary, SummaryFacts, SummaryStore};

/// Summaries in portable form, keyed by their content hash.
const KIND: &str = "summary";
/// Per SCC key, its functions' [`StoredFunction`]s (small: read without loading summaries).
const META: &str = "summary-meta";

/// What an SCC's entry holds for one of its functions.
#[derive(Serialize, Deserialize)]
struct StoredFunction {
    /// The content hash of its summary (the key of its `summary` entry), or of "no summary".
    content: [u8; 32],
    /// `None`: it has no summary.
    facts: Option<SummaryFacts>,
    /// Its own locations (see the module documentation), sorted, relative to its start
    /// ([`RELATIVE`]).
    locs: Vec<Loc>,
}

/// A summary with names and classes made portable.
#[derive(Serialize, Deserialize)]
struct Portable {
    /// `Name(i)` in `summary` is `names[i]`.
    names: Vec<String>,
    /// Classes private to one function, by name ([`ClassTable::private_name`]).
    private: Vec<String>,
    /// `FuncId(i)` in `summary` and `chains` is `functions[i]`: its label and declaration
    /// ([`Labels`], [`ProgramText::function_decls`]), in the order of the ids that stored it.
    functions: Vec<(u64, u64)>,
    /// `GlobalId(i)` is `globals[i]` (label, declaration), in id order.
    globals: Vec<(u64, u64)>,
    /// `RecordId(i)` is `records[i]` (label), in id order.
    records: Vec<u64>,
    /// The call chains of `summary`'s witnesses and spawns ([`chain::encode_with_table`]).
    chains: ChainTable,
    /// The summary, encoded with its chains as indices into `chains`. Classes are ranks in the
    /// run's [`ClassTable`], or `PRIVATE | i` for `private[i]`.
    #[serde(with = "serde_bytes")]
    summary: Vec<u8>,
    /// The collapsed SCCs whose shared sets the summary refers to, by name (an index into
    /// `functions`, see [`crate::summary::shared`]): a set is the run's, rebuilt when its SCC
    /// is reused.
    shared: Vec<u32>,
}

/// The `file` of a location given relative to its function's location.
const RELATIVE: u32 = u32::MAX;

/// The `file` of a portable location: its `line` is its rank among its function's own
/// locations.
const RANKED: u32 = u32::MAX - 1;

/// How a portable summary names locations.
#[derive(Clone, Copy)]
enum LocForm {
    /// By rank among their function's own locations (an SCC's stored summaries: moved lines
    /// change nothing).
    Ranked,
    /// Relative to their function's start ([`RELATIVE`]): a step of a fixpoint, stored before
    /// the SCC's own locations are known.
    Relative,
}

/// Marks a portable class id as an index into [`Portable::private`].
const PRIVATE: u32 = 1 << 31;

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
}

/// The summaries cache of one run (see the module documentation).
pub struct SummaryCache<'a> {
    store: &'a Store,
    program: &'a Program,
    pta: &'a PointsTo,
    cg: &'a CallGraph,
    classes: ClassTable,
    context: Key,
    labels: Labels,
    /// The ids as they are ([`ProgramText::layout`]): in the program key only.
    layout: Key,
    function_decls: Vec<u64>,
    global_decls: Vec<u64>,
    bodies: Vec<Option<Key>>,
    /// Per function: the content hash of its final summary, once its SCC is done.
    content: Vec<OnceLock<Key>>,
    /// Per function: its own locations (sorted, absolute), once its SCC is done.
    own_locs: Vec<OnceLock<Vec<Loc>>>,
    /// Per SCC: its key, once reused (a lost summary invalidates its SCC's entry).
    reused_keys: Vec<OnceLock<Key>>,
    /// The SCCs' entries, packed ([`metas`]).
    metas: metas::Metas,
    reused: AtomicUsize,
    stored: AtomicUsize,
    loaded: AtomicUsize,
    lost: AtomicUsize,
    unportable: AtomicUsize,
    kept: AtomicUsize,
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

impl<'a> SummaryCache<'a> {
    /// `None` when the points-to classes have no canonical naming (see [`ClassTable::new`]).
    pub fn new(
        store: &'a Store,
        program: &'a Program,
        pta: &'a PointsTo,
        cg: &'a CallGraph,
        models: &Models,
        options: &SummaryOptions,
        text: ProgramText,
    ) -> Option<SummaryCache<'a>> {
        let ProgramText {
            labels,
            layout,
            declarations,
            function_decls,
            global_decls,
            bodies,
        } = text;
        let classes = ClassTable::new(program, pta, &labels)?;
        let context = KeyBuilder::new("summary context")
            .str(&format!("{:?}", options.fields))
            .str(&format!("{:?}", options.signature_filter))
            .u64(options.world.dead_statics.into())
            .u64(options.world.closed.into())
            .u64(options.max_rounds.into())
            .u64(options.collapse_at as u64)
            .u64(options.strict_publication.into())
            .key(&fingerprint::models(models))
            .key(&declarations)
            .key(&classes.fingerprint)
            .finish();
        Some(SummaryCache {
            store,
            program,
            pta,
            cg,
            classes,
            context,
            labels,
            layout,
            function_decls,
            global_decls,
            bodies,
            content: unset(program.functions.len()),
            own_locs: unset(program.functions.len()),
            reused_keys: unset(cg.sccs.len()),
            metas: metas::Metas::new(cg.sccs.len()),
            reused: AtomicUsize::new(0),
            stored: AtomicUsize::new(0),
            loaded: AtomicUsize::new(0),
            lost: AtomicUsize::new(0),
            unportable: AtomicUsize::new(0),
            kept: AtomicUsize::new(0),
        })
    }

    /// The counters; call after the schedule has run.
    pub fn stats(&self) -> SummaryCacheStats {
        SummaryCacheStats {
            reused: self.reused.load(Ordering::Relaxed),
            stored: self.stored.load(Ordering::Relaxed),
            loaded: self.loaded.load(Ordering::Relaxed),
            unportable: self.unportable.load(Ordering::Relaxed),
            kept: self.kept.load(Ordering::Relaxed),
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
        // The ids as they are: the findings store them so.
        k.key(&self.context).key(&self.layout);
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

    /// Records `f`'s content hash; its own locations are recorded already.
    fn set_content(&self, f: FuncId, content: Key) {
        let _ = self.content[f.index()].set(content);
    }

    fn relative_locs(&self, locs: &[Loc], f: FuncId) -> Vec<Loc> {
        locs.iter().map(|&l| self.relative_loc(l, f)).collect()
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
            let stored = self.metas.get(self.store, &self.context, &key)?;
            if stored.len() != scc.functions.len() {
                return None;
            }
            self.metas.record(i, key, stored.clone(), false);
            for (&f, s) in scc.functions.iter().zip(stored.iter()) {
                content[f.index()] = Some(Key(s.content));
                if s.facts.as_ref().is_some_and(|x| x.returns_fresh) {
                    constructors.push(f);
                }
                let abs = s.locs.iter().map(|&l| self.absolute_loc(l, f));
                let _ = self.own_locs[f.index()].set(abs.collect::<Option<_>>()?);
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
    /// once the schedule has run or [`SummaryCache::stored_program_key`] recorded them).
    pub fn site_objects_key(&self, objects: &crate::pta::inclusion::SiteObjects) -> Key {
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

    /// How many SCCs have a defined function (what a run analyses or reuses).
    pub fn sccs_with_bodies(&self) -> usize {
        self.cg
            .sccs
            .iter()
            .filter(|s| s.functions.iter().any(|f| self.cg.defined[f.index()]))
            .count()
    }

    /// A location in `owner`'s file as an offset from `owner`'s own location ([`RELATIVE`]).
    fn relative_loc(&self, l: Loc, owner: FuncId) -> Loc {
        match self.function_loc(owner) {
            Some(base) if base.file == l.file => Loc {
                file: RELATIVE,
                line: l.line.wrapping_sub(base.line),
                col: l.col,
            },
            _ => l,
        }
    }

    fn absolute_loc(&self, l: Loc, owner: FuncId) -> Option<Loc> {
        if l.file != RELATIVE {
            return Some(l);
        }
        let base = self.function_loc(owner)?;
        Some(Loc {
            file: base.file,
            line: base.line.wrapping_add(l.line),
            col: l.col,
        })
    }

    /// The index of `scc` in the call graph.
    fn index_of(&self, scc: &Scc) -> Option<usize> {
        let f = scc.functions.first()?;
        self.cg.scc_of.get(f.index()).map(|s| s.index())
    }

    fn function_loc(&self, f: FuncId) -> Option<Loc> {
        Some(self.program.functions.get(f.index())?.body.as_ref()?.loc)
    }

    fn encode_as(&self, f: FuncId, s: &Summary, form: LocForm) -> Option<Vec<u8>> {
        // The renamed copies are in transit: not interned.
        intern::transient(|| self.encode_transient(f, s, form, &mut Vec::new()))
    }

    /// `s` in portable form, its locations ranked among their functions' own (what an SCC's
    /// entry stores), and the functions whose own locations rank them (sorted).
    fn encode_naming_owners(&self, f: FuncId, s: &Summary) -> Option<(Vec<u8>, Vec<FuncId>)> {
        let mut owners = Vec::new();
        let bytes =
            intern::transient(|| self.encode_transient(f, s, LocForm::Ranked, &mut owners))?;
        owners.sort_unstable();
        owners.dedup();
        Some((bytes, owners))
    }

    /// `owners` gets the function of every location (in [`LocForm::Ranked`]).
    fn encode_transient(
        &self,
        f: FuncId,
        s: &Summary,
        form: LocForm,
        owners: &mut Vec<FuncId>,
    ) -> Option<Vec<u8>> {
        let mut used = IdCollector {
            names: Vec::new(),
            private: FxHashMap::default(),
            functions: Vec::new(),
            globals: Vec::new(),
            records: Vec::new(),
            classes: &self.classes,
            program: self.program,
            pta: self.pta,
            labels: &self.labels,
        };
        s.visit_ids(&mut used)?;
        s.visit_callees(&mut |g| used.functions.push(g));
        used.functions.extend(s.shared.iter().map(|set| set.scc));
        let mut private: Vec<(String, u32)> = used
            .private
            .into_iter()
            .map(|(c, name)| (name, c))
            .collect();
        private.sort_unstable();
        let private_index: FxHashMap<u32, u32> = private
            .iter()
            .enumerate()
            .map(|(i, &(_, c))| (c, i as u32))
            .collect();
        let mut names: Vec<(&str, Name)> = used
            .names
            .iter()
            .map(|&n| (self.program.names.get(n), n))
            .collect();
        names.sort_unstable();
        names.dedup();
        let index: FxHashMap<Name, u32> = names
            .iter()
            .enumerate()
            .map(|(i, &(_, n))| (n, i as u32))
            .collect();
        used.functions.sort_unstable();
        used.functions.dedup();
        used.globals.sort_unstable();
        used.globals.dedup();
        used.records.sort_unstable();
        used.records.dedup();
        let mut to_portable = ToPortable {
            index: &index,
            private: &private_index,
            classes: &self.classes,
            pta: self.pta,
            functions: &used.functions,
            globals: &used.globals,
            records: &used.records,
        };
        // Locations first: their owners are this run's functions until the summary is renamed.
        let mut summary = s.clone();
        let mut ranked = true;
        summary.map_locs(f, &mut |l, owner| match form {
            LocForm::Relative => self.relative_loc(l, owner),
            LocForm::Ranked => {
                owners.push(owner);
                let rank = self.own_locs[owner.index()]
                    .get()
                    .and_then(|own| own.binary_search(&l).ok());
                ranked &= rank.is_some();
                Loc {
                    file: RANKED,
                    line: rank.unwrap_or(0) as u32,
                    col: 0,
                }
            }
        });
        if !ranked {
            return None;
        }
        let summary = summary.into_remapped(&mut to_portable)?;
        let (summary, mut chains) = chain::encode_with_table(|| store::encode(&summary));
        for (site, _) in &mut chains {
            site.callee = to_portable.func(site.callee)?;
        }
        let shared = s
            .shared
            .iter()
            .map(|set| Some(to_portable.func(set.scc)?.0))
            .collect::<Option<_>>()?;
        let portable = Portable {
            names: names.into_iter().map(|(s, _)| s.to_string()).collect(),
            private: private.into_iter().map(|(name, _)| name).collect(),
            functions: used
                .functions
                .iter()
                .map(|&g| (self.labels.function(g), self.function_decls[g.index()]))
                .collect(),
            globals: used
                .globals
                .iter()
                .map(|&g| (self.labels.global(g), self.global_decls[g.index()]))
                .collect(),
            records: used
                .records
                .iter()
                .map(|&r| self.labels.record(r))
                .collect(),
            chains,
            summary: summary.ok()?,
            shared,
        };
        store::encode(&portable).ok()
    }

    fn decode(&self, f: FuncId, bytes: &[u8], sets: &SharedSets) -> Result<Summary, Corruption> {
        self.decode_as(f, bytes, sets, LocForm::Ranked)
    }

    fn decode_as(
        &self,
        f: FuncId,
        bytes: &[u8],
        sets: &SharedSets,
        form: LocForm,
    ) -> Result<Summary, Corruption> {
        let mut p: Portable =
            store::decode(bytes).map_err(|e| Corruption::Decode(e.to_string()))?;
        let ids = self.portable_ids(&p).ok_or_else(|| {
            Corruption::Decode(
                "a function, global or record this program declares otherwise".into(),
            )
        })?;
        for (site, _) in &mut p.chains {
            site.callee = *ids
                .functions
                .get(site.callee.index())
                .ok_or_else(|| Corruption::Decode("a function out of range".into()))?;
        }
        let names: Vec<Name> = p
            .names
            .iter()
            .map(|s| self.program.names.intern(s))
            .collect();
        let private: Vec<Option<u32>> = p
            .private
            .iter()
            .map(|n| {
                self.classes
                    .private_class(self.program, self.pta, &self.labels, n)
            })
            .collect();
        let mut from = FromPortable {
            names: &names,
            private: &private,
            classes: &self.classes,
            ids: &ids,
        };
        // In transit until renamed: interned only then.
        let summary: Summary =
            intern::transient(|| chain::decode_with_table(&p.chains, || store::decode(&p.summary)))
                .ok_or_else(|| Corruption::Decode("a malformed chain table".into()))?
                .map_err(|e| Corruption::Decode(e.to_string()))?;
        // The table's chains share their nodes, so each node's locations are rewritten once.
        let mut s = summary
            .into_remapped(&mut from)
            .ok_or_else(|| Corruption::Decode("a name or class out of range".into()))?;
        let mut valid = true;
        s.map_locs(f, &mut |l, owner| {
            let at = match form {
                LocForm::Relative => self.absolute_loc(l, owner),
                LocForm::Ranked => self.own_locs[owner.index()]
                    .get()
                    .filter(|_| l.file == RANKED)
                    .and_then(|own| own.get(l.line as usize))
                    .copied(),
            };
            valid &= at.is_some();
            at.unwrap_or(l)
        });
        if !valid {
            return Err(Corruption::Decode(
                "a location out of its function's own locations".into(),
            ));
        }
        s.shared = p
            .shared
            .iter()
            .map(|&scc| shared_set(sets, *ids.functions.get(scc as usize)?))
            .collect::<Option<_>>()
            .ok_or_else(|| Corruption::Decode("a shared set this run has not built".into()))?;
        Ok(s)
    }

    /// The ids of this program a portable summary's functions, globals and records stand for:
    /// `None` unless each is declared as when it was stored, and they keep their order (a
    /// summary's tables and witnesses are sorted by id: moved past each other, they would
    /// not be in the order this program's analysis puts them in).
    fn portable_ids(&self, p: &Portable) -> Option<PortableIds> {
        fn ids<T: Copy + Ord>(
            stored: impl Iterator<Item = (u64, Option<u64>)>,
            id: impl Fn(u64) -> Option<u32>,
            decl: impl Fn(u32) -> Option<u64>,
            make: impl Fn(u32) -> T,
        ) -> Option<Vec<T>> {
            let out: Vec<T> = stored
                .map(|(label, d)| {
                    let i = id(label)?;
                    (d.is_none() || decl(i) == d).then(|| make(i))
                })
                .collect::<Option<_>>()?;
            out.windows(2).all(|w| w[0] < w[1]).then_some(out)
        }
        let l = &self.labels;
        Some(PortableIds {
            functions: ids(
                p.functions.iter().map(|&(l, d)| (l, Some(d))),
                |x| l.functions.id(x),
                |i| self.function_decls.get(i as usize).copied(),
                FuncId,
            )?,
            globals: ids(
                p.globals.iter().map(|&(l, d)| (l, Some(d))),
                |x| l.globals.id(x),
                |i| self.global_decls.get(i as usize).copied(),
                GlobalId,
            )?,
            records: ids(
                p.records.iter().map(|&l| (l, None)),
                |x| l.records.id(x),
                |_| None,
                RecordId,
            )?,
        })
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
fn scc_own_locs(scc: &Scc, summaries: &[Option<&Summary>]) -> Vec<Vec<Loc>> {
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
        l.sort_unstable();
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
        let stored = self.metas.get(self.store, &self.context, &key)?;
        if stored.len() != scc.functions.len() {
            return None;
        }
        // Checked now, not read: a summary lost after this costs a repeated run (`lost`).
        let present = |s: &StoredFunction| {
            s.facts.is_none() || self.store.entry_path(KIND, &Key(s.content)).exists()
        };
        if !stored.iter().all(present) {
            return None;
        }
        // Every location first: nothing is recorded for an SCC that is then analysed.
        let locs: Vec<Vec<Loc>> = scc
            .functions
            .iter()
            .zip(stored.iter())
            .map(|(&f, s)| s.locs.iter().map(|&l| self.absolute_loc(l, f)).collect())
            .collect::<Option<_>>()?;
        if let Some(id) = self.index_of(scc) {
            let _ = self.reused_keys[id].set(key);
            self.metas.record(id, key, stored.clone(), false);
        }
        let mut facts = Vec::with_capacity(stored.len());
        for ((&f, s), locs) in scc.functions.iter().zip(stored.iter()).zip(locs) {
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
            Ok(None) => Err(Corruption::Unreadable("the entry is missing".into())),
            Err(c) => Err(c),
        };
        match decoded {
            Ok(s) => {
                self.loaded.fetch_add(1, Ordering::Relaxed);
                Some(s)
            }
            Err(c) => {
                self.store.invalidate(KIND, content, &c);
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
    ) {
        let key = self.key(scc);
        // Before encoding: a member's summary names the other members' own locations.
        for (&f, locs) in scc.functions.iter().zip(scc_own_locs(scc, summaries)) {
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
                            let (blob, owners) = self.encode_naming_owners(f, s)?;
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
            entry.push(StoredFunction {
                content: content.0,
                facts,
                locs: self.relative_locs(own, f),
            });
        }
        self.store.put_value_or_warn(META, &key, &entry);
        if let Some(id) = self.index_of(scc) {
            self.metas.record(id, key, entry.into(), true);
        }
        self.stored.fetch_add(1, Ordering::Relaxed);
    }
}

/// A member of a finished SCC as stored: its content key, its facts, and (with a summary) its
/// [`finals::Final`].
type StoredMember = (Key, Option<SummaryFacts>, Option<finals::Final>);

/// Records the names, private classes, functions, globals and records a summary uses; checks
/// every class has a portable form.
struct IdCollector<'a> {
    names: Vec<Name>,
    /// Private class representative → its name.
    private: FxHashMap<u32, String>,
    functions: Vec<FuncId>,
    globals: Vec<GlobalId>,
    records: Vec<RecordId>,
    classes: &'a ClassTable,
    program: &'a Program,
    pta: &'a PointsTo,
    labels: &'a Labels,
}

impl IdMap for IdCollector<'_> {
    fn name(&mut self, n: Name) -> Option<Name> {
        self.names.push(n);
        Some(n)
    }
    fn class(&mut self, c: u32) -> Option<u32> {
        if self.classes.rank(self.pta, c).is_none() {
            let rep = self.pta.class(c);
            if !self.private.contains_key(&rep) {
                let name = self
                    .classes
                    .private_name(self.program, self.pta, self.labels, rep)?;
                self.private.insert(rep, name);
            }
        }
        Some(c)
    }
    fn func(&mut self, f: FuncId) -> Option<FuncId> {
        self.functions.push(f);
        Some(f)
    }
    fn global(&mut self, g: GlobalId) -> Option<GlobalId> {
        self.globals.push(g);
        Some(g)
    }
    fn record(&mut self, r: RecordId) -> Option<RecordId> {
        self.records.push(r);
        Some(r)
    }
}

/// The index of `x` in `sorted`, as an id.
fn rank<T: Ord>(sorted: &[T], x: &T) -> Option<u32> {
    sorted.binary_search(x).ok().map(|i| i as u32)
}

struct ToPortable<'a> {
    index: &'a FxHashMap<Name, u32>,
    /// Private class representative → its index in the portable summary's sorted names.
    private: &'a FxHashMap<u32, u32>,
    classes: &'a ClassTable,
    pta: &'a PointsTo,
    /// The ids the summary uses, sorted: an id becomes its index.
    functions: &'a [FuncId],
    globals: &'a [GlobalId],
    records: &'a [RecordId],
}

impl IdMap for ToPortable<'_> {
    fn name(&mut self, n: Name) -> Option<Name> {
        self.index.get(&n).map(|&i| Name(i))
    }
    fn class(&mut self, c: u32) -> Option<u32> {
        if let Some(r) = self.classes.rank(self.pta, c) {
            return (r < PRIVATE).then_some(r);
        }
        let i = *self.private.get(&self.pta.class(c))?;
        (i < PRIVATE).then_some(PRIVATE | i)
    }
    fn func(&mut self, f: FuncId) -> Option<FuncId> {
        rank(self.functions, &f).map(FuncId)
    }
    fn global(&mut self, g: GlobalId) -> Option<GlobalId> {
        rank(self.globals, &g).map(GlobalId)
    }
    fn record(&mut self, r: RecordId) -> Option<RecordId> {
        rank(self.records, &r).map(RecordId)
    }
}

/// The ids of this run that a portable summary's indices stand for.
struct PortableIds {
    functions: Vec<FuncId>,
    globals: Vec<GlobalId>,
    records: Vec<RecordId>,
}

struct FromPortable<'a> {
    names: &'a [Name],
    private: &'a [Option<u32>],
    classes: &'a ClassTable,
    ids: &'a PortableIds,
}

impl IdMap for FromPortable<'_> {
    fn name(&mut self, n: Name) -> Option<Name> {
        self.names.get(n.0 as usize).copied()
    }
    fn class(&mut self, c: u32) -> Option<u32> {
        if c & PRIVATE != 0 {
            return *self.private.get((c & !PRIVATE) as usize)?;
        }
        self.classes.class(c)
    }
    fn func(&mut self, f: FuncId) -> Option<FuncId> {
        self.ids.functions.get(f.index()).copied()
    }
    fn global(&mut self, g: GlobalId) -> Option<GlobalId> {
        self.ids.globals.get(g.index()).copied()
    }
    fn record(&mut self, r: RecordId) -> Option<RecordId> {
        self.ids.records.get(r.0 as usize).copied()
    }
}
