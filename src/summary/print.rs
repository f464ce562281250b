//! Summaries as text, the way RELAY's Figure 1 shows them: the relative lockset summary, then a
//! table of guarded accesses (lvalue, kind, L+, L−, location, the call chain to it).

use std::fmt::Write;

use super::access::{AccessKind, AccessView};
use super::lockset::{Lock, LockMode, RelativeLockset};
use super::path::{Path, Root, Step};
use super::value::SymVal;
use super::Summary;
use crate::ir::{FuncId, Loc};
use crate::link::Program;

/// Prints paths, locksets and summaries of one function (formals are named after its
/// parameters).
pub struct SummaryPrinter<'a> {
    pub program: &'a Program,
    pub func: FuncId,
}

impl SummaryPrinter<'_> {
    pub fn path(&self, p: &Path) -> String {
        self.path_with(p, &|c| format!("rep#{c}"))
    }

    /// [`Self::path`] with representatives named by `rep` (reports name them by a member).
    pub fn path_with(&self, p: &Path, rep: &dyn Fn(u32) -> String) -> String {
        let program = self.program;
        let mut s = match p.root {
            Root::Global(g) => program.global_name(g),
            Root::Formal(i) => self.formal_name(i),
            Root::Local(l) => format!("local#{}", l.0),
            Root::Rep(c) => rep(c),
            Root::Pseudo(n) => format!("<{}>", program.names.get(n)),
        };
        // `starred`: the text is `*x`, which needs parentheses before a member or index.
        let mut starred = false;
        let mut i = 0;
        while i < p.steps.len() {
            match (p.steps[i], p.steps.get(i + 1)) {
                (Step::Deref, Some(Step::Field(_, f))) => {
                    s = format!("{}->{}", paren(&s, starred), program.names.get(*f));
                    starred = false;
                    i += 2;
                    continue;
                }
                (Step::Deref, _) => {
                    s = format!("*{}", s);
                    starred = true;
                }
                (Step::Field(_, f), _) => {
                    s = format!("{}.{}", paren(&s, starred), program.names.get(f));
                    starred = false;
                }
                (Step::Index, _) => {
                    s = format!("{}[*]", paren(&s, starred));
                    starred = false;
                }
                (Step::Elem(k), _) => {
                    s = format!("{}[{k}]", paren(&s, starred));
                    starred = false;
                }
            }
            i += 1;
        }
        s
    }

    fn formal_name(&self, i: u32) -> String {
        let f = &self.program.functions[self.func.index()];
        f.body
            .as_ref()
            .and_then(|b| b.params.get(i as usize).map(|l| b.locals[l.index()].name))
            .map_or_else(
                || format!("arg{i}"),
                |n| self.program.names.get(n).to_string(),
            )
    }

    pub fn lock(&self, l: &Lock) -> String {
        match l.mode {
            LockMode::Exclusive => self.path(&l.path),
            LockMode::Shared => format!("{} (shared)", self.path(&l.path)),
        }
    }

    pub fn lockset(&self, l: &RelativeLockset) -> String {
        format!("({}, {})", self.plus(l), self.minus(l))
    }

    fn plus(&self, l: &RelativeLockset) -> String {
        let v: Vec<String> = l.plus.iter().map(|x| self.lock(x)).collect();
        format!("{{{}}}", v.join(", "))
    }

    fn minus(&self, l: &RelativeLockset) -> String {
        if l.minus_top {
            return "⊤".to_string();
        }
        let v: Vec<String> = l.minus.iter().map(|x| self.path(x)).collect();
        format!("{{{}}}", v.join(", "))
    }

    pub fn value(&self, v: &SymVal) -> String {
        match v {
            SymVal::Bottom => "⊥".into(),
            SymVal::Top => "⊤".into(),
            SymVal::Int(i) => i.to_string(),
            SymVal::Init(p) => format!("init({})", self.path(p)),
            SymVal::Must(p) => format!("must({})", self.path(p)),
            SymVal::May(ps) => {
                let v: Vec<String> = ps.iter().map(|p| self.path(p)).collect();
                format!("may({})", v.join(", "))
            }
            SymVal::Func(f) => format!("&{}", self.program.function_label(*f)),
            SymVal::Try { lock, nonzero } => format!(
                "trylock({}) acquired iff {}",
                self.lock(lock),
                if *nonzero { "non-zero" } else { "zero" }
            ),
        }
    }

    fn loc(&self, l: Loc) -> String {
        self.program.printer().loc(l)
    }

    /// The whole summary as a block of text.
    pub fn summary(&self, s: &Summary) -> String {
        let mut out = String::new();
        let name = self.program.function_label(self.func);
        let f = &self.program.functions[self.func.index()];
        let at = f.body.as_ref().map(|b| self.loc(b.loc)).unwrap_or_default();
        let _ = writeln!(out, "function {name} ({at})");
        if s.modelled {
            let _ = writeln!(out, "  modelled by models/ (body not analysed)");
            return out;
        }
        let _ = writeln!(out, "  lockset summary: {}", self.lockset(&s.lockset));
        let _ = writeln!(out, "  returns: {}", self.value(&s.ret));
        if s.returns_fresh {
            let _ = writeln!(out, "  returns only objects it allocated (a constructor)");
        }
        if s.widened {
            let _ = writeln!(out, "  (a loop needed widening: values there are ⊤)");
        }
        for sp in &s.spawns {
            let starts: Vec<String> = sp
                .start
                .iter()
                .map(|f| self.program.function_label(*f))
                .collect();
            let _ = writeln!(
                out,
                "  creates thread: {} at {}{}",
                if starts.is_empty() {
                    "?".to_string()
                } else {
                    starts.join(" | ")
                },
                self.loc(sp.loc),
                if sp.in_loop { " (in a loop)" } else { "" }
            );
        }
        let _ = writeln!(out, "  guarded accesses: {}", s.accesses.len());
        for sh in &s.shared {
            let _ = writeln!(
                out,
                "  + {} accesses shared by the {} functions of the collapsed SCC of {} \
                 (not listed)",
                sh.content().accesses.len(),
                sh.functions,
                self.program.function_label(sh.scc),
            );
        }
        let rows: Vec<[String; 6]> = s.accesses().map(|a| self.row(&a)).collect();
        let header = ["lvalue", "kind", "L+", "L-", "location", "via"].map(String::from);
        let mut width = header.clone().map(|h| h.chars().count());
        for r in &rows {
            for (w, c) in width.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        for r in std::iter::once(&header).chain(&rows) {
            let mut line = String::from("   ");
            for (i, (c, w)) in r.iter().zip(width).enumerate() {
                if i + 1 == r.len() {
                    line.push(' ');
                    line.push_str(c);
                } else {
                    let pad = w - c.chars().count();
                    let _ = write!(line, " {c}{}", " ".repeat(pad));
                }
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
        out
    }

    fn row(&self, a: &AccessView<'_>) -> [String; 6] {
        let kind = match (a.kind, a.atomic) {
            (AccessKind::Read, false) => "read",
            (AccessKind::Write, false) => "write",
            (AccessKind::Read, true) => "read (atomic)",
            (AccessKind::Write, true) => "write (atomic)",
        };
        let w = a.witness();
        let mut via: Vec<String> = w
            .chain()
            .iter()
            .map(|c| {
                format!(
                    "{} ({})",
                    self.program.function_label(c.callee),
                    self.loc(c.loc)
                )
            })
            .collect();
        if a.witnesses.len() > 1 {
            via.push(format!("(+{} more)", a.witnesses.len() - 1));
        }
        [
            self.path(a.path),
            kind.to_string(),
            self.plus(a.locks),
            self.minus(a.locks),
            self.loc(w.loc),
            via.join(" > "),
        ]
    }
}

fn paren(s: &str, starred: bool) -> String {
    if starred {
        format!("({s})")
    } else {
        s.to_string()
    }
}
