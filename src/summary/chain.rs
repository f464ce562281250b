//! Call chains of witnesses as shared, immutable lists.
//!
//! A caller's witness is a callee's witness with one more call in front. Copying the chain per
//! witness made witnesses 80 % of the summaries' memory (SQLite: 760 of 943 MiB); here a chain
//! is a pointer to a node `(call site, rest)`, so prefixing a call allocates one node and shares
//! the rest, and [`ChainMemo`] makes the accesses of one call that share a callee chain share
//! the new node too.
//!
//! What a chain *means* is unchanged: its first [`MAX_CHAIN`] calls (the ones nearest the
//! summarised function). Equality, order, hashing and serialisation look at those only, so a
//! chain is interchangeable with the truncated vector it replaces (the cache's bytes are the
//! same). The list may run deeper than that, but never more than `2 * MAX_CHAIN` nodes: a
//! longer one is cut back to `MAX_CHAIN` when prefixed, so a witness keeps a bounded number
//! of nodes alive.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicI64, Ordering as AtomicOrdering};
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::access::CallSite;
use crate::ir::{FuncId, Loc};

/// At most this many calls are kept per chain (the ones nearest the summarised function).
pub const MAX_CHAIN: usize = 8;

/// Nodes alive right now, program-wide (memory statistics).
static LIVE_NODES: AtomicI64 = AtomicI64::new(0);

/// The number of chain nodes alive, and the bytes each takes (with the `Arc` header).
pub fn live_nodes() -> (u64, u64) {
    let n = LIVE_NODES.load(AtomicOrdering::Relaxed).max(0) as u64;
    (n, std::mem::size_of::<ArcNode>() as u64)
}

type ArcNode = (usize, usize, Node);

struct Node {
    site: CallSite,
    rest: Chain,
    /// Nodes in this list (this one included).
    depth: u32,
}

impl Drop for Node {
    fn drop(&mut self) {
        LIVE_NODES.fetch_sub(1, AtomicOrdering::Relaxed);
        // Unlink iteratively: a long list dropped recursively could exhaust the stack.
        let mut rest = self.rest.0.take();
        while let Some(node) = rest {
            match Arc::try_unwrap(node) {
                Ok(mut n) => rest = n.rest.0.take(),
                Err(_) => break,
            }
        }
    }
}

/// The calls from a summarised function down to an access, nearest first.
#[derive(Clone, Default)]
pub struct Chain(Option<Arc<Node>>);

impl Chain {
    pub fn empty() -> Chain {
        Chain(None)
    }

    fn node(site: CallSite, rest: Chain) -> Chain {
        LIVE_NODES.fetch_add(1, AtomicOrdering::Relaxed);
        let depth = rest.depth() + 1;
        Chain(Some(Arc::new(Node { site, rest, depth })))
    }

    /// The chain `site` followed by `rest`.
    pub fn prefixed(site: CallSite, rest: &Chain) -> Chain {
        if rest.depth() < 2 * MAX_CHAIN as u32 {
            return Chain::node(site, rest.clone());
        }
        // Cut back to the visible calls so the list stays bounded.
        let visible: Vec<CallSite> = std::iter::once(site)
            .chain(rest.iter())
            .take(MAX_CHAIN)
            .collect();
        Chain::from_sites(&visible)
    }

    pub fn from_sites(sites: &[CallSite]) -> Chain {
        sites
            .iter()
            .rev()
            .fold(Chain::empty(), |rest, &s| Chain::node(s, rest))
    }

    fn depth(&self) -> u32 {
        self.0.as_ref().map_or(0, |n| n.depth)
    }

