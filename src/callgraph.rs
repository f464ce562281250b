//! The call graph of a linked [`Program`], its strongly connected components and their
//! condensation DAG: the skeleton of RELAY's bottom-up summary computation (FSE 2007, §3 and
//! §4.1; the driver over it is [`crate::schedule`]).
//!
//! - **Nodes** are all program functions, `FuncId(i)` for `program.functions[i]`, defined or not.
//!   Body-less (external) functions are nodes without out-edges: the analyses need to see calls to
//!   `pthread_mutex_lock` and friends.
//! - **Direct calls** are `Instr::Call` whose callee is `Expr::Func(FuncRef::Linked(id))`, also
//!   under casts (`((void (*)(void))f)()` calls `f`). Every other callee is an **indirect call**,
//!   resolved by an [`IndirectCalls`] implementation (the points-to analysis; [`NoIndirect`]
//!   resolves nothing). An indirect call site whose target set is unknown (`None`) or empty is
//!   *unresolved*: it gets no edge and is recorded in [`CallGraph::unresolved`] with its location.
//! - **Edges** are per caller, one per callee (deduplicated), sorted by callee id. An edge is
//!   [`EdgeKind::Direct`] if the caller calls the callee directly anywhere, else
//!   [`EdgeKind::Indirect`]; its `loc` is the first call site of that kind in block order.
//! - **SCCs** come from an iterative Tarjan (no recursion, so a deep call chain cannot overflow
//!   the stack), started from each function in id order and following edges in callee order, so
//!   the result depends only on the graph. SCC ids are Tarjan's output order, a **reverse
//!   topological order: callees before callers**. For every condensation edge `a -> b` (a
//!   function of `a` calls one of `b`), `b < a`; SCC 0 calls no other SCC. The functions of an
//!   SCC are sorted by id. An SCC is *recursive* if it has more than one function or its only
//!   function calls itself.

use rayon::prelude::*;
use serde::Serialize;

use crate::ir::{Expr, FuncId, FuncRef, Instr, Loc};
use crate::link::Program;

/// Resolves indirect calls; implemented by the points-to analysis.
pub trait IndirectCalls: Sync {
    /// The functions a call calls back (a `qsort` comparator, the handlers an event loop
    /// runs), with the arguments they receive. None by default.
    fn callbacks(
        &self,
        _program: &Program,
        _caller: FuncId,
        _callee: &Expr,
        _args: &[Expr],
    ) -> Vec<crate::pta::callbacks::CallbackCall> {
        Vec::new()
    }

    /// Targets of an indirect call in `caller` (of `program`) through `callee`; `None` when
    /// unknown. `args` is the number of actual arguments (resolvers may drop targets that
    /// cannot take them, or whose signature does not fit the pointer's type).
    fn targets(
        &self,
        program: &Program,
        caller: FuncId,
        callee: &Expr,
        args: usize,
    ) -> Option<Vec<FuncId>>;

    /// The functions a call through `callee` may reach: the named one for a direct call, the
    /// resolved targets (none when unknown) for an indirect one.
    fn resolve(
        &self,
        program: &Program,
        caller: FuncId,
        callee: &Expr,
        args: usize,
    ) -> Vec<FuncId> {
        match callee {
            Expr::Func(FuncRef::Linked(g)) => vec![*g],
            _ => self
                .targets(program, caller, callee, args)
                .unwrap_or_default(),
        }
    }
}

/// Resolves no indirect call (every one is counted as unresolved): for tests and for running
/// without a points-to analysis.
#[derive(Copy, Clone, Debug, Default)]
pub struct NoIndirect;

impl IndirectCalls for NoIndirect {
    fn targets(&self, _: &Program, _: FuncId, _: &Expr, _: usize) -> Option<Vec<FuncId>> {
        None
    }
}

/// An index into [`CallGraph::sccs`].
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize)]
pub struct SccId(pub u32);

impl SccId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Debug, Serialize)]
pub enum EdgeKind {
    Direct,
    Indirect,
}

