//! The intermediate representation: the contract between the front end and the analyses.
//!
//! CIL-like (RELAY read C through CIL): per function a control-flow graph of basic blocks holding
//! three kinds of instruction (`Assign`, `Call`, `Asm`) and a terminator (`Goto`, `Branch`,
//! `Switch`, `Return`, ...). Expressions are side-effect free; lvalues are a host (`Var` or
//! `Mem(expr)`) plus a path of offsets (`.field`, `[index]`). Every instruction and terminator
//! carries its original `file:line:col`, so every read and write of an lvalue has one.
//!
//! Names are program-wide interned strings ([`Name`]). Types live in a [`types::TypeTable`] and are
//! referred to by [`types::TypeId`] / [`types::RecordId`]: the unit's own table before linking
//! ([`UnitIr::types`]), the program's one table after ([`crate::link::Program::types`]).

pub mod names;
pub mod print;
pub mod rename;
pub mod types;
pub mod visit;

use serde::{Deserialize, Serialize};

pub use types::{Quals, RecordId, TypeId, TypeTable};

/// A program-wide interned name (function, variable, field, tag).
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub struct Name(pub u32);

/// An original source location; `file` indexes [`Program::files`] (or the unit's file list before
/// linking).
#[derive(
    Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default, Serialize, Deserialize,
)]
pub struct Loc {
    pub file: u32,
    pub line: u32,
    pub col: u32,
}