    /// The calls that count (at most [`MAX_CHAIN`]), nearest first.
    pub fn iter(&self) -> ChainIter<'_> {
        ChainIter {
            next: self.0.as_deref(),
            left: self.len(),
        }
    }

    /// How many calls count (at most [`MAX_CHAIN`]).
    pub fn len(&self) -> usize {
        (self.depth() as usize).min(MAX_CHAIN)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// The chain with every call's location rewritten by `m` (given the function the call is
    /// in, starting from `owner`); returns it and the last callee (or `owner`). Chains mapped
    /// with one `memo` share rewritten nodes as the originals share theirs.
    pub fn map_locs(
        &self,
        owner: FuncId,
        m: &mut impl FnMut(Loc, FuncId) -> Loc,
        memo: &mut LocMemo,
    ) -> (Chain, FuncId) {
        let last = self.iter().last().map_or(owner, |c| c.callee);
        (memo.map(self, self.len(), owner, m), last)
    }

    fn key(&self) -> *const Node {
        self.0.as_ref().map_or(std::ptr::null(), Arc::as_ptr)
    }
}

pub struct ChainIter<'a> {
    next: Option<&'a Node>,
    left: usize,
}

impl Iterator for ChainIter<'_> {
    type Item = CallSite;

    fn next(&mut self) -> Option<CallSite> {
        if self.left == 0 {
            return None;
        }
        let n = self.next?;
        self.left -= 1;
        self.next = n.rest.0.as_deref();
        Some(n.site)
    }

    /// Exact (serialisers need a sequence's length up front).
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for ChainIter<'_> {}

/// The chains [`Chain::map_locs`] made, by original node, number of calls counted from it and
/// the function it is in: each is rewritten once. The originals are held, so no address is
/// reused while the memo lives.
#[derive(Default)]
pub struct LocMemo {
    made: rustc_hash::FxHashMap<(*const Node, usize, FuncId), (Chain, Chain)>,
}

impl LocMemo {
    /// Recursion bounded by `count` (at most [`MAX_CHAIN`]).
    fn map(
        &mut self,
        chain: &Chain,
        count: usize,
        owner: FuncId,
        m: &mut impl FnMut(Loc, FuncId) -> Loc,
    ) -> Chain {
        let Some(node) = chain.0.as_deref().filter(|_| count > 0) else {
            return Chain::empty();
        };
        let key = (chain.key(), count, owner);
        if let Some((_, made)) = self.made.get(&key) {
            return made.clone();
        }
        let rest = self.map(&node.rest, count - 1, node.site.callee, m);
        let site = CallSite {
            loc: m(node.site.loc, owner),
            ..node.site
        };
        let made = Chain::node(site, rest);
        self.made.insert(key, (chain.clone(), made.clone()));
        made
    }
}

/// The chain nodes [`Chain::visit_locs`] has visited, by node, calls counted from it and
/// function it is in, with the last callee below: each is visited once.
#[derive(Default)]
pub struct VisitMemo {
    seen: rustc_hash::FxHashMap<(*const Node, usize, FuncId), FuncId>,
}

impl Chain {
    /// Calls `v` with every call's location and the function it is in (starting from
    /// `owner`), once per node for one `memo`; returns the last callee (or `owner`).
    pub fn visit_locs(
        &self,
        owner: FuncId,
        v: &mut impl FnMut(Loc, FuncId),
        memo: &mut VisitMemo,
    ) -> FuncId {
        self.visit_from(self.len(), owner, v, memo)
    }

    /// Recursion bounded by `count` (at most [`MAX_CHAIN`]).
    fn visit_from(
        &self,
        count: usize,
        owner: FuncId,
        v: &mut impl FnMut(Loc, FuncId),
        memo: &mut VisitMemo,
    ) -> FuncId {
        let Some(node) = self.0.as_deref().filter(|_| count > 0) else {
            return owner;
        };
        let key = (self.key(), count, owner);
        if let Some(&last) = memo.seen.get(&key) {
            return last;
        }
        v(node.site.loc, owner);
        let last = node.rest.visit_from(count - 1, node.site.callee, v, memo);
        memo.seen.insert(key, last);
        last
    }
}

/// The chain nodes [`Chain::visit_callees`] has visited, by node and calls counted from it:
/// each is visited once (the nodes are held by the chains visited, so no address is reused).
#[derive(Default)]
pub struct CalleeMemo {
    seen: rustc_hash::FxHashSet<(*const Node, usize)>,
}

