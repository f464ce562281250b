//! Model files: the built-in ones parse and say what they should; the loader's overrides and
//! errors; the points-to solver applies models (also over bodies).

use std::path::Path;
use std::sync::Arc;

use super::load::{line_col, parse_for_test};
use super::*;
use crate::ir::names::Names;
use crate::ir::*;
use crate::link::{Linker, Program};
use crate::pta::{FieldMode, Origin, PointsTo};

fn builtin() -> &'static Models {
    Models::builtin_ref()
}

fn get(name: &str) -> &'static Model {
    builtin()
        .get(name)
        .unwrap_or_else(|| panic!("no model for {name}"))
}

fn lock_arg(arg: usize, mode: LockMode) -> Option<LockEffect> {
    Some(LockEffect {
        target: LockTarget::Arg { arg },
        mode,
    })
}

fn trylock(arg: usize, mode: LockMode, success: Success) -> Option<TryLockEffect> {
    Some(TryLockEffect {
        target: LockTarget::Arg { arg },
        mode,
        success,
    })
}

fn atomic(arg: usize, read: bool, write: bool) -> Option<AtomicEffect> {
    Some(AtomicEffect { arg, read, write })
}

// ---------------------------------------------------------------------------------------------
// The built-in files.

#[test]
fn builtin_files_parse() {
    let mut total = 0;
    for (file, text) in BUILTIN_FILES {
        let path = Path::new("models").join(file);
        let functions = parse_for_test(&path, text).unwrap_or_else(|e| panic!("{e}"));
        assert!(!functions.is_empty(), "{file} models nothing");
        assert!(
            functions.iter().all(|(_, m)| m.is_some()),
            "{file}: built-in files never use `use_body`"
        );
        total += functions.len();
    }
    let m = builtin();
    assert_eq!(m.families().len(), BUILTIN_FILES.len());
    assert!(m
        .families()
        .iter()
        .all(|f| f.origin == ModelOrigin::Builtin));
    // No name is modelled by two built-in files: nothing is silently overridden.
    assert_eq!(m.len(), total, "a name is modelled by two built-in files");
    assert!(m.len() > 1000, "{} models", m.len());
}

#[test]
fn builtin_files_are_sorted_and_all_embedded() {
    let names: Vec<&str> = BUILTIN_FILES.iter().map(|(f, _)| *f).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.ends_with(".toml").then_some(name)
        })
        .collect();
    on_disk.sort();
    assert_eq!(on_disk, names, "every models/*.toml is embedded");
}

#[test]
fn family_infos() {
    let m = builtin();
    let pthread = m
        .families()
        .iter()
        .find(|f| f.file == "pthread.toml")
        .unwrap();
    assert_eq!(pthread.family, "pthread");
    assert!(pthread.functions > 50);
    assert_eq!(m.family_of("mutex_lock").unwrap().family, "linux");
    assert_eq!(m.family_of("memcpy").unwrap().family, "libc");
    assert!(m.family_of("no_such_function").is_none());
}

#[test]
fn pthread_models() {
    let m = get("pthread_mutex_lock");
    assert_eq!(m.lock, lock_arg(0, LockMode::Exclusive));
    assert_eq!(
        get("pthread_mutex_trylock").trylock,
        trylock(0, LockMode::Exclusive, Success::Zero)
    );
    assert_eq!(
        get("pthread_mutex_timedlock").trylock,
        trylock(0, LockMode::Exclusive, Success::Zero)
    );
    assert_eq!(
        get("pthread_mutex_unlock").unlock,
        lock_arg(0, LockMode::Exclusive)
    );
    assert_eq!(
        get("pthread_rwlock_rdlock").lock,
        lock_arg(0, LockMode::Shared)
    );
    assert_eq!(
        get("pthread_rwlock_timedrdlock").trylock,
        trylock(0, LockMode::Shared, Success::Zero)
    );
    assert_eq!(
        get("pthread_rwlock_wrlock").lock,
        lock_arg(0, LockMode::Exclusive)
    );
    assert!(get("pthread_rwlock_unlock").unlock.is_some());
    assert_eq!(
        get("pthread_spin_trylock").trylock,
        trylock(0, LockMode::Exclusive, Success::Zero)
    );
    let once = get("pthread_once")
        .callbacks
        .first()
        .cloned()
        .expect("pthread_once calls back");
    assert_eq!((once.arg, once.run), (1, crate::models::CallbackRun::Sync));
    for pure in ["pthread_barrier_wait", "pthread_self"] {
        let m = get(pure);
        assert!(m.pure && !m.has_effect(), "{pure}");
    }
    for cond in ["pthread_cond_wait", "pthread_cond_signal"] {
        let m = get(cond);
        assert_eq!(m.atomic, atomic(0, true, true), "{cond}");
        assert!(m.lock.is_none() && m.unlock.is_none(), "{cond}");
    }
    assert_eq!(
        get("pthread_create").thread_create,
        Some(ThreadCreateEffect {
            start: 2,
            arg: Some(3),
            handle: Some(0)
        })
    );
    assert_eq!(
        get("pthread_join").thread_join,
        Some(ThreadJoinEffect { handle: 0 })
    );
}

