//! Records and types across units (one record per identical definition, separate ones
//! otherwise, the type table's interning) and the IR walkers.

use super::*;

/// `struct <tag> { int a; struct <tag> *<link>; }`, or only `struct <tag>;` if `!define`, in `u`:
/// (the struct type, its record).
fn list_struct(u: &mut U, tag: &str, link: &str, define: bool) -> (TypeId, RecordId) {
    let t = &mut u.ir.types;
    let r = t.new_record(RecordKind::Struct, Some(u.names.intern(tag)));
    let st = t.intern(TypeKind::Record(r), Quals::default());
    if define {
        let int = t.int();
        let ptr = t.pointer_to(st);
        let field = |name: &str, ty| FieldDef {
            name: u.names.intern(name),
            anonymous: false,
            ty,
            bit_width: None,
        };
        let fields = vec![field("a", int), field(link, ptr)];
        t.complete_record(r, fields, false);
    }
    (st, r)
}

/// Defines `void <name>(void) { struct ... *p; p-><link> = (struct ... *)sizeof(struct ...);
/// *q.<?> = 0; }` in `u`, the last with the lowering's unknown record.
fn use_struct(u: &mut U, name: &str, st: TypeId, r: RecordId, link: &str) {
    let ptr = u.ir.types.pointer_to(st);
    let ty = u.fn_ty(false);
    let p = Lval::var(VarRef::Local(LocalId(0)));
    let deref = |lv: Lval, record, field: &str| Lval {
        host: Host::Mem(Box::new(Expr::Load(Box::new(lv)))),
        offsets: vec![Offset::Field {
            record,
            name: u.names.intern(field),
        }],
    };
    let f = Function {
        name: u.names.intern(name),
        linkage: Linkage::External,
        ty,
        params: vec![],
        locals: vec![Local {
            name: u.names.intern("p"),
            ty: ptr,
            kind: LocalKind::Local,
            flags: VarFlags::default(),
        }],
        blocks: vec![Block {
            instrs: vec![
                Instr::Assign {
                    dst: deref(p.clone(), r, link),
                    src: Expr::Cast(ptr, Box::new(Expr::SizeOf(st))),
                    loc: loc(0, 2),
                },
                Instr::Assign {
                    dst: deref(p, RecordId(u32::MAX), "q"),
                    src: Expr::Const(Const::Int(0)),
                    loc: loc(0, 3),
                },
            ],
            term: Terminator::Return {
                value: None,
                loc: loc(0, 4),
            },
        }],
        loc: loc(0, 1),
    };
    u.ir.functions.push(f);
    u.ir.function_hashes.push(name.len() as u64);
}

/// The record of `struct` type `t`, or of the type `t` points to.
fn record_of(p: &Program, t: TypeId) -> RecordId {
    let t = p.types.pointee(t).unwrap_or(t);
    p.types.as_record(t).expect("a struct type")
}

/// Checks `name`'s body (see [`use_struct`]) against the program table: `struct <tag>` types and
/// records throughout; returns its record.
fn check_struct_user(p: &Program, name: &str, tag: &str, link: &str) -> RecordId {
    let f = body(p, the(p, name));
    let pr = p.printer();
    let ptr = f.locals[0].ty;
    assert_eq!(pr.ty(ptr), format!("struct {tag} *"));
    let r = record_of(p, ptr);
    let Instr::Assign { dst, src, .. } = &f.blocks[0].instrs[0] else {
        panic!()
    };
    let field = Offset::Field {
        record: r,
        name: p.names.intern(link),
    };
    assert_eq!(dst.offsets, [field]);
    assert_eq!(
        src,
        &Expr::Cast(ptr, Box::new(Expr::SizeOf(p.types.pointee(ptr).unwrap())))
    );
    assert_eq!(
        pr.expr(Some(f), src),
        format!("(struct {tag} *)sizeof(struct {tag})")
    );
    let Instr::Assign { dst, .. } = &f.blocks[0].instrs[1] else {
        panic!()
    };
    assert!(matches!(
        dst.offsets[0],
        Offset::Field {
            record: RecordId(u32::MAX),
            ..
        }
    ));
    r
}

/// The fields of record `r`, printed: `name: type`.
fn fields(p: &Program, r: RecordId) -> Vec<String> {
    let pr = p.printer();
    p.types
        .record(r)
        .fields
        .iter()
        .map(|f| format!("{}: {}", p.names.get(f.name), pr.ty(f.ty)))
        .collect()
}

