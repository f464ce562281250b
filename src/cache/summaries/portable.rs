//! The portable form of a summary (what a `summary` entry holds): interned names as text,
//! points-to classes by canonical name hash or by private name (an access's class that follows
//! from its path not at all: marked [`DERIVED_CLASS`] and derived again when loaded),
//! functions, globals and records as indices into the summary's own tables of labels and
//! declaration hashes ([`crate::cache::labels`]), locations ranked among their function's own
//! or relative to its start; and the renamings between it and this run's ids
//! ([`crate::summary::remap::IdMap`]).

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::SummaryCache;
use crate::cache::classes::ClassTable;
use crate::cache::labels::Labels;
use crate::cache::{store, Corruption};
use crate::ir::{FuncId, GlobalId, Loc, Name, RecordId};
use crate::link::Program;
use crate::pta::PointsTo;
use crate::reads;
use crate::summary::access::DERIVED_CLASS;
use crate::summary::chain::{self, ChainTable};
use crate::summary::intern;
use crate::summary::path::Classes;
use crate::summary::remap::IdMap;
use crate::summary::{shared_set, SharedSets, Summary};

/// A summary with names and classes made portable.
#[derive(Serialize, Deserialize)]
pub(super) struct Portable {
    /// `Name(i)` in `summary` is `names[i]`.
    names: Vec<String>,
    /// Classes private to one function, by name ([`ClassTable::private_name`]).
    private: Vec<String>,
    /// Canonical classes, by the hash of their name ([`ClassTable::name_hash`]), sorted: not
    /// by rank, which every class added or merged anywhere shifts.
    classes: Vec<u64>,
    /// `FuncId(i)` in `summary` and `chains` is `functions[i]`: its label and declaration
    /// ([`Labels`], [`ProgramText::function_decls`]), in the order of the ids that stored it.
    functions: Vec<(u64, u64)>,
    /// `GlobalId(i)` is `globals[i]` (label, declaration), in id order.
    globals: Vec<(u64, u64)>,
    /// `RecordId(i)` is `records[i]` (label), in id order.
    records: Vec<u64>,
    /// The call chains of `summary`'s witnesses and spawns ([`chain::encode_with_table`]).
    chains: ChainTable,
    /// The summary, encoded with its chains as indices into `chains`. Classes are indices into
    /// `classes`, or `PRIVATE | i` for `private[i]`.
    #[serde(with = "serde_bytes")]
    summary: Vec<u8>,
    /// The collapsed SCCs whose shared sets the summary refers to, by name (an index into
    /// `functions`, see [`crate::summary::shared`]): a set is the run's, rebuilt when its SCC
    /// is reused.
    shared: Vec<u32>,
}

/// The `file` of a location given relative to its function's location.
pub(super) const RELATIVE: u32 = u32::MAX;

/// The `file` of a portable location: its `line` is its rank among its function's own
/// locations.
pub(super) const RANKED: u32 = u32::MAX - 1;

/// How a portable summary names locations.
#[derive(Clone, Copy)]
pub(super) enum LocForm {
    /// By rank among their function's own locations (an SCC's stored summaries: moved lines
    /// change nothing).
    Ranked,
    /// Relative to their function's start ([`RELATIVE`]): a step of a fixpoint, stored before
    /// the SCC's own locations are known.
    Relative,
}

/// Why a stored summary could not be loaded.
pub(super) enum LoadError {
    /// The entry is damaged (it is reported and removed).
    Corrupt(Corruption),
    /// The entry is sound but does not fit this program: a function, global or record it
    /// names is declared otherwise, or two of its functions were moved past each other since
    /// it was stored. Kept: it is another program's.
    Stale,
}

impl From<Corruption> for LoadError {
    fn from(c: Corruption) -> LoadError {
        LoadError::Corrupt(c)
    }
}

/// Marks a portable class id as an index into [`Portable::private`].
const PRIVATE: u32 = 1 << 31;