#[test]
fn c11_and_glib_models() {
    assert_eq!(get("mtx_lock").lock, lock_arg(0, LockMode::Exclusive));
    assert_eq!(
        get("mtx_trylock").trylock,
        trylock(0, LockMode::Exclusive, Success::Zero)
    );
    assert_eq!(
        get("thrd_create").thread_create,
        Some(ThreadCreateEffect {
            start: 1,
            arg: Some(2),
            handle: Some(0)
        })
    );
    assert_eq!(
        get("thrd_join").thread_join,
        Some(ThreadJoinEffect { handle: 0 })
    );
    assert!(get("cnd_wait").pure);
    assert_eq!(get("call_once").callbacks.first().map(|c| c.arg), Some(1));

    assert_eq!(
        get("g_mutex_trylock").trylock,
        trylock(0, LockMode::Exclusive, Success::Nonzero)
    );
    assert_eq!(
        get("g_rw_lock_reader_lock").lock,
        lock_arg(0, LockMode::Shared)
    );
    assert_eq!(
        get("g_thread_new").thread_create,
        Some(ThreadCreateEffect {
            start: 1,
            arg: Some(2),
            handle: None
        })
    );
    assert_eq!(
        get("g_realloc").alloc,
        Some(AllocEffect {
            copies_arg: Some(0),
            fills: false,
        })
    );
}

#[test]
fn allocation_and_libc_models() {
    for name in [
        "malloc",
        "strdup",
        "alloca",
        "__builtin_alloca",
        "aligned_alloc",
    ] {
        assert_eq!(get(name).alloc, Some(AllocEffect::default()), "{name}");
    }
    assert_eq!(
        get("realloc").alloc,
        Some(AllocEffect {
            copies_arg: Some(0),
            fills: true,
        })
    );
    assert_eq!(
        get("calloc").alloc,
        Some(AllocEffect {
            copies_arg: None,
            fills: true,
        })
    );
    assert_eq!(
        get("posix_memalign").alloc_out,
        Some(AllocOutEffect { arg: 0 })
    );
    assert_eq!(get("free").writes, vec![0]);
    assert_eq!(get("memset").writes, vec![0]);
    assert_eq!(get("memset").returns_arg, Some(0));
    assert_eq!(get("read").writes, vec![1]);
    assert_eq!(get("snprintf").reads_from, Some(3));
    assert_eq!(
        get("rand").state.as_ref().map(|s| s.name.as_str()),
        Some("rand")
    );
    let qsort = get("qsort")
        .callbacks
        .first()
        .cloned()
        .expect("qsort calls back");
    assert_eq!((qsort.arg, qsort.actual_for(1)), (3, Some(0)));
    assert_eq!(get("memcpy").copy, Some(CopyEffect { dst: 0, src: 1 }));
    assert_eq!(
        get("__builtin___memcpy_chk").copy,
        Some(CopyEffect { dst: 0, src: 1 })
    );
    assert_eq!(get("bcopy").copy, Some(CopyEffect { dst: 1, src: 0 }));
    assert_eq!(get("strchr").returns_arg, Some(0));
    assert!(get("__builtin_va_arg").va_arg);
    assert_eq!(get("strlen").reads, vec![0, 1]);
    assert_eq!(get("printf").reads_from, Some(1));
    for pure in ["__assert_fail", "__builtin_va_start", "usleep"] {
        assert!(get(pure).pure, "{pure}");
    }
}

