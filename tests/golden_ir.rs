//! Golden tests for the lowering: every `tests/golden/NAME.c` (self-contained C, no `#include`,
//! lowered as is, without preprocessing) is lowered, linked alone, and printed; the text must equal
//! `tests/golden/NAME.ir`.
//!
//! The printed form is: parse errors (`parse error: ...`), lowering diagnostics
//! (`warning: file:line:col: ...`), every global, then every function with a body, each preceded
//! by a blank line. The unit is named by the file name only (`loops.c`), so locations are stable.
//!
//! `RELAY_BLESS=1 cargo test --test golden_ir` (re)writes the `.ir` files. Without it a missing
//! `.ir` file, or one without a `.c`, is a failure. A `.c` whose expected output is known to be
//! wrong says so on its first lines (`// KNOWN BUG: ...`); see the report in those files.

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use relay::frontend::lower::lower_unit;
use relay::ir::names::Names;
use relay::link::Linker;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn files_with(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    files
}

/// Lowers and links one C file, and prints everything the golden file records.
fn render(name: &str, text: &str) -> String {
    let names = Names::new();
    let lowered = lower_unit(name.to_string(), text, &names);
    let mut out = String::new();
    for e in &lowered.parse_errors {
        writeln!(out, "parse error: {e}").unwrap();
    }
    let mut linker = Linker::new(Arc::new(names));
    linker.add(0, lowered.unit);
    let program = linker.finish();
    let p = program.printer();
    for unit in &program.units {
        for d in &unit.diagnostics {
            writeln!(out, "warning: {}: {}", p.loc(d.loc), d.message).unwrap();
        }
    }
    for g in &program.globals {
        out.push_str(&p.global(&g.global));
    }
    for f in &program.functions {
        if let Some(body) = &f.body {
            out.push('\n');
            out.push_str(&p.function(body));
        }
    }
    out
}

/// A line diff (longest common subsequence) of `expected` against `actual`, as `-`/`+`/` ` lines
/// with three lines of context, cut after `max` lines.
fn diff(expected: &str, actual: &str, max: usize) -> String {
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    let (n, m) = (a.len(), b.len());
    // lcs[i][j]: length of the LCS of a[i..] and b[j..].
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    // (tag, line number in expected or actual, text)
    let mut ops: Vec<(char, usize, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push((' ', i + 1, a[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', i + 1, a[i]));
            i += 1;
        } else {
            ops.push(('+', j + 1, b[j]));
            j += 1;
        }
    }
    let changed: Vec<usize> = (0..ops.len()).filter(|&k| ops[k].0 != ' ').collect();
    let near = |k: usize| changed.iter().any(|&c| c.abs_diff(k) <= 3);
    let mut out = String::new();
    let mut shown = 0;
    let mut last = None;
    for (k, (tag, line, text)) in ops.iter().enumerate() {
        if !near(k) {
            continue;
        }
        if last.is_some_and(|l: usize| l + 1 != k) {
            out.push_str("  ...\n");
        }
        last = Some(k);
        let side = match tag {
            '-' => "expected",
            '+' => "actual",
            _ => "",
        };
        writeln!(
            out,
            "{tag} {text}    [{side}{}{line}]",
            if side.is_empty() { "" } else { " " }
        )
        .unwrap();
        shown += 1;
        if shown >= max {
            out.push_str("  ... (diff cut)\n");
            break;
        }
    }
    out
}

#[test]
fn lowering_matches_golden_ir() {
    let dir = golden_dir();
    let bless = std::env::var_os("RELAY_BLESS").is_some_and(|v| !v.is_empty() && v != "0");
    let sources = files_with(&dir, "c");
    assert!(!sources.is_empty(), "no tests/golden/*.c");
    let mut failures = Vec::new();
    for c in &sources {
        let file_name = c.file_name().unwrap().to_str().unwrap().to_string();
        let text = std::fs::read_to_string(c).unwrap();
        let actual = render(&file_name, &text);
        let ir = c.with_extension("ir");
        if bless {
            let old = std::fs::read_to_string(&ir).ok();
            if old.as_deref() != Some(actual.as_str()) {
                std::fs::write(&ir, &actual).unwrap();
                eprintln!("blessed {}", ir.display());
            }
            continue;
        }
        match std::fs::read_to_string(&ir) {
            Err(_) => failures.push(format!(
                "{file_name}: expected output {} is missing (run with RELAY_BLESS=1 to create it)",
                ir.display()
            )),
            Ok(expected) if expected != actual => failures.push(format!(
                "{file_name}: lowering differs from {} (- expected, + actual):\n{}",
                ir.file_name().unwrap().to_str().unwrap(),
                diff(&expected, &actual, 60)
            )),
            Ok(_) => {}
        }
    }
    for ir in files_with(&dir, "ir") {
        if !ir.with_extension("c").exists() {
            failures.push(format!(
                "{}: no matching .c file (remove it)",
                ir.file_name().unwrap().to_str().unwrap()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} golden files fail:\n\n{}\n\nIf the new output is right, re-bless with \
         `RELAY_BLESS=1 cargo test --release --test golden_ir` and review the .ir diff.",
        failures.len(),
        sources.len(),
        failures.join("\n\n")
    );
}

#[test]
fn diff_shows_the_first_differing_lines() {
    let d = diff("a\nb\nc\nd\n", "a\nb\nX\nd\n", 60);
    assert!(d.contains("- c    [expected 3]"), "{d}");
    assert!(d.contains("+ X    [actual 3]"), "{d}");
}
