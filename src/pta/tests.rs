//! Points-to tests on small programs, lowered and linked with the real front end.

use std::sync::Arc;

use super::*;
use crate::ir::names::Names;
use crate::link::Linker;

fn program(src: &str) -> Program {
    let names = Names::new();
    let out = crate::frontend::lower::lower_unit("t.c".into(), src, &names);
    assert!(out.parse_errors.is_empty(), "{:?}", out.parse_errors);
    assert!(
        out.unit.diagnostics.is_empty(),
        "{:?}",
        out.unit.diagnostics
    );
    let mut linker = Linker::new(Arc::new(names));
    linker.add(0, out.unit);
    linker.finish()
}

struct Fixture {
    program: Program,
    pta: PointsTo,
}

impl Fixture {
    fn new(src: &str) -> Self {
        Self::with_mode(src, FieldMode::FieldBased)
    }

    /// With indirect calls matched under `filter` (`--loose-signatures`, `--no-signature-filter`).
    fn filtered(src: &str, filter: crate::pta::SignatureFilter) -> Self {
        let Fixture { program, pta } = Self::new(src);
        let pta = pta.with_signature_filter(filter);
        Fixture { program, pta }
    }

    fn with_mode(src: &str, mode: FieldMode) -> Self {
        let program = program(src);
        let pta = PointsTo::analyze_with(&program, mode);
        Fixture { program, pta }
    }

    fn func(&self, name: &str) -> FuncId {
        let i = self
            .program
            .functions
            .iter()
            .position(|f| self.program.names.get(f.name) == name);
        FuncId(i.unwrap_or_else(|| panic!("no function {name}")) as u32)
    }

    fn global(&self, name: &str) -> GlobalId {
        let i = self
            .program
            .globals
            .iter()
            .position(|g| self.program.names.get(g.global.name) == name);
        GlobalId(i.unwrap_or_else(|| panic!("no global {name}")) as u32)
    }

    fn local(&self, f: &str, name: &str) -> u32 {
        let fid = self.func(f);
        let body = self.program.functions[fid.index()].body.as_ref().unwrap();
        let l = body
            .locals
            .iter()
            .position(|l| self.program.names.get(l.name) == name)
            .unwrap();
        self.pta.local_node(fid, LocalId(l as u32))
    }

    /// The callee expression of the first call in function `f`.
    fn first_callee(&self, f: FuncId) -> Expr {
        self.first_callee_where(f, |_| true)
    }

    fn first_indirect_callee(&self, f: FuncId) -> Expr {
        self.first_callee_where(f, |callee| callee.named_function().is_none())
    }

    fn first_callee_where(&self, f: FuncId, pick: impl Fn(&Expr) -> bool) -> Expr {
        let body = self.program.functions[f.index()].body.as_ref().unwrap();
        let callee = body
            .blocks
            .iter()
            .flat_map(|b| &b.instrs)
            .find_map(|i| match i {
                Instr::Call { callee, .. } if pick(callee) => Some(callee.clone()),
                _ => None,
            });
        callee.expect("a call")
    }

    /// The class a global pointer's value points to.
    fn target_of_global(&self, name: &str) -> Option<u32> {
        self.pta.target(self.pta.global_node(self.global(name)))
    }

    fn class_of_global(&self, name: &str) -> u32 {
        self.pta.class(self.pta.global_node(self.global(name)))
    }
}

#[test]
fn aliasing_through_assignment_and_address_of() {
    let fx = Fixture::new("int a, b, c; int *p, *q, *r; void f(void) { p = &a; q = p; r = &c; }");
    assert_eq!(fx.target_of_global("p"), Some(fx.class_of_global("a")));
    assert_eq!(fx.target_of_global("q"), Some(fx.class_of_global("a")));
    assert_eq!(fx.target_of_global("r"), Some(fx.class_of_global("c")));
    assert_ne!(fx.class_of_global("a"), fx.class_of_global("c"));
    assert_ne!(fx.class_of_global("a"), fx.class_of_global("b"));
}