/// A call edge from the function whose edge list holds it.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Serialize)]
pub struct Edge {
    pub callee: FuncId,
    /// `Direct` if some call site of the caller names the callee, else `Indirect`.
    pub kind: EdgeKind,
    /// The first call site of that kind, for reporting.
    pub loc: Loc,
}

/// An indirect call site with no known target.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Serialize)]
pub struct UnresolvedCall {
    pub caller: FuncId,
    pub loc: Loc,
}

#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct Scc {
    /// Sorted by id; never empty.
    pub functions: Vec<FuncId>,
    /// The SCCs called by this one's functions, deduplicated and sorted, without itself. Every
    /// one is smaller than this SCC's id.
    pub callees: Vec<SccId>,
    /// More than one function, or a function calling itself.
    pub recursive: bool,
}

#[derive(Copy, Clone, PartialEq, Eq, Debug, Default, Serialize)]
pub struct CallGraphStats {
    /// All program functions (nodes).
    pub functions: usize,
    /// Functions with a body.
    pub defined: usize,
    /// Deduplicated edges of each kind.
    pub edges_direct: usize,
    pub edges_indirect: usize,
    /// `Instr::Call` instructions, direct and indirect.
    pub call_sites_direct: usize,
    pub call_sites_indirect: usize,
    /// Indirect call sites with no target (`None` or an empty set).
    pub unresolved_indirect: usize,
    pub sccs: usize,
    /// Functions in the largest SCC.
    pub largest_scc: usize,
    pub recursive_sccs: usize,
    /// Functions in recursive SCCs.
    pub functions_in_recursive_sccs: usize,
}

/// The call graph of a program; see the module documentation.
#[derive(Clone, Debug)]
pub struct CallGraph {
    /// Whether each function (by `FuncId`) has a body.
    pub defined: Vec<bool>,
    /// A size for each function: its instruction and block count (0 for a body-less one). The
    /// scheduler uses it to prioritise long chains of work.
    pub size: Vec<u32>,
    /// Out-edges of each function, sorted by callee, one per callee.
    pub edges: Vec<Vec<Edge>>,
    /// Unresolved indirect call sites, by caller id then block order.
    pub unresolved: Vec<UnresolvedCall>,
    /// The SCC of each function.
    pub scc_of: Vec<SccId>,
    /// In reverse topological order: callees before callers.
    pub sccs: Vec<Scc>,
    pub stats: CallGraphStats,
}

/// What one function's body contributes.
struct FnCalls {
    edges: Vec<Edge>,
    unresolved: Vec<UnresolvedCall>,
    direct_sites: usize,
    indirect_sites: usize,
    size: u32,
}

/// The callee of a call, under any casts, if it names a function.
fn direct_callee(mut e: &Expr) -> Option<FuncId> {
    loop {
        match e {
            Expr::Cast(_, inner) => e = inner,
            Expr::Func(FuncRef::Linked(id)) => return Some(*id),
            _ => return None,
        }
    }
}

fn function_calls(program: &Program, caller: FuncId, resolver: &dyn IndirectCalls) -> FnCalls {
    let n = program.functions.len();
    let mut out = FnCalls {
        edges: Vec::new(),
        unresolved: Vec::new(),
        direct_sites: 0,
        indirect_sites: 0,
        size: 0,
    };
    let Some(body) = &program.functions[caller.index()].body else {
        return out;
    };
    let mut size = body.blocks.len();
    // (callee, kind, site order, loc): sorted, the first per callee is the preferred edge.
    let mut raw: Vec<(FuncId, EdgeKind, usize, Loc)> = Vec::new();
    for block in &body.blocks {
        size += block.instrs.len();
        for instr in &block.instrs {
            let Instr::Call {
                callee, loc, args, ..
            } = instr
            else {
                continue;
            };
            let site = raw.len();
            for cb in resolver.callbacks(program, caller, callee, args) {
                raw.push((cb.func, EdgeKind::Indirect, site, *loc));
            }
            if let Some(id) = direct_callee(callee) {
                out.direct_sites += 1;
                if id.index() < n {
                    raw.push((id, EdgeKind::Direct, site, *loc));
                }
                continue;
            }
            out.indirect_sites += 1;
            let targets = resolver
                .targets(program, caller, callee, args.len())
                .unwrap_or_default();
            let before = raw.len();
            for t in targets {
                debug_assert!(t.index() < n, "indirect target {t:?} out of range");
                if t.index() < n {
                    raw.push((t, EdgeKind::Indirect, site, *loc));
                }
            }
            if raw.len() == before {
                out.unresolved.push(UnresolvedCall { caller, loc: *loc });
            }
        }
    }
    out.size = u32::try_from(size).unwrap_or(u32::MAX);
    // Direct sorts before Indirect, then by site order.
    raw.sort_unstable_by_key(|&(id, kind, site, _)| (id, kind == EdgeKind::Indirect, site));
    raw.dedup_by_key(|e| e.0);
    out.edges = raw
        .into_iter()
        .map(|(callee, kind, _, loc)| Edge { callee, kind, loc })
        .collect();
    out
}

