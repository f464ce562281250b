use super::*;
use crate::ir::types::{FieldDef, RecordKind, TypeKind};
use crate::ir::visit::{for_each_expr_mut, for_each_loc_mut};
use crate::ir::{
    Block, Declared, GlobalKind, Host, Instr, Local, LocalId, LocalKind, Lval, Offset, Quals,
    StrId, Terminator,
};

fn loc(file: u32, line: u32) -> Loc {
    Loc { file, line, col: 1 }
}

/// A unit under construction.
struct U {
    ir: UnitIr,
    names: Arc<Names>,
}

impl U {
    fn new(names: &Arc<Names>, name: &str, files: &[&str], strings: &[&str]) -> U {
        let ir = UnitIr {
            name: name.into(),
            files: files.iter().map(|s| s.to_string()).collect(),
            strings: strings.iter().map(|s| s.to_string()).collect(),
            types: TypeTable::new(),
            ..UnitIr::default()
        };
        U {
            ir,
            names: names.clone(),
        }
    }
    fn fn_ty(&mut self, variadic: bool) -> TypeId {
        let v = self.ir.types.void();
        self.ir.types.intern(
            TypeKind::Function {
                ret: v,
                params: vec![],
                variadic,
                prototyped: true,
            },
            Quals::default(),
        )
    }
    fn def(&mut self, name: &str, linkage: Linkage, hash: u64, instrs: Vec<Instr>) {
        let ty = self.fn_ty(false);
        let l = instrs.first().map_or(loc(0, 1), |i| i.loc());
        let f = Function {
            name: self.names.intern(name),
            linkage,
            ty,
            params: vec![],
            locals: vec![],
            blocks: vec![Block {
                instrs,
                term: Terminator::Return {
                    value: None,
                    loc: l,
                },
            }],
            loc: l,
        };
        self.ir.functions.push(f);
        self.ir.function_hashes.push(hash);
    }
    fn global(&mut self, name: &str, linkage: Linkage, defined: bool, init: Vec<Instr>) -> u32 {
        let ty = self.ir.types.int();
        let g = Global {
            name: self.names.intern(name),
            ty,
            kind: GlobalKind::Global,
            linkage,
            flags: VarFlags::default(),
            defined,
            init,
            loc: loc(0, 1),
        };
        self.ir.globals.push(g);
        self.ir.globals.len() as u32 - 1
    }
    fn declare(&mut self, name: &str, linkage: Linkage, variadic: bool) {
        let ty = self.fn_ty(variadic);
        self.ir.declared_functions.push(Declared {
            name: self.names.intern(name),
            ty,
            linkage,
        });
    }
}

fn call(names: &Names, name: &str, internal: bool, l: Loc) -> Instr {
    Instr::Call {
        dst: None,
        callee: Expr::Func(FuncRef::Named {
            name: names.intern(name),
            internal,
        }),
        args: vec![],
        loc: l,
    }
}

fn set_global(g: u32, src: Expr, l: Loc) -> Instr {
    Instr::Assign {
        dst: Lval::var(VarRef::Global(crate::ir::GlobalId(g))),
        src,
        loc: l,
    }
}

fn str_const(s: u32) -> Expr {
    Expr::Const(Const::Str(StrId(s)))
}

fn link(names: &Arc<Names>, units: Vec<(u32, UnitIr)>) -> Program {
    let mut l = Linker::new(names.clone());
    for (i, u) in units {
        l.add(i, u);
    }
    l.finish()
}

