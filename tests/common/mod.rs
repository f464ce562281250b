//! Helpers shared by the integration tests (each test crate uses a part of them).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use relay::frontend::lower::lower_unit;
use relay::ir::names::Names;
use relay::link::{Linker, Program};

/// The C standard a fixture asks for on its first line.
fn std_of(text: &str) -> String {
    text.lines()
        .next()
        .and_then(|l| l.trim().strip_prefix("// relay-std:"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "gnu11".into())
}

/// The fixture's preprocessed text, with the `-std` named on its first line
/// (`// relay-std: X`, default gnu11).
pub fn preprocess(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let out = Command::new("cc")
        .arg(format!("-std={}", std_of(&text)))
        .arg("-E")
        .arg(path)
        .output()
        .expect("cc runs");
    assert!(
        out.status.success(),
        "{}: preprocessing failed: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Preprocesses (see [`preprocess`]), lowers and links one C file; panics on a parse error.
pub fn program_of(path: &Path) -> Program {
    let text = preprocess(path);
    let names = Names::new();
    let lowered = lower_unit(path.display().to_string(), &text, &names);
    assert!(
        lowered.parse_errors.is_empty(),
        "{}: {:?}",
        path.display(),
        lowered.parse_errors
    );
    let mut linker = Linker::new(Arc::new(names));
    linker.add(0, lowered.unit);
    linker.finish()
}

/// The `*.c` files of `fixtures/<dir>`, sorted.
pub fn c_fixtures(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    files.sort();
    files
}

/// The fixture `fixtures/<dir>/<name>`.
pub fn c_fixture(dir: &str, name: &str) -> PathBuf {
    c_fixtures(dir)
        .into_iter()
        .find(|p| p.ends_with(name))
        .unwrap_or_else(|| panic!("fixture {dir}/{name}"))
}

/// The lines a JSON report's warnings name (both accesses), sorted and distinct.
pub fn warned_lines(report: &serde_json::Value) -> Vec<u64> {
    let mut lines: Vec<u64> = report["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .flat_map(|w| w["accesses"].as_array().expect("accesses").clone())
        .map(|a| a["location"]["line"].as_u64().expect("line"))
        .collect();
    lines.sort_unstable();
    lines.dedup();
    lines
}
