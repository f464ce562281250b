//! The inclusion-constraint graph and its worklist solver (Andersen's analysis with difference
//! propagation): copy edges `a ⊆ b`, loads `d ⊇ *p` and stores `*p ⊇ s`, which add copy edges
//! as the points-to set of `p` grows. No recursion; each object reaches each node once.
//!
//! Cycles of copy edges (the unknown code's memory, which holds and is held by everything
//! handed to it; `p = p->next` loops) have equal sets: they are found with Tarjan's algorithm
//! before solving and again whenever the edges grew by an eighth, and collapsed into one node
//! (union-find), so a set is propagated once around a cycle instead of once per node. (Each
//! search is linear in the graph, and the graph grows geometrically between two: all of them
//! cost at most nine times the last. On SQLite, searching at every half took the solve 1.07 s,
//! at every eighth 0.8 s, at every 32nd no less.)
//!
//! The worklist is ordered by a topological rank of the copy edges, computed at each collapse
//! (sources first): a node mostly waits until the nodes copying into it are done and then
//! sends one delta, where a stack sent many small ones. Session 44 measured it on SQLite
//! (`-j1`, a one-line edit, alternating runs): 1.26–1.34 s → 0.84–0.89 s for the stage, and
//! 0.91 → 0.44 s on a cold run, with the same sets.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::{FxHashMap, FxHashSet};

use super::bits::Bits;

/// A call through a pointer that unknown code may have set: once the opaque object reaches the
/// pointer, its arguments escape, the records they point to are handed to unknown code
/// ([`Graph::hand_records`]), and the result holds unknown memory.
struct OpaqueCall {
    args: Vec<u32>,
    records: Vec<u32>,
    result: u32,
}

#[derive(Default)]
pub(super) struct Graph {
    /// Points-to set of each node.
    pts: Vec<Bits>,
    /// Objects added to a node and not yet propagated.
    delta: Vec<Bits>,
    /// `copy[a]`: the nodes whose sets include `a`'s.
    copy: Vec<Vec<u32>>,
    /// `loads[p]`: nodes `d` with `d ⊇ *p`.
    loads: Vec<Vec<u32>>,
    /// `stores[p]`: nodes `s` with `*p ⊇ s`.
    stores: Vec<Vec<u32>>,
    edges: FxHashSet<(u32, u32)>,
    queued: Vec<bool>,
    /// Queued nodes, sources first: by their rank in a topological order of the copy edges
    /// at the last collapse ([`Graph::collapse_cycles`]), so that a node is mostly processed
    /// after the nodes that copy into it and sends one larger delta instead of many.
    worklist: BinaryHeap<Reverse<(u32, u32)>>,
    /// Each node's rank (`u32::MAX`: made since the last collapse, processed last).
    rank: Vec<u32>,
    /// Nodes whose set holds exactly one object, by object (`&x` used many times).
    address_of: FxHashMap<u32, u32>,
    /// Union-find over nodes: a collapsed cycle's nodes point to the one that holds its data.
    parent: Vec<u32>,
    /// Copy edges when cycles were last collapsed.
    edges_at_collapse: usize,
    /// The opaque object and the node of the escaped objects ([`Graph::set_opaque`]).
    opaque: Option<(u32, u32)>,
    /// Calls through each node ([`OpaqueCall`]).
    opaque_calls: FxHashMap<u32, Vec<OpaqueCall>>,
    /// The records, and which were handed to unknown code.
    records: super::handed::HandedRecords,
}

impl Graph {
    pub(super) fn with_nodes(n: usize) -> Graph {
        let mut g = Graph::default();
        g.grow(n);
        g
    }

    fn grow(&mut self, n: usize) {
        self.pts.resize_with(n, Default::default);
        self.delta.resize_with(n, Default::default);
        self.copy.resize_with(n, Default::default);
        self.loads.resize_with(n, Default::default);
        self.stores.resize_with(n, Default::default);
        self.queued.resize(n, false);
        self.rank.resize(n, u32::MAX);
        let old = self.parent.len() as u32;
        self.parent.extend(old..n as u32);
    }

    /// The node holding `n`'s data (itself unless collapsed into a cycle).
    fn find(&mut self, mut n: u32) -> u32 {
        while self.parent[n as usize] != n {
            let p = self.parent[n as usize];
            self.parent[n as usize] = self.parent[p as usize];
            n = p;
        }
        n
    }