/// Links `make()` in every order of its units; asserts all results are identical.
fn link_all_orders(names: &Arc<Names>, make: impl Fn() -> Vec<UnitIr>) -> Program {
    let n = make().len();
    fn permutations(rest: Vec<usize>, prefix: Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if rest.is_empty() {
            out.push(prefix);
            return;
        }
        for (i, &x) in rest.iter().enumerate() {
            let mut r = rest.clone();
            r.remove(i);
            let mut p = prefix.clone();
            p.push(x);
            permutations(r, p, out);
        }
    }
    let mut orders = vec![];
    permutations((0..n).collect(), vec![], &mut orders);
    let mut first: Option<(String, Program)> = None;
    for order in orders {
        let mut units: Vec<Option<UnitIr>> = make().into_iter().map(Some).collect();
        let p = link(
            names,
            order
                .iter()
                .map(|&i| (i as u32, units[i].take().unwrap()))
                .collect(),
        );
        let fp = fingerprint(&p);
        match &first {
            None => first = Some((fp, p)),
            Some((f, _)) => assert_eq!(f, &fp, "order {order:?} differs"),
        }
    }
    first.unwrap().1
}

fn fingerprint(p: &Program) -> String {
    let units: Vec<_> = p
        .units
        .iter()
        .map(|u| (u.index, &u.name, format!("{:?}", u.diagnostics)))
        .collect();
    let types: Vec<_> = (0..p.types.len() as u32)
        .map(|i| p.types.get(TypeId(i)))
        .collect();
    let stats = p.stats;
    format!(
        "{}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{types:?}\n{:?}\n{stats:?}",
        p.dump(),
        p.functions,
        p.globals,
        p.files,
        p.strings,
        units,
        p.types.records(),
    )
}

fn ids(p: &Program, name: &str) -> Vec<FuncId> {
    let n = p.names.intern(name);
    (0..p.functions.len())
        .filter(|&i| p.functions[i].name == n)
        .map(|i| FuncId(i as u32))
        .collect()
}

fn the(p: &Program, name: &str) -> FuncId {
    let v = ids(p, name);
    assert_eq!(v.len(), 1, "{name}: {v:?}");
    v[0]
}

fn body(p: &Program, id: FuncId) -> &Function {
    p.functions[id.index()].body.as_ref().expect("defined")
}

/// The functions referenced by a body, in walk order.
fn callees(p: &Program, id: FuncId) -> Vec<FuncId> {
    let mut f = body(p, id).clone();
    let mut out = vec![];
    for_each_expr_mut(&mut f, |e| {
        if let Expr::Func(r) = e {
            match r {
                FuncRef::Linked(id) => out.push(*id),
                FuncRef::Named { .. } => panic!("unlinked reference"),
            }
        }
    });
    out
}

fn globals_written(p: &Program, id: FuncId) -> Vec<u32> {
    let f = body(p, id);
    let mut out = vec![];
    for i in &f.blocks[0].instrs {
        if let Instr::Assign {
            dst:
                Lval {
                    host: crate::ir::Host::Var(VarRef::Global(g)),
                    ..
                },
            ..
        } = i
        {
            out.push(g.0);
        }
    }
    out
}

fn check_invariant(p: &Program) {
    let s = p.stats;
    assert_eq!(
        s.definitions,
        s.functions_defined + s.duplicates_removed + s.conflicts,
        "{s:?}"
    );
    assert_eq!(s.functions_defined + s.externals, p.functions.len());
    assert_eq!(s.globals, p.globals.len());
}