impl Chain {
    /// Calls `v` with the callee of every call that counts — the first `len`, which is
    /// `self.len()` (passed in: a witness keeps it, and reading it from the node is a cache
    /// miss) — once per node for one `memo`.
    pub fn visit_callees(&self, len: usize, v: &mut impl FnMut(FuncId), memo: &mut CalleeMemo) {
        debug_assert_eq!(len, self.len());
        let (mut chain, mut count) = (self, len);
        while let Some(node) = chain.0.as_deref().filter(|_| count > 0) {
            if !memo.seen.insert((chain.key(), count)) {
                return;
            }
            v(node.site.callee);
            (chain, count) = (&node.rest, count - 1);
        }
    }
}

/// Prefixes one call site to many chains, sharing the result among equal (same node) chains.
pub struct ChainMemo {
    site: CallSite,
    made: rustc_hash::FxHashMap<*const Node, Chain>,
}

impl ChainMemo {
    pub fn new(site: CallSite) -> Self {
        ChainMemo {
            site,
            made: Default::default(),
        }
    }

    pub fn prefixed(&mut self, rest: &Chain) -> Chain {
        let site = self.site;
        self.made
            .entry(rest.key())
            .or_insert_with(|| Chain::prefixed(site, rest))
            .clone()
    }
}

impl PartialEq for Chain {
    fn eq(&self, other: &Chain) -> bool {
        self.key() == other.key() || self.iter().eq(other.iter())
    }
}

impl Eq for Chain {}

impl PartialOrd for Chain {
    fn partial_cmp(&self, other: &Chain) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// As the vectors of visible calls compare.
impl Ord for Chain {
    fn cmp(&self, other: &Chain) -> Ordering {
        if self.key() == other.key() {
            return Ordering::Equal;
        }
        self.iter().cmp(other.iter())
    }
}

impl Hash for Chain {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.len().hash(state);
        for s in self.iter() {
            s.hash(state);
        }
    }
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// As the vector of visible calls (the format chains had before they were shared) or, while
/// [`encode_with_table`] runs on this thread, as an index into its table.
impl Serialize for Chain {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let indexed = TABLE_WRITER.with_borrow_mut(|w| w.as_mut().map(|w| w.index(self)));
        match indexed {
            Some(i) => s.serialize_u32(i),
            None => s.collect_seq(self.iter()),
        }
    }
}

impl<'de> Deserialize<'de> for Chain {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Chain, D::Error> {
        if TABLE_READER.with_borrow(Option::is_some) {
            let i = u32::deserialize(d)?;
            let chain = TABLE_READER.with_borrow(|r| {
                r.as_ref()
                    .and_then(|chains| chains.get(i as usize).cloned())
            });
            return chain.ok_or_else(|| serde::de::Error::custom("a chain out of its table"));
        }
        let sites = Vec::<CallSite>::deserialize(d)?;
        Ok(Chain::from_sites(&sites[..sites.len().min(MAX_CHAIN)]))
    }
}

/// The chains of one encoded value as a table of nodes: entry `i` (from 1; 0 is the empty
/// chain) is a call site and the index of the rest of its chain, which comes before it. A
/// summary's witnesses share most of their calls; written out per witness they were most of
/// a stored summary's bytes, and decoding them a list per witness (then sharing them again)
/// most of loading it.
pub type ChainTable = Vec<(CallSite, u32)>;