impl CallGraph {
    /// Builds the call graph of a linked program, resolving indirect calls with `resolver`.
    /// Function bodies are scanned in parallel (on the current rayon pool).
    pub fn build(program: &Program, resolver: &dyn IndirectCalls) -> CallGraph {
        let per_fn: Vec<FnCalls> = (0..program.functions.len())
            .into_par_iter()
            .map(|i| function_calls(program, FuncId(i as u32), resolver))
            .collect();
        let defined = program.functions.iter().map(|f| f.body.is_some()).collect();
        let mut size = Vec::with_capacity(per_fn.len());
        let mut edges = Vec::with_capacity(per_fn.len());
        let mut unresolved = Vec::new();
        let (mut direct_sites, mut indirect_sites) = (0, 0);
        for f in per_fn {
            size.push(f.size);
            edges.push(f.edges);
            unresolved.extend(f.unresolved);
            direct_sites += f.direct_sites;
            indirect_sites += f.indirect_sites;
        }
        let mut cg = CallGraph::finish(defined, size, edges, unresolved);
        cg.stats.call_sites_direct = direct_sites;
        cg.stats.call_sites_indirect = indirect_sites;
        cg
    }

    /// A synthetic call graph of `n` functions (for tests and benchmarks): every `(caller,
    /// callee)` pair becomes a direct edge (duplicates merged) with a default location; every
    /// function of `defined` has a body (and size 1), the others are external. Edges out of an
    /// external function are kept as given.
    pub fn from_edges(
        defined: Vec<bool>,
        pairs: impl IntoIterator<Item = (FuncId, FuncId)>,
    ) -> CallGraph {
        let n = defined.len();
        let mut edges: Vec<Vec<Edge>> = vec![Vec::new(); n];
        let mut sites = 0;
        for (caller, callee) in pairs {
            assert!(
                caller.index() < n && callee.index() < n,
                "edge out of range"
            );
            sites += 1;
            edges[caller.index()].push(Edge {
                callee,
                kind: EdgeKind::Direct,
                loc: Loc::default(),
            });
        }
        for e in &mut edges {
            e.sort_unstable_by_key(|e| e.callee);
            e.dedup_by_key(|e| e.callee);
        }
        let size = defined.iter().map(|&d| u32::from(d)).collect();
        let mut cg = CallGraph::finish(defined, size, edges, Vec::new());
        cg.stats.call_sites_direct = sites;
        cg
    }

