//! Tokens of preprocessed GNU C.

use super::intern::Sym;

/// A half-open byte range `[lo, hi)` in the preprocessed text of one translation unit.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default, serde::Serialize)]
pub struct Span {
    pub lo: u32,
    pub hi: u32,
}

impl Span {
    pub fn new(lo: u32, hi: u32) -> Span {
        Span { lo, hi }
    }
    pub fn to(self, other: Span) -> Span {
        Span {
            lo: self.lo,
            hi: other.hi.max(self.hi),
        }
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum TokenKind {
    Ident,
    Kw(Kw),
    Number,
    Char,
    Str,
    Punct(P),
    Eof,
    /// A byte that starts no C token (e.g. `@`, a stray backslash); the parser reports it.
    Unknown,
}

#[derive(Copy, Clone, Debug)]
pub struct Token {
    pub kind: TokenKind,
    /// The interned spelling, for identifiers and keywords.
    pub sym: Sym,
    pub span: Span,
}

macro_rules! punctuators {
    ($($name:ident = $s:literal,)*) => {
        #[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
        pub enum P { $($name,)* }
        impl P {
            pub fn as_str(self) -> &'static str {
                match self { $(P::$name => $s,)* }
            }
        }
    };
}

punctuators! {
    LParen = "(", RParen = ")", LBracket = "[", RBracket = "]", LBrace = "{", RBrace = "}",
    Dot = ".", Arrow = "->", Ellipsis = "...", Comma = ",", Semi = ";", Colon = ":", Question = "?",
    PlusPlus = "++", MinusMinus = "--", Amp = "&", Star = "*", Plus = "+", Minus = "-", Tilde = "~",
    Bang = "!", Slash = "/", Percent = "%", Shl = "<<", Shr = ">>", Lt = "<", Gt = ">", Le = "<=",
    Ge = ">=", EqEq = "==", Ne = "!=", Caret = "^", Pipe = "|", AmpAmp = "&&", PipePipe = "||",
    Assign = "=", StarEq = "*=", SlashEq = "/=", PercentEq = "%=", PlusEq = "+=", MinusEq = "-=",
    ShlEq = "<<=", ShrEq = ">>=", AmpEq = "&=", CaretEq = "^=", PipeEq = "|=", Hash = "#",
    HashHash = "##",
}

macro_rules! keywords {
    ($($kw:ident: $($s:literal)|+;)*) => {
        /// Keywords of GNU C, with their alternate GNU spellings folded together.
        #[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
        pub enum Kw { $($kw,)* }
        impl Kw {
            /// Every keyword spelling, in interning order.
            pub const SPELLINGS: &'static [(&'static str, Kw)] = &[$($(($s, Kw::$kw),)+)*];
        }
    };
}

keywords! {
    Auto: "auto"; Break: "break"; Case: "case"; Char: "char"; Const: "const" | "__const" | "__const__";
    Continue: "continue"; Default: "default"; Do: "do"; Double: "double"; Else: "else"; Enum: "enum";
    Extern: "extern"; Float: "float"; For: "for"; Goto: "goto"; If: "if";
    Inline: "inline" | "__inline" | "__inline__"; Int: "int"; Long: "long"; Register: "register";
    Restrict: "restrict" | "__restrict" | "__restrict__"; Return: "return"; Short: "short";
    Signed: "signed" | "__signed" | "__signed__"; Sizeof: "sizeof"; Static: "static"; Struct: "struct";
    Switch: "switch"; Typedef: "typedef"; Union: "union"; Unsigned: "unsigned"; Void: "void";
    Volatile: "volatile" | "__volatile" | "__volatile__"; While: "while";
    Alignas: "_Alignas" | "alignas"; Alignof: "_Alignof" | "__alignof" | "__alignof__" | "alignof";
    Atomic: "_Atomic"; Bool: "_Bool"; Complex: "_Complex" | "__complex__" | "__complex";
    Imaginary: "_Imaginary"; Generic: "_Generic"; Noreturn: "_Noreturn";
    StaticAssert: "_Static_assert" | "static_assert"; ThreadLocal: "_Thread_local" | "__thread" | "thread_local";
    Asm: "asm" | "__asm" | "__asm__"; Attribute: "__attribute__" | "__attribute";
    Extension: "__extension__"; Typeof: "typeof" | "__typeof" | "__typeof__";
    TypeofUnqual: "typeof_unqual" | "__typeof_unqual__" | "__typeof_unqual";
    AutoType: "__auto_type"; Int128: "__int128" | "__int128__"; Label: "__label__";
    Real: "__real__" | "__real"; Imag: "__imag__" | "__imag";
    Float128: "__float128" | "_Float128"; Float80: "__float80"; Ibm128: "__ibm128";
    Float16: "_Float16" | "__fp16"; Bf16: "__bf16"; Float32: "_Float32"; Float64: "_Float64";
    Float32x: "_Float32x"; Float64x: "_Float64x"; Float128x: "_Float128x";
    Decimal32: "_Decimal32"; Decimal64: "_Decimal64"; Decimal128: "_Decimal128";
    SegGs: "__seg_gs"; SegFs: "__seg_fs";
    BuiltinOffsetof: "__builtin_offsetof"; BuiltinVaArg: "__builtin_va_arg";
    BuiltinTypesCompatibleP: "__builtin_types_compatible_p";
    BuiltinConvertVector: "__builtin_convertvector"; BuiltinBitCast: "__builtin_bit_cast";
    Constexpr: "constexpr";
}

impl Kw {
    pub fn as_str(self) -> &'static str {
        Kw::SPELLINGS
            .iter()
            .find(|(_, k)| *k == self)
            .map(|(s, _)| *s)
            .unwrap_or("?")
    }
}

impl TokenKind {
    pub fn describe(self) -> String {
        match self {
            TokenKind::Ident => "identifier".into(),
            TokenKind::Kw(k) => format!("`{}`", k.as_str()),
            TokenKind::Number => "number".into(),
            TokenKind::Char => "character literal".into(),
            TokenKind::Str => "string literal".into(),
            TokenKind::Punct(p) => format!("`{}`", p.as_str()),
            TokenKind::Eof => "end of file".into(),
            TokenKind::Unknown => "stray character".into(),
        }
    }
}