#[test]
fn atomic_models() {
    assert_eq!(get("__atomic_load_n").atomic, atomic(0, true, false));
    assert_eq!(get("__atomic_store_n").atomic, atomic(0, false, true));
    assert_eq!(get("__atomic_fetch_add").atomic, atomic(0, true, true));
    assert_eq!(
        get("__atomic_compare_exchange_n").atomic,
        atomic(0, true, true)
    );
    assert_eq!(
        get("__sync_val_compare_and_swap").atomic,
        atomic(0, true, true)
    );
    assert_eq!(get("__sync_lock_release").atomic, atomic(0, false, true));
    for pure in [
        "__sync_synchronize",
        "__atomic_thread_fence",
        "__atomic_signal_fence",
        "atomic_thread_fence",
    ] {
        assert!(get(pure).pure, "{pure}");
    }
}

#[test]
fn linux_lock_models() {
    // Both layers of a spinlock name the spinlock_t argument; spinlock_check passes it through.
    for name in [
        "spin_lock",
        "spin_lock_irqsave",
        "_raw_spin_lock",
        "_raw_spin_lock_irqsave",
        "raw_spin_lock_bh",
        "__raw_spin_lock",
    ] {
        assert_eq!(get(name).lock, lock_arg(0, LockMode::Exclusive), "{name}");
    }
    for name in ["spin_unlock_irqrestore", "_raw_spin_unlock_irqrestore"] {
        assert!(get(name).unlock.is_some(), "{name}");
    }
    assert_eq!(get("spinlock_check").returns_arg, Some(0));
    assert_eq!(
        get("spin_trylock").trylock,
        trylock(0, LockMode::Exclusive, Success::Nonzero)
    );
    assert_eq!(get("_raw_read_lock").lock, lock_arg(0, LockMode::Shared));
    assert_eq!(
        get("_raw_write_lock_irqsave").lock,
        lock_arg(0, LockMode::Exclusive)
    );
    assert_eq!(
        get("mutex_lock_interruptible").trylock,
        trylock(0, LockMode::Exclusive, Success::Zero)
    );
    assert_eq!(
        get("mutex_trylock").trylock,
        trylock(0, LockMode::Exclusive, Success::Nonzero)
    );
    // down_trylock returns 0 on success, unlike the other trylocks.
    assert_eq!(
        get("down_trylock").trylock,
        trylock(0, LockMode::Exclusive, Success::Zero)
    );
    assert_eq!(
        get("down_read_trylock").trylock,
        trylock(0, LockMode::Shared, Success::Nonzero)
    );
    let downgrade = get("downgrade_write");
    assert!(downgrade.unlock.is_some());
    assert_eq!(downgrade.lock, lock_arg(0, LockMode::Shared));
    let rcu = Some(LockEffect {
        target: LockTarget::Global {
            global: "rcu".into(),
        },
        mode: LockMode::Shared,
    });
    assert_eq!(get("rcu_read_lock").lock, rcu);
    assert_eq!(get("rcu_read_lock_bh").lock, rcu);
    assert!(get("rcu_read_unlock").unlock.is_some());
    assert_eq!(get("bit_spin_lock").lock, lock_arg(1, LockMode::Exclusive));
}

