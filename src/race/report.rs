//! The report of a run, from the warnings: names, original source locations (the line markers'
//! file names), call paths from the entries, baseline keys and groups.

use std::cell::RefCell;
use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use super::entries::{EntryOrigin, ThreadEntry};
use super::Side;
use crate::ir::Loc;
use crate::link::Program;
use crate::pta::{ByClass, Origin, PointsTo};
use crate::report::{self, AccessSite, CallFrame, RaceWarning, SourceLoc};
use crate::summary::access::MAX_CHAIN;
use crate::summary::print::SummaryPrinter;
use crate::summary::{AccessKind, Path, Root, Step, Summaries};

/// How warnings are grouped (Chord's two views): by the member accessed, or by the object.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Group {
    /// `struct s.f`: every warning on one member of one struct type together.
    #[default]
    Field,
    /// The object (a variable, or a points-to representative): all its members together.
    Object,
}

/// Turns warnings into report data; caches representative names.
pub struct ReportBuilder<'a> {
    pub program: &'a Program,
    pub pta: &'a PointsTo,
    pub summaries: &'a Summaries,
    pub entries: &'a [super::ThreadEntry],
    classes: &'a ClassIndex,
    /// [`ReportBuilder::class_name`] by class and depth.
    class_names: RefCell<FxHashMap<(u32, u32), Option<String>>>,
    /// What the report data read besides the analysis's result ([`RenderedFrom`]); the
    /// locations as a set (a report names each many times).
    named_locs: RefCell<rustc_hash::FxHashSet<Loc>>,
    named_allocs: RefCell<Vec<(crate::ir::FuncId, Loc)>>,
    numbered_classes: std::cell::Cell<bool>,
}

/// What naming memory reads of the points-to classes, built on first use and shared by the
/// builders of one report (which build warnings in parallel).
#[derive(Default)]
pub struct ClassIndex {
    /// The program lvalues of each class, by representative.
    members: OnceLock<ByClass<Origin>>,
    /// The classes pointing to each class, by representative.
    pointers: OnceLock<FxHashMap<u32, Vec<u32>>>,
}

/// What report data depends on besides the warnings: the locations it names, the allocation
/// sites whose lines name memory (`heap@f:12`), and whether memory was named by its points-to
/// class's number (`rep#12`). Saved findings reused after lines moved are rewritten or
/// rejected by these (`crate::cache::relocate`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RenderedFrom {
    /// Sorted, distinct.
    pub locs: Vec<Loc>,
    /// (function, allocation site), as named.
    pub allocs: Vec<(crate::ir::FuncId, Loc)>,
    pub numbered_classes: bool,
}

impl RenderedFrom {
    /// What the report data of several builders read, together.
    pub fn union(parts: impl IntoIterator<Item = RenderedFrom>) -> RenderedFrom {
        let mut all = RenderedFrom::default();
        for p in parts {
            all.locs.extend(p.locs);
            all.allocs.extend(p.allocs);
            all.numbered_classes |= p.numbered_classes;
        }
        all.locs.sort_unstable();
        all.locs.dedup();
        all.allocs.sort_unstable();
        all.allocs.dedup();
        all
    }
}

impl<'a> ReportBuilder<'a> {
    pub fn new(
        program: &'a Program,
        pta: &'a PointsTo,
        summaries: &'a Summaries,
        entries: &'a [super::ThreadEntry],
        classes: &'a ClassIndex,
    ) -> Self {
        ReportBuilder {
            program,
            pta,
            summaries,
            entries,
            classes,
            class_names: Default::default(),
            named_locs: Default::default(),
            named_allocs: Default::default(),
            numbered_classes: Default::default(),
        }
    }

    /// What the report data made so far read besides the warnings.
    pub fn rendered_from(&self) -> RenderedFrom {
        let mut locs: Vec<Loc> = self.named_locs.borrow().iter().copied().collect();
        locs.sort_unstable();
        RenderedFrom {
            locs,
            allocs: self.named_allocs.borrow().clone(),
            numbered_classes: self.numbered_classes.get(),
        }
    }

