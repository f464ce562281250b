//! Statements into the control-flow graph.

use rustc_hash::FxHashMap;

use super::builder::SwitchCtx;
use super::expr::Operand;
use super::{LResult, Lower};
use crate::frontend::ast::{StmtId, StmtKind};
use crate::ir::*;

impl Lower<'_, '_> {
    /// Lowers a statement. A construct that cannot be lowered is reported and skipped; the
    /// statements around it are still lowered.
    pub fn statement(&mut self, s: StmtId) {
        let _ = self.statement_inner(s);
    }

    fn statement_inner(&mut self, s: StmtId) -> LResult<()> {
        let stmt = self.ast.stmts[s];
        let loc = self.loc(stmt.span.lo);
        match stmt.kind {
            StmtKind::Compound(items) => {
                let items = self.ast.stmt_lists.get(items).to_vec();
                self.block(&items);
            }
            StmtKind::Expr(Some(e)) => self.effect(e)?,
            StmtKind::Expr(None) | StmtKind::StaticAssert(_) | StmtKind::LocalLabels(_) => {}
            StmtKind::Decl(d) => self.declaration(d),
            StmtKind::Function(f) => self.nested_function(f),
            StmtKind::If(c, then, els) => {
                let (yes, join) = (self.fb().new_block(), self.fb().new_block());
                let no = if els.is_some() {
                    self.fb().new_block()
                } else {
                    join
                };
                self.cond(c, yes, no)?;
                self.fb().start(yes);
                self.statement(then);
                if let Some(els) = els {
                    if self.fb().cur.is_some() {
                        self.fb().goto(join);
                    }
                    self.fb().start(no);
                    self.statement(els);
                }
                self.fb().start(join);
            }
            StmtKind::While(c, body) => {
                let (head, inner, exit) = (
                    self.fb().new_block(),
                    self.fb().new_block(),
                    self.fb().new_block(),
                );
                self.fb().start(head);
                self.cond(c, inner, exit)?;
                self.fb().start(inner);
                self.loop_body(body, exit, head);
                self.fb().goto(head);
                self.fb().start(exit);
            }
            StmtKind::DoWhile(body, c) => {
                let (inner, test, exit) = (
                    self.fb().new_block(),
                    self.fb().new_block(),
                    self.fb().new_block(),
                );
                self.fb().start(inner);
                self.loop_body(body, exit, test);
                self.fb().start(test);
                self.cond(c, inner, exit)?;
                self.fb().start(exit);
            }
            StmtKind::For(f) => {
                let f = self.ast.fors[f];
                self.st.scopes.push();
                if let Some(init) = f.init {
                    self.statement(init);
                }
                let (head, inner, step, exit) = (
                    self.fb().new_block(),
                    self.fb().new_block(),
                    self.fb().new_block(),
                    self.fb().new_block(),
                );
                self.fb().start(head);
                match f.cond {
                    Some(c) => self.cond(c, inner, exit)?,
                    None => self.fb().goto(inner),
                }
                self.fb().start(inner);
                self.loop_body(f.body, exit, step);
                self.fb().start(step);
                if let Some(e) = f.step {
                    self.effect(e)?;
                }
                self.fb().goto(head);
                self.fb().start(exit);
                self.st.scopes.pop();
            }
            StmtKind::Switch(v, body) => self.switch(v, body, loc)?,
            StmtKind::Case(lo, hi, body) => {
                let (lo_v, hi_v) = (self.const_eval(lo), hi.map(|h| self.const_eval(h)));
                let b = self.fb().new_block();
                self.fb().start(b);
                match (lo_v, hi_v, self.fb().switches.last_mut()) {
                    (Some(l), None, Some(sw)) => sw.cases.push(SwitchCase {
                        lo: l,
                        hi: l,
                        target: b,
                    }),
                    (Some(l), Some(Some(h)), Some(sw)) => sw.cases.push(SwitchCase {
                        lo: l,
                        hi: h,
                        target: b,
                    }),
                    (_, _, None) => self.diag(stmt.span.lo, "`case` outside a switch"),
                    _ => self.diag(stmt.span.lo, "case label is not an integer constant"),
                }
                self.statement(body);
            }
            StmtKind::Default(body) => {
                let b = self.fb().new_block();
                self.fb().start(b);
                match self.fb().switches.last_mut() {
                    Some(sw) => sw.default = Some(b),
                    None => self.diag(stmt.span.lo, "`default` outside a switch"),
                }
                self.statement(body);
            }
            StmtKind::Goto(l) => {
                let b = self.fb().label(l);
                self.fb().goto(b);
            }
            StmtKind::GotoComputed(e) => {
                let (target, _) = self.rvalue(e)?;
                self.indirect_goto(target, Vec::new(), loc);
            }
            StmtKind::Break | StmtKind::Continue => {
                let is_break = matches!(stmt.kind, StmtKind::Break);
                let target = if is_break {
                    self.fb().breaks.last()
                } else {
                    self.fb().continues.last()
                }
                .copied();
                match target {
                    Some(b) => self.fb().goto(b),
                    None => self.diag(
                        stmt.span.lo,
                        "`break` or `continue` outside a loop or switch",
                    ),
                }
            }
            StmtKind::Return(v) => {
                let value = match v {
                    Some(e) => {
                        let (value, ty) = self.rvalue(e)?;
                        // `return f();` in a void function returns nothing.
                        (!matches!(self.types().kind(ty), crate::ir::types::TypeKind::Void))
                            .then_some(value)
                    }
                    None => None,
                };
                self.fb().terminate(Terminator::Return { value, loc });
            }
            StmtKind::Labeled(l, body) => {
                let b = self.fb().define_label(l);
                self.fb().start(b);
                self.statement(body);
            }
            StmtKind::Asm(a) => self.asm(a, loc)?,
        }
        Ok(())
    }

