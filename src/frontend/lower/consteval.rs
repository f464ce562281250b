//! Integer constant expressions (array sizes, enumerators, case labels, bit-field widths),
//! evaluated on the syntax tree.

use super::literal;
use super::scope::Binding;
use super::Lower;
use crate::frontend::ast::{BinOp, ExprId, ExprKind, UnOp};
use crate::ir::types::{IntKind, TypeKind};
use crate::ir::TypeId;

impl Lower<'_, '_> {
    /// The value of a branch's condition if it is an integer constant expression whose value
    /// does not rest on a `__builtin_constant_p` of a non-constant (which GCC may evaluate to 1
    /// after inlining: both arms can run). The compiler removes the other arm, so no analysis
    /// should see it: `if (IS_ENABLED(CONFIG_X))`, `do { } while (0 && (c))`, `switch (sizeof(x))`.
    pub fn branch_constant(&mut self, e: ExprId) -> Option<i128> {
        let before = std::mem::take(&mut self.guessed_constant_p);
        let v = self.const_eval(e);
        let guessed = std::mem::replace(&mut self.guessed_constant_p, before);
        v.filter(|_| !guessed)
    }

    /// The value of an integer constant expression, or `None` if it is not one we can fold.
    pub fn const_eval(&mut self, e: ExprId) -> Option<i128> {
        let expr = self.ast.exprs[e];
        match expr.kind {
            ExprKind::Number => {
                let s = self.span_text(expr.span);
                if literal::is_float(s) {
                    literal::float_literal(s).map(|(v, _)| v as i128)
                } else {
                    literal::int_literal(s).map(|(v, _)| v)
                }
            }
            ExprKind::Char => Some(literal::char_literal(self.span_text(expr.span))),
            ExprKind::Ident(s) => match self.st.scopes.lookup(s) {
                Some(Binding::EnumConst { value, .. }) => Some(value),
                _ => None,
            },
            ExprKind::Unary(op, a) => {
                let a = self.const_eval(a)?;
                match op {
                    UnOp::Plus => Some(a),
                    UnOp::Neg => Some(a.wrapping_neg()),
                    UnOp::BitNot => Some(!a),
                    UnOp::Not => Some((a == 0) as i128),
                    _ => None,
                }
            }
            ExprKind::Binary(op, a, b) => self.const_binary(op, a, b),
            ExprKind::Cond(c, t, f) => {
                let c = self.const_eval(c)?;
                match (c != 0, t) {
                    (true, Some(t)) => self.const_eval(t),
                    (true, None) => Some(c),
                    (false, _) => self.const_eval(f),
                }
            }
            ExprKind::Cast(tn, a) => {
                let v = self.const_eval(a)?;
                let t = self.type_name(tn);
                Some(self.truncate(v, t))
            }
            ExprKind::SizeofType(tn) => {
                let t = self.type_name(tn);
                self.size_of(t).map(|s| s as i128)
            }
            ExprKind::SizeofExpr(a) => {
                let t = self.type_of_expr(a);
                self.size_of(t).map(|s| s as i128)
            }
            ExprKind::TypesCompatible(a, b) => {
                let (a, b) = (self.type_name(a), self.type_name(b));
                let (a, b) = (self.types().unqualified(a), self.types().unqualified(b));
                Some((a == b) as i128)
            }
            ExprKind::Call(callee, args) => self.const_builtin(callee, args),
            ExprKind::Offsetof(tn, path) => self.offset_of(tn, path),
            ExprKind::Generic(..) => {
                let chosen = self.generic_choice(e)?;
                self.const_eval(chosen)
            }
            _ => None,
        }
    }

