//! How stored summaries name the files of their locations: not by number. A file's number is
//! its place in the program's list of files, which a header included above others shifts (on
//! the kernel, an `#include` added to one unit), so a stored number would tie every summary to
//! the whole list — which the context once held, re-analysing everything when a file came or
//! went.
//!
//! A stored summary names a location by its rank among its function's *own locations*
//! ([`super::portable`]), and the SCC's entry keeps those relative to the function's start: in
//! the function's file, as an offset ([`RELATIVE`]); in another file (a statement from a header
//! included in the body), by that file's name, in a table of the entry ([`FOREIGN`]). Ranks
//! are by an order that does not depend on numbers either: files by name, then line and column
//! ([`FileNames::order`]), so a file added anywhere leaves every rank where it was. A step of
//! a collapsed SCC's fixpoint stores locations relative to their function ([`RELATIVE`]); one
//! in another file makes the step's summary unportable (not recorded: analysed again next
//! time), which costs a step only where a body includes a file.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use super::portable::RELATIVE;
use super::SummaryCache;
use crate::ir::{FuncId, Loc};
use crate::link::Program;

/// The `file` of an own location in another file than its function's start: `FOREIGN | i`
/// names the `i`-th file of the entry's table (file numbers stay far below).
pub(super) const FOREIGN: u32 = 1 << 31;

/// The program's files by name.
pub(super) struct FileNames {
    /// Per file number: its place among the files sorted by name.
    rank: Vec<u32>,
    /// Numbers by name, built when first needed.
    ids: OnceLock<FxHashMap<String, u32>>,
}

impl FileNames {
    pub(super) fn new(program: &Program) -> FileNames {
        let mut by_name: Vec<u32> = (0..program.files.len() as u32).collect();
        by_name.sort_by(|&a, &b| program.files[a as usize].cmp(&program.files[b as usize]));
        let mut rank = vec![0; by_name.len()];
        for (place, &id) in by_name.iter().enumerate() {
            rank[id as usize] = place as u32;
        }
        FileNames {
            rank,
            ids: OnceLock::new(),
        }
    }

    /// The order own locations are ranked by: their file's name, line, column.
    pub(super) fn order(&self, l: &Loc) -> (u32, u32, u32) {
        let file = self.rank.get(l.file as usize).copied().unwrap_or(u32::MAX);
        (file, l.line, l.col)
    }

    fn id(&self, program: &Program, name: &str) -> Option<u32> {
        let ids = self.ids.get_or_init(|| {
            (program.files.iter().enumerate())
                .map(|(i, f)| (f.clone(), i as u32))
                .collect()
        });
        ids.get(name).copied()
    }
}

impl SummaryCache<'_> {
    /// A location in `owner`'s file as an offset from `owner`'s own location ([`RELATIVE`]);
    /// `None` in another file.
    pub(super) fn relative_loc(&self, l: Loc, owner: FuncId) -> Option<Loc> {
        let base = self.function_loc(owner)?;
        (base.file == l.file).then(|| Loc {
            file: RELATIVE,
            line: l.line.wrapping_sub(base.line),
            col: l.col,
        })
    }

    /// What [`SummaryCache::relative_loc`] made of a location of `owner`.
    pub(super) fn absolute_loc(&self, l: Loc, owner: FuncId) -> Option<Loc> {
        if l.file != RELATIVE {
            return None;
        }
        let base = self.function_loc(owner)?;
        Some(Loc {
            file: base.file,
            line: base.line.wrapping_add(l.line),
            col: l.col,
        })
    }

    /// `f`'s own locations as its SCC's entry keeps them, with the names of the other files
    /// they are in.
    pub(super) fn stored_locs(&self, locs: &[Loc], f: FuncId) -> (Vec<Loc>, Vec<String>) {
        let mut files: Vec<String> = Vec::new();
        let stored = locs
            .iter()
            .map(|&l| {
                self.relative_loc(l, f).unwrap_or_else(|| {
                    let name = self
                        .program
                        .files
                        .get(l.file as usize)
                        .map_or("", String::as_str);
                    let i = files.iter().position(|n| n == name).unwrap_or_else(|| {
                        files.push(name.to_owned());
                        files.len() - 1
                    });
                    Loc {
                        file: FOREIGN | i as u32,
                        ..l
                    }
                })
            })
            .collect();
        (stored, files)
    }

    /// What [`SummaryCache::stored_locs`] made of `f`'s own locations; `None` if a file is no
    /// longer there.
    pub(super) fn own_locs_of(
        &self,
        stored: &[Loc],
        files: &[String],
        f: FuncId,
    ) -> Option<Vec<Loc>> {
        stored
            .iter()
            .map(|&l| match l.file {
                RELATIVE => self.absolute_loc(l, f),
                foreign => {
                    let name = files.get((foreign & !FOREIGN) as usize)?;
                    Some(Loc {
                        file: self.files.id(self.program, name)?,
                        ..l
                    })
                }
            })
            .collect()
    }
}
