//! Identifier interning. One `Interner` per translation unit: identifiers become dense `Sym`s,
//! so the parser's typedef table is a plain vector indexed by symbol.
//!
//! Keywords are interned first, in the order of [`Kw::ALL`], so `Sym(i)` for `i < Kw::COUNT` is a
//! keyword and classifying an identifier costs one comparison.

use hashbrown::HashTable;
use std::hash::BuildHasher;

use super::token::Kw;

#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, serde::Serialize)]
pub struct Sym(pub u32);

#[derive(Default)]
pub struct Interner {
    /// All interned bytes, back to back.
    bytes: String,
    /// `(start, end)` of each symbol in `bytes`.
    spans: Vec<(u32, u32)>,
    table: HashTable<u32>,
    hasher: rustc_hash::FxBuildHasher,
}

impl Interner {
    /// An interner with every keyword spelling pre-interned at its fixed index.
    pub fn with_keywords() -> Self {
        let mut i = Interner::default();
        for (n, (spelling, _)) in Kw::SPELLINGS.iter().enumerate() {
            let s = i.intern(spelling);
            debug_assert_eq!(s.0 as usize, n);
        }
        i
    }

    pub fn intern(&mut self, s: &str) -> Sym {
        let hash = self.hasher.hash_one(s);
        let (bytes, spans) = (&self.bytes, &self.spans);
        if let Some(&idx) = self.table.find(hash, |&idx| {
            let (a, b) = spans[idx as usize];
            &bytes[a as usize..b as usize] == s
        }) {
            return Sym(idx);
        }
        let start = self.bytes.len() as u32;
        self.bytes.push_str(s);
        let idx = self.spans.len() as u32;
        self.spans.push((start, self.bytes.len() as u32));
        let (bytes, spans, hasher) = (&self.bytes, &self.spans, &self.hasher);
        self.table.insert_unique(hash, idx, |&i| {
            let (a, b) = spans[i as usize];
            hasher.hash_one(&bytes[a as usize..b as usize])
        });
        Sym(idx)
    }

    /// The symbol of `s` if it has been interned.
    pub fn lookup(&self, s: &str) -> Option<Sym> {
        let hash = self.hasher.hash_one(s);
        self.table
            .find(hash, |&idx| {
                let (a, b) = self.spans[idx as usize];
                &self.bytes[a as usize..b as usize] == s
            })
            .map(|&i| Sym(i))
    }

    pub fn get(&self, s: Sym) -> &str {
        let (a, b) = self.spans[s.0 as usize];
        &self.bytes[a as usize..b as usize]
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The keyword this symbol spells, if any.
    pub fn keyword(s: Sym) -> Option<Kw> {
        Kw::SPELLINGS.get(s.0 as usize).map(|&(_, k)| k)
    }

    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + self.spans.capacity() * 8 + self.table.capacity() * 5
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_stable_and_keywords_come_first() {
        let mut i = Interner::with_keywords();
        let a = i.intern("foo");
        let b = i.intern("bar");
        assert_eq!(i.intern("foo"), a);
        assert_ne!(a, b);
        assert_eq!(i.get(b), "bar");
        let int = i.intern("int");
        assert_eq!(Interner::keyword(int), Some(Kw::Int));
        assert_eq!(Interner::keyword(a), None);
        assert_eq!(Interner::keyword(i.intern("__const__")), Some(Kw::Const));
    }
}
