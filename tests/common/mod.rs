//! Helpers shared by the integration tests.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use relay::frontend::lower::lower_unit;
use relay::ir::names::Names;
use relay::link::{Linker, Program};

/// Preprocesses (`cc -std=gnu11 -E`), lowers and links one C file; panics on a parse error.
pub fn program_of(path: &Path) -> Program {
    let out = Command::new("cc")
        .args(["-std=gnu11", "-E"])
        .arg(path)
        .output()
        .expect("cc runs");
    assert!(
        out.status.success(),
        "{}: preprocessing failed: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
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