#[test]
fn double_pointers_unify_the_inner_targets() {
    let fx = Fixture::new(
        "int x, y; int *p, *q; int **pp; void f(void) { p = &x; pp = &p; *pp = &y; q = *pp; }",
    );
    // *pp = &y makes p point to y as well as x: x and y are one class.
    assert_eq!(fx.class_of_global("x"), fx.class_of_global("y"));
    assert_eq!(fx.target_of_global("pp"), Some(fx.class_of_global("p")));
    assert_eq!(fx.target_of_global("q"), Some(fx.class_of_global("x")));
}

const TWO_FIELDS: &str =
    "struct s { int *a; int *b; } g; int x, y; void f(struct s *p) { g.a = &x; p = &g; p->b = &y; }";

#[test]
fn struct_fields_are_merged_field_insensitively() {
    let fx = Fixture::with_mode(TWO_FIELDS, FieldMode::Insensitive);
    assert_eq!(fx.class_of_global("x"), fx.class_of_global("y"));
    assert_eq!(fx.target_of_global("g"), Some(fx.class_of_global("x")));
}

#[test]
fn struct_fields_stay_apart_field_based() {
    let fx = Fixture::new(TWO_FIELDS);
    assert_ne!(fx.class_of_global("x"), fx.class_of_global("y"));
    let f = fx.func("f");
    let body = fx.program.functions[f.index()].body.as_ref().unwrap();
    let member_targets: Vec<u32> = body
        .blocks
        .iter()
        .flat_map(|b| &b.instrs)
        .filter_map(|i| match i {
            Instr::Assign { dst, .. } if !dst.offsets.is_empty() => fx.pta.lval_class(f, dst),
            _ => None,
        })
        .filter_map(|c| fx.pta.target(c))
        .collect();
    // g.a -> x and p->b -> y: two members, two targets.
    assert_eq!(
        member_targets,
        vec![fx.class_of_global("x"), fx.class_of_global("y")]
    );
}

#[test]
fn variadic_arguments_reach_va_arg() {
    let src = "typedef __builtin_va_list va_list;
        void (*hook)(int);
        void cb(int x) {}
        void config(int op, ...) {
            va_list ap;
            __builtin_va_start(ap, op);
            hook = __builtin_va_arg(ap, void (*)(int));
            __builtin_va_end(ap);
        }
        void setup(void) { config(1, cb); }
        void fire(void) { hook(3); }";
    let fx = Fixture::new(src);
    let fire = fx.func("fire");
    let callee = fx.first_callee(fire);
    assert_eq!(fx.pta.call_targets(fire, &callee), vec![fx.func("cb")]);
}

#[test]
fn function_pointers_in_structs_and_arrays_resolve_calls() {
    let src = "struct ops { void (*run)(int *); } ops;
        void (*table[2])(int *);
        int data;
        void h1(int *p) { *p = 1; }
        void h2(int *p) { *p = 2; }
        void h3(int *p) { *p = 3; }
        void setup(void) { ops.run = h1; table[0] = h2; table[1] = &h2; }
        void go(int i) { ops.run(&data); table[i](&data); }";
    let fx = Fixture::new(src);
    let go = fx.func("go");
    let calls: Vec<Vec<String>> = fx.program.functions[go.index()]
        .body
        .as_ref()
        .unwrap()
        .blocks
        .iter()
        .flat_map(|b| &b.instrs)
        .filter_map(|i| match i {
            Instr::Call { callee, .. } => Some(
                fx.pta
                    .call_targets(go, callee)
                    .iter()
                    .map(|f| fx.program.function_label(*f))
                    .collect(),
            ),
            _ => None,
        })
        .collect();
    assert_eq!(calls, vec![vec!["h1".to_string()], vec!["h2".to_string()]]);
    // The formal of h1 receives &data.
    let h1p = fx.local("h1", "p");
    assert_eq!(fx.pta.target(h1p), Some(fx.class_of_global("data")));
    assert_eq!(fx.pta.stats.unresolved_indirect_calls, 0);
}