#[test]
fn static_inline_dedup_is_order_independent() {
    let names = Arc::new(Names::new());
    let make = || {
        let n = &names;
        let mut a = U::new(n, "a.c", &["a.c", "inc.h"], &["hello"]);
        let c = a.global("counter", Linkage::Internal, true, vec![]);
        a.def(
            "helper",
            Linkage::Internal,
            0xab,
            vec![set_global(c, str_const(0), loc(1, 10))],
        );
        a.def(
            "main",
            Linkage::External,
            1,
            vec![call(n, "helper", true, loc(0, 5))],
        );

        let mut b = U::new(n, "b.c", &["inc.h", "b.c"], &["x", "hello"]);
        let c = b.global("counter", Linkage::Internal, true, vec![]);
        b.def("only_b", Linkage::Internal, 0xcd, vec![]);
        b.def(
            "helper",
            Linkage::Internal,
            0xab,
            vec![set_global(c, str_const(1), loc(0, 10))],
        );
        b.def(
            "f1",
            Linkage::External,
            2,
            vec![call(n, "helper", true, loc(1, 5))],
        );

        let mut c = U::new(n, "c.c", &["c.c", "inc.h"], &["hello"]);
        c.global("other", Linkage::Internal, true, vec![]);
        let g = c.global("counter", Linkage::Internal, true, vec![]);
        c.def(
            "f2",
            Linkage::External,
            3,
            vec![call(n, "helper", true, loc(0, 5))],
        );
        c.def(
            "helper",
            Linkage::Internal,
            0xab,
            vec![set_global(g, str_const(0), loc(1, 10))],
        );
        vec![a.ir, b.ir, c.ir]
    };
    let p = link_all_orders(&names, make);
    check_invariant(&p);
    let helper = the(&p, "helper");
    assert_eq!(p.functions[helper.index()].unit, 0);
    assert_eq!(p.functions[helper.index()].linkage, Linkage::Internal);
    for caller in ["main", "f1", "f2"] {
        assert_eq!(callees(&p, the(&p, caller)), vec![helper], "{caller}");
    }
    // The kept copy writes unit 0's counter; every unit keeps its own statics.
    let written = globals_written(&p, helper);
    assert_eq!(p.globals[written[0] as usize].unit, 0);
    assert_eq!(p.globals.len(), 4);
    assert_eq!(p.stats.duplicates_removed, 2);
    assert_eq!(p.stats.definitions, 7);
    assert_eq!(p.stats.functions_defined, 5);
    assert_eq!(p.stats.externals, 0);
    assert_eq!(p.stats.units, 3);
    // Ids follow (unit, index): a's helper, main; b's only_b, f1; c's f2.
    let order: Vec<&str> = p.functions.iter().map(|f| p.names.get(f.name)).collect();
    assert_eq!(order, ["helper", "main", "only_b", "f1", "f2"]);
    // Only strings used by kept bodies are in the table; files are merged.
    assert_eq!(p.strings, ["hello"]);
    let mut files = p.files.clone();
    files.sort();
    assert_eq!(files, ["a.c", "b.c", "c.c", "inc.h"]);
    let h = body(&p, helper);
    assert_eq!(p.files[h.loc.file as usize], "inc.h");
}

#[test]
fn dropped_duplicate_leaves_no_reference() {
    // b's copy of `h` would call an external `k` (b has no static k); a's calls a's static k.
    let names = Arc::new(Names::new());
    let make = || {
        let n = &names;
        let mut a = U::new(n, "a.c", &["a.c"], &[]);
        a.def("k", Linkage::Internal, 1, vec![]);
        a.def(
            "h",
            Linkage::Internal,
            7,
            vec![call(n, "k", true, loc(0, 3))],
        );
        let mut b = U::new(n, "b.c", &["b.c"], &[]);
        b.def(
            "h",
            Linkage::Internal,
            7,
            vec![call(n, "k", true, loc(0, 3))],
        );
        vec![a.ir, b.ir]
    };
    let p = link_all_orders(&names, make);
    check_invariant(&p);
    assert_eq!(p.stats.externals, 0);
    let k = the(&p, "k");
    assert_eq!(callees(&p, the(&p, "h")), vec![k]);
}