impl SummaryCache<'_> {
    pub(super) fn encode_as(&self, f: FuncId, s: &Summary, form: LocForm) -> Option<Vec<u8>> {
        // The renamed copies are in transit: not interned.
        intern::transient(|| self.encode_transient(f, s, form, &mut Vec::new()))
    }

    /// `s` in portable form, its locations ranked among their functions' own (what an SCC's
    /// entry stores), and the functions whose own locations rank them (sorted).
    pub(super) fn encode_naming_owners(
        &self,
        f: FuncId,
        s: &Summary,
    ) -> Option<(Vec<u8>, Vec<FuncId>)> {
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
        let mut summary = s.clone();
        self.mark_derived_classes(f, &mut summary);
        let used = self.used_ids(&summary)?;
        let private_index: FxHashMap<u32, u32> = used
            .private
            .iter()
            .enumerate()
            .map(|(i, &(_, c))| (c, i as u32))
            .collect();
        let index: FxHashMap<Name, u32> = used
            .names
            .iter()
            .enumerate()
            .map(|(i, &(_, n))| (n, i as u32))
            .collect();
        let mut to_portable = ToPortable {
            index: &index,
            private: &private_index,
            canonical: &used.classes,
            classes: &self.classes,
            pta: self.pta,
            functions: &used.functions,
            globals: &used.globals,
            records: &used.records,
        };
        // Locations first: their owners are this run's functions until the summary is renamed.
        let mut ranked = true;
        let sites = summary.map_locs_but_chains(f, &mut |l, owner| match form {
            LocForm::Relative => {
                let relative = self.relative_loc(l, owner);
                ranked &= relative.is_some();
                relative.unwrap_or(l)
            }
            LocForm::Ranked => {
                owners.push(owner);
                let order = self.files.order(&l);
                let rank = self.own_locs[owner.index()].get().and_then(|own| {
                    own.binary_search_by_key(&order, |o| self.files.order(o))
                        .ok()
                });
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
        let (summary, mut chains) =
            chain::encode_with_mapped_table(f, sites, || store::encode(&summary))?;
        for (site, _) in &mut chains {
            site.callee = to_portable.func(site.callee)?;
        }
        let shared = s
            .shared
            .iter()
            .map(|set| Some(to_portable.func(set.scc)?.0))
            .collect::<Option<_>>()?;
        let portable = Portable {
            names: used.names.iter().map(|(s, _)| s.to_string()).collect(),
            private: used.private.into_iter().map(|(name, _)| name).collect(),
            classes: used.classes,
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

    /// Marks the accesses of `s` (`f`'s summary) whose class is the one their path has in
    /// `f` ([`DERIVED_CLASS`]): the portable form names the classes an analysis found, not
    /// those that follow from the paths it stores ([`Classes::access_class`]). Not in a
    /// summary widened for size, whose classes are those of the accesses it merged.
    fn mark_derived_classes(&self, f: FuncId, s: &mut Summary) {
        if s.coarsened {
            return;
        }
        let derived = self.path_classes(f, s);
        for a in &mut s.accesses {
            if a.class.is_some() && a.class == derived[a.path as usize] {
                a.class = Some(DERIVED_CLASS);
            }
        }
    }

    /// Gives the marked accesses of `s` (`f`'s summary, loaded) the class their path has in
    /// this run's partition; `None` if one has none (the summary does not fit it).
    fn derive_marked_classes(&self, f: FuncId, s: &mut Summary) -> Option<()> {
        if !s.accesses.iter().any(|a| a.class == Some(DERIVED_CLASS)) {
            return Some(());
        }
        let derived = self.path_classes(f, s);
        for a in &mut s.accesses {
            if a.class == Some(DERIVED_CLASS) {
                a.class = Some(derived[a.path as usize]?);
            }
        }
        Some(())
    }

    /// The class of each path of `s`'s table in `f`, asked without noting it.
    fn path_classes(&self, f: FuncId, s: &Summary) -> Vec<Option<u32>> {
        let classes = Classes {
            program: self.program,
            pta: self.pta,
            func: f,
        };
        reads::unrecorded(|| s.tables.paths.iter().map(|p| classes.class(p)).collect())
    }

    /// The names, private classes, functions, globals and records `s` names, sorted (the
    /// portable tables' order); `None` if a class has no portable name.
    fn used_ids(&self, s: &Summary) -> Option<UsedIds<'_>> {
        let mut used = IdCollector {
            names: Vec::new(),
            private: FxHashMap::default(),
            canonical: Vec::new(),
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
        let mut names: Vec<(&str, Name)> = used
            .names
            .iter()
            .map(|&n| (self.program.names.get(n), n))
            .collect();
        names.sort_unstable();
        names.dedup();
        Some(UsedIds {
            names,
            private,
            classes: sorted(used.canonical),
            functions: sorted(used.functions),
            globals: sorted(used.globals),
            records: sorted(used.records),
        })
    }

    pub(super) fn decode(
        &self,
        f: FuncId,
        bytes: &[u8],
        sets: &SharedSets,
    ) -> Result<Summary, LoadError> {
        self.decode_as(f, bytes, sets, LocForm::Ranked)
    }

    pub(super) fn decode_as(
        &self,
        f: FuncId,
        bytes: &[u8],
        sets: &SharedSets,
        form: LocForm,
    ) -> Result<Summary, LoadError> {
        let mut p: Portable =
            store::decode(bytes).map_err(|e| Corruption::Decode(e.to_string()))?;
        let ids = self.portable_ids(&p).ok_or(LoadError::Stale)?;
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
        // A class merged or split since: the summary's SCC is analysed again (its classes are
        // checked before it is reused, so this is for a summary read otherwise).
        let canonical: Vec<Option<u32>> =
            p.classes.iter().map(|&h| self.classes.named(h)).collect();
        if canonical.iter().any(Option::is_none) {
            return Err(LoadError::Stale);
        }
        let mut from = FromPortable {
            names: &names,
            private: &private,
            canonical: &canonical,
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
        self.derive_marked_classes(f, &mut s)
            .ok_or(LoadError::Stale)?;
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
            )
            .into());
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
}

/// Records the names, private classes, functions, globals and records a summary uses; checks
/// every class has a portable form.
struct IdCollector<'a> {
    names: Vec<Name>,
    /// Private class representative → its name.
    private: FxHashMap<u32, String>,
    /// The name hashes of the canonical classes.
    canonical: Vec<u64>,
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
        if let Some(name) = self.classes.name_hash(self.pta, c) {
            self.canonical.push(name);
        } else {
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

/// What a summary names, sorted: the order of its portable tables.
struct UsedIds<'p> {
    names: Vec<(&'p str, Name)>,
    /// Private class names and representatives.
    private: Vec<(String, u32)>,
    /// Canonical classes' name hashes.
    classes: Vec<u64>,
    functions: Vec<FuncId>,
    globals: Vec<GlobalId>,
    records: Vec<RecordId>,
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort_unstable();
    v.dedup();
    v
}

/// The index of `x` in `sorted`, as an id.
fn rank<T: Ord>(sorted: &[T], x: &T) -> Option<u32> {
    sorted.binary_search(x).ok().map(|i| i as u32)
}

struct ToPortable<'a> {
    index: &'a FxHashMap<Name, u32>,
    /// Private class representative → its index in the portable summary's sorted names.
    private: &'a FxHashMap<u32, u32>,
    /// The name hashes of the canonical classes the summary uses, sorted.
    canonical: &'a [u64],
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
        if let Some(name) = self.classes.name_hash(self.pta, c) {
            let r = rank(self.canonical, &name)?;
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
    /// The class each of the portable summary's canonical classes is in this run.
    canonical: &'a [Option<u32>],
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
        *self.canonical.get(c as usize)?
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
