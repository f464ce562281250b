//! A hand-written lexer for preprocessed GNU C.
//!
//! It works on bytes and produces tokens on demand, so a translation unit is never held as a
//! token vector. Preprocessor lines left in the output (`# 12 "file.h" 3`, `#pragma`, `#ident`)
//! are skipped here; the line markers are read separately by [`super::linemap::LineMap`].

use super::intern::{Interner, Sym};
use super::token::{Span, Token, TokenKind, P};

pub struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
    /// True when only whitespace has been seen since the last newline: a `#` here starts a
    /// directive line.
    at_line_start: bool,
}

impl<'a> Lexer<'a> {
    pub fn new(src: &'a str) -> Self {
        Lexer {
            src: src.as_bytes(),
            pos: 0,
            at_line_start: true,
        }
    }

    pub fn next_token(&mut self, interner: &mut Interner) -> Token {
        self.skip_trivia();
        let start = self.pos;
        let Some(&c) = self.src.get(self.pos) else {
            return self.token(TokenKind::Eof, start);
        };
        self.at_line_start = false;
        let kind = match c {
            b'L' | b'U' if matches!(self.peek(1), b'\'' | b'"') => {
                self.pos += 1;
                self.quoted()
            }
            b'u' if matches!(self.peek(1), b'\'' | b'"') => {
                self.pos += 1;
                self.quoted()
            }
            b'u' if self.peek(1) == b'8' && matches!(self.peek(2), b'\'' | b'"') => {
                self.pos += 2;
                self.quoted()
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' | b'$' | 0x80..=0xff => {
                return self.ident(interner, start);
            }
            b'0'..=b'9' => self.number(),
            b'.' if self.peek(1).is_ascii_digit() => self.number(),
            b'\'' | b'"' => self.quoted(),
            _ => self.punct(),
        };
        self.token(kind, start)
    }

    fn token(&self, kind: TokenKind, start: usize) -> Token {
        Token {
            kind,
            sym: Sym(u32::MAX),
            span: Span::new(start as u32, self.pos as u32),
        }
    }

    fn peek(&self, n: usize) -> u8 {
        self.src.get(self.pos + n).copied().unwrap_or(0)
    }