#[test]
fn callbacks_passed_as_arguments() {
    let src = "int v;
        void cb(int *p) { *p = 0; }
        void each(void (*fn)(int *), int *arg) { fn(arg); }
        void main_(void) { each(cb, &v); }";
    let fx = Fixture::new(src);
    let each = fx.func("each");
    let callee = fx.first_callee(each);
    let targets = fx.pta.call_targets(each, &callee);
    assert_eq!(targets, vec![fx.func("cb")]);
    assert_eq!(
        fx.pta.target(fx.local("cb", "p")),
        Some(fx.class_of_global("v"))
    );
}

#[test]
fn pthread_create_calls_the_start_routine_with_its_argument() {
    let src = "typedef unsigned long pthread_t;
        int pthread_create(pthread_t *, const void *, void *(*)(void *), void *);
        struct work { int count; };
        void *worker(void *arg) { struct work *w = arg; w->count++; return 0; }
        int shared_counter;
        void start(void) {
            pthread_t t;
            struct work *w = malloc(sizeof *w);
            pthread_create(&t, 0, worker, w);
        }
        void *malloc(unsigned long);";
    let fx = Fixture::new(src);
    let w = fx
        .pta
        .target(fx.local("start", "w"))
        .expect("w points somewhere");
    assert!(
        matches!(fx.pta.class_members(w)[..], [Origin::Alloc(..)]),
        "{:?}",
        fx.pta.class_members(w)
    );
    assert_eq!(fx.pta.target(fx.local("worker", "arg")), Some(w));
    assert!(
        fx.pta.escaping().contains(&w),
        "the thread argument escapes"
    );
    assert_eq!(fx.pta.stats.thread_creations, 1);
}

#[test]
fn locals_not_reachable_from_globals_do_not_escape() {
    let src = "int *g; void f(void) { int a, b; int *p = &a; g = &b; *p = 1; }";
    let fx = Fixture::new(src);
    let escaping = fx.pta.escaping();
    assert!(escaping.contains(&fx.pta.class(fx.local("f", "b"))));
    assert!(!escaping.contains(&fx.pta.class(fx.local("f", "a"))));
}

#[test]
fn return_values_and_allocation_sites() {
    let src = "void *malloc(unsigned long);
        int *mk(void) { return malloc(4); }
        int *p, *q;
        void f(void) { p = mk(); q = malloc(8); }";
    let fx = Fixture::new(src);
    let (tp, tq) = (
        fx.target_of_global("p").unwrap(),
        fx.target_of_global("q").unwrap(),
    );
    assert_ne!(tp, tq, "two allocation sites stay apart");
    assert_eq!(fx.pta.class_size(tp), 1);
    assert_eq!(fx.pta.stats.allocation_sites, 2);
}

#[test]
fn lvalue_classes_for_accesses() {
    let src = "struct s { int f; } a, b; void f(struct s *p, struct s *q) { p->f = 1; q->f = 2; } void g(void) { f(&a, &a); f(&b, &b); }";
    let fx = Fixture::new(src);
    let f = fx.func("f");
    let body = fx.program.functions[f.index()].body.as_ref().unwrap();
    let classes: Vec<Option<u32>> = body
        .blocks
        .iter()
        .flat_map(|b| &b.instrs)
        .filter_map(|i| match i {
            Instr::Assign { dst, .. } => Some(fx.pta.lval_class(f, dst)),
            _ => None,
        })
        .collect();
    assert_eq!(classes.len(), 2);
    assert_eq!(classes[0], classes[1], "p->f and q->f may alias");
    let insensitive = Fixture::with_mode(src, FieldMode::Insensitive);
    let p_f = insensitive.pta.lval_class(
        f,
        &match &body.blocks[0].instrs[0] {
            Instr::Assign { dst, .. } => dst.clone(),
            other => panic!("{other:?}"),
        },
    );
    assert_eq!(p_f, Some(insensitive.class_of_global("a")));
    assert_eq!(insensitive.pta.class_size(p_f.unwrap()), 2, "a and b");
}