#[test]
fn same_name_statics_with_different_hashes_stay_separate() {
    let names = Arc::new(Names::new());
    let make = || {
        let n = &names;
        let mut u0 = U::new(n, "u0.c", &["u0.c"], &[]);
        u0.def("g", Linkage::Internal, 1, vec![]);
        u0.def(
            "a",
            Linkage::External,
            10,
            vec![call(n, "g", true, loc(0, 2))],
        );
        let mut u1 = U::new(n, "u1.c", &["u1.c"], &[]);
        u1.def("g", Linkage::Internal, 2, vec![]);
        u1.def(
            "b",
            Linkage::External,
            11,
            vec![call(n, "g", true, loc(0, 2))],
        );
        let mut u2 = U::new(n, "u2.c", &["u2.c"], &[]);
        u2.declare("g", Linkage::Internal, false);
        u2.def(
            "c",
            Linkage::External,
            12,
            vec![call(n, "g", true, loc(0, 2))],
        );
        let mut u3 = U::new(n, "u3.c", &["u3.c"], &[]);
        u3.def("g", Linkage::Internal, 1, vec![]);
        u3.def(
            "d",
            Linkage::External,
            13,
            vec![call(n, "g", true, loc(0, 2))],
        );
        vec![u0.ir, u1.ir, u2.ir, u3.ir]
    };
    let p = link_all_orders(&names, make);
    check_invariant(&p);
    let gs = ids(&p, "g");
    assert_eq!(gs.len(), 3);
    let g_of = |unit: u32, defined: bool| {
        *gs.iter()
            .find(|g| {
                p.functions[g.index()].unit == unit
                    && p.functions[g.index()].body.is_some() == defined
            })
            .unwrap()
    };
    assert_eq!(callees(&p, the(&p, "a")), vec![g_of(0, true)]);
    assert_eq!(callees(&p, the(&p, "b")), vec![g_of(1, true)]);
    // u2 has no static g: its call falls back to the program-wide name, defined nowhere.
    let ext = g_of(2, false);
    assert_eq!(p.functions[ext.index()].linkage, Linkage::External);
    assert_eq!(callees(&p, the(&p, "c")), vec![ext]);
    // u3's g is identical to u0's.
    assert_eq!(callees(&p, the(&p, "d")), vec![g_of(0, true)]);
    assert_eq!(p.stats.duplicates_removed, 1);
    assert_eq!(p.stats.externals, 1);
}

#[test]
fn external_call_resolves_to_defining_unit() {
    let names = Arc::new(Names::new());
    let n = &names;
    let mut m = U::new(n, "main.c", &["main.c"], &[]);
    m.declare("foo", Linkage::External, false);
    m.declare("bar", Linkage::Internal, false);
    m.def(
        "main",
        Linkage::External,
        1,
        vec![
            call(n, "foo", false, loc(0, 2)),
            call(n, "bar", true, loc(0, 3)),
        ],
    );
    let mut f = U::new(n, "foo.c", &["foo.c"], &[]);
    f.def("foo", Linkage::External, 2, vec![]);
    let mut b = U::new(n, "bar.c", &["bar.c"], &[]);
    b.def("bar", Linkage::External, 3, vec![]);
    // Sparse unit indices: `unit` fields index `Program::units`.
    let p = link(n, vec![(9, b.ir), (5, f.ir), (0, m.ir)]);
    check_invariant(&p);
    let (foo, bar) = (the(&p, "foo"), the(&p, "bar"));
    assert_eq!(callees(&p, the(&p, "main")), vec![foo, bar]);
    assert_eq!(
        p.units[p.functions[foo.index()].unit as usize].name,
        "foo.c"
    );
    assert_eq!(p.units[p.functions[foo.index()].unit as usize].index, 5);
    assert_eq!(
        p.units[p.functions[bar.index()].unit as usize].name,
        "bar.c"
    );
    assert!(p.functions[foo.index()].body.is_some() && p.functions[bar.index()].body.is_some());
    assert_eq!(p.stats.externals, 0);
    assert_eq!(
        p.units.iter().map(|u| u.index).collect::<Vec<_>>(),
        [0, 5, 9]
    );
}