    fn skip_trivia(&mut self) {
        while let Some(&c) = self.src.get(self.pos) {
            match c {
                b'\n' => {
                    self.pos += 1;
                    self.at_line_start = true;
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => self.pos += 1,
                b'\\' if matches!(self.peek(1), b'\n' | b'\r') => self.pos += 2,
                b'#' if self.at_line_start => self.skip_line(),
                b'/' if self.peek(1) == b'/' => self.skip_line(),
                b'/' if self.peek(1) == b'*' => {
                    let body = &self.src[self.pos + 2..];
                    self.pos = match memchr::memmem::find(body, b"*/") {
                        Some(i) => self.pos + 2 + i + 2,
                        None => self.src.len(),
                    };
                }
                _ => return,
            }
        }
    }

    fn skip_line(&mut self) {
        self.pos = match memchr::memchr(b'\n', &self.src[self.pos..]) {
            Some(i) => self.pos + i,
            None => self.src.len(),
        };
    }

    fn ident(&mut self, interner: &mut Interner, start: usize) -> Token {
        while let Some(&c) = self.src.get(self.pos) {
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80 {
                self.pos += 1;
            } else {
                break;
            }
        }
        // Identifier bytes may be any UTF-8; a lossy conversion keeps invalid input harmless.
        let text = String::from_utf8_lossy(&self.src[start..self.pos]);
        let sym = interner.intern(&text);
        let kind = match Interner::keyword(sym) {
            Some(kw) => TokenKind::Kw(kw),
            None => TokenKind::Ident,
        };
        Token {
            kind,
            sym,
            span: Span::new(start as u32, self.pos as u32),
        }
    }

    /// A preprocessing number: digits, letters, `.`, `'` separators and signed exponents.
    fn number(&mut self) -> TokenKind {
        self.pos += 1;
        while let Some(&c) = self.src.get(self.pos) {
            let prev = self.src[self.pos - 1];
            let continues = c.is_ascii_alphanumeric()
                || c == b'.'
                || c == b'_'
                || (matches!(c, b'+' | b'-') && matches!(prev, b'e' | b'E' | b'p' | b'P'))
                || (c == b'\'' && self.peek(1).is_ascii_alphanumeric());
            if !continues {
                break;
            }
            self.pos += 1;
        }
        TokenKind::Number
    }

    /// A character or string literal; `self.pos` is at the opening quote. An unterminated
    /// literal ends at the end of its line.
    fn quoted(&mut self) -> TokenKind {
        let quote = self.src[self.pos];
        self.pos += 1;
        while let Some(&c) = self.src.get(self.pos) {
            match c {
                b'\\' => self.pos += 2,
                b'\n' => break,
                _ if c == quote => {
                    self.pos += 1;
                    break;
                }
                _ => self.pos += 1,
            }
        }
        self.pos = self.pos.min(self.src.len());
        if quote == b'"' {
            TokenKind::Str
        } else {
            TokenKind::Char
        }
    }

    fn punct(&mut self) -> TokenKind {
        let (c0, c1, c2) = (self.peek(0), self.peek(1), self.peek(2));
        let (p, len) = match (c0, c1, c2) {
            (b'.', b'.', b'.') => (P::Ellipsis, 3),
            (b'<', b'<', b'=') => (P::ShlEq, 3),
            (b'>', b'>', b'=') => (P::ShrEq, 3),
            (b'-', b'>', _) => (P::Arrow, 2),
            (b'+', b'+', _) => (P::PlusPlus, 2),
            (b'-', b'-', _) => (P::MinusMinus, 2),
            (b'<', b'<', _) => (P::Shl, 2),
            (b'>', b'>', _) => (P::Shr, 2),
            (b'<', b'=', _) => (P::Le, 2),
            (b'>', b'=', _) => (P::Ge, 2),
            (b'=', b'=', _) => (P::EqEq, 2),
            (b'!', b'=', _) => (P::Ne, 2),
            (b'&', b'&', _) => (P::AmpAmp, 2),
            (b'|', b'|', _) => (P::PipePipe, 2),
            (b'*', b'=', _) => (P::StarEq, 2),
            (b'/', b'=', _) => (P::SlashEq, 2),
            (b'%', b'=', _) => (P::PercentEq, 2),
            (b'+', b'=', _) => (P::PlusEq, 2),
            (b'-', b'=', _) => (P::MinusEq, 2),
            (b'&', b'=', _) => (P::AmpEq, 2),
            (b'^', b'=', _) => (P::CaretEq, 2),
            (b'|', b'=', _) => (P::PipeEq, 2),
            (b'#', b'#', _) => (P::HashHash, 2),
            // Digraphs.
            (b'<', b':', _) => (P::LBracket, 2),
            (b':', b'>', _) => (P::RBracket, 2),
            (b'<', b'%', _) => (P::LBrace, 2),
            (b'%', b'>', _) => (P::RBrace, 2),
            (b'(', ..) => (P::LParen, 1),
            (b')', ..) => (P::RParen, 1),
            (b'[', ..) => (P::LBracket, 1),
            (b']', ..) => (P::RBracket, 1),
            (b'{', ..) => (P::LBrace, 1),
            (b'}', ..) => (P::RBrace, 1),
            (b'.', ..) => (P::Dot, 1),
            (b',', ..) => (P::Comma, 1),
            (b';', ..) => (P::Semi, 1),
            (b':', ..) => (P::Colon, 1),
            (b'?', ..) => (P::Question, 1),
            (b'&', ..) => (P::Amp, 1),
            (b'*', ..) => (P::Star, 1),
            (b'+', ..) => (P::Plus, 1),
            (b'-', ..) => (P::Minus, 1),
            (b'~', ..) => (P::Tilde, 1),
            (b'!', ..) => (P::Bang, 1),
            (b'/', ..) => (P::Slash, 1),
            (b'%', ..) => (P::Percent, 1),
            (b'<', ..) => (P::Lt, 1),
            (b'>', ..) => (P::Gt, 1),
            (b'^', ..) => (P::Caret, 1),
            (b'|', ..) => (P::Pipe, 1),
            (b'=', ..) => (P::Assign, 1),
            (b'#', ..) => (P::Hash, 1),
            _ => {
                // Skip a whole UTF-8 sequence or one stray byte.
                self.pos += 1;
                return TokenKind::Unknown;
            }
        };
        self.pos += len;
        TokenKind::Punct(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::token::Kw;

    fn kinds(src: &str) -> Vec<TokenKind> {
        let mut i = Interner::with_keywords();
        let mut lx = Lexer::new(src);
        let mut out = vec![];
        loop {
            let t = lx.next_token(&mut i);
            if t.kind == TokenKind::Eof {
                return out;
            }
            out.push(t.kind);
        }
    }

    #[test]
    fn skips_directives_and_comments() {
        let k = kinds("# 1 \"a.c\"\n  #pragma GCC x\nint /* c */ x; // y\n");
        assert_eq!(
            k,
            vec![
                TokenKind::Kw(Kw::Int),
                TokenKind::Ident,
                TokenKind::Punct(P::Semi)
            ]
        );
    }

    #[test]
    fn literals_and_punctuators() {
        use TokenKind::*;
        let k = kinds("0x1.8p-3f 1e+5 L'a' u8\"s\" \"a\\\"b\" ... >>= -> a?:b");
        assert_eq!(
            k,
            vec![
                Number,
                Number,
                Char,
                Str,
                Str,
                Punct(P::Ellipsis),
                Punct(P::ShrEq),
                Punct(P::Arrow),
                Ident,
                Punct(P::Question),
                Punct(P::Colon),
                Ident
            ]
        );
    }

    #[test]
    fn hash_mid_line_is_a_token() {
        assert_eq!(kinds("a # b").len(), 3);
    }

    #[test]
    fn unterminated_literals_do_not_run_away() {
        assert_eq!(kinds("'a\nx \"b").len(), 3);
        assert_eq!(kinds("\"\\").len(), 1);
    }
}