#[test]
fn linux_other_models() {
    assert_eq!(
        get("kthread_create_on_node").thread_create,
        Some(ThreadCreateEffect {
            start: 0,
            arg: Some(1),
            handle: None
        })
    );
    assert!(get("queue_work_on").pure);
    assert_eq!(get("kmalloc").alloc, Some(AllocEffect::default()));
    assert_eq!(get("kmalloc_noprof").alloc, Some(AllocEffect::default()));
    assert_eq!(
        get("krealloc").alloc,
        Some(AllocEffect {
            copies_arg: Some(0),
            fills: false,
        })
    );
    assert!(get("kfree").pure);
    assert_eq!(get("atomic_read").atomic, atomic(0, true, false));
    assert_eq!(get("atomic_set").atomic, atomic(0, false, true));
    assert_eq!(get("atomic_inc").atomic, atomic(0, true, true));
    assert_eq!(get("atomic64_dec_and_test").atomic, atomic(0, true, true));
    assert_eq!(get("atomic_long_cmpxchg").atomic, atomic(0, true, true));
    // atomic_add(i, v): the atomic_t is argument 1.
    assert_eq!(get("atomic_add").atomic, atomic(1, true, true));
    assert_eq!(
        get("atomic_fetch_sub_release").atomic,
        atomic(1, true, true)
    );
    assert_eq!(get("raw_atomic_add_return").atomic, atomic(1, true, true));
    // Bit operations: set_bit(nr, addr).
    assert_eq!(get("set_bit").atomic, atomic(1, true, true));
    assert_eq!(get("test_bit").atomic, atomic(1, true, false));
    assert!(builtin().get("__set_bit").is_none(), "non-atomic bitops");
    assert_eq!(get("refcount_inc").atomic, atomic(0, true, true));
    assert_eq!(get("refcount_add").atomic, atomic(1, true, true));
    assert_eq!(get("kref_put").atomic, atomic(0, true, true));
    let dec_and_lock = get("_atomic_dec_and_lock");
    assert_eq!(dec_and_lock.atomic, atomic(0, true, true));
    assert_eq!(
        dec_and_lock.trylock,
        trylock(1, LockMode::Exclusive, Success::Nonzero)
    );
    for pure in [
        "_printk",
        "__might_sleep",
        "msleep",
        "panic",
        "warn_slowpath_fmt",
    ] {
        assert!(get(pure).pure, "{pure}");
    }
}

// ---------------------------------------------------------------------------------------------
// Loading user files.

fn write(dir: &Path, file: &str, text: &str) {
    std::fs::write(dir.join(file), text).unwrap();
}

#[test]
fn user_files_add_and_override() {
    let dir = tempfile::tempdir().unwrap();
    // Two user files; the later one (by file name) wins for `my_lock`.
    write(
        dir.path(),
        "a-mine.toml",
        r#"family = "mine"
[[function]]
name = "my_lock"
lock = { arg = 1 }
[[function]]
name = "pthread_mutex_lock"
pure = true
"#,
    );
    write(
        dir.path(),
        "b-more.toml",
        r#"family = "more"
description = "later"
[[function]]
names = ["my_lock", "my_other_lock"]
lock = { arg = 0, mode = "shared" }
[[function]]
name = "up"
use_body = true
"#,
    );
    write(dir.path(), "notes.txt", "not a model file");
    let m = Models::load(Some(dir.path())).unwrap();
    assert_eq!(
        m.get("my_lock").unwrap().lock,
        lock_arg(0, LockMode::Shared)
    );
    assert_eq!(
        m.get("my_other_lock").unwrap().lock,
        lock_arg(0, LockMode::Shared)
    );
    // A user file overrides a built-in model of another family.
    assert!(m.get("pthread_mutex_lock").unwrap().pure);
    // `use_body` drops the built-in model.
    assert!(m.get("up").is_none());
    assert!(m.get("down").is_some());
    let fams: Vec<(&str, &ModelOrigin)> = m
        .families()
        .iter()
        .map(|f| (f.file.as_str(), &f.origin))
        .collect();
    assert_eq!(fams.len(), BUILTIN_FILES.len() + 2);
    assert_eq!(fams[fams.len() - 2].0, "a-mine.toml");
    assert_eq!(
        fams[fams.len() - 1],
        (
            "b-more.toml",
            &ModelOrigin::User(dir.path().join("b-more.toml"))
        )
    );
    assert_eq!(m.family_of("my_lock").unwrap().family, "more");
    assert_eq!(m.families().last().unwrap().functions, 3);
}

#[test]
fn user_file_replaces_builtin_family() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "pthread.toml",
        r#"family = "pthread"