    fn const_binary(&mut self, op: BinOp, a: ExprId, b: ExprId) -> Option<i128> {
        let x = self.const_eval(a)?;
        // Short-circuit operators need only the left side when it decides.
        match (op, x != 0) {
            (BinOp::LogAnd, false) => return Some(0),
            (BinOp::LogOr, true) => return Some(1),
            _ => {}
        }
        let y = self.const_eval(b)?;
        Some(match op {
            BinOp::Mul => x.wrapping_mul(y),
            BinOp::Div => x.checked_div(y)?,
            BinOp::Rem => x.checked_rem(y)?,
            BinOp::Add => x.wrapping_add(y),
            BinOp::Sub => x.wrapping_sub(y),
            BinOp::Shl => x.checked_shl(u32::try_from(y).ok()?)?,
            BinOp::Shr => x.checked_shr(u32::try_from(y).ok()?)?,
            BinOp::Lt => (x < y) as i128,
            BinOp::Gt => (x > y) as i128,
            BinOp::Le => (x <= y) as i128,
            BinOp::Ge => (x >= y) as i128,
            BinOp::Eq => (x == y) as i128,
            BinOp::Ne => (x != y) as i128,
            BinOp::BitAnd => x & y,
            BinOp::BitXor => x ^ y,
            BinOp::BitOr => x | y,
            BinOp::LogAnd | BinOp::LogOr => (y != 0) as i128,
            BinOp::Comma => y,
        })
    }

    /// `offsetof(T, a.b[2])` from the x86-64 layout.
    pub fn offset_of(
        &mut self,
        tn: crate::frontend::ast::TypeNameId,
        path: crate::frontend::ast::List<crate::frontend::ast::Designator>,
    ) -> Option<i128> {
        use crate::frontend::ast::Designator;
        let mut t = self.type_name(tn);
        let mut offset = 0u64;
        for d in self.ast.designators.get(path).to_vec() {
            match d {
                Designator::Field(s) => {
                    let name = self.name(s);
                    let rid = self.st.unit.types.as_record(t)?;
                    for (record, i) in self.st.unit.types.find_field(rid, name)? {
                        offset += record_layout(&self.st.unit.types, record)?.2[i];
                        t = self.st.unit.types.record(record).fields[i].ty;
                    }
                }
                Designator::Index(e) | Designator::Range(e, _) => {
                    let i = u64::try_from(self.const_eval(e)?).ok()?;
                    let TypeKind::Array { elem, .. } = *self.st.unit.types.kind(t) else {
                        return None;
                    };
                    offset += layout(&self.st.unit.types, elem)?.0 * i;
                    t = elem;
                }
            }
        }
        Some(offset as i128)
    }

    /// `__builtin_constant_p`, `__builtin_expect` and `__builtin_choose_expr` fold.
    fn const_builtin(
        &mut self,
        callee: ExprId,
        args: crate::frontend::ast::List<ExprId>,
    ) -> Option<i128> {
        let ExprKind::Ident(s) = self.ast.exprs[callee].kind else {
            return None;
        };
        let args = self.ast.expr_lists.get(args).to_vec();
        match (self.interner.get(s), args.as_slice()) {
            ("__builtin_constant_p", [a]) => {
                let constant = self.const_eval(*a).is_some();
                self.guessed_constant_p |= !constant;
                Some(constant as i128)
            }
            ("__builtin_expect", [a, _]) => self.const_eval(*a),
            ("__builtin_ffs" | "__builtin_ffsl" | "__builtin_ffsll", [a]) => {
                let v = self.const_eval(*a)? as u64;
                Some(if v == 0 {
                    0
                } else {
                    v.trailing_zeros() as i128 + 1
                })
            }
            ("__builtin_ctz" | "__builtin_ctzl" | "__builtin_ctzll", [a]) => {
                let v = self.const_eval(*a)? as u64;
                (v != 0).then(|| v.trailing_zeros() as i128)
            }
            ("__builtin_clzll" | "__builtin_clzl", [a]) => {
                let v = self.const_eval(*a)? as u64;
                (v != 0).then(|| v.leading_zeros() as i128)
            }
            ("__builtin_clz", [a]) => {
                let v = self.const_eval(*a)? as u32;
                (v != 0).then(|| v.leading_zeros() as i128)
            }
            ("__builtin_bswap16", [a]) => Some((self.const_eval(*a)? as u16).swap_bytes() as i128),
            ("__builtin_bswap32", [a]) => Some((self.const_eval(*a)? as u32).swap_bytes() as i128),
            ("__builtin_bswap64", [a]) => Some((self.const_eval(*a)? as u64).swap_bytes() as i128),
            ("__builtin_popcount" | "__builtin_popcountl" | "__builtin_popcountll", [a]) => {
                Some((self.const_eval(*a)? as u64).count_ones() as i128)
            }
            ("__builtin_choose_expr", [c, t, f]) => {
                if self.const_eval(*c)? != 0 {
                    self.const_eval(*t)
                } else {
                    self.const_eval(*f)
                }
            }
            _ => None,
        }
    }

