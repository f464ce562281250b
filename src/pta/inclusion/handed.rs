//! Records handed to unknown code: it reads and writes their members, and the members of the
//! records those hold or point to (by type). The closure of a record is the same for every
//! call that hands it over, so each record is opened once per run: the kernel hands records
//! that reach most of its types to thousands of unknown calls.

use crate::ir::types::RecordId;
use crate::link::Program;
use crate::pta::PointsTo;

/// Per record: its member nodes and the records its members hold or point to.
#[derive(Default)]
pub(super) struct HandedRecords {
    members: Vec<Vec<u32>>,
    children: Vec<Vec<u32>>,
    handed: Vec<bool>,
}

/// Pointer levels followed from a member's type to the record it leads to.
const POINTER_LEVELS: usize = 16;

impl HandedRecords {
    pub(super) fn new(program: &Program, pta: &PointsTo) -> HandedRecords {
        let types = &program.types;
        let n = types.records().len();
        let mut out = HandedRecords {
            members: vec![Vec::new(); n],
            children: vec![Vec::new(); n],
            handed: vec![false; n],
        };
        for (i, record) in types.records().iter().enumerate() {
            let r = RecordId(i as u32);
            for field in &record.fields {
                if let Some(&node) = pta.field_nodes.get(&(r, field.name)) {
                    out.members[i].push(node);
                }
                let mut t = field.ty;
                for _ in 0..POINTER_LEVELS {
                    match types.pointee(t) {
                        Some(inner) => t = inner,
                        None => break,
                    }
                }
                if let Some(inner) = types.as_record(t) {
                    out.children[i].push(inner.0);
                }
            }
        }
        out
    }

    /// The member nodes of `roots` and of the records they reach, except those of records
    /// handed over before (their members were returned then).
    pub(super) fn hand(&mut self, roots: &[u32]) -> Vec<u32> {
        let mut stack: Vec<u32> = roots.to_vec();
        let mut members = Vec::new();
        while let Some(r) = stack.pop() {
            let Some(handed) = self.handed.get_mut(r as usize) else {
                continue;
            };
            if *handed {
                continue;
            }
            *handed = true;
            members.extend_from_slice(&self.members[r as usize]);
            stack.extend_from_slice(&self.children[r as usize]);
        }
        members
    }
}