thread_local! {
    static TABLE_WRITER: std::cell::RefCell<Option<TableWriter>> = const { std::cell::RefCell::new(None) };
    static TABLE_READER: std::cell::RefCell<Option<Vec<Chain>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `encode` with every chain it serialises written as an index into a table, which is
/// returned beside its result. The table is a function of the chains' values, in the order
/// they are serialised: equal values encode to equal bytes.
pub fn encode_with_table<R>(encode: impl FnOnce() -> R) -> (R, ChainTable) {
    let guard = Restore::new(&TABLE_WRITER, Some(TableWriter::default()));
    let result = encode();
    let writer = guard.finish();
    (result, writer.map_or_else(Vec::new, |w| w.nodes))
}

/// The rewritten location of each call of some chains, by location and the function the call
/// is in ([`encode_with_mapped_table`]).
pub type SiteLocs = rustc_hash::FxHashMap<(Loc, FuncId), Loc>;

/// [`encode_with_table`] with every call's location written as `sites` rewrites it — the
/// chains being those of a summary of `owner`: a chain's first call is in `owner`, each next
/// one in the previous one's callee. The table is the one `encode_with_table` writes for the
/// chains rewritten by [`Chain::map_locs`], without making them. `None` if a call's location
/// is not in `sites`.
pub fn encode_with_mapped_table<R>(
    owner: FuncId,
    sites: SiteLocs,
    encode: impl FnOnce() -> R,
) -> Option<(R, ChainTable)> {
    let writer = TableWriter {
        mapped: Some(MappedSites {
            owner,
            sites,
            missing: false,
        }),
        ..TableWriter::default()
    };
    let guard = Restore::new(&TABLE_WRITER, Some(writer));
    let result = encode();
    let writer = guard.finish()?;
    match writer.mapped {
        Some(m) if m.missing => None,
        _ => Some((result, writer.nodes)),
    }
}

/// Runs `decode` with every chain it deserialises read as an index into `table` (as
/// [`encode_with_table`] wrote it); `None` if the table is malformed (a rest that does not come
/// before its node, or a chain longer than [`MAX_CHAIN`]). Chains equal in the table share
/// their nodes.
pub fn decode_with_table<R>(table: &ChainTable, decode: impl FnOnce() -> R) -> Option<R> {
    let mut chains = Vec::with_capacity(table.len() + 1);
    chains.push(Chain::empty());
    for (i, &(site, rest)) in table.iter().enumerate() {
        let rest = chains.get(rest as usize).filter(|_| (rest as usize) <= i)?;
        if rest.depth() as usize >= MAX_CHAIN {
            return None;
        }
        chains.push(Chain::node(site, rest.clone()));
    }
    let guard = Restore::new(&TABLE_READER, Some(chains));
    let result = decode();
    guard.finish();
    Some(result)
}

/// Puts a thread-local back as it was when dropped, also when the code between unwinds (a
/// panic fails one SCC, and the thread goes on to others).
struct Restore<T: 'static> {
    cell: &'static std::thread::LocalKey<std::cell::RefCell<Option<T>>>,
    previous: Option<Option<T>>,
}

impl<T> Restore<T> {
    fn new(
        cell: &'static std::thread::LocalKey<std::cell::RefCell<Option<T>>>,
        value: Option<T>,
    ) -> Self {
        Restore {
            cell,
            previous: Some(cell.replace(value)),
        }
    }

    /// Restores the previous value now; returns the one set meanwhile.
    fn finish(mut self) -> Option<T> {
        let previous = self.previous.take().flatten();
        self.cell.replace(previous)
    }
}

impl<T> Drop for Restore<T> {
    fn drop(&mut self) {
        if let Some(previous) = self.previous.take() {
            self.cell.replace(previous);
        }
    }
}

/// The table [`encode_with_table`] builds: nodes by value, and the index each chain met so far
/// got (by node and number of visible calls).
#[derive(Default)]
struct TableWriter {
    nodes: ChainTable,
    by_value: rustc_hash::FxHashMap<(CallSite, u32), u32>,
    by_chain: rustc_hash::FxHashMap<(*const Node, usize), u32>,
    /// The calls' locations are written rewritten ([`encode_with_mapped_table`]).
    mapped: Option<MappedSites>,
}

struct MappedSites {
    /// The function the chains' first calls are in.
    owner: FuncId,
    sites: SiteLocs,
    /// A call's location was not in `sites`.
    missing: bool,
}

