//! Human-readable IR, for `relay ir` and golden tests.
//!
//! ```text
//! fn f(p: int *) -> int   // a.c:3:5
//!   locals: x: int, tmp.1: int
//! bb0:
//!   x = *(p) + 1;                       // a.c:4:3
//!   tmp.1 = g(x);                       // a.c:5:3
//!   if (tmp.1) goto bb1; else goto bb2; // a.c:5:3
//! ```

use std::fmt::Write;

use super::names::Names;
use super::types::{FloatKind, IntKind, TypeKind, TypeTable};
use super::*;

/// Everything needed to print names, types and strings of one unit (or program).
pub struct Printer<'a> {
    pub names: &'a Names,
    pub types: &'a TypeTable,
    /// Name of a global (unit-local before linking, program-wide after).
    pub global_name: Box<dyn Fn(GlobalId) -> String + 'a>,
    pub strings: &'a [String],
    pub files: &'a [String],
    /// Name of a linked function, when printing after linking.
    pub function_name: Box<dyn Fn(FuncId) -> String + 'a>,
    /// Name of a record after `struct`/`union`; by default its tag, or `<anon#id>`.
    pub record_name: Option<Box<dyn Fn(RecordId) -> String + 'a>>,
    /// Print locations in this location's file as line offsets from it (`+3:5`): a function's
    /// text independent of where it sits in its file (the summaries cache keys bodies so).
    pub relative_to: Option<Loc>,
    /// Print integer constants among `asm` inputs as `_`. No analysis reads them (an `asm` is
    /// opaque), and the kernel's `BUG()`/`WARN()` pass `__LINE__` there (`"i" (__LINE__)`):
    /// the summaries cache keys bodies so, or a line added to a file would change every
    /// function with a `WARN_ON` below it.
    pub hide_asm_constants: bool,
    /// Print nonzero integer constants passed as call arguments as `_`: the analyses read only
    /// whether an argument's value is zero (the summaries' executor keeps an argument's integer
    /// as zero or nonzero), and SQLite's `sqlite3CorruptError(__LINE__)`, the kernel's
    /// `__might_sleep(__FILE__, __LINE__)` pass line numbers there.
    pub hide_call_constants: bool,
    /// Print a member as `.name@record` (the record by [`Printer::record_name`]): a body's
    /// text then names every record whose member it reaches, as the summaries cache keys it
    /// (`t.r.x` names `r`'s record nowhere else).
    pub member_records: bool,
}

