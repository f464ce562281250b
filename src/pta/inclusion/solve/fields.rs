//! Per-object fields: `x.m` and `p->m` are an object of their own for every object `x` or
//! `p` may be (its *root*), so what one object's member holds is not what every object of the
//! record holds (a field-based analysis merges them: zstd's stack `ctxBody` stored into one
//! context's member reached every context).
//!
//! Members are keyed by `(record, member)` and flattened onto the outermost object: the member
//! `b` of an embedded `a` (`p->a.b`, or `q->b` with `q = &p->a`) is `p`'s field `(A, b)`.
//!
//! A whole-object copy (struct assignment, struct arguments and returns, `memcpy`, `realloc`)
//! moves every member at once; the objects taking part in one are *collapsed*: their fields are
//! the shared, field-based node of each key, which every collapsed object has in common — a
//! copy between two of them is then complete whatever members it moves. Objects collapse while
//! the sets grow (a pointer's targets are collapsed when they reach it); fields created before
//! are merged into the shared nodes.
//!
//! Unknown code reaches every field of an object it reaches: the escaped node's set is closed
//! under fields (so what the fields hold escapes too, and unknown code may store into them).
//! Atoms (the opaque object, `nowhere`) have no fields of their own: a member of one is itself.

use super::Graph;

/// The root of the shared fields of collapsed objects.
const COLLAPSED: u32 = u32::MAX;

impl Graph {
    /// Marks `object` as having no fields of its own.
    pub(in crate::pta::inclusion) fn set_atom(&mut self, object: u32) {
        self.fields.atoms.insert(object);
    }

    /// The object a field belongs to (an object that is no field: itself).
    fn root(&self, o: u32) -> u32 {
        self.fields.root_of.get(&o).copied().unwrap_or(o)
    }

    /// Whether `o` is a field object (per-object or shared).
    pub(in crate::pta::inclusion) fn is_field(&self, o: u32) -> bool {
        self.fields.root_of.contains_key(&o)
    }

    /// The field `key` of object `o` (of `o`'s root), created on first use.
    pub(in crate::pta::inclusion) fn field(&mut self, o: u32, key: u32) -> u32 {
        let r = self.root(o);
        if self.fields.atoms.contains(&r) {
            return r;
        }
        let r = if self.fields.collapsed.contains(&r) {
            COLLAPSED
        } else {
            r
        };
        if let Some(&n) = self.fields.by_root.get(&(r, key)) {
            return n;
        }
        let n = self.node();
        self.fields.by_root.insert((r, key), n);
        self.fields.root_of.insert(n, r);
        self.fields.keys_of.entry(r).or_default().push((key, n));
        if self.escaped_root(r) {
            self.escape_object(n);
        }
        n
    }

    /// `d ⊇ { field key of o | o ∈ p }` (the address `&p->m`), one node per `(p, key)`.
    pub(in crate::pta::inclusion) fn field_address(&mut self, p: u32, key: u32) -> u32 {
        let p = self.find(p);
        if let Some(&d) = self.fields.address_cache.get(&(p, key)) {
            return d;
        }
        let d = self.node();
        self.fields.address_cache.insert((p, key), d);
        self.fields.addresses[p as usize].push((key, d));
        let objects: Vec<u32> = self.pts[p as usize].iter().collect();
        for o in objects {
            let f = self.field(o, key);
            self.add_object(d, f);
        }
        d
    }

    /// Every object `p` may point to takes part in a whole-object copy.
    pub(in crate::pta::inclusion) fn collapse_pointees(&mut self, p: u32) {
        let p = self.find(p);
        if std::mem::replace(&mut self.fields.collapses[p as usize], true) {
            return;
        }
        let objects: Vec<u32> = self.pts[p as usize].iter().collect();
        for o in objects {
            self.collapse_object(o);
        }
    }

    /// `o` (its root) takes part in a whole-object copy: its fields become the shared ones.
    pub(in crate::pta::inclusion) fn collapse_object(&mut self, o: u32) {
        let r = self.root(o);
        if r == COLLAPSED || self.fields.atoms.contains(&r) || !self.fields.collapsed.insert(r) {
            return;
        }
        for (key, f) in self.fields.keys_of.remove(&r).unwrap_or_default() {
            self.fields.by_root.remove(&(r, key));
            let shared = self.field(COLLAPSED, key);
            self.unite(shared, f);
        }
        if self.escaped_root(r) {
            self.escape_collapsed();
        }
    }