macro_rules! index_type {
    ($($(#[$m:meta])* $name:ident;)*) => {$(
        $(#[$m])*
        #[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
        pub struct $name(pub u32);
        impl $name {
            pub fn index(self) -> usize { self.0 as usize }
        }
    )*};
}

index_type! {
    /// A global variable (including function-static locals) of the program or unit.
    GlobalId;
    /// A local of one function: a formal, a declared local, or a temporary.
    LocalId;
    /// A function of the program (defined or external) after linking; of the unit before.
    FuncId;
    BlockId;
    /// A string literal in the unit's or program's string table.
    StrId;
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum VarRef {
    Global(GlobalId),
    Local(LocalId),
}

#[derive(Copy, Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub enum Linkage {
    /// Visible to other units by name.
    External,
    /// `static`: visible in its unit only.
    Internal,
}

#[derive(Copy, Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub enum GlobalKind {
    /// A file-scope variable.
    Global,
    /// A `static` variable declared inside a function.
    StaticLocal { function: Name },
}

/// Facts about a variable the analyses need.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct VarFlags {
    pub address_taken: bool,
    pub thread_local: bool,
    pub atomic: bool,
    pub volatile: bool,
    /// A trampoline's key ([`crate::link::trampolines`]): a call through its member is patched
    /// code (the kernel's static calls), which loads nothing from the key.
    pub call_key: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Global {
    pub name: Name,
    pub ty: TypeId,
    pub kind: GlobalKind,
    pub linkage: Linkage,
    pub flags: VarFlags,
    /// Whether some unit defines it (as opposed to only `extern` declarations).
    pub defined: bool,
    /// The initializer, as assignments to parts of the variable.
    pub init: Vec<Instr>,
    pub loc: Loc,
}

#[derive(Copy, Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub enum LocalKind {
    Formal,
    Local,
    /// Introduced by lowering (call results, `?:`, `++`, compound literals, ...).
    Temp,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Local {
    pub name: Name,
    pub ty: TypeId,
    pub kind: LocalKind,
    pub flags: VarFlags,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Function {
    pub name: Name,
    pub linkage: Linkage,
    /// The function type.
    pub ty: TypeId,
    /// Formals, in order; indices into `locals`.
    pub params: Vec<LocalId>,
    pub locals: Vec<Local>,
    /// `blocks[0]` is the entry.
    pub blocks: Vec<Block>,
    pub loc: Loc,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Block {
    pub instrs: Vec<Instr>,
    pub term: Terminator,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Instr {
    Assign {
        dst: Lval,
        src: Expr,
        loc: Loc,
    },
    Call {
        dst: Option<Lval>,
        callee: Expr,
        args: Vec<Expr>,
        loc: Loc,
    },
    /// Inline assembly: its operands are recorded, its effects are not modelled.
    Asm {
        outputs: Vec<Lval>,
        inputs: Vec<Expr>,
        volatile: bool,
        loc: Loc,
    },
}

impl Instr {
    pub fn loc(&self) -> Loc {
        match self {
            Instr::Assign { loc, .. } | Instr::Call { loc, .. } | Instr::Asm { loc, .. } => *loc,
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub enum Terminator {
    Goto(BlockId),
    /// Two-way branch on a scalar condition (non-zero goes to `then`). The condition is kept
    /// so that later analyses can follow, e.g., a trylock result into the branch that tests it.
    Branch {
        cond: Expr,
        then: BlockId,
        els: BlockId,
        loc: Loc,
    },
    Switch {
        value: Expr,
        cases: Vec<SwitchCase>,
        default: BlockId,
        loc: Loc,
    },
    Return {
        value: Option<Expr>,
        loc: Loc,
    },
    /// `goto *expr`: may reach any block whose label had its address taken.
    IndirectGoto {
        target: Expr,
        targets: Vec<BlockId>,
        loc: Loc,
    },
    /// No successor (after a call to a `noreturn` function, or a block never terminated).
    #[default]
    Unreachable,
}

#[derive(Copy, Clone, Debug, Serialize, Deserialize)]
pub struct SwitchCase {
    /// Inclusive range; a plain `case v:` has `lo == hi`.
    pub lo: i128,
    pub hi: i128,
    pub target: BlockId,
}

/// A memory location: a host plus a path of offsets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Lval {
    pub host: Host,
    pub offsets: Vec<Offset>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Host {
    Var(VarRef),
    /// `*e`: the memory `e` points to.
    Mem(Box<Expr>),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Offset {
    /// `.name` of a struct or union.
    Field {
        record: RecordId,
        name: Name,
    },
    Index(Box<Expr>),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Const {
    Int(i128),
    Float(f64),
    Str(StrId),
}

#[derive(Copy, Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub enum UnOp {
    Neg,
    BitNot,
    LogNot,
}

#[derive(Copy, Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
    /// Pointer plus integer (scaled by the pointee size).
    PtrAdd,
    /// Pointer minus pointer.
    PtrDiff,
}

/// A side-effect-free expression.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Expr {
    Const(Const),
    /// Reads the lvalue.
    Load(Box<Lval>),
    AddrOf(Box<Lval>),
    /// Array-to-pointer decay: the address of the first element.
    StartOf(Box<Lval>),
    /// The address of a function, by name (resolved by the linker).
    Func(FuncRef),
    /// The address of a label (GNU `&&l`).
    Label(BlockId),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Cast(TypeId, Box<Expr>),
    SizeOf(TypeId),
    AlignOf(TypeId),
    /// A value the front end does not model (e.g. a GNU builtin with no IR counterpart).
    Unknown,
}

impl Expr {
    /// The function the expression names, through casts (`(void *)f`).
    pub fn named_function(&self) -> Option<FuncId> {
        match self.strip_casts() {
            Expr::Func(FuncRef::Linked(g)) => Some(*g),
            _ => None,
        }
    }

    /// The expression under any casts.
    pub fn strip_casts(&self) -> &Expr {
        let mut e = self;
        while let Expr::Cast(_, inner) = e {
            e = inner;
        }
        e
    }
}

/// A function named in an expression: before linking, a name with its linkage; after linking,
/// the program's function.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum FuncRef {
    /// An external-linkage name, or a unit-local `static` name.
    Named {
        name: Name,
        internal: bool,
    },
    Linked(FuncId),
}

impl Lval {
    pub fn var(v: VarRef) -> Lval {
        Lval {
            host: Host::Var(v),
            offsets: Vec::new(),
        }
    }
    pub fn mem(e: Expr) -> Lval {
        Lval {
            host: Host::Mem(Box::new(e)),
            offsets: Vec::new(),
        }
    }
}

/// A lowering problem: a construct that could not be lowered faithfully. The function or global
/// is still produced (with `Expr::Unknown` where needed) so the rest of the unit is analysed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LowerDiagnostic {
    pub loc: Loc,
    pub message: String,
}

/// A function or variable declared in a unit without a definition there.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Declared {
    pub name: Name,
    pub ty: TypeId,
    pub linkage: Linkage,
}

/// One translation unit lowered to IR, before linking. `VarRef::Global` indexes `globals`,
/// `Loc::file` indexes `files`, `StrId` indexes `strings`, functions are `FuncRef::Named`.
#[derive(Default, Serialize, Deserialize)]
pub struct UnitIr {
    pub name: String,
    pub files: Vec<String>,
    pub types: TypeTable,
    pub strings: Vec<String>,
    pub globals: Vec<Global>,
    pub functions: Vec<Function>,
    /// Content hash of each function definition's text (same index as `functions`): identical
    /// `static inline` functions from headers hash alike and are stored once by the linker.
    pub function_hashes: Vec<u64>,
    /// Functions declared (prototyped or called) but not defined in this unit.
    pub declared_functions: Vec<Declared>,
    pub diagnostics: Vec<LowerDiagnostic>,
}