[[function]]
name = "pthread_mutex_lock"
lock = { global = "big" }
"#,
    );
    let m = Models::load(Some(dir.path())).unwrap();
    assert_eq!(
        m.get("pthread_mutex_lock").unwrap().lock,
        Some(LockEffect {
            target: LockTarget::Global {
                global: "big".into()
            },
            mode: LockMode::Exclusive
        })
    );
    // The rest of the built-in pthread family is gone; other families stay.
    assert!(m.get("pthread_mutex_unlock").is_none());
    assert!(m.get("mtx_lock").is_some());
    assert_eq!(m.families().len(), BUILTIN_FILES.len());
    assert!(matches!(
        m.families().last().unwrap().origin,
        ModelOrigin::User(_)
    ));
    // A single file can be given instead of a directory.
    let one = Models::load(Some(&dir.path().join("pthread.toml"))).unwrap();
    assert!(one.get("pthread_mutex_unlock").is_none());
}

#[test]
fn load_without_extra_is_builtin() {
    let m = Models::load(None).unwrap();
    assert_eq!(m.len(), builtin().len());
    assert!(Models::empty().is_empty());
}

// ---------------------------------------------------------------------------------------------
// Errors.

fn error_of(text: &str) -> (usize, usize, String) {
    match parse_for_test(Path::new("x.toml"), text) {
        Err(ModelError::Invalid {
            line, col, message, ..
        }) => (line, col, message),
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn syntax_error_reports_file_line_col() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "bad.toml",
        "family = \"x\"\n[[function]]\nname = \"f\"\nlock = { arg = 0\n",
    );
    let err = Models::load(Some(dir.path())).unwrap_err();
    let text = err.to_string();
    let expected = format!("{}:4:", dir.path().join("bad.toml").display());
    assert!(text.starts_with(&expected), "{text}");
    assert!(matches!(err, ModelError::Invalid { line: 4, .. }));
}

#[test]
fn unknown_keys_are_rejected() {
    let (line, col, msg) =
        error_of("family = \"x\"\n[[function]]\nname = \"f\"\nlocks = { arg = 0 }\n");
    assert_eq!((line, col), (4, 1), "{msg}");
    assert!(msg.contains("locks"), "{msg}");
    // Inside an effect too.
    let (line, _, msg) = error_of(
        "family = \"x\"\n[[function]]\nname = \"f\"\nlock = { arg = 0, mdoe = \"shared\" }\n",
    );
    assert_eq!(line, 4);
    assert!(msg.contains("mdoe"), "{msg}");
    let (line, _, msg) = error_of("family = \"x\"\nfamilly = \"y\"\n");
    assert_eq!(line, 2);
    assert!(msg.contains("familly"), "{msg}");
    let (line, _, msg) = error_of(
        "family = \"x\"\n[[function]]\nname = \"f\"\natomic = { arg = 0, reads = true }\n",
    );
    assert_eq!(line, 4);
    assert!(msg.contains("reads"), "{msg}");
}

#[test]
fn name_and_names_rules() {
    let (line, _, msg) =
        error_of("family = \"x\"\n[[function]]\nname = \"f\"\nnames = [\"g\"]\npure = true\n");
    assert_eq!(line, 3);
    assert!(msg.contains("not both"), "{msg}");
    let (line, _, msg) = error_of("family = \"x\"\n\n[[function]]\npure = true\n");
    assert!(msg.contains("needs `name"), "{msg}");
    assert!(line == 3 || line == 4, "{line}");
    let (_, _, msg) = error_of("family = \"x\"\n[[function]]\nnames = []\npure = true\n");
    assert!(msg.contains("empty"), "{msg}");
    let (line, col, msg) =
        error_of("family = \"x\"\n[[function]]\nnames = [\"ok\", \"not ok\"]\npure = true\n");
    assert_eq!((line, col), (3, 16));
    assert!(msg.contains("not a C identifier"), "{msg}");
}

#[test]
fn duplicate_names_in_one_file_are_rejected() {
    let text = "family = \"x\"\n[[function]]\nname = \"f\"\npure = true\n\
                [[function]]\nnames = [\"g\", \"f\"]\nalloc = {}\n";
    let (line, col, msg) = error_of(text);
    assert_eq!((line, col), (6, 15));
    assert!(msg.contains("duplicate model for `f`"), "{msg}");
    assert!(msg.contains("line 3"), "{msg}");
}

