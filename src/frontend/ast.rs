//! The syntax tree of one translation unit.
//!
//! Nodes live in per-kind arenas inside [`Ast`] and refer to each other by 32-bit ids; lists of
//! children are ranges into shared list pools. Identifiers are interned [`Sym`]s and literals are
//! spans into the preprocessed text, so a node is 24 bytes or less and the whole tree is a handful
//! of vectors that are dropped together when the translation unit has been lowered.

use std::marker::PhantomData;
use std::num::NonZeroU32;

use super::intern::Sym;
use super::token::Span;

/// A typed index into one of the arenas of [`Ast`]. `Option<Id<T>>` is 4 bytes.
pub struct Id<T>(NonZeroU32, PhantomData<fn() -> T>);

impl<T> Id<T> {
    fn from_index(i: usize) -> Self {
        Id(
            NonZeroU32::new(i as u32 + 1).expect("arena overflow"),
            PhantomData,
        )
    }
    pub fn index(self) -> usize {
        self.0.get() as usize - 1
    }
}
impl<T> Clone for Id<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Id<T> {}
impl<T> PartialEq for Id<T> {
    fn eq(&self, o: &Self) -> bool {
        self.0 == o.0
    }
}
impl<T> Eq for Id<T> {}
impl<T> std::fmt::Debug for Id<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}", self.index())
    }
}

/// A contiguous run of items in a list pool.
pub struct List<T> {
    start: u32,
    len: u32,
    _t: PhantomData<fn() -> T>,
}
impl<T> Clone for List<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for List<T> {}
impl<T> Default for List<T> {
    fn default() -> Self {
        List {
            start: 0,
            len: 0,
            _t: PhantomData,
        }
    }
}
impl<T> std::fmt::Debug for List<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}..+{}]", self.start, self.len)
    }
}
impl<T> List<T> {
    pub fn len(self) -> usize {
        self.len as usize
    }
    pub fn is_empty(self) -> bool {
        self.len == 0
    }
}

/// An arena of `T` plus a pool for lists of `T`.
pub struct Arena<T> {
    items: Vec<T>,
}
impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena { items: Vec::new() }
    }
}
impl<T> Arena<T> {
    pub fn alloc(&mut self, t: T) -> Id<T> {
        self.items.push(t);
        Id::from_index(self.items.len() - 1)
    }
    pub fn len(&self) -> usize {
        self.items.len()
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter()
    }
    pub fn bytes(&self) -> usize {
        self.items.capacity() * std::mem::size_of::<T>()
    }
    pub fn clear(&mut self) {
        self.items.clear();
    }
}
impl<T> std::ops::IndexMut<Id<T>> for Arena<T> {
    fn index_mut(&mut self, id: Id<T>) -> &mut T {
        &mut self.items[id.index()]
    }
}
impl<T> std::ops::Index<Id<T>> for Arena<T> {
    type Output = T;
    fn index(&self, id: Id<T>) -> &T {
        &self.items[id.index()]
    }
}

/// A pool of lists: each list is appended whole, once its items are known.
pub struct Pool<T> {
    items: Vec<T>,
}
impl<T> Default for Pool<T> {
    fn default() -> Self {
        Pool { items: Vec::new() }
    }
}
impl<T> Pool<T> {
    pub fn push_list(&mut self, items: impl IntoIterator<Item = T>) -> List<T> {
        let start = self.items.len() as u32;
        self.items.extend(items);
        List {
            start,
            len: self.items.len() as u32 - start,
            _t: PhantomData,
        }
    }
    pub fn get(&self, list: List<T>) -> &[T] {
        &self.items[list.start as usize..(list.start + list.len) as usize]
    }
    pub fn bytes(&self) -> usize {
        self.items.capacity() * std::mem::size_of::<T>()
    }
    pub fn clear(&mut self) {
        self.items.clear();
    }
}

pub type ExprId = Id<Expr>;
pub type StmtId = Id<Stmt>;
pub type DeclId = Id<Declaration>;
pub type FuncId = Id<FunctionDef>;
pub type TypeNameId = Id<TypeName>;
pub type InitId = Id<Initializer>;
pub type RecordId = Id<RecordSpec>;
pub type EnumId = Id<EnumSpec>;
pub type AsmId = Id<AsmStmt>;
pub type ForId = Id<ForStmt>;

// ---------------------------------------------------------------------------------------------
// Declarations

#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub enum Storage {
    #[default]
    None,
    Typedef,
    Extern,
    Static,
    Auto,
    Register,
}