#[test]
fn indirect_targets_are_filtered_by_arity() {
    use crate::callgraph::IndirectCalls;
    // One pointer holds both a one- and a two-parameter function (through a cast).
    let src = "typedef void (*fn1)(int);
        void one(int a) {}
        void two(int a, int b) {}
        fn1 p;
        void set(int c) { p = c ? one : (fn1)two; }
        void call(void) { p(1); }";
    let fx = Fixture::new(src);
    let call = fx.func("call");
    let callee = fx.first_callee(call);

    let mut all = fx.pta.call_targets(call, &callee);
    all.sort();
    assert_eq!(all, vec![fx.func("one"), fx.func("two")]);
    assert_eq!(
        fx.pta.targets(&fx.program, call, &callee, 1),
        Some(vec![fx.func("one")])
    );
}

/// Targets sorted, by name.
fn target_names(fx: &Fixture, caller: &str) -> Vec<String> {
    use crate::callgraph::IndirectCalls;
    let call = fx.func(caller);
    let callee = fx.first_indirect_callee(call);
    let mut names: Vec<String> = fx
        .pta
        .targets(&fx.program, call, &callee, 1)
        .unwrap_or_default()
        .into_iter()
        .map(|f| {
            fx.program
                .names
                .get(fx.program.functions[f.index()].name)
                .to_string()
        })
        .collect();
    names.sort();
    names
}

#[test]
fn indirect_targets_are_filtered_by_signature() {
    // One `void *` slot holds callbacks of every kind; each call's pointer type picks its own.
    let src = "struct a { int n; }; struct b { int n; };
        void on_a(struct a *x) {}
        void on_b(struct b *x) {}
        void on_void(void *x) {}
        void on_int(long x) {}
        void on_str(char *x) {}
        void on_short(short x) {}
        enum e { E0 };
        void on_enum(enum e x) {}
        int ret_int(long x) { return 0; }
        void *slot;
        void set(int c) {
            slot = c == 0 ? (void *)on_a : c == 1 ? (void *)on_b : (void *)on_void;
            slot = c == 2 ? (void *)on_int : (void *)on_str;
            slot = c == 3 ? (void *)on_short : c == 4 ? (void *)ret_int : (void *)on_enum;
        }
        void call_a(void) { ((void (*)(struct a *))slot)(0); }
        void call_void(void) { ((void (*)(void *))slot)(0); }
        void call_int(void) { ((void (*)(long))slot)(0); }
        void call_ret_int(void) { ((int (*)(long))slot)(0); }
        void call_str(void) { ((void (*)(char *))slot)(0); }
        void call_untyped(void) { void (*f)() = slot; f(0); }";
    // C's compatibility: `void *` is not `struct a *`; a `long` is not a `short`, nor a
    // `void` result an `int` one; an enum may be any integer.
    let fx = Fixture::new(src);
    assert_eq!(target_names(&fx, "call_a"), ["on_a"]);
    assert_eq!(target_names(&fx, "call_void"), ["on_str", "on_void"]);
    assert_eq!(target_names(&fx, "call_int"), ["on_enum", "on_int"]);
    assert_eq!(target_names(&fx, "call_ret_int"), ["ret_int"]);
    assert_eq!(target_names(&fx, "call_str"), ["on_str", "on_void"]);
    assert_eq!(
        target_names(&fx, "call_untyped").len(),
        8,
        "unprototyped: all"
    );
    // `--loose-signatures`: `void *` matches a pointer to any struct; results and integer
    // sizes are not compared.
    let fx = Fixture::filtered(src, crate::pta::SignatureFilter::Loose);
    assert_eq!(
        target_names(&fx, "call_int"),
        ["on_enum", "on_int", "on_short", "ret_int"]
    );
    assert_eq!(target_names(&fx, "call_a"), ["on_a", "on_void"]);
    assert_eq!(
        target_names(&fx, "call_void"),
        ["on_a", "on_b", "on_str", "on_void"]
    );
    assert_eq!(target_names(&fx, "call_str"), ["on_str", "on_void"]);
}

