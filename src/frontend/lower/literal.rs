//! Values of literals, read from their spelling: integer and floating constants, character
//! constants and (concatenated) string literals.

use crate::ir::types::{FloatKind, IntKind, TypeKind};

/// An integer constant's value and type (C11 6.4.4.1, simplified: the first of int, long,
/// long long that the suffix allows and the value fits; unsigned when suffixed or when a hex/octal
/// value only fits unsigned).
pub fn int_literal(s: &str) -> Option<(i128, TypeKind)> {
    let lower = s.to_ascii_lowercase().replace('\'', "");
    // GNU imaginary constants (`3i`): relay keeps the magnitude.
    let lower = lower.replace(['i', 'j'], "");
    let digits_end = lower.trim_end_matches(['u', 'l', 'z']).len();
    let (digits, suffix) = lower.split_at(digits_end);
    let (radix, body) = if let Some(h) = digits.strip_prefix("0x") {
        (16, h)
    } else if let Some(b) = digits.strip_prefix("0b") {
        (2, b)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    let value = u128::from_str_radix(body, radix).ok()?;
    let unsigned = suffix.contains('u');
    let longs = suffix.matches('l').count();
    let fits = |bits: u32, signed: bool| value < (1u128 << if signed { bits - 1 } else { bits });
    let candidates: &[(IntKind, u32)] = match longs {
        0 => &[
            (IntKind::Int, 32),
            (IntKind::Long, 64),
            (IntKind::Int128, 128),
        ],
        1 => &[(IntKind::Long, 64), (IntKind::Int128, 128)],
        _ => &[(IntKind::LongLong, 64), (IntKind::Int128, 128)],
    };
    for &(kind, bits) in candidates {
        if !unsigned && fits(bits, true) {
            return Some((value as i128, TypeKind::Int { kind, signed: true }));
        }
        if (unsigned || radix != 10) && fits(bits, false) {
            return Some((
                value as i128,
                TypeKind::Int {
                    kind,
                    signed: false,
                },
            ));
        }
    }
    Some((
        value as i128,
        TypeKind::Int {
            kind: IntKind::Int128,
            signed: false,
        },
    ))
}

/// A floating constant (decimal or hexadecimal) and its type from the suffix.
pub fn float_literal(s: &str) -> Option<(f64, TypeKind)> {
    let lower = s.to_ascii_lowercase().replace('\'', "");
    // `i`/`j` occur in a number only as the GNU imaginary suffix, before or after the others.
    let imaginary = lower.contains(['i', 'j']);
    let lower = lower.replace(['i', 'j'], "");
    let is_hex = lower.starts_with("0x");
    let (body, kind) = if let Some(b) = lower
        .strip_suffix("f64x")
        .or_else(|| lower.strip_suffix("f128x"))
    {
        (b, FloatKind::LongDouble)
    } else if let Some(b) = lower.strip_suffix("f32x") {
        (b, FloatKind::Double)
    } else if let Some(b) = lower
        .strip_suffix("f128")
        .or_else(|| lower.strip_suffix("q"))
    {
        (b, FloatKind::Float128)
    } else if let Some(b) = lower.strip_suffix("f16") {
        (b, FloatKind::Half)
    } else if let Some(b) = lower
        .strip_suffix("f32")
        .or_else(|| lower.strip_suffix("f64"))
    {
        (b, FloatKind::Double)
    } else if lower.ends_with('f') && (!is_hex || lower.contains('p')) {
        (&lower[..lower.len() - 1], FloatKind::Float)
    } else if let Some(b) = lower.strip_suffix('l').or_else(|| lower.strip_suffix('w')) {
        (b, FloatKind::LongDouble)
    } else if let Some(b) = lower
        .strip_suffix("dd")
        .or_else(|| lower.strip_suffix("df"))
        .or_else(|| lower.strip_suffix("dl"))
    {
        (b, FloatKind::Decimal)
    } else {
        (lower.as_str(), FloatKind::Double)
    };
    let v = if let Some(h) = body.strip_prefix("0x") {
        hex_float(h)?
    } else {
        body.parse::<f64>().ok()?
    };
    Some((
        v,
        if imaginary {
            TypeKind::Complex(kind)
        } else {
            TypeKind::Float(kind)
        },
    ))
}

fn hex_float(h: &str) -> Option<f64> {
    let (mantissa, exp) = h.split_once('p').unwrap_or((h, "0"));
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut v = 0f64;
    for c in int.chars() {
        v = v * 16.0 + c.to_digit(16)? as f64;
    }
    let mut scale = 1.0 / 16.0;
    for c in frac.chars() {
        v += c.to_digit(16)? as f64 * scale;
        scale /= 16.0;
    }
    Some(v * 2f64.powi(exp.parse::<i32>().ok()?))
}

/// Whether a number token is a floating constant.
pub fn is_float(s: &str) -> bool {
    let hex = s.len() > 1 && (s.starts_with("0x") || s.starts_with("0X"));
    if hex {
        s.contains(['p', 'P'])
    } else {
        s.contains(['.', 'e', 'E']) || s.ends_with(['f', 'F']) && !s.starts_with("0b")
    }
}

/// Decodes the escape sequences of a quoted literal body into code units.
fn decode(body: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c as u32);
            continue;
        }
        let Some(e) = chars.next() else { break };
        let v = match e {
            'n' => 10,
            't' => 9,
            'r' => 13,
            'a' => 7,
            'b' => 8,
            'f' => 12,
            'v' => 11,
            'e' | 'E' => 27,
            'x' => {
                let mut v = 0u32;
                while let Some(d) = chars.peek().and_then(|c| c.to_digit(16)) {
                    v = v.wrapping_mul(16).wrapping_add(d);
                    chars.next();
                }
                v
            }
            'u' | 'U' => {
                let n = if e == 'u' { 4 } else { 8 };
                let mut v = 0u32;
                for _ in 0..n {
                    match chars.peek().and_then(|c| c.to_digit(16)) {
                        Some(d) => {
                            v = v.wrapping_mul(16).wrapping_add(d);
                            chars.next();
                        }
                        None => break,
                    }
                }
                v
            }
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                v
            }
            other => other as u32,
        };
        out.push(v);
    }
    out
}