    fn finish(
        defined: Vec<bool>,
        size: Vec<u32>,
        edges: Vec<Vec<Edge>>,
        unresolved: Vec<UnresolvedCall>,
    ) -> CallGraph {
        let (scc_of, mut sccs) = tarjan(&edges);
        for (i, scc) in sccs.iter_mut().enumerate() {
            let me = SccId(i as u32);
            let mut callees = Vec::new();
            let mut self_edge = false;
            for &f in &scc.functions {
                for e in &edges[f.index()] {
                    let s = scc_of[e.callee.index()];
                    if s == me {
                        self_edge = true;
                    } else {
                        debug_assert!(s < me, "Tarjan order: callees first");
                        callees.push(s);
                    }
                }
            }
            callees.sort_unstable();
            callees.dedup();
            scc.callees = callees;
            scc.recursive = scc.functions.len() > 1 || self_edge;
        }
        let stats = CallGraphStats {
            functions: defined.len(),
            defined: defined.iter().filter(|&&d| d).count(),
            edges_direct: edges
                .iter()
                .flatten()
                .filter(|e| e.kind == EdgeKind::Direct)
                .count(),
            edges_indirect: edges
                .iter()
                .flatten()
                .filter(|e| e.kind == EdgeKind::Indirect)
                .count(),
            call_sites_direct: 0,
            call_sites_indirect: 0,
            unresolved_indirect: unresolved.len(),
            sccs: sccs.len(),
            largest_scc: sccs.iter().map(|s| s.functions.len()).max().unwrap_or(0),
            recursive_sccs: sccs.iter().filter(|s| s.recursive).count(),
            functions_in_recursive_sccs: sccs
                .iter()
                .filter(|s| s.recursive)
                .map(|s| s.functions.len())
                .sum(),
        };
        CallGraph {
            defined,
            size,
            edges,
            unresolved,
            scc_of,
            sccs,
            stats,
        }
    }

    pub fn len(&self) -> usize {
        self.defined.len()
    }

    pub fn is_empty(&self) -> bool {
        self.defined.is_empty()
    }

    /// The callees of `f` (sorted, deduplicated).
    pub fn callees(&self, f: FuncId) -> impl Iterator<Item = FuncId> + '_ {
        self.edges[f.index()].iter().map(|e| e.callee)
    }

    pub fn scc(&self, id: SccId) -> &Scc {
        &self.sccs[id.index()]
    }

    /// By function: whether anything calls it (an edge of the graph ends there).
    pub fn called(&self) -> Vec<bool> {
        let mut called = vec![false; self.len()];
        for e in self.edges.iter().flatten() {
            if let Some(c) = called.get_mut(e.callee.index()) {
                *c = true;
            }
        }
        called
    }

    /// The SCCs calling each SCC (sorted, deduplicated): the condensation DAG reversed.
    pub fn scc_callers(&self) -> Vec<Vec<SccId>> {
        let mut callers = vec![Vec::new(); self.sccs.len()];
        for (i, s) in self.sccs.iter().enumerate() {
            for &c in &s.callees {
                callers[c.index()].push(SccId(i as u32));
            }
        }
        callers
    }
}

/// Iterative Tarjan over `edges`: the SCC of each node and the SCCs in completion order (callees
/// before callers), each with its functions sorted. `callees` and `recursive` are left empty.
fn tarjan(edges: &[Vec<Edge>]) -> (Vec<SccId>, Vec<Scc>) {
    let components = strongly_connected(edges.len(), |v, i| {
        edges[v].get(i).map(|e| e.callee.index() as u32)
    });
    let mut scc_of = vec![SccId(u32::MAX); edges.len()];
    let sccs = components
        .into_iter()
        .enumerate()
        .map(|(id, nodes)| {
            let mut functions: Vec<FuncId> = nodes.into_iter().map(FuncId).collect();
            for f in &functions {
                scc_of[f.index()] = SccId(id as u32);
            }
            functions.sort_unstable();
            Scc {
                functions,
                callees: Vec::new(),
                recursive: false,
            }
        })
        .collect();
    (scc_of, sccs)
}