#[test]
fn a_function_cast_to_another_signature_is_a_target_through_that_signature() {
    let src = "struct a { int n; }; struct b { int n; }; struct c { int n; };
        void on_b(struct b *x) {}
        void on_other_b(struct b *x) {}
        void on_c(struct c *x) {}
        void (*typed)(struct a *) = (void (*)(struct a *))on_b;
        void *slot;
        void set(void) { slot = (void *)on_other_b; slot = (void *)typed; slot = (void *)on_c; }
        void call_a(void) { ((void (*)(struct a *))slot)(0); }
        void call_b(void) { ((void (*)(struct b *))slot)(0); }
        void call_c(void) { ((void (*)(struct c *))slot)(0); }";
    let fx = Fixture::new(src);
    assert_eq!(target_names(&fx, "call_a"), ["on_b"]);
    assert_eq!(target_names(&fx, "call_b"), ["on_b", "on_other_b"]);
    assert_eq!(
        target_names(&fx, "call_c"),
        ["on_c"],
        "on_b is not cast to take a struct c *"
    );
}

#[test]
fn indirect_targets_are_filtered_by_the_member_loaded_from() {
    // `shared` sits in two tables: Steensgaard merges all four members' targets.
    let src = "struct fops { int (*read)(int); int (*write)(int); };
        struct iops { int (*lookup)(int); };
        int shared(int x) { return x; }
        int r1(int x) { return x; }
        int l1(int x) { return x; }
        struct fops f0 = { .read = shared };
        struct fops f1 = { .read = r1, .write = shared };
        struct iops i1 = { .lookup = l1 };
        void set(struct iops *i) { i->lookup = shared; }
        void call_read(struct fops *f) { f->read(1); }
        void call_lookup(struct iops *i) { i->lookup(1); }
        void call_copy(struct fops *f) { int (*fn)(int) = f->write; fn(1); }
        struct wrap { int (*fn)(int); };
        void call_wrap(struct wrap *w) { w->fn = i1.lookup; w->fn(1); }";
    let fx = Fixture::new(src);
    assert_eq!(target_names(&fx, "call_read"), ["r1", "shared"]);
    assert_eq!(target_names(&fx, "call_lookup"), ["l1", "shared"]);
    assert_eq!(target_names(&fx, "call_copy"), ["shared"]);
    // A copy from one member to another: `wrap.fn` has `iops.lookup`'s targets.
    assert_eq!(target_names(&fx, "call_wrap"), ["l1", "shared"]);
    let unfiltered = Fixture::filtered(src, crate::pta::SignatureFilter::Off);
    assert_eq!(
        target_names(&unfiltered, "call_read"),
        ["l1", "r1", "shared"]
    );
}

#[test]
fn members_written_in_ways_not_seen_are_not_filtered() {
    let src = "struct ops { int (*cb)(int); int (*other)(int); };
        union u { int (*a)(int); int (*b)(int); };
        int one(int x) { return x; }
        int two(int x) { return x; }
        struct ops table = { .cb = one, .other = one };
        union u un = { .a = one };
        void reg(struct ops *o, int (*cb)(int)) { o->cb = cb; }
        void use(int (*cb)(int)) { reg(&table, cb); }
        void (*hook)(int (*)(int)) = use;
        void addr(int (**slot)(int)) { *slot = two; }
        void take(void) { addr(&table.other); }
        void set_union(void) { un.b = two; }
        void call_cb(struct ops *o) { o->cb(1); }
        void call_other(struct ops *o) { o->other(1); }
        void call_union(void) { un.a(1); }
        void init(void) { use(two); }";
    let fx = Fixture::new(src);
    assert_eq!(
        target_names(&fx, "call_cb"),
        ["one", "two"],
        "stored from the formal of a function called through a pointer"
    );
    assert_eq!(
        target_names(&fx, "call_other"),
        ["one", "two"],
        "address taken"
    );
    assert_eq!(
        target_names(&fx, "call_union"),
        ["one", "two"],
        "union member"
    );
}