/// Qualifiers and function specifiers, as bit flags.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct Quals(pub u16);
impl Quals {
    pub const CONST: u16 = 1;
    pub const VOLATILE: u16 = 2;
    pub const RESTRICT: u16 = 4;
    pub const ATOMIC: u16 = 8;
    pub const SEG_GS: u16 = 16;
    pub const SEG_FS: u16 = 32;
    pub const INLINE: u16 = 64;
    pub const NORETURN: u16 = 128;
    pub const THREAD_LOCAL: u16 = 256;
    pub const CONSTEXPR: u16 = 512;
    pub fn has(self, f: u16) -> bool {
        self.0 & f != 0
    }
}

/// Builtin type keywords seen in a specifier list (`unsigned long long int`), as counts packed
/// into flags. Resolving them to a type is the type checker's job.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct BaseType(pub u32);
impl BaseType {
    pub const VOID: u32 = 1;
    pub const CHAR: u32 = 1 << 1;
    pub const SHORT: u32 = 1 << 2;
    pub const INT: u32 = 1 << 3;
    pub const LONG: u32 = 1 << 4;
    pub const LONG_LONG: u32 = 1 << 5;
    pub const FLOAT: u32 = 1 << 6;
    pub const DOUBLE: u32 = 1 << 7;
    pub const SIGNED: u32 = 1 << 8;
    pub const UNSIGNED: u32 = 1 << 9;
    pub const BOOL: u32 = 1 << 10;
    pub const COMPLEX: u32 = 1 << 11;
    pub const IMAGINARY: u32 = 1 << 12;
    pub const INT128: u32 = 1 << 13;
    pub const FLOAT128: u32 = 1 << 14;
    pub const FLOAT80: u32 = 1 << 15;
    pub const FLOAT16: u32 = 1 << 16;
    pub const FLOAT32: u32 = 1 << 17;
    pub const FLOAT64: u32 = 1 << 18;
    pub const FLOAT32X: u32 = 1 << 19;
    pub const FLOAT64X: u32 = 1 << 20;
    pub const FLOAT128X: u32 = 1 << 21;
    pub const DECIMAL: u32 = 1 << 22;
    pub const BF16: u32 = 1 << 23;
    pub const IBM128: u32 = 1 << 24;
}

#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub enum TypeSpec {
    /// No type specifier: implicit `int` (K&R) or a missing type.
    #[default]
    None,
    Base(BaseType),
    Typedef(Sym),
    Record(RecordId),
    Enum(EnumId),
    TypeofExpr(ExprId),
    TypeofType(TypeNameId),
    /// `_Atomic(type-name)`.
    Atomic(TypeNameId),
    /// `__auto_type`.
    Auto,
}

#[derive(Copy, Clone, Debug, Default)]
pub struct DeclSpecs {
    pub storage: Storage,
    pub quals: Quals,
    pub ty: TypeSpec,
    /// `typeof_unqual`: qualifiers of the typeof operand are dropped.
    pub unqual: bool,
    pub align: Option<ExprId>,
    pub attrs: List<Attribute>,
    pub span: Span,
}

#[derive(Copy, Clone, Debug)]
pub struct Attribute {
    /// `packed`, `aligned`, `gnu::unused`'s `unused`, ...
    pub name: Sym,
    /// The parenthesised arguments, kept as text.
    pub args: Option<Span>,
    pub span: Span,
}

#[derive(Copy, Clone, Debug)]
pub enum Derived {
    Pointer(Quals),
    Array {
        size: Option<ExprId>,
        quals: Quals,
        is_static: bool,
        vla_star: bool,
    },
    Function {
        params: List<Param>,
        variadic: bool,
        kr_names: List<Sym>,
    },
}

#[derive(Copy, Clone, Debug, Default)]
pub struct Declarator {
    pub name: Option<Sym>,
    /// Offset of the name token (meaningful when `name` is set).
    pub name_at: u32,
    /// Type constructors from the name outwards: `int *a[3]` is `[Array, Pointer]`.
    pub derived: List<Derived>,
    pub attrs: List<Attribute>,
    /// `asm("symbol")` after the declarator.
    pub asm_label: Option<Span>,
    pub span: Span,
}

impl Declarator {
    /// The parameter list if this declarator declares a function (its first type constructor).
    pub fn function_params<'a>(&self, ast: &'a Ast) -> Option<&'a Derived> {
        ast.derived
            .get(self.derived)
            .first()
            .filter(|d| matches!(d, Derived::Function { .. }))
    }
}

#[derive(Copy, Clone, Debug)]
pub struct Param {
    pub specs: DeclSpecs,
    pub declarator: Declarator,
}