/// Iterative Tarjan over a graph of `n` nodes whose `i`-th successor of `v` is `succ(v, i)`
/// (`None` past the last): the strongly connected components in completion order (every
/// component after those it reaches), roots tried in order `0..n`. No recursion, whatever the
/// depth.
pub(crate) fn strongly_connected(
    n: usize,
    succ: impl Fn(usize, usize) -> Option<u32>,
) -> Vec<Vec<u32>> {
    const UNVISITED: u32 = u32::MAX;
    let mut index = vec![UNVISITED; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    // The DFS path: (node, next edge to follow).
    let mut path: Vec<(u32, usize)> = Vec::new();
    let mut next_index = 0u32;
    let mut components = Vec::new();
    for root in 0..n as u32 {
        if index[root as usize] != UNVISITED {
            continue;
        }
        index[root as usize] = next_index;
        low[root as usize] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        path.push((root, 0));
        while let Some(top) = path.last_mut() {
            let v = top.0 as usize;
            if let Some(w) = succ(v, top.1) {
                top.1 += 1;
                let w = w as usize;
                if index[w] == UNVISITED {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w as u32);
                    on_stack[w] = true;
                    path.push((w as u32, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            // All of v's edges are done.
            path.pop();
            if let Some(&(u, _)) = path.last() {
                low[u as usize] = low[u as usize].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                loop {
                    let w = stack.pop().expect("Tarjan stack holds v");
                    on_stack[w as usize] = false;
                    component.push(w);
                    if w as usize == v {
                        break;
                    }
                }
                components.push(component);
            }
        }
    }
    components
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::frontend::lower::lower_unit;
    use crate::ir::names::Names;
    use crate::link::Linker;

    fn program(src: &str) -> Program {
        let names = Names::new();
        let out = lower_unit("t.c".to_string(), src, &names);
        assert!(out.parse_errors.is_empty(), "{:?}", out.parse_errors);
        let mut linker = Linker::new(Arc::new(names));
        linker.add(0, out.unit);
        linker.finish()
    }

    fn id(p: &Program, name: &str) -> FuncId {
        let i = (0..p.functions.len())
            .find(|&i| p.function_name(FuncId(i as u32)) == name)
            .unwrap_or_else(|| panic!("no function {name}"));
        FuncId(i as u32)
    }

    fn callee_names(p: &Program, cg: &CallGraph, f: &str) -> Vec<String> {
        let mut v: Vec<String> = cg
            .callees(id(p, f))
            .map(|c| p.function_name(c).to_string())
            .collect();
        v.sort();
        v
    }

    fn scc_names(p: &Program, cg: &CallGraph, f: &str) -> Vec<String> {
        cg.scc(cg.scc_of[id(p, f).index()])
            .functions
            .iter()
            .map(|&g| p.function_name(g).to_string())
            .collect()
    }

    /// Every condensation edge goes to a smaller id, and the edges agree with the function edges.
    fn check_invariants(cg: &CallGraph) {
        for (i, s) in cg.sccs.iter().enumerate() {
            assert!(!s.functions.is_empty());
            assert!(s.functions.windows(2).all(|w| w[0] < w[1]));
            assert!(s.callees.windows(2).all(|w| w[0] < w[1]));
            for &c in &s.callees {
                assert!(c.index() < i);
            }
            for &f in &s.functions {
                assert_eq!(cg.scc_of[f.index()].index(), i);
                for e in &cg.edges[f.index()] {
                    let t = cg.scc_of[e.callee.index()];
                    assert!(t.index() == i || s.callees.contains(&t));
                }
            }
        }
        for es in &cg.edges {
            assert!(es.windows(2).all(|w| w[0].callee < w[1].callee));
        }
    }

    #[test]
    fn chain() {
        let p = program(
            "void ext(void);\n\
             void c(void) { ext(); }\n\
             void b(void) { c(); c(); }\n\
             void a(void) { b(); }\n",
        );
        let cg = CallGraph::build(&p, &NoIndirect);
        check_invariants(&cg);
        assert_eq!(callee_names(&p, &cg, "a"), ["b"]);
        assert_eq!(callee_names(&p, &cg, "b"), ["c"]);
        assert_eq!(callee_names(&p, &cg, "c"), ["ext"]);
        assert!(cg.edges[id(&p, "ext").index()].is_empty());
        assert!(!cg.defined[id(&p, "ext").index()]);
        let s = |f| cg.scc_of[id(&p, f).index()];
        assert!(s("ext") < s("c") && s("c") < s("b") && s("b") < s("a"));
        assert_eq!(cg.scc(s("a")).callees, [s("b")]);
        assert_eq!(cg.stats.functions, 4);
        assert_eq!(cg.stats.defined, 3);
        assert_eq!(cg.stats.edges_direct, 3);
        assert_eq!(cg.stats.call_sites_direct, 4);
        assert_eq!(cg.stats.sccs, 4);
        assert_eq!(cg.stats.largest_scc, 1);
        assert_eq!(cg.stats.recursive_sccs, 0);
        // b's edge to c is reported at the first call.
        let e = cg.edges[id(&p, "b").index()][0];
        assert_eq!((e.kind, e.loc.line), (EdgeKind::Direct, 3));
    }

    #[test]
    fn diamond() {
        let p = program(
            "void d(void) {}\n\
             void b(void) { d(); }\n\
             void c(void) { d(); }\n\
             void a(void) { b(); c(); }\n",
        );
        let cg = CallGraph::build(&p, &NoIndirect);
        check_invariants(&cg);
        assert_eq!(callee_names(&p, &cg, "a"), ["b", "c"]);
        let s = |f| cg.scc_of[id(&p, f).index()];
        let mut bc = vec![s("b"), s("c")];
        bc.sort();
        assert_eq!(cg.scc(s("a")).callees, bc);
        assert_eq!(cg.scc(s("b")).callees, [s("d")]);
        assert_eq!(cg.stats.sccs, 4);
        assert_eq!(cg.stats.recursive_sccs, 0);
        assert_eq!(s("d"), SccId(0));
    }

    #[test]
    fn mutual_recursion() {
        let p = program(
            "void leaf(void) {}\n\
             void odd(int n);\n\
             void even(int n) { if (n) odd(n - 1); leaf(); }\n\
             void odd(int n) { if (n) even(n - 1); }\n\
             void top(void) { even(4); }\n",
        );
        let cg = CallGraph::build(&p, &NoIndirect);
        check_invariants(&cg);
        assert_eq!(scc_names(&p, &cg, "even"), ["even", "odd"]);
        assert_eq!(scc_names(&p, &cg, "top"), ["top"]);
        let s = |f| cg.scc_of[id(&p, f).index()];
        assert_eq!(s("even"), s("odd"));
        let scc = cg.scc(s("even"));
        assert!(scc.recursive);
        assert_eq!(scc.callees, [s("leaf")]);
        assert_eq!(cg.scc(s("top")).callees, [s("even")]);
        assert!(!cg.scc(s("top")).recursive);
        assert_eq!(cg.stats.sccs, 3);
        assert_eq!(cg.stats.largest_scc, 2);
        assert_eq!(cg.stats.recursive_sccs, 1);
        assert_eq!(cg.stats.functions_in_recursive_sccs, 2);
    }

    #[test]
    fn self_recursion() {
        let p = program(
            "int fact(int n) { return n ? n * fact(n - 1) : 1; }\n\
             int main(void) { return fact(5); }\n",
        );
        let cg = CallGraph::build(&p, &NoIndirect);
        check_invariants(&cg);
        assert_eq!(callee_names(&p, &cg, "fact"), ["fact"]);
        let s = |f| cg.scc_of[id(&p, f).index()];
        assert!(cg.scc(s("fact")).recursive);
        assert!(cg.scc(s("fact")).callees.is_empty());
        assert!(!cg.scc(s("main")).recursive);
        assert_eq!(cg.stats.recursive_sccs, 1);
        assert_eq!(cg.stats.largest_scc, 1);
    }

    /// Resolves every indirect call to the functions whose names start with `h_`.
    struct Handlers(Vec<FuncId>);
    impl IndirectCalls for Handlers {
        fn targets(&self, _: &Program, _: FuncId, callee: &Expr, _: usize) -> Option<Vec<FuncId>> {
            assert!(direct_callee(callee).is_none());
            Some(self.0.clone())
        }
    }

    #[test]
    fn indirect_resolved() {
        let src = "void h_one(void) {}\n\
                   void h_two(void) {}\n\
                   struct ops { void (*run)(void); };\n\
                   void dispatch(struct ops *o, void (*f)(void)) { o->run(); f(); h_one(); }\n\
                   void cast(void) { ((void (*)(int))h_two)(1); }\n";
        let p = program(src);
        let handlers = Handlers(vec![id(&p, "h_two"), id(&p, "h_one")]);
        let cg = CallGraph::build(&p, &handlers);
        check_invariants(&cg);
        let d = &cg.edges[id(&p, "dispatch").index()];
        assert_eq!(d.len(), 2);
        assert!(d[0].callee < d[1].callee);
        let kind = |f| d.iter().find(|e| e.callee == id(&p, f)).unwrap().kind;
        assert_eq!(kind("h_one"), EdgeKind::Direct);
        assert_eq!(kind("h_two"), EdgeKind::Indirect);
        // A cast of a function name is still a direct call.
        assert_eq!(callee_names(&p, &cg, "cast"), ["h_two"]);
        assert_eq!(cg.edges[id(&p, "cast").index()][0].kind, EdgeKind::Direct);
        assert_eq!(cg.stats.call_sites_indirect, 2);
        assert_eq!(cg.stats.call_sites_direct, 2);
        assert_eq!(cg.stats.edges_direct, 2);
        assert_eq!(cg.stats.edges_indirect, 1);
        assert_eq!(cg.stats.unresolved_indirect, 0);
        assert!(cg.unresolved.is_empty());
    }

    #[test]
    fn indirect_unresolved() {
        let src = "void g(void) {}\n\
                   void f(void (*fp)(void), void (*fq)(void)) {\n  fp();\n  g();\n  fq();\n}\n";
        let p = program(src);
        let cg = CallGraph::build(&p, &NoIndirect);
        check_invariants(&cg);
        assert_eq!(callee_names(&p, &cg, "f"), ["g"]);
        assert_eq!(cg.stats.unresolved_indirect, 2);
        assert_eq!(cg.stats.call_sites_indirect, 2);
        let lines: Vec<u32> = cg.unresolved.iter().map(|u| u.loc.line).collect();
        assert_eq!(lines, [3, 5]);
        assert!(cg.unresolved.iter().all(|u| u.caller == id(&p, "f")));

        // An empty target set counts as unresolved too.
        struct Empty;
        impl IndirectCalls for Empty {
            fn targets(&self, _: &Program, _: FuncId, _: &Expr, _: usize) -> Option<Vec<FuncId>> {
                Some(Vec::new())
            }
        }
        let cg = CallGraph::build(&p, &Empty);
        assert_eq!(cg.stats.unresolved_indirect, 2);
    }

    #[test]
    fn synthetic_deep_chain_and_big_cycle() {
        // A chain of 200k functions does not overflow the stack, and closing it makes one SCC.
        let n = 200_000u32;
        let chain = (0..n - 1).map(|i| (FuncId(i), FuncId(i + 1)));
        let cg = CallGraph::from_edges(vec![true; n as usize], chain.clone());
        assert_eq!(cg.stats.sccs, n as usize);
        // Callees first: the last function of the chain is SCC 0.
        assert_eq!(cg.scc_of[(n - 1) as usize], SccId(0));
        assert_eq!(cg.scc_of[0], SccId(n - 1));
        check_invariants(&cg);
        let cg = CallGraph::from_edges(
            vec![true; n as usize],
            chain.chain([(FuncId(n - 1), FuncId(0))]),
        );
        assert_eq!(cg.stats.sccs, 1);
        assert_eq!(cg.stats.largest_scc, n as usize);
        assert!(cg.sccs[0].recursive);
    }

    #[test]
    fn deterministic_ids() {
        let edges = [(0, 1), (1, 2), (2, 0), (3, 1), (3, 4), (4, 4), (5, 3)];
        let mk = |rev: bool| {
            let mut es: Vec<(FuncId, FuncId)> =
                edges.iter().map(|&(a, b)| (FuncId(a), FuncId(b))).collect();
            if rev {
                es.reverse();
            }
            CallGraph::from_edges(vec![true; 6], es)
        };
        let (a, b) = (mk(false), mk(true));
        assert_eq!(a.sccs, b.sccs);
        assert_eq!(a.scc_of, b.scc_of);
        check_invariants(&a);
        assert_eq!(a.stats.recursive_sccs, 2);
        assert_eq!(a.scc_callers()[a.scc_of[1].index()], [a.scc_of[3]]);
    }
}