#[test]
fn undefined_external_becomes_bodyless_entry() {
    let names = Arc::new(Names::new());
    let n = &names;
    let mut m = U::new(n, "main.c", &["main.c"], &[]);
    m.declare("printf", Linkage::External, true);
    m.declare("unused", Linkage::External, false);
    m.def(
        "main",
        Linkage::External,
        1,
        vec![
            call(n, "mystery", false, loc(0, 2)),
            call(n, "printf", false, loc(0, 3)),
        ],
    );
    let mut o = U::new(n, "other.c", &["other.c"], &[]);
    o.declare("printf", Linkage::External, true);
    o.def(
        "other",
        Linkage::External,
        2,
        vec![call(n, "printf", false, loc(0, 2))],
    );
    let p = link(n, vec![(1, o.ir), (0, m.ir)]);
    check_invariant(&p);
    let order: Vec<&str> = p.functions.iter().map(|f| p.names.get(f.name)).collect();
    assert_eq!(order, ["main", "printf", "unused", "mystery", "other"]);
    let printf = the(&p, "printf");
    let pf = &p.functions[printf.index()];
    assert!(pf.body.is_none());
    assert_eq!(pf.unit, 0);
    assert_eq!(pf.linkage, Linkage::External);
    assert!(matches!(
        p.types.kind(pf.ty),
        TypeKind::Function { variadic: true, .. }
    ));
    let mystery = the(&p, "mystery");
    assert_eq!(
        p.types.kind(p.functions[mystery.index()].ty),
        &TypeKind::Unknown
    );
    assert_eq!(callees(&p, the(&p, "main")), vec![mystery, printf]);
    assert_eq!(callees(&p, the(&p, "other")), vec![printf]);
    assert_eq!(p.stats.externals, 3);
    assert_eq!(p.stats.functions_defined, 2);
}

#[test]
fn extern_and_defined_globals_merge() {
    let names = Arc::new(Names::new());
    let make = || {
        let n = &names;
        let mut a = U::new(n, "a.c", &["a.c"], &[]);
        let x = a.global("x", Linkage::External, false, vec![]);
        a.ir.globals[x as usize].flags.address_taken = true;
        let y = a.global("y", Linkage::Internal, true, vec![]);
        let z = a.global("z", Linkage::External, false, vec![]);
        a.def(
            "f0",
            Linkage::External,
            1,
            vec![
                set_global(x, Expr::Const(Const::Int(1)), loc(0, 2)),
                set_global(y, Expr::Unknown, loc(0, 3)),
                set_global(z, Expr::Unknown, loc(0, 4)),
            ],
        );
        let mut b = U::new(n, "b.c", &["b.c"], &[]);
        let y = b.global("y", Linkage::Internal, true, vec![]);
        let x = b.global("x", Linkage::External, true, vec![]);
        b.def(
            "f1",
            Linkage::External,
            2,
            vec![
                set_global(x, Expr::Unknown, loc(0, 2)),
                set_global(y, Expr::Unknown, loc(0, 3)),
            ],
        );
        let mut c = U::new(n, "c.c", &["c.c"], &[]);
        c.global(
            "x",
            Linkage::External,
            true,
            vec![set_global(0, Expr::Const(Const::Int(5)), loc(0, 1))],
        );
        vec![a.ir, b.ir, c.ir]
    };
    let p = link_all_orders(&names, make);
    check_invariant(&p);
    let named = |s: &str| -> Vec<u32> {
        let n = p.names.intern(s);
        (0..p.globals.len() as u32)
            .filter(|&i| p.globals[i as usize].global.name == n)
            .collect()
    };
    let x = named("x");
    assert_eq!(x.len(), 1);
    let gx = &p.globals[x[0] as usize];
    assert!(gx.global.defined);
    assert!(gx.global.flags.address_taken);
    assert_eq!(gx.unit, 2);
    assert_eq!(gx.global.init.len(), 1);
    // The initializer now refers to the program's x.
    match &gx.global.init[0] {
        Instr::Assign { dst, .. } => {
            assert_eq!(dst, &Lval::var(VarRef::Global(crate::ir::GlobalId(x[0]))))
        }
        other => panic!("{other:?}"),
    }
    let y = named("y");
    assert_eq!(y.len(), 2);
    let z = named("z");
    assert_eq!(z.len(), 1);
    assert!(!p.globals[z[0] as usize].global.defined);
    assert_eq!(globals_written(&p, the(&p, "f0")), vec![x[0], y[0], z[0]]);
    assert_eq!(globals_written(&p, the(&p, "f1")), vec![x[0], y[1]]);
    // Ids follow the representative's (unit, index): a's y, z; b's y; c's x.
    assert_eq!(p.globals.len(), 4);
    assert_eq!(x[0], 3);
    assert_eq!(p.stats.globals, 4);
}

