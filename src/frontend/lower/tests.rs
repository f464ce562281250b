//! Lowering tests on small programs.

use super::*;

fn lower(src: &str) -> (UnitIr, Names) {
    let names = Names::new();
    let out = lower_unit("t.c".into(), src, &names);
    assert!(out.parse_errors.is_empty(), "{:?}", out.parse_errors);
    (out.unit, names)
}

#[test]
fn lowers_a_small_function() {
    let (u, _) = lower("int g; int f(int *p) { g = *p + 1; return g; }");
    assert!(u.diagnostics.is_empty(), "{:?}", u.diagnostics);
    assert_eq!(u.functions.len(), 1);
    assert_eq!(u.globals.len(), 1);
}

#[test]
fn case_labels_fold_byte_swaps_and_constant_p() {
    let src = "typedef unsigned short u16;
        int f(int x) {
            switch (x) {
            case (u16)__builtin_bswap16((u16)(0x0800)): return 1;
            case (__builtin_constant_p(3) ? 3 : x): return 2;
            case 'a' ... 'z': return 3;
            }
            return 0;
        }";
    let (u, _) = lower(src);
    assert!(u.diagnostics.is_empty(), "{:?}", u.diagnostics);
    let f = &u.functions[0];
    let cases: Vec<(i128, i128)> = f
        .blocks
        .iter()
        .filter_map(|b| match &b.term {
            Terminator::Switch { cases, .. } => {
                Some(cases.iter().map(|c| (c.lo, c.hi)).collect::<Vec<_>>())
            }
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(cases, vec![(0x0008, 0x0008), (3, 3), (97, 122)]);
}

#[test]
fn sizeof_follows_the_x86_64_layout() {
    let src = "struct a { char c; int i; };            /* 8 */
        struct b { char c; long l; short s; };       /* 24 */
        struct __attribute__((packed)) p { char c; int i; }; /* 5 */
        struct bf { unsigned a : 3, b : 5; unsigned c : 30; }; /* 8 */
        union u { char c[5]; int i; };               /* 8 */
        int x[] = { sizeof(struct a), sizeof(struct b), sizeof(struct p), sizeof(struct bf), sizeof(union u), sizeof(long double) };
        int f(int k) { switch (k) { case sizeof(struct b): return 1; case __builtin_offsetof(struct b, s): return 2; } return 0; }";
    let (u, names) = lower(src);
    assert!(u.diagnostics.is_empty(), "{:?}", u.diagnostics);
    let x = u.globals.iter().find(|g| names.get(g.name) == "x").unwrap();
    let sizes: Vec<String> = x
        .init
        .iter()
        .map(|i| match i {
            Instr::Assign {
                src: Expr::SizeOf(t),
                ..
            } => consteval::layout(&u.types, *t).map_or("?".into(), |(s, _)| s.to_string()),
            Instr::Assign {
                src: Expr::Const(Const::Int(v)),
                ..
            } => v.to_string(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(sizes, ["8", "24", "5", "8", "8", "16"]);
}

#[test]
fn kernel_constant_idioms_fold() {
    // Linux's __is_constexpr (a null pointer constant in ?: picks the other arm's type),
    // BUILD_BUG_ON_ZERO (sizeof an empty struct), and __bf_shf (ffsll) in a case label.
    let src = "typedef unsigned int u32;
        int f(int x, int y) {
            switch (x) {
            case ((u32)((((typeof(0x30u))(2) << (__builtin_ffsll(0x30u) - 1)) & (0x30u))
                 + ((int)(sizeof(struct { int:(-!!(!(sizeof(int) == sizeof(*(8 ? ((void *)((long)(0x30u) * 0l)) : (int *)8))))); })))
                 + ((int)(sizeof(struct { int:(-!!((0x30u) == 0 || (0x30u) > 0xffffffffU)); }))) )):
                return 1;
            }
            return (sizeof(int) == sizeof(*(8 ? ((void *)((long)(y) * 0l)) : (int *)8)));
        }";
    let (u, _) = lower(src);
    assert!(u.diagnostics.is_empty(), "{:?}", u.diagnostics);
    let cases: Vec<i128> = u.functions[0]
        .blocks
        .iter()
        .filter_map(|b| match &b.term {
            Terminator::Switch { cases, .. } => {
                Some(cases.iter().map(|c| c.lo).collect::<Vec<_>>())
            }
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(cases, vec![32]);
}

#[test]
fn nested_conditionals_lower_in_linear_time() {
    // Linux's ilog2() nests `?:` 64 deep; lowering each arm once keeps this linear.
    let mut e = String::from("0");
    for i in 0..64 {
        e = format!("n & (1ULL << {i}) ? {i} : {e}");
    }
    let (u, _) = lower(&format!("int f(unsigned long long n) {{ return {e}; }}"));
    assert!(u.diagnostics.is_empty(), "{:?}", u.diagnostics);
    let temps = u.functions[0]
        .locals
        .iter()
        .filter(|l| l.kind == LocalKind::Temp)
        .count();
    assert_eq!(temps, 64, "one result temporary per `?:`");
}

#[test]
fn brace_elision_into_empty_structs_terminates() {
    // Found by the robustness property test: each expression was tried against every element
    // of a huge array of empty structs.
    let (u, _) = lower("struct e {}; struct s { struct e a[100000000]; int y; } x = { 1, 2 };");
    assert_eq!(u.globals.len(), 1);
}

#[test]
fn vector_rvalues_can_be_subscripted() {
    let (u, _) = lower(
        "typedef float v4sf __attribute__((vector_size(16)));
         float first(v4sf a) { return ((v4sf)a)[0] + (a + a)[1]; }",
    );
    assert!(u.diagnostics.is_empty(), "{:?}", u.diagnostics);
}
