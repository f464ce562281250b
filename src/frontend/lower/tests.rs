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
