//! Parser unit tests: the shape of the tree for constructs where a wrong parse would be silent.

use super::*;
use crate::frontend::ast::*;

fn parse_ok(src: &str) -> ParseOutput {
    let out = parse(src);
    let msgs: Vec<_> = out
        .errors
        .iter()
        .map(|e| format!("{}: {}", e.offset, e.message))
        .collect();
    assert!(msgs.is_empty(), "unexpected errors in {src:?}: {msgs:?}");
    out
}

/// The body statements of the function definition named `name`.
fn body<'a>(out: &'a ParseOutput, name: &str) -> &'a [StmtId] {
    for item in &out.ast.items {
        if let ExternalDecl::Function(f) = *item {
            let f = &out.ast.functions[f];
            if f.declarator.name.map(|s| out.interner.get(s)) == Some(name) {
                if let StmtKind::Compound(list) = out.ast.stmts[f.body].kind {
                    return out.ast.stmt_lists.get(list);
                }
            }
        }
    }
    panic!("no function {name}");
}

fn is_decl(out: &ParseOutput, s: StmtId) -> bool {
    matches!(out.ast.stmts[s].kind, StmtKind::Decl(_))
}

fn is_mul_stmt(out: &ParseOutput, s: StmtId) -> bool {
    match out.ast.stmts[s].kind {
        StmtKind::Expr(Some(e)) => {
            matches!(out.ast.exprs[e].kind, ExprKind::Binary(BinOp::Mul, ..))
        }
        _ => false,
    }
}

#[test]
fn parameter_hides_typedef() {
    let out = parse_ok("typedef int T; void f(int T, int x) { T * x; } void g(void) { T * x; }");
    let f = body(&out, "f");
    assert!(is_mul_stmt(&out, f[0]), "in f, `T * x` multiplies");
    let g = body(&out, "g");
    assert!(is_decl(&out, g[0]), "in g, `T * x` declares x again");
}

#[test]
fn local_hides_typedef_until_scope_ends() {
    let src = "typedef int T; void f(int x) { { int T; T * x; } T * y; }";
    let out = parse_ok(src);
    let f = body(&out, "f");
    let StmtKind::Compound(inner) = out.ast.stmts[f[0]].kind else {
        panic!()
    };
    let inner = out.ast.stmt_lists.get(inner);
    assert!(is_decl(&out, inner[0]));
    assert!(is_mul_stmt(&out, inner[1]));
    assert!(is_decl(&out, f[1]), "typedef visible again after the block");
}

#[test]
fn typedef_declared_as_its_own_name_and_enumerator_hides_it() {
    let out = parse_ok("typedef int T; void f(void) { T T = 1; int y; T * y; }");
    let f = body(&out, "f");
    assert!(is_decl(&out, f[0]));
    assert!(is_mul_stmt(&out, f[2]));
    let out = parse_ok("typedef int E; void f(int x) { enum { E }; E * x; }");
    assert!(is_mul_stmt(&out, body(&out, "f")[1]));
}

#[test]
fn member_named_like_typedef_does_not_hide_it() {
    let out = parse_ok("typedef int T; struct s { T T; }; void f(void) { T * x; }");
    assert!(is_decl(&out, body(&out, "f")[0]));
}

#[test]
fn unsigned_typedef_name_declares_a_variable() {
    let out = parse_ok("typedef int T; void f(void) { unsigned T; T = 3; }");
    let f = body(&out, "f");
    let StmtKind::Decl(d) = out.ast.stmts[f[0]].kind else {
        panic!()
    };
    let decl = out.ast.decls[d];
    let names: Vec<_> = out
        .ast
        .init_declarators
        .get(decl.declarators)
        .iter()
        .map(|d| out.interner.get(d.declarator.name.unwrap()).to_string())
        .collect();
    assert_eq!(names, ["T"]);
    assert!(matches!(out.ast.stmts[f[1]].kind, StmtKind::Expr(Some(_))));
}

#[test]
fn label_named_like_typedef() {
    let out = parse_ok("typedef int T; void f(void) { T: goto T; }");
    assert!(matches!(
        out.ast.stmts[body(&out, "f")[0]].kind,
        StmtKind::Labeled(..)
    ));
}