#[test]
fn identical_struct_definitions_link_to_one_record() {
    let names = Arc::new(Names::new());
    let make = || {
        let n = &names;
        // a: some other types first, so that a's ids differ from b's.
        let mut a = U::new(n, "a.c", &["a.c"], &[]);
        let other =
            a.ir.types
                .new_record(RecordKind::Union, Some(n.intern("other")));
        a.ir.types.complete_record(other, vec![], false);
        a.ir.types.intern(
            TypeKind::Float(crate::ir::types::FloatKind::Double),
            Quals::default(),
        );
        let (st, r) = list_struct(&mut a, "s", "next", true);
        use_struct(&mut a, "fa", st, r, "next");
        let mut b = U::new(n, "b.c", &["b.c"], &[]);
        let (st, r) = list_struct(&mut b, "s", "next", true);
        use_struct(&mut b, "fb", st, r, "next");
        let g = b.global("gs", Linkage::External, true, vec![]);
        b.ir.globals[g as usize].ty = st;
        // c: only `struct s;`.
        let mut c = U::new(n, "c.c", &["c.c"], &[]);
        let (st, r) = list_struct(&mut c, "s", "next", false);
        use_struct(&mut c, "fc", st, r, "next");
        vec![a.ir, b.ir, c.ir]
    };
    let p = link_all_orders(&names, make);
    let s = p.names.intern("s");
    let tagged: Vec<_> = p
        .types
        .records()
        .iter()
        .filter(|r| r.tag == Some(s))
        .collect();
    assert_eq!(tagged.len(), 1);
    assert!(tagged[0].complete);
    let r = check_struct_user(&p, "fa", "s", "next");
    assert_eq!(check_struct_user(&p, "fb", "s", "next"), r);
    assert_eq!(check_struct_user(&p, "fc", "s", "next"), r);
    assert_eq!(fields(&p, r), ["a: int", "next: struct s *"]);
    assert_eq!(record_of(&p, p.globals[0].global.ty), r);
    // The unused union of a is not imported; each type is stored once.
    assert_eq!(p.types.records().len(), 1);
    let mut all: Vec<_> = (0..p.types.len() as u32)
        .map(|i| p.types.get(TypeId(i)))
        .collect();
    let n = all.len();
    all.sort_by_key(|t| format!("{t:?}"));
    all.dedup();
    assert_eq!(all.len(), n);
    let dump = p.dump();
    assert!(
        dump.contains("(*p).next = (struct s *)sizeof(struct s);"),
        "{dump}"
    );
    assert!(dump.contains("locals: p: struct s *"), "{dump}");
}

#[test]
fn different_struct_definitions_stay_separate() {
    let names = Arc::new(Names::new());
    let make = || {
        let n = &names;
        let mut a = U::new(n, "a.c", &["a.c"], &[]);
        let (st, r) = list_struct(&mut a, "p", "next", true);
        use_struct(&mut a, "fa", st, r, "next");
        let mut b = U::new(n, "b.c", &["b.c"], &[]);
        let (st, r) = list_struct(&mut b, "p", "prev", true);
        use_struct(&mut b, "fb", st, r, "prev");
        let mut c = U::new(n, "c.c", &["c.c"], &[]);
        let (st, r) = list_struct(&mut c, "p", "next", false);
        use_struct(&mut c, "fc", st, r, "next");
        // d: declared only, and defined nowhere.
        let mut d = U::new(n, "d.c", &["d.c"], &[]);
        let (st, r) = list_struct(&mut d, "q", "next", false);
        use_struct(&mut d, "fd", st, r, "next");
        vec![a.ir, b.ir, c.ir, d.ir]
    };
    let p = link_all_orders(&names, make);
    let ra = check_struct_user(&p, "fa", "p", "next");
    let rb = check_struct_user(&p, "fb", "p", "prev");
    assert_ne!(ra, rb);
    assert_eq!(fields(&p, ra), ["a: int", "next: struct p *"]);
    assert_eq!(fields(&p, rb), ["a: int", "prev: struct p *"]);
    // Each list pointer points to its own record.
    for r in [ra, rb] {
        assert_eq!(record_of(&p, p.types.record(r).fields[1].ty), r);
    }
    // A declaration resolves to the definition of the lowest unit.
    assert_eq!(check_struct_user(&p, "fc", "p", "next"), ra);
    let rd = check_struct_user(&p, "fd", "q", "next");
    assert!(!p.types.record(rd).complete);
    assert_eq!(p.types.records().len(), 3);
}