#[test]
fn tentative_definitions_keep_lowest_nonempty_init() {
    let names = Arc::new(Names::new());
    let n = &names;
    let mut a = U::new(n, "a.c", &["a.c"], &[]);
    a.global("t", Linkage::External, true, vec![]);
    let mut b = U::new(n, "b.c", &["b.c"], &[]);
    b.global(
        "t",
        Linkage::External,
        true,
        vec![set_global(0, Expr::Const(Const::Int(2)), loc(0, 1))],
    );
    let mut c = U::new(n, "c.c", &["c.c"], &[]);
    c.global(
        "t",
        Linkage::External,
        true,
        vec![set_global(0, Expr::Const(Const::Int(3)), loc(0, 1))],
    );
    let p = link(n, vec![(2, c.ir), (1, b.ir), (0, a.ir)]);
    assert_eq!(p.globals.len(), 1);
    assert_eq!(p.globals[0].unit, 1);
    match &p.globals[0].global.init[0] {
        Instr::Assign { src, .. } => assert_eq!(src, &Expr::Const(Const::Int(2))),
        other => panic!("{other:?}"),
    }
}

#[test]
fn files_and_strings_are_remapped() {
    let names = Arc::new(Names::new());
    let n = &names;
    let mut a = U::new(n, "a.c", &["a.c", "common.h"], &["s0", "shared"]);
    let g = a.global("msg", Linkage::Internal, true, vec![]);
    a.ir.globals[g as usize]
        .init
        .push(set_global(g, str_const(0), loc(0, 3)));
    a.def(
        "fa",
        Linkage::External,
        1,
        vec![set_global(g, str_const(1), loc(1, 7))],
    );
    a.ir.diagnostics.push(LowerDiagnostic {
        loc: loc(1, 9),
        message: "unsupported".into(),
    });
    let mut b = U::new(n, "b.c", &["common.h", "b.c"], &["shared", "s1"]);
    let g = b.global("msg", Linkage::Internal, true, vec![]);
    b.def(
        "fb",
        Linkage::External,
        2,
        vec![
            set_global(g, str_const(0), loc(0, 7)),
            set_global(g, str_const(1), loc(1, 8)),
        ],
    );
    let p = link(n, vec![(1, b.ir), (0, a.ir)]);
    check_invariant(&p);
    assert_eq!(p.files.len(), 3);
    assert_eq!(p.strings.len(), 3);
    let instr = |f: &str, i: usize| -> (Loc, String) {
        match &body(&p, the(&p, f)).blocks[0].instrs[i] {
            Instr::Assign {
                src: Expr::Const(Const::Str(s)),
                loc,
                ..
            } => (*loc, p.strings[s.index()].clone()),
            other => panic!("{other:?}"),
        }
    };
    let (l, s) = instr("fb", 0);
    assert_eq!(
        (p.files[l.file as usize].as_str(), l.line, s.as_str()),
        ("common.h", 7, "shared")
    );
    let (l, s) = instr("fb", 1);
    assert_eq!(
        (p.files[l.file as usize].as_str(), l.line, s.as_str()),
        ("b.c", 8, "s1")
    );
    let (l, s) = instr("fa", 0);
    assert_eq!(
        (p.files[l.file as usize].as_str(), l.line, s.as_str()),
        ("common.h", 7, "shared")
    );
    assert_eq!(instr("fa", 0), instr("fb", 0));
    // Function loc and terminator loc too.
    let fb = body(&p, the(&p, "fb"));
    assert_eq!(p.files[fb.loc.file as usize], "common.h");
    match &fb.blocks[0].term {
        Terminator::Return { loc, .. } => assert_eq!(p.files[loc.file as usize], "common.h"),
        other => panic!("{other:?}"),
    }
    // A global's loc and initializer.
    let ga = p.globals.iter().find(|g| g.unit == 0).unwrap();
    assert_eq!(p.files[ga.global.loc.file as usize], "a.c");
    match &ga.global.init[0] {
        Instr::Assign {
            src: Expr::Const(Const::Str(s)),
            loc,
            ..
        } => {
            assert_eq!(p.strings[s.index()], "s0");
            assert_eq!(p.files[loc.file as usize], "a.c");
        }
        other => panic!("{other:?}"),
    }
    // Diagnostics.
    assert_eq!(
        p.files[p.units[0].diagnostics[0].loc.file as usize],
        "common.h"
    );
}