impl MappedSites {
    fn rewrite(&mut self, chain: &mut [CallSite]) {
        let mut owner = self.owner;
        for site in chain {
            match self.sites.get(&(site.loc, owner)) {
                Some(&loc) => site.loc = loc,
                None => self.missing = true,
            }
            owner = site.callee;
        }
    }
}

impl TableWriter {
    fn index(&mut self, chain: &Chain) -> u32 {
        let met = (chain.key(), chain.len());
        if let Some(&i) = self.by_chain.get(&met) {
            return i;
        }
        let mut sites: Vec<CallSite> = chain.iter().collect();
        if let Some(mapped) = &mut self.mapped {
            mapped.rewrite(&mut sites);
        }
        let mut index = 0;
        for &site in sites.iter().rev() {
            let rest = index;
            index = match self.by_value.get(&(site, rest)) {
                Some(&i) => i,
                None => {
                    self.nodes.push((site, rest));
                    let i = self.nodes.len() as u32;
                    self.by_value.insert((site, rest), i);
                    i
                }
            };
        }
        // The chain is held by the value being encoded: its address is not reused meanwhile.
        self.by_chain.insert(met, index);
        index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(i: u32) -> CallSite {
        CallSite {
            loc: Loc {
                file: 0,
                line: i,
                col: 1,
            },
            callee: FuncId(i),
        }
    }

    /// The truncated vector the chain stands for.
    fn vector(c: &Chain) -> Vec<CallSite> {
        c.iter().collect()
    }

    #[test]
    fn prefixing_keeps_the_nearest_calls_like_a_truncated_vector() {
        let mut chain = Chain::empty();
        let mut expected: Vec<CallSite> = Vec::new();
        for i in 0..40 {
            chain = Chain::prefixed(site(i), &chain);
            expected.insert(0, site(i));
            expected.truncate(MAX_CHAIN);
            assert_eq!(vector(&chain), expected);
            assert_eq!(chain.len(), expected.len());
            assert!(
                chain.depth() <= 2 * MAX_CHAIN as u32,
                "the list stays bounded"
            );
        }
    }

    #[test]
    fn equality_order_and_bytes_are_those_of_the_vector() {
        // Same visible calls, different depths underneath.
        let long = (0..12)
            .rev()
            .fold(Chain::empty(), |c, i| Chain::prefixed(site(i), &c));
        let short = Chain::from_sites(&(0..8).map(site).collect::<Vec<_>>());
        assert_eq!(long, short);
        assert_eq!(long.cmp(&short), Ordering::Equal);
        let other = Chain::from_sites(&[site(0), site(2)]);
        assert_eq!(
            short.cmp(&other),
            vector(&short).cmp(&vector(&other)),
            "ordered as the vectors"
        );
        let bytes = bincode::serialize(&long).unwrap();
        assert_eq!(bytes, bincode::serialize(&vector(&short)).unwrap());
        let back: Chain = bincode::deserialize(&bytes).unwrap();
        assert_eq!(back, long);
    }

    #[test]
    fn a_memo_shares_the_node_among_equal_chains() {
        let rest = Chain::from_sites(&[site(1)]);
        let mut memo = ChainMemo::new(site(0));
        let a = memo.prefixed(&rest);
        let b = memo.prefixed(&rest.clone());
        assert_eq!(a.key(), b.key());
        assert_eq!(vector(&a), vec![site(0), site(1)]);
    }

    #[test]
    fn a_table_with_rewritten_locations_is_the_table_of_the_rewritten_chains() {
        // Calls of function 0 (the owner) and of the callees; `site(i)` calls `FuncId(i)`.
        // Two calls at different locations that the rewriting makes equal merge in the table.
        let deep = Chain::from_sites(&(1..12).map(site).collect::<Vec<_>>());
        let at = |line: u32, callee: u32| CallSite {
            loc: site(line).loc,
            callee: FuncId(callee),
        };
        let chains = vec![
            Chain::prefixed(site(0), &deep),
            Chain::from_sites(&[at(4, 6), site(2)]),
            Chain::from_sites(&[at(7, 6), site(2)]),
            Chain::empty(),
        ];
        // Every location to its line modulo 3, in a file named by the function it is in.
        let rewrite = |l: Loc, owner: FuncId| Loc {
            file: owner.0 + 100,
            line: l.line % 3,
            col: 0,
        };
        let mut memo = LocMemo::default();
        let rewritten: Vec<Chain> = chains
            .iter()
            .map(|c| {
                c.map_locs(FuncId(0), &mut |l, o| rewrite(l, o), &mut memo)
                    .0
            })
            .collect();
        let expected = encode_with_table(|| bincode::serialize(&rewritten).unwrap());
        let mut sites = SiteLocs::default();
        let mut visits = VisitMemo::default();
        for c in &chains {
            c.visit_locs(
                FuncId(0),
                &mut |l, o| {
                    sites.insert((l, o), rewrite(l, o));
                },
                &mut visits,
            );
        }
        let mapped = encode_with_mapped_table(FuncId(0), sites.clone(), || {
            bincode::serialize(&chains).unwrap()
        });
        assert_eq!(
            expected.1.len(),
            MAX_CHAIN + 2,
            "the two calls at 4 and 7 merged"
        );
        assert_eq!(mapped, Some(expected));
        // A call whose location is not given: no table.
        sites.retain(|&(l, _), _| l.line != 6);
        let missing =
            encode_with_mapped_table(FuncId(0), sites, || bincode::serialize(&chains).unwrap());
        assert_eq!(missing, None);
    }

    #[test]
    fn a_chain_table_gives_back_equal_chains_sharing_their_nodes() {
        let deep = Chain::from_sites(&(1..12).map(site).collect::<Vec<_>>());
        let a = Chain::prefixed(site(0), &deep);
        // Equal to `a` by value, built apart (no node in common).
        let b = Chain::from_sites(&vector(&a));
        let c = Chain::from_sites(&[site(20), site(2), site(3)]);
        let chains = vec![a.clone(), Chain::empty(), b.clone(), c.clone()];
        let (bytes, table) = encode_with_table(|| bincode::serialize(&chains).unwrap());
        assert_eq!(
            table.len(),
            MAX_CHAIN + 3,
            "one node per distinct call and rest"
        );
        assert!(table
            .iter()
            .enumerate()
            .all(|(i, &(_, rest))| (rest as usize) <= i));
        let (again, same_table) = encode_with_table(|| {
            let shared = vec![a.clone(), Chain::empty(), a.clone(), c.clone()];
            bincode::serialize(&shared).unwrap()
        });
        assert_eq!(
            (&bytes, &table),
            (&again, &same_table),
            "the encoding depends on values only"
        );
        let back: Vec<Chain> =
            decode_with_table(&table, || bincode::deserialize(&bytes).unwrap()).unwrap();
        assert_eq!(back, chains);
        assert_eq!(
            back[0].key(),
            back[2].key(),
            "equal chains share their nodes"
        );
    }

    #[test]
    fn a_malformed_chain_table_is_refused() {
        let forward = vec![(site(0), 2), (site(1), 0)];
        assert!(
            decode_with_table(&forward, || ()).is_none(),
            "a rest after its node"
        );
        let long: ChainTable = (0..=MAX_CHAIN as u32).map(|i| (site(i), i)).collect();
        assert!(
            decode_with_table(&long, || ()).is_none(),
            "longer than MAX_CHAIN"
        );
        let ok: ChainTable = (0..MAX_CHAIN as u32).map(|i| (site(i), i)).collect();
        assert!(decode_with_table(&ok, || ()).is_some());
        let out_of_table = bincode::serialize(&9u32).unwrap();
        let read = decode_with_table(&ok, || bincode::deserialize::<Chain>(&out_of_table));
        assert!(read.unwrap().is_err(), "an index past the table");
    }

    #[test]
    fn dropping_a_long_list_does_not_recurse() {
        let sites: Vec<CallSite> = (0..200_000).map(site).collect();
        drop(Chain::from_sites(&sites));
    }
}