#[test]
fn same_shape_takes_the_lowest_units_field_types() {
    let names = Arc::new(Names::new());
    let make = || {
        let n = &names;
        let mut units = vec![];
        for (i, long) in [false, true, true].into_iter().enumerate() {
            let mut u = U::new(n, &format!("{i}.c"), &["x.c"], &[]);
            let (st, r) = list_struct(&mut u, "s", "next", true);
            if long {
                let l = u.ir.types.intern(
                    TypeKind::Int {
                        kind: crate::ir::types::IntKind::Long,
                        signed: true,
                    },
                    Quals::default(),
                );
                u.ir.types.record_mut(r).fields[0].ty = l;
            }
            use_struct(&mut u, &format!("f{i}"), st, r, "next");
            // An anonymous struct { int x; } global in every unit.
            let anon = u.ir.types.new_record(RecordKind::Struct, None);
            let int = u.ir.types.int();
            let x = FieldDef {
                name: n.intern("x"),
                anonymous: false,
                ty: int,
                bit_width: Some(3),
            };
            u.ir.types.complete_record(anon, vec![x], false);
            let g = u.global(&format!("g{i}"), Linkage::External, true, vec![]);
            u.ir.globals[g as usize].ty =
                u.ir.types.intern(TypeKind::Record(anon), Quals::default());
            units.push(u.ir);
        }
        units
    };
    let p = link_all_orders(&names, make);
    let r = check_struct_user(&p, "f0", "s", "next");
    for f in ["f1", "f2"] {
        assert_eq!(check_struct_user(&p, f, "s", "next"), r);
    }
    assert_eq!(fields(&p, r), ["a: int", "next: struct s *"]);
    let anon: Vec<_> = p.globals.iter().map(|g| g.global.ty).collect();
    assert_eq!(anon.len(), 3);
    assert!(anon.iter().all(|&t| t == anon[0]));
    assert_eq!(p.types.records().len(), 2);
}

#[test]
fn walker_visits_types_and_records() {
    let names = Arc::new(Names::new());
    let mut u = U::new(&names, "a.c", &["a.c"], &[]);
    let (st, r) = list_struct(&mut u, "s", "next", true);
    use_struct(&mut u, "f", st, r, "next");
    let g = u.global("g", Linkage::External, true, vec![]);
    u.ir.globals[g as usize].init = vec![set_global(g, Expr::AlignOf(st), loc(0, 1))];
    struct Seen(Vec<TypeId>, Vec<RecordId>);
    impl VisitMut for Seen {
        fn type_id(&mut self, t: &mut TypeId) {
            self.0.push(*t);
        }
        fn record_id(&mut self, r: &mut RecordId) {
            self.1.push(*r);
        }
    }
    let mut seen = Seen(vec![], vec![]);
    visit::walk_function_mut(&mut seen, &mut u.ir.functions[0]);
    let f = &u.ir.functions[0];
    let ptr = f.locals[0].ty;
    assert_eq!(seen.0, [f.ty, ptr, ptr, st]);
    assert_eq!(seen.1, [r, RecordId(u32::MAX)]);
    let mut seen = Seen(vec![], vec![]);
    visit::walk_global_mut(&mut seen, &mut u.ir.globals[0]);
    assert_eq!(seen.0, [u.ir.globals[0].ty, st]);
}

#[test]
fn type_table_freeze_keeps_interning() {
    let mut t = TypeTable::new();
    let i = t.int();
    let p = t.pointer_to(i);
    t.freeze();
    assert_eq!(t.pointer_to(i), p);
    assert_eq!(t.int(), i);
    let v = t.void();
    assert_eq!(t.len(), 3);
    assert_eq!(t.void(), v);
}

#[test]
fn walker_visits_everything() {
    let names = Names::new();
    let x = names.intern("x");
    let nested = Expr::Binary(
        crate::ir::BinOp::Add,
        Box::new(Expr::Load(Box::new(Lval {
            host: crate::ir::Host::Mem(Box::new(Expr::Func(FuncRef::Named {
                name: x,
                internal: false,
            }))),
            offsets: vec![crate::ir::Offset::Index(Box::new(str_const(0)))],
        }))),
        Box::new(Expr::Const(Const::Int(1))),
    );
    let mut f = Function {
        name: x,
        linkage: Linkage::External,
        ty: TypeId(0),
        params: vec![],
        locals: vec![],
        blocks: vec![
            Block {
                instrs: vec![Instr::Asm {
                    outputs: vec![],
                    inputs: vec![nested.clone()],
                    volatile: true,
                    loc: loc(0, 2),
                }],
                term: Terminator::Goto(crate::ir::BlockId(1)),
            },
            Block {
                instrs: vec![],
                term: Terminator::Return {
                    value: Some(nested),
                    loc: loc(0, 3),
                },
            },
        ],
        loc: loc(0, 1),
    };
    let mut lines = vec![];
    for_each_loc_mut(&mut f, |l| lines.push(l.line));
    assert_eq!(lines, [1, 2, 3]);
    let mut kinds = vec![];
    for_each_expr_mut(&mut f, |e| {
        kinds.push(match e {
            Expr::Binary(..) => "bin",
            Expr::Load(_) => "load",
            Expr::Func(_) => "func",
            Expr::Const(Const::Str(_)) => "str",
            Expr::Const(_) => "const",
            _ => "other",
        });
        if let Expr::Const(Const::Int(v)) = e {
            *v += 1;
        }
    });
    assert_eq!(
        kinds,
        ["bin", "load", "func", "str", "const", "bin", "load", "func", "str", "const"]
    );
    match &f.blocks[1].term {
        Terminator::Return {
            value: Some(Expr::Binary(_, _, b)),
            ..
        } => assert_eq!(**b, Expr::Const(Const::Int(2))),
        other => panic!("{other:?}"),
    }
}