#[derive(Copy, Clone, Debug)]
pub struct InitDeclarator {
    pub declarator: Declarator,
    pub init: Option<InitId>,
}

#[derive(Copy, Clone, Debug)]
pub struct Declaration {
    pub specs: DeclSpecs,
    pub declarators: List<InitDeclarator>,
    pub span: Span,
}

#[derive(Copy, Clone, Debug)]
pub struct FunctionDef {
    pub specs: DeclSpecs,
    pub declarator: Declarator,
    /// K&R parameter declarations between the declarator and the body.
    pub kr_decls: List<DeclId>,
    pub body: StmtId,
    pub span: Span,
}

#[derive(Copy, Clone, Debug)]
pub struct TypeName {
    pub specs: DeclSpecs,
    pub declarator: Declarator,
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum RecordKind {
    Struct,
    Union,
}

#[derive(Copy, Clone, Debug)]
pub struct RecordSpec {
    pub kind: RecordKind,
    pub tag: Option<Sym>,
    /// `None` for a reference (`struct s *p`), `Some` for a definition.
    pub fields: Option<List<FieldDecl>>,
    pub attrs: List<Attribute>,
    pub span: Span,
}

#[derive(Copy, Clone, Debug)]
pub struct FieldDecl {
    pub specs: DeclSpecs,
    /// Empty for an anonymous struct/union member.
    pub declarators: List<FieldDeclarator>,
    pub span: Span,
}

#[derive(Copy, Clone, Debug)]
pub struct FieldDeclarator {
    pub declarator: Declarator,
    pub bit_width: Option<ExprId>,
}

#[derive(Copy, Clone, Debug)]
pub struct EnumSpec {
    pub tag: Option<Sym>,
    pub underlying: Option<TypeNameId>,
    pub enumerators: Option<List<Enumerator>>,
    pub attrs: List<Attribute>,
    pub span: Span,
}

#[derive(Copy, Clone, Debug)]
pub struct Enumerator {
    pub name: Sym,
    pub value: Option<ExprId>,
    pub span: Span,
}

#[derive(Copy, Clone, Debug)]
pub enum Initializer {
    Expr(ExprId),
    List(List<InitItem>, Span),
}

#[derive(Copy, Clone, Debug)]
pub struct InitItem {
    pub designators: List<Designator>,
    pub init: InitId,
}

#[derive(Copy, Clone, Debug)]
pub enum Designator {
    Field(Sym),
    Index(ExprId),
    /// GNU `[lo ... hi]`.
    Range(ExprId, ExprId),
}

#[derive(Copy, Clone, Debug)]
pub struct StaticAssert {
    pub cond: ExprId,
    pub message: Option<Span>,
    pub span: Span,
}

#[derive(Copy, Clone, Debug)]
pub enum ExternalDecl {
    Decl(DeclId),
    Function(FuncId),
    /// Top-level `asm("...")`.
    Asm(Span),
    StaticAssert(StaticAssert),
}

// ---------------------------------------------------------------------------------------------
// Statements

#[derive(Copy, Clone, Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Copy, Clone, Debug)]
pub enum StmtKind {
    Compound(List<StmtId>),
    /// `expr;` or the empty statement `;`.
    Expr(Option<ExprId>),
    Decl(DeclId),
    /// A GNU nested function.
    Function(FuncId),
    If(ExprId, StmtId, Option<StmtId>),
    Switch(ExprId, StmtId),
    While(ExprId, StmtId),
    DoWhile(StmtId, ExprId),
    For(ForId),
    Goto(Sym),
    /// `goto *expr;`
    GotoComputed(ExprId),
    Continue,
    Break,
    Return(Option<ExprId>),
    Labeled(Sym, StmtId),
    /// `case lo:` or GNU `case lo ... hi:`.
    Case(ExprId, Option<ExprId>, StmtId),
    Default(StmtId),
    Asm(AsmId),
    /// `__label__ a, b;`
    LocalLabels(List<Sym>),
    StaticAssert(Id<StaticAssert>),
}

#[derive(Copy, Clone, Debug)]
pub struct ForStmt {
    /// A declaration or an expression statement.
    pub init: Option<StmtId>,
    pub cond: Option<ExprId>,
    pub step: Option<ExprId>,
    pub body: StmtId,
}

#[derive(Copy, Clone, Debug)]
pub struct AsmStmt {
    pub volatile: bool,
    pub goto: bool,
    pub inline: bool,
    pub template: Span,
    pub outputs: List<AsmOperand>,
    pub inputs: List<AsmOperand>,
    pub clobbers: List<Span>,
    pub labels: List<Sym>,
}

#[derive(Copy, Clone, Debug)]
pub struct AsmOperand {
    pub name: Option<Sym>,
    pub constraint: Span,
    pub expr: ExprId,
}

// ---------------------------------------------------------------------------------------------
// Expressions

#[derive(Copy, Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum UnOp {
    Plus,
    Neg,
    BitNot,
    Not,
    Deref,
    AddrOf,
    PreInc,
    PreDec,
    PostInc,
    PostDec,
    Real,
    Imag,
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum BinOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
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
    LogAnd,
    LogOr,
    Comma,
}

