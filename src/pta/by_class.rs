//! Something of each points-to node, grouped by class.

use super::PointsTo;

/// An item per node (those `item` gives one for), grouped by class in node order:
/// `items[start[c]..start[c + 1]]` for the representative `c`. A counting sort, two passes
/// over the nodes and two arrays: a map of vectors allocates one per class, and the kernel has
/// millions of classes.
pub struct ByClass<T> {
    start: Vec<u32>,
    items: Vec<T>,
}

impl<T: Copy> ByClass<T> {
    /// `filler` only fills the array before every slot is written.
    pub fn new(pta: &PointsTo, filler: T, item: impl Fn(u32) -> Option<T>) -> ByClass<T> {
        let n = pta.node_count();
        let mut start = vec![0u32; n + 1];
        for node in 0..n as u32 {
            if item(node).is_some() {
                start[pta.class(node) as usize + 1] += 1;
            }
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut next = start.clone();
        let mut items = vec![filler; start[n] as usize];
        for node in 0..n as u32 {
            if let Some(x) = item(node) {
                let c = pta.class(node) as usize;
                items[next[c] as usize] = x;
                next[c] += 1;
            }
        }
        ByClass { start, items }
    }

    /// The items of class `c` (a representative; none for another node).
    pub fn of(&self, c: u32) -> &[T] {
        let c = c as usize;
        match (self.start.get(c), self.start.get(c + 1)) {
            (Some(&a), Some(&b)) => &self.items[a as usize..b as usize],
            _ => &[],
        }
    }
}
