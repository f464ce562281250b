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

/// Whether some expression (or statement) node's variant is named `variant`.
fn has_expr(out: &ParseOutput, variant: &str) -> bool {
    out.ast
        .exprs
        .iter()
        .any(|e| format!("{:?}", e.kind).starts_with(variant))
}

fn has_stmt(out: &ParseOutput, variant: &str) -> bool {
    out.ast
        .stmts
        .iter()
        .any(|s| format!("{:?}", s.kind).starts_with(variant))
}

#[test]
fn gnu_expression_constructs_build_their_nodes() {
    let cases: &[(&str, &str)] = &[
        ("struct s { int a[3]; }; int x = __builtin_offsetof(struct s, a[1]);", "Offsetof"),
        ("void f(__builtin_va_list ap) { int i = __builtin_va_arg(ap, int); }", "VaArg"),
        ("int x = __builtin_types_compatible_p(int, long);", "TypesCompatible"),
        ("int x = _Generic(1, int: 2, default: 3);", "Generic"),
        ("void f(void) { void *p = &&l; goto *p; l: ; }", "LabelAddr"),
        ("int f(void) { return ({ int y = 1; y; }); }", "StmtExpr"),
        ("_Complex double z; double r = __real__ z;", "Unary(Real"),
        ("int a[] = { [0 ... 3] = 1 }; int *p = (int[]){1, 2};", "CompoundLiteral"),
        ("int x = _Alignof(int) + __alignof__(x);", "AlignofExpr"),
        ("int x = sizeof(int);", "SizeofType"),
        ("typedef int v4 __attribute__((vector_size(16))); v4 a; long b = __builtin_bit_cast(long, 1.0);", "BuiltinCast"),
    ];
    for (src, variant) in cases {
        let out = parse_ok(src);
        assert!(has_expr(&out, variant), "{src}: no {variant} node");
    }
}

#[test]
fn gnu_statement_constructs_build_their_nodes() {
    let cases: &[(&str, &str)] = &[
        ("void f(void) { __label__ a, b; a: b: ; }", "LocalLabels"),
        (
            "void f(void) { void *p = &&l; goto *p; l: ; }",
            "GotoComputed",
        ),
        ("void f(void) { { goto out; out: } }", "Labeled"),
        (
            "void f(int c) { switch (c) { case 1: __attribute__((fallthrough)); case 2: ; } }",
            "Case",
        ),
        ("void f(void) { _Static_assert(1); }", "StaticAssert"),
        ("void f(int x) { for (int i = 0; i < x; i++) ; }", "For"),
        (
            "void f(int x) { asm volatile (\"\" : \"=r\"(x) : \"0\"(x)); }",
            "Asm",
        ),
    ];
    for (src, variant) in cases {
        let out = parse_ok(src);
        assert!(has_stmt(&out, variant), "{src}: no {variant} statement");
    }
}

#[test]
fn case_range_keeps_both_bounds() {
    let out = parse_ok("void f(int c) { switch (c) { case 1 ... 5: break; default: ; } }");
    assert!(out
        .ast
        .stmts
        .iter()
        .any(|s| matches!(s.kind, StmtKind::Case(_, Some(_), _))));
    assert!(has_stmt(&out, "Default"));
}

#[test]
fn gnu_declaration_constructs() {
    // Each must parse cleanly; the shape is checked where a wrong parse would be plausible.
    for src in [
        "unsigned __int128 a; __int128 b; __uint128_t c; __int128_t d; __float128 e; _Float128 f;",
        "__thread int t; _Thread_local int u; static __thread int v;",
        "void f(int *p) { __auto_type q = p; }",
        "asm(\".globl x\"); int g(void) __asm__(\"h\");",
        "struct s { ; int a;; struct { int b; }; union { int c; float d; }; };",
        "struct e {} x = {}; int y[2] = {};",
        "_Static_assert(1); _Static_assert(1, \"m\");",
        "static x = 1; f() { return 0; } register_me(a) { return a; }",
        "int __seg_gs *gp; int __seg_fs *fp;",
        "typeof(int) a; __typeof__(a) b; typeof(int *) c;",
        "_Atomic int a; _Atomic(int) b; _Atomic(long) *c;",
        "enum __attribute__((packed)) e { A __attribute__((deprecated)) = 1, B } __attribute__((unused));",
        "struct __attribute__((packed)) s { int a; } __attribute__((aligned(4)));",
        "void f(void) { l: __attribute__((unused)); }",
        "int f(int n, int a[static n], int b[const], int c[*]);",
        "int (*f(int))(double); int (*fp[3])(void); void g(int (*)(int), int (*[3])(void));",
        "void f(void) { int g(int x) { return x; } g(1); }",
        "[[gnu::unused]] static int a; int b [[maybe_unused]];",
    ] {
        parse_ok(src);
    }
}

#[test]
fn implicit_int_and_knr_function_definitions_are_functions() {
    let out = parse_ok("f() { return 0; } int g(a) int a; { return a; }");
    let names: Vec<_> = out
        .ast
        .items
        .iter()
        .filter_map(|i| match *i {
            ExternalDecl::Function(f) => out.ast.functions[f]
                .declarator
                .name
                .map(|s| out.interner.get(s)),
            _ => None,
        })
        .collect();
    assert_eq!(names, ["f", "g"]);
}

#[test]
fn streaming_clears_the_tree_between_declarations() {
    let src = "int a; int f(void) { return 1 + 2 * 3; } struct s { int x; };";
    let mut p = Parser::new(src);
    let mut seen = 0;
    while let Some(item) = p.next_item() {
        assert!(item.is_ok());
        seen += 1;
        assert!(
            p.ast().exprs.len() <= 5,
            "tree holds only the current declaration"
        );
        p.clear_tree();
    }
    assert_eq!(seen, 3);
    assert!(p.errors().is_empty());
}

#[test]
fn declarator_records_where_its_name_is() {
    let src = "int * __attribute__((section(\"f\")))\nf(void) { return 0; }";
    let out = parse_ok(src);
    let ExternalDecl::Function(f) = out.ast.items[0] else {
        panic!()
    };
    assert_eq!(
        out.ast.functions[f].declarator.name_at as usize,
        src.find("\nf").unwrap() + 1
    );
}