    /// The constraints a new object `o` of node `n`'s set brings: field addresses and
    /// collapses through `n`, and, for the escaped node, `o`'s fields.
    pub(super) fn field_constraints(&mut self, n: u32, o: u32) {
        if !self.fields.addresses[n as usize].is_empty() {
            let addresses = self.fields.addresses[n as usize].clone();
            for (key, d) in addresses {
                let f = self.field(o, key);
                self.add_object(d, f);
            }
        }
        if self.fields.collapses[n as usize] {
            self.collapse_object(o);
        }
        if self.escape_node() == Some(n) && !self.is_field(o) {
            if self.fields.collapsed.contains(&o) {
                self.escape_collapsed();
            } else if let Some(keys) = self.fields.keys_of.get(&o) {
                let fields: Vec<u32> = keys.iter().map(|&(_, f)| f).collect();
                for f in fields {
                    self.add_object(n, f);
                }
            }
        }
    }

    /// Moves `m`'s field constraints into `root` (nodes merged into one).
    pub(super) fn merge_fields(&mut self, root: u32, m: u32) {
        let addresses = std::mem::take(&mut self.fields.addresses[m as usize]);
        self.fields.addresses[root as usize].extend(addresses);
        if std::mem::take(&mut self.fields.collapses[m as usize]) {
            self.fields.collapses[root as usize] = true;
        }
    }

    /// Makes `a` and `b` one node; it is queued with its whole set.
    fn unite(&mut self, a: u32, b: u32) {
        let (a, b) = (self.find(a), self.find(b));
        if a == b {
            return;
        }
        self.merge(a, b);
        self.delta[a as usize] = self.pts[a as usize].clone();
        self.enqueue(a);
    }

    fn escape_node(&mut self) -> Option<u32> {
        let (_, escaped) = self.opaque?;
        Some(self.find(escaped))
    }

    fn escaped_root(&mut self, r: u32) -> bool {
        if r == COLLAPSED {
            return self.fields.collapsed_escaped;
        }
        match self.escape_node() {
            Some(w) => self.pts[w as usize].contains(r),
            None => false,
        }
    }

    fn escape_object(&mut self, o: u32) {
        if let Some(w) = self.escape_node() {
            self.add_object(w, o);
        }
    }

    /// A collapsed object escaped: unknown code reaches every shared field.
    fn escape_collapsed(&mut self) {
        if std::mem::replace(&mut self.fields.collapsed_escaped, true) {
            return;
        }
        let shared: Vec<u32> = self
            .fields
            .keys_of
            .get(&COLLAPSED)
            .map(|keys| keys.iter().map(|&(_, f)| f).collect())
            .unwrap_or_default();
        for f in shared {
            self.escape_object(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Graph;

    fn sorted(g: &Graph, n: u32) -> Vec<u32> {
        let mut v: Vec<u32> = g.set(n).iter().collect();
        v.sort();
        v
    }

    #[test]
    fn each_object_has_its_own_members() {
        // a.m = &x; b.m = &y; p = &a or &b; q = p->m  ⇒  q ⊇ {x, y}, a.m = {x} only.
        let mut g = Graph::with_nodes(6);
        let (a, b, x, y, p, q) = (0, 1, 2, 3, 4, 5);
        let am = g.field(a, 7);
        let bm = g.field(b, 7);
        let ax = g.address(x);
        g.copy(ax, am);
        let by = g.address(y);
        g.copy(by, bm);
        let pa = g.address(a);
        g.copy(pa, p);
        let pm = g.field_address(p, 7);
        g.load(pm, q);
        g.solve();
        assert_eq!(sorted(&g, am), vec![x]);
        assert_eq!(sorted(&g, bm), vec![y]);
        assert_eq!(sorted(&g, q), vec![x], "p points to a only");
    }

    #[test]
    fn a_whole_object_copy_shares_the_members() {
        // a.m = &x; *p = *s with p = &b, s = &a  ⇒  b.m ⊇ {x}.
        let mut g = Graph::with_nodes(5);
        let (a, b, x, p, s) = (0, 1, 2, 3, 4);
        let am = g.field(a, 7);
        let ax = g.address(x);
        g.copy(ax, am);
        let pb = g.address(b);
        g.copy(pb, p);
        let sa = g.address(a);
        g.copy(sa, s);
        g.collapse_pointees(p);
        g.collapse_pointees(s);
        g.solve();
        let bm = g.field(b, 7);
        g.solve();
        assert_eq!(sorted(&g, bm), vec![x]);
    }

    #[test]
    fn unknown_code_reaches_the_members_of_what_it_reaches() {
        // world ∋ opaque; a.m = &x; world ⊇ {a}  ⇒  x escapes.
        let mut g = Graph::with_nodes(4);
        let (world, opaque, a, x) = (0, 1, 2, 3);
        g.set_opaque(opaque, world);
        g.add_object(world, opaque);
        g.load(world, world);
        let am = g.field(a, 7);
        let ax = g.address(x);
        g.copy(ax, am);
        g.add_object(world, a);
        g.solve();
        assert!(g.set(world).contains(x), "{:?}", sorted(&g, world));
        assert!(g.set(world).contains(am));
    }
}