    /// The warning between two sides, as report data: `group` and `filtered_by` are left
    /// empty (they depend on the options of the report; see [`ReportBuilder::group_of`]).
    pub fn warning(&self, a: &Side<'_>, b: &Side<'_>) -> RaceWarning {
        let first = self.site(a);
        let second = self.site(b);
        let lvalue = first.lvalue.clone();
        // Sides ordered by their text (not by line) so that edits elsewhere keep the key.
        let mut sides = [
            format!("{}/{}/{:?}", first.entry, first.function, first.kind),
            format!("{}/{}/{:?}", second.entry, second.function, second.kind),
        ];
        sides.sort();
        let key = format!("{}|{}|{}|{}", lvalue, second.lvalue, sides[0], sides[1]);
        let mut notes = Vec::new();
        for s in [a, b] {
            if self.summaries.get(s.entry).is_some_and(|x| x.coarsened) {
                notes.push(format!(
                    "the summary of {} was widened for size: the locks shown for its accesses \
                     are those held at every access of the same lvalue",
                    self.program.function_name(s.entry)
                ));
            }
        }
        notes.dedup();
        RaceWarning {
            key,
            group: String::new(),
            lvalue,
            accesses: vec![first, second],
            filtered_by: Vec::new(),
            notes,
        }
    }

    fn site(&self, s: &Side<'_>) -> AccessSite {
        let printer = SummaryPrinter {
            program: self.program,
            func: s.entry,
        };
        let rep = |c: u32| self.rep_name(c);
        let a = &s.access;
        let w = a.witness();
        let entry = self.program.function_name(s.entry).to_string();
        let mut caller = entry.clone();
        let call_path: Vec<CallFrame> = w
            .chain()
            .iter()
            .map(|c| {
                let callee = self.program.function_name(c.callee).to_string();
                CallFrame {
                    caller: std::mem::replace(&mut caller, callee.clone()),
                    callee,
                    location: self.loc(c.loc),
                }
            })
            .collect();
        AccessSite {
            lvalue: printer.path_with(a.path, &rep),
            kind: match a.kind {
                AccessKind::Read => report::AccessKind::Read,
                AccessKind::Write => report::AccessKind::Write,
            },
            atomic: a.atomic,
            location: self.loc(w.loc),
            // The chain is cut at MAX_CHAIN calls: its last callee is then not the function
            // performing the access.
            function: w
                .func
                .map_or(caller, |f| self.program.function_name(f).to_string()),
            entry,
            entry_multiple: self.entries.iter().any(|e| e.func == s.entry && e.multiple),
            collapsed_scc: s.collapsed.map(|(scc, entries)| report::CollapsedScc {
                scc: self.program.function_name(scc).to_string(),
                entries,
            }),
            locks: a
                .locks
                .plus
                .iter()
                .map(|l| {
                    let p = printer.path_with(&l.path, &rep);
                    match l.mode {
                        crate::models::LockMode::Exclusive => p,
                        crate::models::LockMode::Shared => format!("{p} (read)"),
                    }
                })
                .collect(),
            call_path_truncated: w.chain_len() >= MAX_CHAIN,
            call_path,
            also_at: {
                let mut at: Vec<SourceLoc> = a
                    .witnesses
                    .iter()
                    .map(|x| x.loc)
                    .chain(s.also.iter().copied())
                    .filter(|l| *l != w.loc)
                    .map(|l| self.loc(l))
                    .collect();
                at.sort();
                at.dedup();
                at
            },
        }
    }

    /// The entries that are callbacks, with the function they were handed to and where.
    pub fn callback_entries(&self, entries: &[ThreadEntry]) -> Vec<report::CallbackEntry> {
        entries
            .iter()
            .filter_map(|e| match e.origin {
                EntryOrigin::Callback {
                    via, loc, unknown, ..
                } => Some(report::CallbackEntry {
                    function: self.program.function_name(e.func).to_string(),
                    via: self.program.function_name(via).to_string(),
                    at: self.loc(loc),
                    unknown,
                }),
                _ => None,
            })
            .collect()
    }

    fn loc(&self, l: Loc) -> SourceLoc {
        self.named_locs.borrow_mut().insert(l);
        source_loc(self.program, l)
    }

    /// `struct s.f` for a member access, the object otherwise (`--group field`); the object
    /// the lvalue lives in (`--group object`).
    pub fn group_of(&self, s: &Side<'_>, group: Group) -> String {
        let path = s.access.path;
        let printer = SummaryPrinter {
            program: self.program,
            func: s.entry,
        };
        let rep = |c: u32| self.rep_name(c);
        let object = || {
            let cut = path
                .steps
                .iter()
                .rposition(|st| *st == Step::Deref)
                .map_or(0, |i| i + 1);
            let base = Path {
                root: path.root,
                steps: path.steps[..cut].to_vec(),
            };
            printer.path_with(&base, &rep)
        };
        match (group, path.steps.last()) {
            (Group::Field, Some(Step::Field(r, f))) => {
                let rec = self.program.types.record(*r);
                let tag = rec.tag.map_or("<anonymous>", |t| self.program.names.get(t));
                let kind = format!("{:?}", rec.kind).to_lowercase();
                format!("{kind} {tag}.{}", self.program.names.get(*f))
            }
            (Group::Field, _) if matches!(path.root, Root::Global(_)) && path.steps.is_empty() => {
                printer.path_with(path, &rep)
            }
            _ => object(),
        }
    }