    /// A compound statement's items in a new scope.
    fn block(&mut self, items: &[StmtId]) {
        let labels = self.enter_block(items);
        for &item in items {
            self.statement(item);
        }
        self.leave_block(labels);
    }

    /// Opens a block scope, with its `__label__` names if it declares any; returns whether it
    /// opened a label scope.
    fn enter_block(&mut self, items: &[StmtId]) -> bool {
        self.st.scopes.push();
        let mut scope = FxHashMap::default();
        for &s in items {
            if let StmtKind::LocalLabels(list) = self.ast.stmts[s].kind {
                for &name in self.ast.syms.get(list) {
                    let b = self.fb().new_block();
                    scope.insert(name, b);
                }
            }
        }
        let has_labels = !scope.is_empty();
        if has_labels {
            self.fb().label_scopes.push(scope);
        }
        has_labels
    }

    fn leave_block(&mut self, had_labels: bool) {
        if had_labels {
            self.fb().label_scopes.pop();
        }
        self.st.scopes.pop();
    }

    fn loop_body(&mut self, body: StmtId, brk: BlockId, cont: BlockId) {
        self.fb().breaks.push(brk);
        self.fb().continues.push(cont);
        self.statement(body);
        self.fb().breaks.pop();
        self.fb().continues.pop();
    }

    fn switch(&mut self, v: crate::frontend::ast::ExprId, body: StmtId, loc: Loc) -> LResult<()> {
        let constant = self.branch_constant(v);
        let (value, _) = self.rvalue(v)?;
        let head = match self.fb().cur {
            Some(b) => b,
            None => {
                let b = self.fb().new_block();
                self.fb().cur = Some(b);
                b
            }
        };
        self.fb().cur = None;
        let exit = self.fb().new_block();
        self.fb().switches.push(SwitchCtx {
            cases: Vec::new(),
            default: None,
        });
        self.fb().breaks.push(exit);
        self.statement(body);
        self.fb().breaks.pop();
        let ctx = self.fb().switches.pop().unwrap_or(SwitchCtx {
            cases: Vec::new(),
            default: None,
        });
        self.fb().start(exit);
        let default = ctx.default.unwrap_or(exit);
        self.fb().blocks[head.index()].term = match constant {
            // `switch (sizeof(x))`: only the matching case runs (the others are emptied).
            Some(v) => Terminator::Goto(
                ctx.cases
                    .iter()
                    .find(|c| c.lo <= v && v <= c.hi)
                    .map_or(default, |c| c.target),
            ),
            None => Terminator::Switch {
                value,
                cases: ctx.cases,
                default,
                loc,
            },
        };
        Ok(())
    }