    fn find_const(&self, mut n: u32) -> u32 {
        while self.parent[n as usize] != n {
            n = self.parent[n as usize];
        }
        n
    }

    pub(super) fn len(&self) -> usize {
        self.pts.len()
    }

    /// A new node with an empty set.
    pub(super) fn node(&mut self) -> u32 {
        let n = self.pts.len();
        self.grow(n + 1);
        n as u32
    }

    /// A node whose set is `{object}` (shared by every use of the address).
    pub(super) fn address(&mut self, object: u32) -> u32 {
        if let Some(&n) = self.address_of.get(&object) {
            return n;
        }
        let n = self.node();
        self.add_object(n, object);
        self.address_of.insert(object, n);
        n
    }

    pub(super) fn add_object(&mut self, n: u32, object: u32) {
        let n = self.find(n);
        if self.pts[n as usize].insert(object) {
            self.delta[n as usize].insert(object);
            self.enqueue(n);
        }
    }

    /// `to ⊇ from`.
    pub(super) fn copy(&mut self, from: u32, to: u32) {
        let (from, to) = (self.find(from), self.find(to));
        if from == to || !self.edges.insert((from, to)) {
            return;
        }
        self.copy[from as usize].push(to);
        if !self.pts[from as usize].is_empty() {
            // Lent out rather than cloned: adding to `to` touches only `to`'s sets.
            let all = std::mem::take(&mut self.pts[from as usize]);
            self.add_objects(to, &all);
            self.pts[from as usize] = all;
        }
    }

    /// Adds a set of objects to `n`'s (a representative).
    fn add_objects(&mut self, n: u32, objects: &Bits) {
        let new = self.pts[n as usize].union_new(objects);
        if !new.is_empty() {
            self.delta[n as usize].union_new(&new);
            self.enqueue(n);
        }
    }

    /// Makes `object` opaque: a pointer to it may point to any object in `escaped`'s set (which
    /// is closed: what those objects hold is in it too). Loading through it gives it again,
    /// storing through it lets the stored objects escape. The escaped objects themselves are
    /// never propagated to the nodes that point to unknown memory: the set stays one object.
    pub(super) fn set_opaque(&mut self, object: u32, escaped: u32) {
        self.opaque = Some((object, escaped));
    }

    pub(super) fn set_records(&mut self, records: super::handed::HandedRecords) {
        self.records = records;
    }

    /// Unknown code is handed the records `roots` (record ids): their members, and those of
    /// the records they reach, hold unknown memory, and what they hold escapes.
    pub(super) fn hand_records(&mut self, roots: &[u32]) {
        let Some((opaque, escaped)) = self.opaque else {
            return;
        };
        for m in self.records.hand(roots) {
            self.copy(m, escaped);
            self.add_object(m, opaque);
        }
    }

    /// A call through `p` with `args`, returning into `result`: a call of unknown code if `p`
    /// may point to unknown memory.
    pub(super) fn call_if_opaque(
        &mut self,
        p: u32,
        args: Vec<u32>,
        records: Vec<u32>,
        result: u32,
    ) {
        let p = self.find(p);
        let call = OpaqueCall {
            args,
            records,
            result,
        };
        match self.opaque {
            Some((opaque, _)) if self.pts[p as usize].contains(opaque) => self.call_unknown(&call),
            _ => self.opaque_calls.entry(p).or_default().push(call),
        }
    }

    fn call_unknown(&mut self, call: &OpaqueCall) {
        let Some((opaque, escaped)) = self.opaque else {
            return;
        };
        for &a in &call.args {
            self.copy(a, escaped);
        }
        self.hand_records(&call.records);
        self.add_object(call.result, opaque);
    }

    /// `to ⊇ *from` for one object `o` of `from`'s set.
    fn load_from(&mut self, o: u32, to: u32) {
        match self.opaque {
            Some((opaque, _)) if o == opaque => self.add_object(to, opaque),
            _ => self.copy(o, to),
        }
    }

    /// `*to ⊇ from` for one object `o` of `to`'s set.
    fn store_into(&mut self, from: u32, o: u32) {
        match self.opaque {
            Some((opaque, escaped)) if o == opaque => self.copy(from, escaped),
            _ => self.copy(from, o),
        }
    }