    /// A representative named after what it stands for: `counter`, `heap@f:12`, or
    /// `{a, b, +3}`; memory nothing in the program names after what points to it, `*p` (or
    /// `*f()`, what `f` returns). Names never depend on the analysis's numbering, which moves
    /// with every edit, so warnings keep their keys (and baselines) across edits.
    fn rep_name(&self, c: u32) -> String {
        let c = self.pta.class(c);
        self.class_name(c, POINTER_NAMING_DEPTH).unwrap_or_else(|| {
            self.numbered_classes.set(true);
            format!("rep#{c}")
        })
    }

    /// [`ReportBuilder::rep_name`] of a representative, following at most `depth` pointers to
    /// it.
    fn class_name(&self, c: u32, depth: u32) -> Option<String> {
        if let Some(n) = self.class_names.borrow().get(&(c, depth)) {
            return n.clone();
        }
        let name = self.class_name_uncached(c, depth);
        self.class_names
            .borrow_mut()
            .insert((c, depth), name.clone());
        name
    }

    fn class_name_uncached(&self, c: u32, depth: u32) -> Option<String> {
        let members = self
            .classes
            .members
            .get_or_init(|| members_by_class(self.pta));
        let members = members.of(c);
        let mut names: Vec<String> = members
            .iter()
            .filter_map(|o| self.origin_name(*o))
            .collect();
        names.sort();
        names.dedup();
        match names.len() {
            0 => {}
            1 => return names.pop(),
            n => return Some(format!("{{{}, {}, +{}}}", names[0], names[1], n - 2)),
        }
        let returns = members.iter().filter_map(|o| match o {
            Origin::Return(f) => Some(format!("{}()", self.program.function_name(*f))),
            _ => None,
        });
        if let Some(r) = returns.min() {
            return Some(r);
        }
        let depth = depth.checked_sub(1)?;
        let pointers = self
            .classes
            .pointers
            .get_or_init(|| pointers_by_class(self.pta));
        let by = pointers.get(&c).map_or(&[][..], Vec::as_slice);
        by.iter()
            .filter(|&&p| p != c)
            .filter_map(|&p| self.class_name(p, depth))
            .map(|n| format!("*{n}"))
            .min()
    }

    fn origin_name(&self, o: Origin) -> Option<String> {
        let p = self.program;
        Some(match o {
            Origin::Global(g) => p.global_name(g),
            Origin::Local(f, l) => {
                let body = p.functions[f.index()].body.as_ref()?;
                let local = body.locals.get(l.index())?;
                format!("{}:{}", p.function_name(f), p.names.get(local.name))
            }
            Origin::Alloc(f, l) => {
                self.named_allocs.borrow_mut().push((f, l));
                format!("heap@{}:{}", p.function_name(f), l.line)
            }
            Origin::Field(r, n) => {
                let rec = p.types.record(r);
                let tag = rec.tag.map_or("<anonymous>", |t| p.names.get(t));
                format!("{tag}.{}", p.names.get(n))
            }
            Origin::Return(_) | Origin::Function(_) | Origin::Str(_) | Origin::Fresh => {
                return None
            }
        })
    }
}

/// A location as the report names it: its file's name (from the line markers), line, column.
pub fn source_loc(program: &Program, l: Loc) -> SourceLoc {
    SourceLoc {
        file: program
            .files
            .get(l.file as usize)
            .cloned()
            .unwrap_or_default(),
        line: l.line,
        col: l.col,
    }
}

/// How many pointers [`ReportBuilder::rep_name`] follows back to name memory.
const POINTER_NAMING_DEPTH: u32 = 3;

/// The classes pointing to each class, by representative.
fn pointers_by_class(pta: &PointsTo) -> FxHashMap<u32, Vec<u32>> {
    let mut by: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    for n in 0..pta.node_count() as u32 {
        let c = pta.class(n);
        if c != n {
            continue;
        }
        if let Some(t) = pta.deref_class(c) {
            by.entry(pta.class(t)).or_default().push(c);
        }
    }
    by
}

/// The program lvalues (every origin but [`Origin::Fresh`]) of each class, in node order, as
/// [`PointsTo::class_members`] gives for one class.
fn members_by_class(pta: &PointsTo) -> ByClass<Origin> {
    ByClass::new(pta, Origin::Fresh, |node| {
        Some(pta.origin(node)).filter(|&o| o != Origin::Fresh)
    })
}