#[test]
fn declarator_order_is_from_the_name_outwards() {
    let out = parse_ok("int *(*fp)(int); int *a[3];");
    let derived = |i: usize| {
        let ExternalDecl::Decl(d) = out.ast.items[i] else {
            panic!()
        };
        let id = out.ast.init_declarators.get(out.ast.decls[d].declarators)[0];
        out.ast
            .derived
            .get(id.declarator.derived)
            .iter()
            .map(|d| match d {
                Derived::Pointer(_) => 'p',
                Derived::Array { .. } => 'a',
                Derived::Function { .. } => 'f',
            })
            .collect::<String>()
    };
    assert_eq!(derived(0), "pfp");
    assert_eq!(derived(1), "ap");
}

#[test]
fn cast_compound_literal_and_paren_expression() {
    let out = parse_ok(
        "typedef int T; int x; void f(void) { (T)x; (x)*x; (T){1}; sizeof (T){2}; sizeof(x); }",
    );
    let f = body(&out, "f");
    let kind = |s: StmtId| match out.ast.stmts[s].kind {
        StmtKind::Expr(Some(e)) => out.ast.exprs[e].kind,
        _ => panic!(),
    };
    assert!(matches!(kind(f[0]), ExprKind::Cast(..)));
    assert!(matches!(kind(f[1]), ExprKind::Binary(BinOp::Mul, ..)));
    assert!(matches!(kind(f[2]), ExprKind::CompoundLiteral(..)));
    assert!(matches!(kind(f[3]), ExprKind::SizeofExpr(..)));
    assert!(matches!(kind(f[4]), ExprKind::SizeofExpr(..)));
}

#[test]
fn precedence_and_elvis() {
    let out = parse_ok("int a, b, c; void f(void) { a = b + c * 2; a = b ?: c; }");
    let f = body(&out, "f");
    let StmtKind::Expr(Some(e)) = out.ast.stmts[f[0]].kind else {
        panic!()
    };
    let ExprKind::Assign(None, _, rhs) = out.ast.exprs[e].kind else {
        panic!()
    };
    let ExprKind::Binary(BinOp::Add, _, mul) = out.ast.exprs[rhs].kind else {
        panic!()
    };
    assert!(matches!(
        out.ast.exprs[mul].kind,
        ExprKind::Binary(BinOp::Mul, ..)
    ));
    let StmtKind::Expr(Some(e)) = out.ast.stmts[f[1]].kind else {
        panic!()
    };
    let ExprKind::Assign(None, _, rhs) = out.ast.exprs[e].kind else {
        panic!()
    };
    assert!(matches!(
        out.ast.exprs[rhs].kind,
        ExprKind::Cond(_, None, _)
    ));
}

#[test]
fn knr_definition_and_nested_function() {
    let out =
        parse_ok("int f(a, b) int a; char *b; { int g(int x) { return x + a; } return g(1); }");
    let f = body(&out, "f");
    assert!(matches!(out.ast.stmts[f[0]].kind, StmtKind::Function(_)));
    let ExternalDecl::Function(fid) = out.ast.items[0] else {
        panic!()
    };
    assert_eq!(out.ast.functions[fid].kr_decls.len(), 2);
}

#[test]
fn asm_goto_operands_and_labels() {
    let out = parse_ok(
        "void f(int x) { asm goto (\"jmp %l[out]\" : : \"r\"(x), [v] \"m\"(x) : \"memory\" : out); out: ; \
         asm volatile inline (\"nop\" ::: \"cc\"); }",
    );
    let f = body(&out, "f");
    let StmtKind::Asm(a) = out.ast.stmts[f[0]].kind else {
        panic!()
    };
    let a = out.ast.asms[a];
    assert!(a.goto);
    assert_eq!(
        (
            a.outputs.len(),
            a.inputs.len(),
            a.clobbers.len(),
            a.labels.len()
        ),
        (0, 2, 1, 1)
    );
}

#[test]
fn syntax_error_skips_one_declaration_and_goes_on() {
    let out = parse("int a; int b = ; int f(void) { return 1 +; } int c;");
    assert_eq!(out.errors.len(), 2);
    assert_eq!(out.external_decls, 2);
    assert!(
        out.errors[0].message.contains("expected expression"),
        "{}",
        out.errors[0].message
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let src = format!("int x = {}1{};", "(".repeat(100_000), ")".repeat(100_000));
    let out = parse(&src);
    assert_eq!(out.errors.len(), 1);
    assert!(out.errors[0].message.contains("nesting"));
}