#[derive(Copy, Clone, Debug)]
pub enum ExprKind {
    Ident(Sym),
    /// Integer or floating constant; the value is read from the span.
    Number,
    Char,
    /// One or more adjacent string literals; the span covers all of them.
    Str,
    Unary(UnOp, ExprId),
    Binary(BinOp, ExprId, ExprId),
    /// `a = b`, or `a op= b` when the operator is given.
    Assign(Option<BinOp>, ExprId, ExprId),
    /// `c ? a : b`; GNU `c ?: b` has no middle operand.
    Cond(ExprId, Option<ExprId>, ExprId),
    Call(ExprId, List<ExprId>),
    Member(ExprId, Sym),
    Arrow(ExprId, Sym),
    Index(ExprId, ExprId),
    Cast(TypeNameId, ExprId),
    CompoundLiteral(TypeNameId, InitId),
    SizeofExpr(ExprId),
    SizeofType(TypeNameId),
    AlignofExpr(ExprId),
    AlignofType(TypeNameId),
    /// GNU statement expression `({ ... })`; the statement is a compound.
    StmtExpr(StmtId),
    /// GNU `&&label`.
    LabelAddr(Sym),
    Generic(ExprId, List<GenericAssoc>),
    Offsetof(TypeNameId, List<Designator>),
    VaArg(ExprId, TypeNameId),
    TypesCompatible(TypeNameId, TypeNameId),
    /// `__builtin_convertvector(e, T)` and `__builtin_bit_cast(T, e)`.
    BuiltinCast(TypeNameId, ExprId),
}

#[derive(Copy, Clone, Debug)]
pub struct GenericAssoc {
    /// `None` for `default`.
    pub ty: Option<TypeNameId>,
    pub expr: ExprId,
}

// ---------------------------------------------------------------------------------------------

macro_rules! ast_storage {
    ($($field:ident: $ty:ty,)*) => {
        /// All nodes of one translation unit, or of one external declaration when the tree is
        /// streamed (see [`super::parser::Parser::next_item`]).
        #[derive(Default)]
        pub struct Ast {
            $(pub $field: $ty,)*
            pub items: Vec<ExternalDecl>,
        }

        impl Ast {
            /// Heap bytes held by the tree (capacity, not length), for memory reports.
            pub fn heap_bytes(&self) -> usize {
                0 $(+ self.$field.bytes())* + self.items.capacity() * std::mem::size_of::<ExternalDecl>()
            }

            /// Empties the tree, keeping its allocations for the next declaration.
            pub fn clear(&mut self) {
                $(self.$field.clear();)*
                self.items.clear();
            }
        }
    };
}

ast_storage! {
    exprs: Arena<Expr>,
    stmts: Arena<Stmt>,
    decls: Arena<Declaration>,
    functions: Arena<FunctionDef>,
    type_names: Arena<TypeName>,
    inits: Arena<Initializer>,
    records: Arena<RecordSpec>,
    enums: Arena<EnumSpec>,
    asms: Arena<AsmStmt>,
    fors: Arena<ForStmt>,
    static_asserts: Arena<StaticAssert>,
    expr_lists: Pool<ExprId>,
    stmt_lists: Pool<StmtId>,
    decl_lists: Pool<DeclId>,
    syms: Pool<Sym>,
    spans: Pool<Span>,
    attrs: Pool<Attribute>,
    derived: Pool<Derived>,
    params: Pool<Param>,
    init_declarators: Pool<InitDeclarator>,
    fields: Pool<FieldDecl>,
    field_declarators: Pool<FieldDeclarator>,
    enumerators: Pool<Enumerator>,
    init_items: Pool<InitItem>,
    designators: Pool<Designator>,
    generic_assocs: Pool<GenericAssoc>,
    asm_operands: Pool<AsmOperand>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_stay_small() {
        assert!(std::mem::size_of::<Expr>() <= 24);
        assert!(std::mem::size_of::<Stmt>() <= 24);
        assert_eq!(std::mem::size_of::<Option<ExprId>>(), 4);
    }
}