    /// Wraps a value to the width and signedness of an integer type.
    fn truncate(&self, v: i128, t: TypeId) -> i128 {
        match self.st.unit.types.kind(t) {
            TypeKind::Bool => (v != 0) as i128,
            TypeKind::Int { kind, signed } => {
                let bits = int_bits(*kind);
                if bits >= 128 {
                    return v;
                }
                let m = v & ((1i128 << bits) - 1);
                if *signed && m >> (bits - 1) & 1 == 1 {
                    m - (1i128 << bits)
                } else {
                    m
                }
            }
            _ => v,
        }
    }

    pub fn size_of(&self, t: TypeId) -> Option<u64> {
        layout(&self.st.unit.types, t).map(|(size, _)| size)
    }
}

/// Size and alignment in bytes on x86-64 (System V). Structs lay members out in order with
/// natural alignment (none when packed); consecutive bit-fields share storage units; unions take
/// their largest member. `None` for incomplete and unknown types.
pub(crate) fn layout(types: &crate::ir::TypeTable, t: TypeId) -> Option<(u64, u64)> {
    use crate::ir::types::FloatKind;
    let scalar = |n: u64| Some((n, n));
    match types.kind(t) {
        // GNU: `sizeof(void)` and `sizeof` of a function are 1.
        TypeKind::Bool | TypeKind::Void | TypeKind::Function { .. } => scalar(1),
        TypeKind::Int { kind, .. } => scalar(int_bits(*kind) as u64 / 8),
        TypeKind::Enum { .. } => scalar(4),
        TypeKind::Pointer(_) => scalar(8),
        TypeKind::Float(k) | TypeKind::Complex(k) => {
            let base = match k {
                FloatKind::Half | FloatKind::BFloat16 => 2,
                FloatKind::Float => 4,
                FloatKind::Double | FloatKind::Decimal => 8,
                FloatKind::LongDouble | FloatKind::Float128 => 16,
            };
            let size = if matches!(types.kind(t), TypeKind::Complex(_)) {
                base * 2
            } else {
                base
            };
            Some((size, base))
        }
        TypeKind::Array { elem, len } => {
            let (size, align) = layout(types, *elem)?;
            Some((size * len.unwrap_or(0), align))
        }
        TypeKind::Vector { bytes, .. } => Some((*bytes, (*bytes).max(1))),
        TypeKind::Record(r) => record_layout(types, *r).map(|(size, align, _)| (size, align)),
        _ => None,
    }
}

/// Size, alignment and member offsets (bytes; a bit-field's offset is its storage unit's).
pub(crate) fn record_layout(
    types: &crate::ir::TypeTable,
    r: crate::ir::RecordId,
) -> Option<(u64, u64, Vec<u64>)> {
    use crate::ir::types::RecordKind;
    let rec = types.record(r);
    if !rec.complete {
        return None;
    }
    let (mut size, mut align, mut bits_used, mut unit) = (0u64, 1u64, 0u64, 0u64);
    let mut offsets = Vec::with_capacity(rec.fields.len());
    for f in &rec.fields {
        let (fsize, falign) = layout(types, f.ty)?;
        let falign = if rec.packed { 1 } else { falign };
        align = align.max(falign);
        if rec.kind == RecordKind::Union {
            offsets.push(0);
            size = size.max(fsize);
            continue;
        }
        match f.bit_width {
            Some(w) => {
                let w = w as u64;
                if unit == 0 || bits_used + w > unit * 8 || w == 0 {
                    size = size.div_ceil(falign) * falign;
                    unit = fsize;
                    bits_used = 0;
                    if w > 0 {
                        size += fsize;
                    }
                }
                offsets.push(size.saturating_sub(unit));
                bits_used += w;
            }
            None => {
                unit = 0;
                size = size.div_ceil(falign) * falign;
                offsets.push(size);
                size += fsize;
            }
        }
    }
    Some((size.div_ceil(align) * align, align, offsets))
}

pub(crate) fn int_bits(k: IntKind) -> u32 {
    match k {
        IntKind::Char => 8,
        IntKind::Short => 16,
        IntKind::Int => 32,
        IntKind::Long | IntKind::LongLong => 64,
        IntKind::Int128 => 128,
    }
}