#[test]
fn invalid_effects_are_rejected() {
    let cases = [
        ("lock = { }", "a lock needs"),
        ("lock = { arg = 0, global = \"g\" }", "not both"),
        ("lock = { arg = 0, mode = \"sharde\" }", "sharde"),
        ("trylock = { arg = 0 }", "success"),
        ("trylock = { arg = 0, success = \"one\" }", "one"),
        ("lock = { arg = -1 }", "-1"),
        ("atomic = { arg = 0 }", "read = true"),
        ("pure = true\nalloc = {}", "cannot be combined"),
        ("use_body = true\npure = true", "cannot be combined"),
        ("thread_create = { arg = 1 }", "start"),
        ("alloc = { copies = 0 }", "copies"),
    ];
    for (body, needle) in cases {
        let text = format!("family = \"x\"\n[[function]]\nname = \"f\"\n{body}\n");
        let (line, _, msg) = error_of(&text);
        assert!(msg.contains(needle), "{body}: {msg}");
        assert!((2..=5).contains(&line), "{body}: line {line}");
    }
    let (_, _, msg) = error_of("[[function]]\nname = \"f\"\npure = true\n");
    assert!(msg.contains("family"), "{msg}");
}

#[test]
fn io_errors_name_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let err = Models::load(Some(&missing)).unwrap_err();
    assert!(matches!(err, ModelError::Io { .. }));
    assert!(err.to_string().contains("nope"), "{err}");
}

#[test]
fn line_col_counts_characters() {
    let text = "ab\nçd\nx";
    assert_eq!(line_col(text, 0), (1, 1));
    assert_eq!(line_col(text, 3), (2, 1));
    assert_eq!(line_col(text, 5), (2, 2)); // after the two-byte ç
    assert_eq!(line_col(text, 100), (3, 2));
}

// ---------------------------------------------------------------------------------------------
// The points-to solver applies the models.

fn program(src: &str) -> Program {
    let names = Names::new();
    let out = crate::frontend::lower::lower_unit("t.c".into(), src, &names);
    assert!(out.parse_errors.is_empty(), "{:?}", out.parse_errors);
    let mut linker = Linker::new(Arc::new(names));
    linker.add(0, out.unit);
    linker.finish()
}

fn func(p: &Program, name: &str) -> FuncId {
    let i = p
        .functions
        .iter()
        .position(|f| p.names.get(f.name) == name)
        .unwrap_or_else(|| panic!("no function {name}"));
    FuncId(i as u32)
}

/// The class the value of local `name` of `f` points to.
fn local_target(p: &Program, pta: &PointsTo, f: &str, name: &str) -> Option<u32> {
    let fid = func(p, f);
    let body = p.functions[fid.index()].body.as_ref().unwrap();
    let l = body
        .locals
        .iter()
        .position(|l| p.names.get(l.name) == name)
        .unwrap();
    let lv = Lval::var(VarRef::Local(LocalId(l as u32)));
    pta.value_class(fid, &Expr::Load(Box::new(lv)))
}

fn global_id(p: &Program, name: &str) -> GlobalId {
    let g = p
        .globals
        .iter()
        .position(|g| p.names.get(g.global.name) == name)
        .unwrap_or_else(|| panic!("no global {name}"));
    GlobalId(g as u32)
}

fn global_class(p: &Program, pta: &PointsTo, name: &str) -> u32 {
    pta.class(pta.global_node(global_id(p, name)))
}

/// The class the value of global `name` points to.
fn global_target(p: &Program, pta: &PointsTo, name: &str) -> Option<u32> {
    let lv = Lval::var(VarRef::Global(global_id(p, name)));
    pta.value_class(FuncId(0), &Expr::Load(Box::new(lv)))
}

#[test]
fn models_win_over_bodies_in_points_to() {
    // A program's own xmalloc: the model gives each call site its own object, where the body
    // would merge both results into the one object of the body's malloc.
    let src = "void *malloc(unsigned long);
        void *xmalloc(unsigned long n) { void *p = malloc(n); return p; }
        int *a, *b;
        void f(void) { a = xmalloc(4); b = xmalloc(4); }";
    let p = program(src);
    let pta = PointsTo::analyze_with(&p, FieldMode::FieldBased);
    let ta = global_target(&p, &pta, "a").unwrap();
    let tb = global_target(&p, &pta, "b").unwrap();
    assert_ne!(ta, tb, "two call sites, two objects");
    assert!(matches!(pta.class_members(ta)[..], [Origin::Alloc(..)]));
    // Without models, the body is analysed: one object.
    let none = PointsTo::analyze_with_models(&p, FieldMode::FieldBased, &Models::empty());
    assert_eq!(global_target(&p, &none, "a"), global_target(&p, &none, "b"));
}

