//! Every fixture under fixtures/parse/ must preprocess (with the `-std` named on its first line,
//! `// relay-std: X`, default gnu11) and parse with no skipped declaration.

mod common;

use std::path::Path;

use common::preprocess;

#[test]
fn every_parse_fixture_parses_cleanly() {
    let files = common::c_fixtures("parse");
    assert!(
        files.len() >= 50,
        "expected the fixture corpus, found {} files",
        files.len()
    );
    let mut failures = Vec::new();
    for f in &files {
        let text = preprocess(f);
        let tu = relay::frontend::parse_source(f.display().to_string(), text);
        for e in &tu.errors {
            failures.push(format!("{}: {}", f.display(), e));
        }
        assert!(tu.external_decls > 0, "{}: nothing parsed", f.display());
    }
    assert!(
        failures.is_empty(),
        "syntax errors:\n{}",
        failures.join("\n")
    );
}

#[test]
fn glibc_headers_fixture_uses_auto_type_and_parses() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/parse/glibc_headers.c");
    let text = preprocess(&f);
    assert!(
        text.contains("__auto_type"),
        "atomic_load should expand to __auto_type"
    );
    for header in [
        "pthread.h",
        "stdio.h",
        "stdlib.h",
        "string.h",
        "stdatomic.h",
        "signal.h",
        "socket.h",
    ] {
        assert!(text.contains(header), "{header} not included");
    }
    let tu = relay::frontend::parse_source("glibc_headers.c".into(), text);
    assert!(tu.errors.is_empty(), "{:?}", tu.errors);
    assert!(tu.functions().iter().any(|f| f.name == "main"));
}
