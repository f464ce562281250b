//! Property test: no input depth aborts a run. Every construct the front end nests or chains
//! (operators, parentheses, casts, subscripts, conditionals, statements, blocks, initializers,
//! pointer and array declarators) is fed at depths up to far past the parser's bound, next to
//! a racy unit, through the whole pipeline: the run finishes, reports the race of the other unit,
//! and names the over-deep declaration with its file and line.

use std::path::Path;
use std::process::Command;

use proptest::prelude::*;

/// The parser's nesting bound (`frontend::parser::MAX_DEPTH`).
const BOUND: usize = 4000;

/// One construct repeated `n` times, as a unit whose second line holds it.
fn deep_unit(kind: usize, n: usize) -> String {
    let body = match kind {
        0 => format!("return {};", vec!["g"; n].join("+")),
        1 => format!("return {}g{};", "(".repeat(n), ")".repeat(n)),
        2 => format!("return {}g;", "(int)".repeat(n)),
        3 => format!("return {}g;", "- ".repeat(n)),
        4 => format!("return q{} == 0;", "->p".repeat(n)),
        5 => format!("return ({});", vec!["g"; n].join(",")),
        6 => format!("return {}g;", "g?g:".repeat(n)),
        7 => format!("{}g++; return 0;", "if (g) ".repeat(n)),
        8 => format!("{}g++;{} return 0;", "{".repeat(n), "}".repeat(n)),
        9 => format!("return g{};", "=g".repeat(n)),
        10 => format!("return {}g{};", "g?".repeat(n), ":g".repeat(n)),
        11 => return format!("int g;\nint {}p;\n", "*".repeat(n)),
        12 => return format!("int g;\nint d{};\n", "[2]".repeat(n)),
        _ => return format!("int g;\nint i[1] = {}1{};\n", "{".repeat(n), "}".repeat(n)),
    };
    format!("int g; struct n {{ struct n *p; }} *q;\nint f(void) {{ {body} }}\n")
}

const KINDS: usize = 14;

const RACY: &str = "int x;
void *t(void *a) { x++; return 0; }
int pthread_create(void *, void *, void *(*)(void *), void *);
int main(void) { long a, b; pthread_create(&a, 0, t, 0); pthread_create(&b, 0, t, 0); return 0; }
";

fn analyze(dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(["analyze", "--no-cache", "-q", "-j2", "--format", "json"])
        .arg(dir.join("deep.i"))
        .arg(dir.join("racy.i"))
        .output()
        .unwrap()
}

fn depth() -> impl Strategy<Value = usize> {
    prop_oneof![1..64usize, BOUND - 64..BOUND + 64, BOUND * 2..BOUND * 30]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn deep_inputs_do_not_abort_the_run(kind in 0..KINDS, n in depth()) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("deep.i"), deep_unit(kind, n)).unwrap();
        std::fs::write(dir.path().join("racy.i"), RACY).unwrap();
        let out = analyze(dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        prop_assert_eq!(out.status.code(), Some(1), "stderr: {}", stderr);
        let report = String::from_utf8_lossy(&out.stdout);
        prop_assert!(report.contains("racy.i"), "the other unit's race is reported");
        if n > 2 * BOUND {
            prop_assert!(stderr.contains("deep.i:2:"), "the deep declaration is named: {}", stderr);
        }
    }
}

/// The shallow end of every construct is analysed without a diagnostic.
#[test]
fn shallow_constructs_are_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("racy.i"), RACY).unwrap();
    for kind in 0..KINDS {
        std::fs::write(dir.path().join("deep.i"), deep_unit(kind, 3)).unwrap();
        let out = analyze(dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "kind {kind}: {stderr}");
        assert!(!stderr.contains("deep.i"), "kind {kind}: {stderr}");
    }
}
