//! Building one function's control-flow graph: blocks, the current insertion point, locals,
//! labels, and the break/continue/switch targets of the statements being lowered.

use rustc_hash::FxHashMap;

use crate::frontend::intern::Sym;
use crate::ir::*;

pub(crate) struct SwitchCtx {
    pub cases: Vec<SwitchCase>,
    pub default: Option<BlockId>,
}

pub(crate) struct FnBuilder {
    pub name: Name,
    pub locals: Vec<Local>,
    pub params: Vec<LocalId>,
    pub blocks: Vec<Block>,
    /// Where instructions go; `None` right after a terminator (code there is unreachable and
    /// gets a fresh block if any is emitted).
    pub cur: Option<BlockId>,
    /// Function-level labels, and `__label__` scopes inside it (innermost last).
    labels: FxHashMap<Sym, BlockId>,
    pub label_scopes: Vec<FxHashMap<Sym, BlockId>>,
    pub breaks: Vec<BlockId>,
    pub continues: Vec<BlockId>,
    pub switches: Vec<SwitchCtx>,
    /// Labels whose address is taken (`&&l`): the targets of every `goto *p`.
    pub address_taken_labels: Vec<BlockId>,
    pub indirect_gotos: Vec<BlockId>,
    /// Label blocks already started by their label statement.
    defined_labels: rustc_hash::FxHashSet<BlockId>,
    /// Scope depth of the function's own outermost scope: locals bound below it belong to an
    /// enclosing function (GNU nested functions).
    pub scope_floor: usize,
    /// How many locals share each base name, for unique printed names.
    name_counts: FxHashMap<String, u32>,
}

impl FnBuilder {
    pub fn new(name: Name) -> Self {
        let mut b = FnBuilder {
            name,
            locals: Vec::new(),
            params: Vec::new(),
            blocks: Vec::new(),
            cur: None,
            labels: FxHashMap::default(),
            label_scopes: Vec::new(),
            breaks: Vec::new(),
            continues: Vec::new(),
            switches: Vec::new(),
            address_taken_labels: Vec::new(),
            indirect_gotos: Vec::new(),
            defined_labels: Default::default(),
            scope_floor: 0,
            name_counts: FxHashMap::default(),
        };
        let entry = b.new_block();
        b.cur = Some(entry);
        b
    }

    pub fn new_block(&mut self) -> BlockId {
        self.blocks.push(Block::default());
        BlockId(self.blocks.len() as u32 - 1)
    }

    /// A printable name for a new local: `x`, then `x.1`, `x.2` for later locals named `x`.
    pub fn unique_name(&mut self, base: &str) -> String {
        let n = self.name_counts.entry(base.to_string()).or_insert(0);
        let name = if *n == 0 {
            base.to_string()
        } else {
            format!("{base}.{n}")
        };
        *n += 1;
        name
    }

    pub fn add_local(&mut self, local: Local) -> LocalId {
        self.locals.push(local);
        LocalId(self.locals.len() as u32 - 1)
    }

    pub fn emit(&mut self, i: Instr) {
        let b = match self.cur {
            Some(b) => b,
            None => {
                let b = self.new_block();
                self.cur = Some(b);
                b
            }
        };
        self.blocks[b.index()].instrs.push(i);
    }

    /// Ends the current block with `t` (an unreachable point gets its own block).
    pub fn terminate(&mut self, t: Terminator) {
        let b = match self.cur.take() {
            Some(b) => b,
            None => self.new_block(),
        };
        self.blocks[b.index()].term = t;
    }

    /// Continues at `b`, falling through from the current block if it is open.
    pub fn start(&mut self, b: BlockId) {
        if self.cur.is_some() {
            self.terminate(Terminator::Goto(b));
        }
        self.cur = Some(b);
    }

    pub fn goto(&mut self, b: BlockId) {
        self.terminate(Terminator::Goto(b));
    }

    /// The block of a label, created on first mention (goto before the label is fine).
    pub fn label(&mut self, s: Sym) -> BlockId {
        for scope in self.label_scopes.iter().rev() {
            if let Some(&b) = scope.get(&s) {
                return b;
            }
        }
        if let Some(&b) = self.labels.get(&s) {
            return b;
        }
        let b = self.new_block();
        self.labels.insert(s, b);
        b
    }

    /// The block a label statement starts. A label defined twice in one scope (invalid C, or a
    /// macro without `__label__`) gets a fresh block the second time so no block is reopened.
    pub fn define_label(&mut self, s: Sym) -> BlockId {
        let b = self.label(s);
        if self.defined_labels.insert(b) {
            return b;
        }
        self.new_block()
    }

    /// Finishes the CFG: open blocks return, every `goto *p` may reach every address-taken label,
    /// and blocks no path reaches are emptied.
    pub fn finish(mut self, loc: Loc) -> (Vec<Block>, Vec<Local>, Vec<LocalId>) {
        if self.cur.is_some() {
            self.terminate(Terminator::Return { value: None, loc });
        }
        let mut targets = self.address_taken_labels.clone();
        targets.sort();
        targets.dedup();
        for b in std::mem::take(&mut self.indirect_gotos) {
            if let Terminator::IndirectGoto { targets: t, .. } = &mut self.blocks[b.index()].term {
                let extra: Vec<BlockId> =
                    targets.iter().copied().filter(|x| !t.contains(x)).collect();
                t.extend(extra);
            }
        }
        self.empty_dead_blocks();
        (self.blocks, self.locals, self.params)
    }

    /// Empties the blocks no path from the entry reaches: the arm of a constant branch, code after
    /// a `return`. The compiler removes them, and the flow-insensitive analyses (points-to, call
    /// graph) would otherwise see their calls and assignments. Block numbers stay as they are.
    fn empty_dead_blocks(&mut self) {
        let mut live = vec![false; self.blocks.len()];
        let mut stack = vec![BlockId(0)];
        // A label whose address is taken may be jumped to from anywhere (`goto *p`, `asm goto`).
        stack.extend(self.address_taken_labels.iter().copied());
        while let Some(b) = stack.pop() {
            match live.get_mut(b.index()) {
                Some(seen) if !*seen => *seen = true,
                _ => continue,
            }
            stack.extend(crate::dataflow::successors(&self.blocks[b.index()].term));
        }
        for (block, live) in self.blocks.iter_mut().zip(live) {
            if !live {
                *block = Block::default();
            }
        }
    }
}