    fn indirect_goto(&mut self, target: Expr, targets: Vec<BlockId>, loc: Loc) {
        let b = match self.fb().cur {
            Some(b) => b,
            None => {
                let b = self.fb().new_block();
                self.fb().cur = Some(b);
                b
            }
        };
        self.fb().terminate(Terminator::IndirectGoto {
            target,
            targets,
            loc,
        });
        self.fb().indirect_gotos.push(b);
    }

    fn asm(&mut self, a: crate::frontend::ast::AsmId, loc: Loc) -> LResult<()> {
        let asm = self.ast.asms[a];
        let mut outputs = Vec::new();
        for op in self.ast.asm_operands.get(asm.outputs).to_vec() {
            outputs.push(self.lvalue(op.expr)?.0);
        }
        let mut inputs = Vec::new();
        for op in self.ast.asm_operands.get(asm.inputs).to_vec() {
            inputs.push(self.rvalue(op.expr)?.0);
        }
        self.emit(Instr::Asm {
            outputs,
            inputs,
            volatile: asm.volatile,
            loc,
        });
        let labels = self.ast.syms.get(asm.labels).to_vec();
        if !labels.is_empty() {
            let next = self.fb().new_block();
            let mut targets = vec![next];
            for l in labels {
                let b = self.fb().label(l);
                targets.push(b);
            }
            // `asm goto` jumps to one of its labels or falls through; the choice is opaque.
            self.fb().terminate(Terminator::IndirectGoto {
                target: Expr::Unknown,
                targets,
                loc,
            });
            self.fb().start(next);
        }
        Ok(())
    }

    /// `({ ...; e; })`: the items run in order and the last one, an expression statement
    /// (possibly labelled: `out: ret;`), is the value.
    pub fn statement_expression(&mut self, body: StmtId) -> LResult<Operand> {
        let StmtKind::Compound(items) = self.ast.stmts[body].kind else {
            let void = self.types().void();
            return Ok(Operand::Rv(Expr::Unknown, void));
        };
        let items = self.ast.stmt_lists.get(items).to_vec();
        let (last, init) = match items.split_last() {
            Some((&last, init)) if self.value_statement(last).is_some() => (Some(last), init),
            _ => (None, items.as_slice()),
        };
        let labels = self.enter_block(&items);
        for &s in init {
            self.statement(s);
        }
        let result = match last {
            Some(mut s) => {
                // Labels in front of the value: `__out: __ret;` (Linux's wait_event).
                while let StmtKind::Labeled(l, inner) = self.ast.stmts[s].kind {
                    let b = self.fb().define_label(l);
                    self.fb().start(b);
                    s = inner;
                }
                match self.value_statement(s) {
                    Some(e) => self.operand(e),
                    None => Err(super::Unsupported),
                }
            }
            None => {
                let void = self.types().void();
                Ok(Operand::Rv(Expr::Unknown, void))
            }
        };
        self.leave_block(labels);
        result
    }

    /// The expression of an expression statement, looking through labels.
    fn value_statement(&self, mut s: StmtId) -> Option<crate::frontend::ast::ExprId> {
        loop {
            match self.ast.stmts[s].kind {
                StmtKind::Labeled(_, inner) => s = inner,
                StmtKind::Expr(Some(e)) => return Some(e),
                _ => return None,
            }
        }
    }
}
