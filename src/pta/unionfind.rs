//! Union-find with path compression (path halving) and union by rank: the core of Steensgaard's
//! almost-linear analysis.

#[derive(Default, Clone, Debug)]
pub struct UnionFind {
    parent: Vec<u32>,
    rank: Vec<u8>,
}

impl UnionFind {
    pub fn add(&mut self) -> u32 {
        let id = self.parent.len() as u32;
        self.parent.push(id);
        self.rank.push(0);
        id
    }

    pub fn len(&self) -> usize {
        self.parent.len()
    }

    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// The class representative, compressing the path on the way.
    pub fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let grand = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = grand;
            x = grand;
        }
        x
    }

    /// The representative without modifying the structure (for read-only queries).
    pub fn find_const(&self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            x = self.parent[x as usize];
        }
        x
    }

    /// Unites the classes of `a` and `b`; returns `(root, absorbed)` or `None` if already one.
    pub fn union(&mut self, a: u32, b: u32) -> Option<(u32, u32)> {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return None;
        }
        let (root, child) = match self.rank[ra as usize].cmp(&self.rank[rb as usize]) {
            std::cmp::Ordering::Less => (rb, ra),
            std::cmp::Ordering::Greater => (ra, rb),
            std::cmp::Ordering::Equal => {
                self.rank[ra as usize] += 1;
                (ra, rb)
            }
        };
        self.parent[child as usize] = root;
        Some((root, child))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unions_are_transitive_and_idempotent() {
        let mut uf = UnionFind::default();
        let n: Vec<u32> = (0..6).map(|_| uf.add()).collect();
        assert!(uf.union(n[0], n[1]).is_some());
        assert!(uf.union(n[2], n[3]).is_some());
        assert!(uf.union(n[1], n[3]).is_some());
        assert!(uf.union(n[0], n[2]).is_none());
        assert_eq!(uf.find(n[0]), uf.find(n[3]));
        assert_ne!(uf.find(n[0]), uf.find(n[4]));
        assert_eq!(uf.find_const(n[2]), uf.find(n[1]));
    }
}