impl Printer<'_> {
    pub fn ty(&self, t: TypeId) -> String {
        let mut s = String::new();
        self.write_ty(&mut s, t);
        s
    }

    /// Types read left to right: qualifiers of a pointer follow its `*` (`int *volatile`), a
    /// pointer to a function or array parenthesises its target (`(fn(int) -> int) *`), and array
    /// dimensions are outermost first (`int[2][3]`).
    fn write_ty(&self, out: &mut String, t: TypeId) {
        let ty = self.types.get(t);
        const QUALS: [(u8, &str); 3] = [
            (Quals::CONST, "const"),
            (Quals::VOLATILE, "volatile"),
            (Quals::ATOMIC, "_Atomic"),
        ];
        if let TypeKind::Pointer(p) = &ty.kind {
            let parens = matches!(
                self.types.kind(*p),
                TypeKind::Function { .. } | TypeKind::Array { .. }
            );
            if parens {
                out.push('(');
            }
            self.write_ty(out, *p);
            out.push_str(if parens { ") *" } else { " *" });
            for (bit, word) in QUALS {
                if ty.quals.has(bit) {
                    out.push_str(word);
                    out.push(' ');
                }
            }
            if ty.quals.0 & (Quals::CONST | Quals::VOLATILE | Quals::ATOMIC) != 0 {
                out.pop();
            }
            return;
        }
        if let TypeKind::Array { .. } = &ty.kind {
            let mut dims = Vec::new();
            let mut inner = t;
            while let TypeKind::Array { elem, len } = self.types.kind(inner) {
                dims.push(*len);
                inner = *elem;
            }
            self.write_ty(out, inner);
            for d in dims {
                match d {
                    Some(n) => write!(out, "[{n}]").unwrap(),
                    None => out.push_str("[]"),
                }
            }
            return;
        }
        for (bit, word) in QUALS {
            if ty.quals.has(bit) {
                out.push_str(word);
                out.push(' ');
            }
        }
        match &ty.kind {
            TypeKind::Void => out.push_str("void"),
            TypeKind::Bool => out.push_str("_Bool"),
            TypeKind::Int { kind, signed } => {
                let base = match kind {
                    IntKind::Char => "char",
                    IntKind::Short => "short",
                    IntKind::Int => "int",
                    IntKind::Long => "long",
                    IntKind::LongLong => "long long",
                    IntKind::Int128 => "__int128",
                };
                if !signed {
                    out.push_str("unsigned ");
                }
                out.push_str(base);
            }
            TypeKind::Float(k) => out.push_str(float_name(*k)),
            TypeKind::Complex(k) => {
                out.push_str("_Complex ");
                out.push_str(float_name(*k));
            }
            // Written above, before the qualifier prefix.
            TypeKind::Pointer(_) | TypeKind::Array { .. } => {}
            TypeKind::Function {
                ret,
                params,
                variadic,
                ..
            } => {
                out.push_str("fn(");
                for (i, p) in params.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.write_ty(out, *p);
                }
                if *variadic {
                    out.push_str(if params.is_empty() { "..." } else { ", ..." });
                }
                out.push_str(") -> ");
                self.write_ty(out, *ret);
            }
            TypeKind::Record(r) => {
                out.push_str(match self.types.record(*r).kind {
                    types::RecordKind::Struct => "struct ",
                    types::RecordKind::Union => "union ",
                });
                self.write_record_name(out, *r);
            }
            TypeKind::Enum { tag } => {
                out.push_str("enum ");
                out.push_str(tag.map_or("<anon>", |t| self.names.get(t)));
            }
            TypeKind::Vector { elem, bytes } => {
                self.write_ty(out, *elem);
                write!(out, " vector({bytes})").unwrap();
            }
            TypeKind::Unknown => out.push_str("<unknown>"),
        }
    }

    pub fn loc(&self, l: Loc) -> String {
        if let Some(base) = self.relative_to.filter(|b| b.file == l.file) {
            return format!("{:+}:{}", i64::from(l.line) - i64::from(base.line), l.col);
        }
        let file = self.files.get(l.file as usize).map_or("?", |s| s.as_str());
        format!("{file}:{}:{}", l.line, l.col)
    }

    fn var(&self, f: Option<&Function>, v: VarRef) -> String {
        match v {
            VarRef::Global(g) => (self.global_name)(g),
            VarRef::Local(l) => match f.and_then(|f| f.locals.get(l.index())) {
                Some(local) => self.names.get(local.name).into(),
                None => format!("local#{}", l.0),
            },
        }
    }

    /// A record's name: [`Printer::record_name`]'s, else its tag, else `<anon#id>`
    /// (`<unknown>` for an id outside the table: a member of an object of unknown type).
    fn write_record_name(&self, out: &mut String, r: RecordId) {
        if r.0 as usize >= self.types.record_count() {
            out.push_str("<unknown>");
            return;
        }
        match (&self.record_name, self.types.record(r).tag) {
            (Some(name), _) => out.push_str(&name(r)),
            (None, Some(tag)) => out.push_str(self.names.get(tag)),
            (None, None) => write!(out, "<anon#{}>", r.0).unwrap(),
        }
    }

    pub fn lval(&self, f: Option<&Function>, lv: &Lval) -> String {
        let mut s = match &lv.host {
            Host::Var(v) => self.var(f, *v),
            Host::Mem(e) if lv.offsets.is_empty() => format!("*{}", self.atom(f, e)),
            Host::Mem(e) => format!("(*{})", self.atom(f, e)),
        };
        for off in &lv.offsets {
            match off {
                Offset::Field { name, record } => {
                    write!(s, ".{}", self.names.get(*name)).unwrap();
                    if self.member_records {
                        s.push('@');
                        self.write_record_name(&mut s, *record);
                    }
                }
                Offset::Index(e) => write!(s, "[{}]", self.expr(f, e)).unwrap(),
            }
        }
        s
    }

    /// An expression, parenthesised unless it is a plain variable or constant.
    fn atom(&self, f: Option<&Function>, e: &Expr) -> String {
        let s = self.expr(f, e);
        match e {
            Expr::Load(lv) if matches!(lv.host, Host::Var(_)) && lv.offsets.is_empty() => s,
            Expr::Const(_) | Expr::Binary(..) => s,
            _ => format!("({s})"),
        }
    }

    pub fn expr(&self, f: Option<&Function>, e: &Expr) -> String {
        match e {
            Expr::Const(Const::Int(v)) => v.to_string(),
            Expr::Const(Const::Float(v)) => format!("{v:?}"),
            Expr::Const(Const::Str(s)) => format!(
                "{:?}",
                self.strings.get(s.index()).map_or("", |s| s.as_str())
            ),
            Expr::Load(lv) => self.lval(f, lv),
            Expr::AddrOf(lv) => format!("&{}", self.lval(f, lv)),
            Expr::StartOf(lv) => format!("&{}[0]", self.lval(f, lv)),
            Expr::Func(FuncRef::Named { name, .. }) => self.names.get(*name).to_string(),
            Expr::Func(FuncRef::Linked(id)) => (self.function_name)(*id),
            Expr::Label(b) => format!("&&bb{}", b.0),
            Expr::Unary(op, a) => {
                let op = match op {
                    UnOp::Neg => "-",
                    UnOp::BitNot => "~",
                    UnOp::LogNot => "!",
                };
                format!("{op}{}", self.atom(f, a))
            }
            Expr::Binary(op, a, b) => {
                format!("({} {} {})", self.expr(f, a), binop(*op), self.expr(f, b))
            }
            Expr::Cast(t, a) => format!("({}){}", self.ty(*t), self.expr(f, a)),
            Expr::SizeOf(t) => format!("sizeof({})", self.ty(*t)),
            Expr::AlignOf(t) => format!("alignof({})", self.ty(*t)),
            Expr::Unknown => "<unknown>".into(),
        }
    }

    pub fn instr(&self, f: Option<&Function>, i: &Instr) -> String {
        let body = match i {
            Instr::Assign { dst, src, .. } => {
                format!("{} = {};", self.lval(f, dst), self.expr(f, src))
            }
            Instr::Call {
                dst, callee, args, ..
            } => {
                let args: Vec<String> = args
                    .iter()
                    .map(|a| match a {
                        Expr::Const(Const::Int(k)) if self.hide_call_constants && *k != 0 => {
                            "_".into()
                        }
                        a => self.expr(f, a),
                    })
                    .collect();
                let call = format!("{}({});", self.expr(f, callee), args.join(", "));
                match dst {
                    Some(d) => format!("{} = {call}", self.lval(f, d)),
                    None => call,
                }
            }
            Instr::Asm {
                outputs,
                inputs,
                volatile,
                ..
            } => {
                let outs: Vec<String> = outputs.iter().map(|o| self.lval(f, o)).collect();
                let ins: Vec<String> = inputs
                    .iter()
                    .map(|e| match e {
                        e if self.hide_asm_constants && is_int_constant(e) => "_".into(),
                        e => self.expr(f, e),
                    })
                    .collect();
                format!(
                    "asm{}(out: {}; in: {});",
                    if *volatile { " volatile" } else { "" },
                    outs.join(", "),
                    ins.join(", ")
                )
            }
        };
        format!("{body:<40} // {}", self.loc(i.loc()))
    }

    pub fn terminator(&self, f: &Function, t: &Terminator) -> String {
        match t {
            Terminator::Goto(b) => format!("goto bb{};", b.0),
            Terminator::Branch {
                cond,
                then,
                els,
                loc,
            } => {
                format!(
                    "{:<40} // {}",
                    format!(
                        "if ({}) goto bb{}; else goto bb{};",
                        self.expr(Some(f), cond),
                        then.0,
                        els.0
                    ),
                    self.loc(*loc)
                )
            }
            Terminator::Switch {
                value,
                cases,
                default,
                loc,
            } => {
                let mut s = format!("switch ({}) {{", self.expr(Some(f), value));
                for c in cases {
                    if c.lo == c.hi {
                        write!(s, " {}: bb{};", c.lo, c.target.0).unwrap();
                    } else {
                        write!(s, " {} ... {}: bb{};", c.lo, c.hi, c.target.0).unwrap();
                    }
                }
                write!(s, " default: bb{}; }}", default.0).unwrap();
                format!("{s:<40} // {}", self.loc(*loc))
            }
            Terminator::Return { value, loc } => {
                let v = value
                    .as_ref()
                    .map(|e| format!(" {}", self.expr(Some(f), e)))
                    .unwrap_or_default();
                format!("{:<40} // {}", format!("return{v};"), self.loc(*loc))
            }
            Terminator::IndirectGoto {
                target,
                targets,
                loc,
            } => {
                let ts: Vec<String> = targets.iter().map(|b| format!("bb{}", b.0)).collect();
                format!(
                    "{:<40} // {}",
                    format!("goto *{}; [{}]", self.expr(Some(f), target), ts.join(", ")),
                    self.loc(*loc)
                )
            }
            Terminator::Unreachable => "unreachable;".into(),
        }
    }

    /// `name: type [flags]`.
    fn local_decl(&self, l: &Local) -> String {
        format!(
            "{}: {}{}",
            self.names.get(l.name),
            self.ty(l.ty),
            flags(l.flags)
        )
    }

    pub fn function(&self, f: &Function) -> String {
        let mut out = String::new();
        let params: Vec<String> = f
            .params
            .iter()
            .map(|p| self.local_decl(&f.locals[p.index()]))
            .collect();
        let ret = match self.types.kind(f.ty) {
            TypeKind::Function { ret, .. } => self.ty(*ret),
            _ => "?".into(),
        };
        let linkage = if f.linkage == Linkage::Internal {
            "static "
        } else {
            ""
        };
        writeln!(
            out,
            "{linkage}fn {}({}) -> {ret}   // {}",
            self.names.get(f.name),
            params.join(", "),
            self.loc(f.loc)
        )
        .unwrap();
        let locals: Vec<String> = f
            .locals
            .iter()
            .filter(|l| l.kind != LocalKind::Formal)
            .map(|l| self.local_decl(l))
            .collect();
        if !locals.is_empty() {
            writeln!(out, "  locals: {}", locals.join(", ")).unwrap();
        }
        for (i, b) in f.blocks.iter().enumerate() {
            writeln!(out, "bb{i}:").unwrap();
            for ins in &b.instrs {
                writeln!(out, "  {}", self.instr(Some(f), ins)).unwrap();
            }
            writeln!(out, "  {}", self.terminator(f, &b.term)).unwrap();
        }
        out
    }

    pub fn global(&self, g: &Global) -> String {
        let mut out = String::new();
        let linkage = if g.linkage == Linkage::Internal {
            "static "
        } else {
            ""
        };
        let kind = match g.kind {
            GlobalKind::Global => String::new(),
            GlobalKind::StaticLocal { function } => {
                format!(" (static in {})", self.names.get(function))
            }
        };
        let defined = if g.defined { "" } else { " (extern)" };
        writeln!(
            out,
            "{linkage}global {}: {}{}{kind}{defined}   // {}",
            self.names.get(g.name),
            self.ty(g.ty),
            flags(g.flags),
            self.loc(g.loc)
        )
        .unwrap();
        for i in &g.init {
            writeln!(out, "  init {}", self.instr(None, i)).unwrap();
        }
        out
    }
}