#[test]
fn returns_arg_and_copy_in_points_to() {
    let src = "struct spinlock { int rlock; };
        typedef struct spinlock spinlock_t;
        spinlock_t *spinlock_check(spinlock_t *l) { return 0; }
        char *strchr(const char *, int);
        void *memcpy(void *, const void *, unsigned long);
        spinlock_t lk;
        char buf[8];
        int x;
        int *src_ptrs[2], *dst_ptrs[2];
        void f(void) {
            spinlock_t *r = spinlock_check(&lk);
            char *c = strchr(buf, 'a');
            src_ptrs[0] = &x;
            memcpy(dst_ptrs, src_ptrs, sizeof src_ptrs);
        }";
    let p = program(src);
    let pta = PointsTo::analyze(&p);
    let lk = global_class(&p, &pta, "lk");
    assert_eq!(local_target(&p, &pta, "f", "r"), Some(lk));
    let buf = global_class(&p, &pta, "buf");
    assert_eq!(local_target(&p, &pta, "f", "c"), Some(buf));
    let x = global_class(&p, &pta, "x");
    assert_eq!(global_target(&p, &pta, "dst_ptrs"), Some(x));
}

#[test]
fn user_models_reach_the_solver() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "pool.toml",
        "family = \"pool\"\n[[function]]\nname = \"pool_get\"\nalloc = {}\n\
         [[function]]\nname = \"spawn\"\nthread_create = { start = 0, arg = 1 }\n",
    );
    let models = Models::load(Some(dir.path())).unwrap();
    let src = "void *pool_get(int);
        int spawn(void (*)(int *), int *);
        int *p; int v;
        void worker(void) { }
        void f(void) { p = pool_get(1); spawn(worker, &v); }";
    let p = program(src);
    let pta = PointsTo::analyze_with_models(&p, FieldMode::FieldBased, &models);
    let tp = global_target(&p, &pta, "p").unwrap();
    assert!(matches!(pta.class_members(tp)[..], [Origin::Alloc(..)]));
    // A start routine with no parameter: the argument goes to its `rest`, no panic.
    assert_eq!(pta.stats.thread_creations, 1);
    assert!(pta.escaping().contains(&global_class(&p, &pta, "v")));
}

// ---------------------------------------------------------------------------------------------
// Trampolines.

#[test]
fn the_kernel_static_calls_are_trampolines() {
    let t = builtin()
        .trampolines()
        .iter()
        .find(|t| t.prefix == "__SCT__")
        .expect("linux.toml declares the static-call trampolines");
    assert_eq!(
        t.key_of("__SCT__tp_func_foo").as_deref(),
        Some("__SCK__tp_func_foo")
    );
    assert_eq!(t.member, "func");
    assert_eq!(t.key_of("__SCT__"), None);
    assert_eq!(t.key_of("schedule"), None);
}

#[test]
fn invalid_trampolines_are_rejected() {
    let cases = [
        (
            "functions = \"__SCT__\"\ntarget = \"__SCK__*.func\"",
            "prefix followed by `*`",
        ),
        (
            "functions = \"__SCT__*\"\ntarget = \"__SCK__.func\"",
            "global_prefix*.member",
        ),
        (
            "functions = \"__SCT__*\"\ntarget = \"__SCK__*\"",
            "global_prefix*.member",
        ),
        ("functions = \"__SCT__*\"", "target"),
    ];
    for (body, needle) in cases {
        let text = format!("family = \"x\"\n[[trampolines]]\n{body}\n");
        let (line, _, msg) = error_of(&text);
        assert!(msg.contains(needle), "{body}: {msg}");
        assert!((2..=4).contains(&line), "{body}: line {line}");
    }
}