/// Strips an encoding prefix and the quotes: `L"ab"` → `ab`.
fn unquote(s: &str, quote: char) -> &str {
    let start = s.find(quote).map_or(s.len(), |i| i + 1);
    let body = &s[start.min(s.len())..];
    body.strip_suffix(quote).unwrap_or(body)
}

/// A character constant's value (multi-character constants combine as GCC does).
pub fn char_literal(s: &str) -> i128 {
    let units = decode(unquote(s, '\''));
    let wide = !s.starts_with('\'');
    match units.as_slice() {
        [] => 0,
        [c] if wide => *c as i128,
        [c] => *c as u8 as i8 as i128,
        many => many
            .iter()
            .fold(0i128, |acc, &c| (acc << 8) | (c as i128 & 0xff)),
    }
}

/// The contents of adjacent string literal tokens in `text`, concatenated.
pub fn string_literals(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('"') {
        let after = &rest[open + 1..];
        let mut end = 0;
        let bytes = after.as_bytes();
        while end < bytes.len() && bytes[end] != b'"' {
            end += if bytes[end] == b'\\' { 2 } else { 1 };
        }
        let end = end.min(after.len());
        for u in decode(after.get(..end).unwrap_or(after)) {
            out.push(char::from_u32(u).unwrap_or('\u{fffd}'));
        }
        rest = after.get(end + 1..).unwrap_or("");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        assert_eq!(int_literal("42").unwrap().0, 42);
        assert_eq!(int_literal("0x1F").unwrap().0, 31);
        assert_eq!(int_literal("017").unwrap().0, 15);
        assert_eq!(int_literal("0b101").unwrap().0, 5);
        assert!(matches!(
            int_literal("1ULL").unwrap().1,
            TypeKind::Int {
                kind: IntKind::LongLong,
                signed: false
            }
        ));
        assert!(matches!(
            int_literal("0xffffffff").unwrap().1,
            TypeKind::Int {
                kind: IntKind::Int,
                signed: false
            }
        ));
        assert!(matches!(
            int_literal("4294967296").unwrap().1,
            TypeKind::Int {
                kind: IntKind::Long,
                signed: true
            }
        ));
        assert_eq!(int_literal("1'000").unwrap().0, 1000);
    }

    #[test]
    fn imaginary_and_extended_suffixes() {
        assert_eq!(int_literal("3i").unwrap().0, 3);
        assert!(matches!(
            float_literal("1.0fi").unwrap().1,
            TypeKind::Complex(FloatKind::Float)
        ));
        assert!(matches!(
            float_literal("1.5if").unwrap().1,
            TypeKind::Complex(FloatKind::Float)
        ));
        assert!(matches!(
            float_literal("2.0Li").unwrap().1,
            TypeKind::Complex(FloatKind::LongDouble)
        ));
        assert!(matches!(
            float_literal("1.0f32x").unwrap().1,
            TypeKind::Float(FloatKind::Double)
        ));
        assert!(matches!(
            float_literal("3.0f64x").unwrap().1,
            TypeKind::Float(FloatKind::LongDouble)
        ));
    }

    #[test]
    fn floats() {
        assert_eq!(float_literal("1.5").unwrap().0, 1.5);
        assert_eq!(float_literal("0x1.8p1").unwrap().0, 3.0);
        assert!(matches!(
            float_literal("2.0f").unwrap().1,
            TypeKind::Float(FloatKind::Float)
        ));
        assert!(is_float("1e5") && is_float("0x1p3") && !is_float("0xff") && !is_float("10"));
    }

    #[test]
    fn chars_and_strings() {
        assert_eq!(char_literal("'a'"), 97);
        assert_eq!(char_literal("'\\n'"), 10);
        assert_eq!(char_literal("'\\x41'"), 65);
        assert_eq!(char_literal("'\\377'"), -1);
        assert_eq!(char_literal("L'\\x100'"), 256);
        assert_eq!(string_literals("\"ab\" \"c\\td\""), "abc\td");
        assert_eq!(string_literals("u8\"x\" L\"\\\"y\""), "x\"y");
    }
}