fn flags(f: VarFlags) -> String {
    let mut s = String::new();
    for (on, word) in [
        (f.address_taken, "addr"),
        (f.thread_local, "thread"),
        (f.atomic, "atomic"),
        (f.volatile, "volatile"),
        (f.call_key, "call-key"),
    ] {
        if on {
            s.push_str(if s.is_empty() { " [" } else { ", " });
            s.push_str(word);
        }
    }
    if !s.is_empty() {
        s.push(']');
    }
    s
}

fn float_name(k: FloatKind) -> &'static str {
    match k {
        FloatKind::Half => "_Float16",
        FloatKind::BFloat16 => "__bf16",
        FloatKind::Float => "float",
        FloatKind::Double => "double",
        FloatKind::LongDouble => "long double",
        FloatKind::Float128 => "_Float128",
        FloatKind::Decimal => "_Decimal",
    }
}

fn binop(op: BinOp) -> &'static str {
    match op {
        BinOp::Add | BinOp::PtrAdd => "+",
        BinOp::Sub | BinOp::PtrDiff => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Rem => "%",
        BinOp::Shl => "<<",
        BinOp::Shr => ">>",
        BinOp::Lt => "<",
        BinOp::Gt => ">",
        BinOp::Le => "<=",
        BinOp::Ge => ">=",
        BinOp::Eq => "==",
        BinOp::Ne => "!=",
        BinOp::BitAnd => "&",
        BinOp::BitXor => "^",
        BinOp::BitOr => "|",
    }
}

/// An integer constant, possibly cast (`"i" (__LINE__)`, `"i" ((long)sizeof(x))`).
fn is_int_constant(e: &Expr) -> bool {
    match e {
        Expr::Const(Const::Int(_)) => true,
        Expr::Cast(_, inner) => is_int_constant(inner),
        _ => false,
    }
}
