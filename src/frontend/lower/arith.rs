//! Binary operators on values: C's result types (integer promotion, the usual arithmetic
//! conversions) and pointer arithmetic made explicit.

use super::consteval::int_bits;
use super::Lower;
use crate::frontend::ast::BinOp as A;
use crate::ir::types::{IntKind, TypeKind};
use crate::ir::*;

impl Lower<'_, '_> {
    /// A binary operation on values, with C's result type (pointer arithmetic made explicit).
    pub fn binary(&mut self, op: A, x: Expr, tx: TypeId, y: Expr, ty: TypeId) -> (Expr, TypeId) {
        let px = self.types().pointee(tx).is_some();
        let py = self.types().pointee(ty).is_some();
        let b = |op, x, y| Expr::Binary(op, Box::new(x), Box::new(y));
        match op {
            A::Add if px && !py => (b(BinOp::PtrAdd, x, y), tx),
            A::Add if py && !px => (b(BinOp::PtrAdd, y, x), ty),
            A::Sub if px && py => {
                let long = self.types().intern(
                    TypeKind::Int {
                        kind: IntKind::Long,
                        signed: true,
                    },
                    Quals::default(),
                );
                (b(BinOp::PtrDiff, x, y), long)
            }
            A::Sub if px => (b(BinOp::PtrAdd, x, Expr::Unary(UnOp::Neg, Box::new(y))), tx),
            A::Lt | A::Gt | A::Le | A::Ge | A::Eq | A::Ne => {
                let int = self.types().int();
                (binop_expr(op, x, y), int)
            }
            A::Shl | A::Shr => {
                let t = self.promote(tx);
                (binop_expr(op, x, y), t)
            }
            _ => {
                let t = self.arith(tx, ty);
                (binop_expr(op, x, y), t)
            }
        }
    }

    /// Integer promotion.
    pub(super) fn promote(&mut self, t: TypeId) -> TypeId {
        match self.types().kind(t) {
            TypeKind::Bool | TypeKind::Enum { .. } => self.types().int(),
            TypeKind::Int {
                kind: IntKind::Char | IntKind::Short,
                ..
            } => self.types().int(),
            _ => self.types().unqualified(t),
        }
    }

    /// The usual arithmetic conversions, simplified: the wider operand wins, unsigned on a tie.
    pub(crate) fn arith(&mut self, a: TypeId, b: TypeId) -> TypeId {
        let (a, b) = (self.promote(a), self.promote(b));
        let rank = |k: &TypeKind| match k {
            TypeKind::Float(f) | TypeKind::Complex(f) => 1000 + *f as u32,
            TypeKind::Int { kind, signed } => int_bits(*kind) * 2 + u32::from(!signed),
            TypeKind::Vector { .. } => 2000,
            _ => 0,
        };
        let (ka, kb) = (self.types().kind(a).clone(), self.types().kind(b).clone());
        if rank(&ka) >= rank(&kb) {
            a
        } else {
            b
        }
    }
}

/// The IR operation for a C binary operator. `&&`, `||` and `,` never get here: they are lowered
/// to control flow first, and have no IR operator.
fn binop_expr(op: A, x: Expr, y: Expr) -> Expr {
    let op = match op {
        A::Mul => BinOp::Mul,
        A::Div => BinOp::Div,
        A::Rem => BinOp::Rem,
        A::Add => BinOp::Add,
        A::Sub => BinOp::Sub,
        A::Shl => BinOp::Shl,
        A::Shr => BinOp::Shr,
        A::Lt => BinOp::Lt,
        A::Gt => BinOp::Gt,
        A::Le => BinOp::Le,
        A::Ge => BinOp::Ge,
        A::Eq => BinOp::Eq,
        A::Ne => BinOp::Ne,
        A::BitAnd => BinOp::BitAnd,
        A::BitXor => BinOp::BitXor,
        A::BitOr => BinOp::BitOr,
        A::LogAnd | A::LogOr | A::Comma => return Expr::Unknown,
    };
    Expr::Binary(op, Box::new(x), Box::new(y))
}