    /// `to ⊇ *from`.
    pub(super) fn load(&mut self, from: u32, to: u32) {
        let from = self.find(from);
        self.loads[from as usize].push(to);
        let objects: Vec<u32> = self.pts[from as usize].iter().collect();
        for o in objects {
            self.load_from(o, to);
        }
    }

    /// `*to ⊇ from`.
    pub(super) fn store(&mut self, from: u32, to: u32) {
        let to = self.find(to);
        self.stores[to as usize].push(from);
        let objects: Vec<u32> = self.pts[to as usize].iter().collect();
        for o in objects {
            self.store_into(from, o);
        }
    }

    fn enqueue(&mut self, n: u32) {
        if !self.queued[n as usize] {
            self.queued[n as usize] = true;
            self.worklist.push(Reverse((self.rank[n as usize], n)));
        }
    }

    /// Propagates until no set grows.
    pub(super) fn solve(&mut self) {
        self.collapse_cycles();
        while let Some(Reverse((_, n))) = self.worklist.pop() {
            self.queued[n as usize] = false;
            if self.edges.len() > self.edges_at_collapse + self.edges_at_collapse / 8 + 1024 {
                self.collapse_cycles();
                self.enqueue(n);
                continue;
            }
            if self.find(n) != n {
                continue;
            }
            let delta = std::mem::take(&mut self.delta[n as usize]);
            if delta.is_empty() {
                continue;
            }
            // Lent out: loads and stores add copy edges and objects, never loads or stores.
            let loads = std::mem::take(&mut self.loads[n as usize]);
            let stores = std::mem::take(&mut self.stores[n as usize]);
            for o in delta.iter() {
                for &d in &loads {
                    self.load_from(o, d);
                }
                for &s in &stores {
                    self.store_into(s, o);
                }
            }
            self.loads[n as usize] = loads;
            self.stores[n as usize] = stores;
            if self
                .opaque
                .is_some_and(|(opaque, _)| delta.contains(opaque))
            {
                for call in self.opaque_calls.remove(&n).unwrap_or_default() {
                    self.call_unknown(&call);
                }
            }
            let mut succs = std::mem::take(&mut self.copy[n as usize]);
            for s in &mut succs {
                *s = self.find(*s);
            }
            succs.sort_unstable();
            succs.dedup();
            for &s in &succs {
                if s != n {
                    self.add_objects(s, &delta);
                }
            }
            debug_assert!(
                self.copy[n as usize].is_empty(),
                "adding objects adds no edge"
            );
            self.copy[n as usize] = succs;
        }
    }

    /// The points-to set of `n`.
    pub(super) fn set(&self, n: u32) -> &Bits {
        &self.pts[self.find_const(n) as usize]
    }

    /// The node holding `n`'s set (equal sets of one collapsed cycle share it).
    pub(super) fn representative(&self, n: u32) -> u32 {
        self.find_const(n)
    }

    /// Collapses every cycle of copy edges into one node, which is queued with its whole set
    /// (its members' successors may not have seen all of it).
    fn collapse_cycles(&mut self) {
        self.edges_at_collapse = self.edges.len();
        let n = self.pts.len();
        let succs: Vec<Vec<u32>> = (0..n as u32)
            .map(|v| {
                if self.find_const(v) != v {
                    return Vec::new();
                }
                let mut s: Vec<u32> = self.copy[v as usize]
                    .iter()
                    .map(|&w| self.find_const(w))
                    .filter(|&w| w != v)
                    .collect();
                s.sort_unstable();
                s.dedup();
                s
            })
            .collect();
        let sccs = crate::callgraph::strongly_connected(n, |v, i| succs[v].get(i).copied());
        // Completion order puts every component after those it reaches: sources last.
        for (i, scc) in sccs.iter().enumerate() {
            for &v in scc {
                self.rank[v as usize] = (sccs.len() - 1 - i) as u32;
            }
        }
        let queued: Vec<u32> = std::mem::take(&mut self.worklist)
            .into_iter()
            .map(|Reverse((_, v))| v)
            .collect();
        for v in queued {
            self.worklist.push(Reverse((self.rank[v as usize], v)));
        }
        for scc in sccs {
            if scc.len() < 2 {
                continue;
            }
            let root = scc[0];
            for &m in &scc[1..] {
                self.merge(root, m);
            }
            self.delta[root as usize] = self.pts[root as usize].clone();
            self.enqueue(root);
        }
    }