#[test]
fn arguments_of_direct_calls_flow_into_the_callee_formals() {
    // `any` merges the three functions into one class; `init_entry` stores its parameter into
    // the member, and its only (direct) call passes `wake_a`.
    let src = "struct w { int (*func)(int); };
        int wake_a(int x) { return x; }
        int wake_b(int x) { return x; }
        int other(int x) { return x; }
        void *any;
        void merge(void) { any = wake_a; any = wake_b; any = other; }
        static void init_entry(struct w *e, int (*f)(int)) { e->func = f; }
        void setup(struct w *e) { init_entry(e, wake_a); }
        void call(struct w *e) { e->func(1); }
        void call_any(void) { ((int (*)(int))any)(1); }";
    let fx = Fixture::new(src);
    assert_eq!(target_names(&fx, "call"), ["wake_a"]);
    assert_eq!(target_names(&fx, "call_any"), ["other", "wake_a", "wake_b"]);
}

#[test]
fn a_trampoline_call_is_the_call_through_its_key() {
    // linux.toml's static calls: `__SCT__hook(1)` jumps to `__SCK__hook.func`, which holds `a`
    // initially and whatever `update` stores; the trampoline's type filters the stored ones.
    let src = "struct static_call_key { void *func; };
        void a(int x) {}
        void b(int x) {}
        void c(char *s) {}
        extern typeof(a) __SCT__hook;
        extern typeof(a) __SCT__unkeyed;
        struct static_call_key __SCK__hook = { .func = a };
        void update(void *f) { __SCK__hook.func = f; }
        void setup(void) { update((void *)b); update((void *)c); }
        void fire(void) { __SCT__hook(1); }
        void other(void) { __SCT__unkeyed(1); }";
    let mut program = program(src);
    let trampolines = crate::models::Models::builtin_ref().trampolines();
    assert_eq!(
        crate::link::trampolines::rewrite(&mut program, trampolines),
        1
    );
    let pta = PointsTo::analyze_with(&program, FieldMode::FieldBased);
    let fx = Fixture { program, pta };
    assert_eq!(target_names(&fx, "fire"), ["a", "b"]);
    let other = fx.func("other");
    assert_eq!(
        fx.first_callee(other).named_function(),
        Some(fx.func("__SCT__unkeyed")),
        "no key global: the call stays a direct call to an unknown external"
    );
}

#[test]
fn a_call_through_a_member_of_an_anonymous_union_is_filtered_by_its_type() {
    // The kernel's `t->callback(t)` in tasklet_action_common: `callback` sits in an anonymous
    // union; its type (not an unknown one) filters the targets of the merged `void *` class.
    let src = "struct tasklet { int state; union { void (*func)(unsigned long d); void (*callback)(struct tasklet *t); }; };
        struct other { int x; };
        void cb(struct tasklet *t) {}
        void old(unsigned long d) {}
        void oth(struct other *o) {}
        void *hub[3] = { (void *)cb, (void *)old, (void *)oth };
        void set(struct tasklet *t, int i) { t->callback = hub[i]; }
        void run(struct tasklet *t) { t->callback(t); }";
    let fx = Fixture::new(src);
    assert_eq!(target_names(&fx, "run"), ["cb"]);
}

#[test]
fn parked_addresses_and_returned_handlers_keep_slots_closed() {
    // `pool_init`'s address sits in a global nobody reads (the kernel's `EXPORT_SYMBOL`): no
    // call through a pointer passes its formal unseen values. `sink_init`'s is read and
    // called. `handler_for` returns a known function; `lookup` returns what an external does.
    let src = "struct pool { int (*release)(int); };
        struct sink { int (*put)(int); };
        int quiet(int x) { return x; }
        int loud(int x) { return x; }
        int other(int x) { return x; }
        void *any;
        void merge(void) { any = quiet; any = loud; any = other; }
        void pool_init(struct pool *p, int (*f)(int)) { p->release = f; }
        void *__addressable_pool_init = (void *)&pool_init;
        void sink_init(struct sink *s, int (*f)(int)) { s->put = f; }
        void *__addressable_sink_init = (void *)&sink_init;
        void setup(struct pool *p, struct sink *s) {
            pool_init(p, quiet);
            sink_init(s, quiet);
            ((void (*)(struct sink *, int (*)(int)))__addressable_sink_init)(s, loud);
        }
        void call_pool(struct pool *p) { p->release(1); }
        void call_sink(struct sink *s) { s->put(1); }
        typedef int (*handler_t)(int);
        static handler_t handler_for(int c) { return c ? loud : 0; }
        long cookies[2];
        void stash(void) { cookies[0] = (long)other; }
        static handler_t lookup(int c) { return (handler_t)cookies[c]; }
        void call_returned(void) { handler_t h = handler_for(1); h(1); }
        void call_external(void) { handler_t h = lookup(1); h(1); }";
    let fx = Fixture::new(src);
    assert_eq!(target_names(&fx, "call_pool"), ["quiet"]);
    assert_eq!(target_names(&fx, "call_sink"), ["loud", "other", "quiet"]);
    assert_eq!(target_names(&fx, "call_returned"), ["loud"]);
    assert_eq!(
        target_names(&fx, "call_external"),
        ["loud", "other", "quiet"]
    );
}