#[test]
fn external_conflicts_and_identical_redefinitions() {
    let names = Arc::new(Names::new());
    let make = || {
        let n = &names;
        let mut a = U::new(n, "a.c", &["a.c"], &[]);
        a.def("dup", Linkage::External, 1, vec![]);
        a.def("same", Linkage::External, 5, vec![]);
        let mut b = U::new(n, "b.c", &["b.c"], &[]);
        b.def("dup", Linkage::External, 2, vec![]);
        b.def("same", Linkage::External, 5, vec![]);
        let mut c = U::new(n, "c.c", &["c.c"], &[]);
        c.def("dup", Linkage::External, 1, vec![]);
        c.def(
            "user",
            Linkage::External,
            6,
            vec![call(n, "dup", false, loc(0, 1))],
        );
        vec![a.ir, b.ir, c.ir]
    };
    let p = link_all_orders(&names, make);
    check_invariant(&p);
    let dup = the(&p, "dup");
    assert_eq!(p.functions[dup.index()].unit, 0);
    assert_eq!(callees(&p, the(&p, "user")), vec![dup]);
    assert_eq!(p.stats.conflicts, 1);
    assert_eq!(p.stats.duplicates_removed, 2);
    assert_eq!(p.stats.definitions, 6);
}

mod records;

/// Name ids do not depend on the order units reached the interner: parallel lowering interns
/// in whatever order threads run, and ids order members in paths.
#[test]
fn names_are_numbered_by_their_strings() {
    const A: &str = "struct s { int zeta; int alpha; }; int use_a(struct s *p) { return p->zeta; }";
    const B: &str = "struct t { int beta; }; int use_b(struct t *q) { return q->beta; }";
    let linked = |first: &str| {
        let names = Arc::new(Names::new());
        names.intern(first);
        let a = crate::frontend::lower::lower_unit("a.c".into(), A, &names).unit;
        let b = crate::frontend::lower::lower_unit("b.c".into(), B, &names).unit;
        fingerprint(&link(&names, vec![(0, a), (1, b)]))
    };
    assert_eq!(linked("zeta"), linked("beta"));
}

/// A name interned but used by nothing linked (a cached unit's skipped definition's local)
/// takes no id: ids do not depend on how the units were loaded.
#[test]
fn names_the_program_does_not_use_take_no_id() {
    const A: &str = "struct s { int zeta; }; int use_a(struct s *p) { return p->zeta; }";
    let linked = |extra: Option<&str>| {
        let names = Arc::new(Names::new());
        if let Some(extra) = extra {
            names.intern(extra);
        }
        let a = crate::frontend::lower::lower_unit("a.c".into(), A, &names).unit;
        fingerprint(&link(&names, vec![(0, a)]))
    };
    assert_eq!(linked(None), linked(Some("aaa_unused")));
}