    /// Moves `m`'s set and constraints into `root`.
    fn merge(&mut self, root: u32, m: u32) {
        self.parent[m as usize] = root;
        let pts = std::mem::take(&mut self.pts[m as usize]);
        self.pts[root as usize].union_new(&pts);
        self.delta[m as usize] = Bits::default();
        let copy = std::mem::take(&mut self.copy[m as usize]);
        self.copy[root as usize].extend(copy);
        let loads = std::mem::take(&mut self.loads[m as usize]);
        self.loads[root as usize].extend(loads);
        let stores = std::mem::take(&mut self.stores[m as usize]);
        self.stores[root as usize].extend(stores);
        if let Some(calls) = self.opaque_calls.remove(&m) {
            self.opaque_calls.entry(root).or_default().extend(calls);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(g: &Graph, n: u32) -> Vec<u32> {
        let mut v: Vec<u32> = g.set(n).iter().collect();
        v.sort();
        v
    }

    #[test]
    fn loads_and_stores_follow_the_sets_they_go_through() {
        // p = &a; q = &b; *p = q; r = *p; s = r  ⇒  a ⊇ {b}, r ⊇ {b}, s ⊇ {b}
        let mut g = Graph::with_nodes(6);
        let (a, b, p, q, r, s) = (0, 1, 2, 3, 4, 5);
        g.copy(r, s);
        g.load(p, r);
        g.store(q, p);
        let pa = g.address(a);
        g.copy(pa, p);
        let qb = g.address(b);
        g.copy(qb, q);
        g.solve();
        assert_eq!(sorted(&g, a), vec![b]);
        assert_eq!(sorted(&g, r), vec![b]);
        assert_eq!(sorted(&g, s), vec![b]);
        assert_eq!(sorted(&g, p), vec![a]);
        assert!(g.set(b).is_empty(), "b points nowhere");
    }

    #[test]
    fn the_opaque_object_stands_for_the_escaped_ones() {
        // world ∋ opaque; p ⊇ {opaque}; *p ⊇ &x (x escapes); q ⊇ *p (q: unknown memory)
        let mut g = Graph::with_nodes(6);
        let (world, opaque, p, q, x, px) = (0, 1, 2, 3, 4, 5);
        g.set_opaque(opaque, world);
        g.add_object(world, opaque);
        g.add_object(p, opaque);
        g.add_object(px, x);
        g.store(px, p);
        g.load(p, q);
        g.solve();
        assert_eq!(sorted(&g, world), vec![opaque, x]);
        assert_eq!(
            sorted(&g, q),
            vec![opaque],
            "not the escaped objects themselves"
        );
    }

    #[test]
    fn a_call_through_a_pointer_calls_unknown_code_only_if_unknown_code_set_it() {
        // f(&x) through p, g(&y) through q; q ⊇ {opaque}, p ⊇ {}  ⇒  y escapes, x does not.
        let mut g = Graph::with_nodes(8);
        let (world, opaque, p, q, x, y, rp, rq) = (0, 1, 2, 3, 4, 5, 6, 7);
        g.set_opaque(opaque, world);
        g.add_object(world, opaque);
        let ax = g.address(x);
        let ay = g.address(y);
        g.call_if_opaque(p, vec![ax], Vec::new(), rp);
        g.call_if_opaque(q, vec![ay], Vec::new(), rq);
        g.add_object(q, opaque);
        g.solve();
        assert_eq!(sorted(&g, world), vec![opaque, y]);
        assert!(g.set(rp).is_empty(), "never called");
        assert_eq!(sorted(&g, rq), vec![opaque]);
    }

    #[test]
    fn cycles_terminate() {
        let mut g = Graph::with_nodes(3);
        g.copy(0, 1);
        g.copy(1, 2);
        g.copy(2, 0);
        g.add_object(0, 2);
        g.add_object(2, 0);
        g.store(0, 0);
        g.load(0, 0);
        g.solve();
        assert_eq!(sorted(&g, 1), vec![0, 2]);
    }
}