#[test]
fn a_call_is_described_by_the_slot_it_loads_from() {
    let src = "struct ops { int (*read)(int); };
        struct ops2 { int (*write)(int); };
        int r(int x) { return x; }
        struct ops f0 = { .read = r };
        struct ops2 g2 = { .write = r };
        int (**taken)(int) = &g2.write;
        void call(struct ops *o) { o->read(1); }
        void call_open(struct ops2 *o) { o->write(1); }
        void call_deref(int (**p)(int)) { (*p)(1); }
        struct ops3 { int (*cb)(int); };
        long cookie;
        void set3(struct ops3 *o) { int (*f)(int) = (int (*)(int))cookie; o->cb = f; }
        void call_copied(struct ops3 *o) { o->cb(1); }";
    let fx = Fixture::new(src);
    let describe = |name: &str| {
        let f = fx.func(name);
        let callee = fx.first_indirect_callee(f);
        fx.pta.describe_call_slot(&fx.program, f, &callee)
    };
    assert_eq!(
        describe("call"),
        "through member ops.read (closed: 1 functions)"
    );
    assert_eq!(
        describe("call_open"),
        "through member ops2.write (open: address taken)"
    );
    assert_eq!(describe("call_deref"), "not through a slot");
    assert_eq!(
        describe("call_copied"),
        "through member ops3.cb (open: copied from a local of set3, unknown value stored)"
    );
}

#[test]
fn dead_calls_hand_nothing_to_unknown_code() {
    // `held` has no body: what a call hands it joins unknown code's memory, one class.
    let classes_meet = |body: &str| {
        let src =
            format!("int a, b; int *pa = &a, *pb = &b; int held(int *); void f(void) {{ {body} }}");
        let fx = Fixture::new(&src);
        fx.target_of_global("pa") == fx.target_of_global("pb")
    };
    assert!(classes_meet("held(pa); held(pb);"));
    // `RCU_LOCKDEP_WARN` without lockdep, a configuration switch that is off, a size test.
    assert!(!classes_meet(
        "do { } while (0 && held(pa)); if (0) held(pb); if (sizeof(int) == 2) held(pa);"
    ));
}

#[test]
fn the_constraint_joining_two_large_classes_is_named() {
    // `pa`'s and `pb`'s targets grow one variable at a time; `bridge` joins the two classes.
    let n = 70;
    let decls: String = (0..n).map(|i| format!("int a{i}, b{i}; ")).collect();
    let stores: String = (0..n)
        .map(|i| format!("pa = &a{i}; pb = &b{i}; "))
        .collect();
    let src = format!(
        "{decls} int *pa, *pb; void grow(void) {{ {stores} }}\nvoid bridge(void) {{ pa = pb; }}"
    );
    let fx = Fixture::new(&src);
    let class = fx.target_of_global("pa").unwrap();
    let merges = fx.pta.merges_into(class);
    assert_eq!(merges.len(), 1, "{merges:?}");
    assert_eq!(merges[0].sizes, (n, n));
    match merges[0].cause {
        MergeCause::Instr(f, loc) => {
            assert_eq!(f, fx.func("bridge"));
            assert_eq!(loc.line, 2);
        }
        other => panic!("caused by {other:?}"),
    }
}
