//! Cross-check of the parser's file-scope function definitions against gcc, on the parser fixtures
//! (`fixtures/parse/*.c`). The same check as `scripts/crosscheck-functions.py`, fast enough for
//! `cargo test`.
//!
//! Per fixture: preprocess with `gcc -E -std=X` (X from a first line `// relay-std: X`, default
//! gnu11) into a temporary directory; list gcc's definitions with
//! `gcc -fsyntax-only -w -x cpp-output -std=X -aux-info OUT FILE.i`, whose lines read
//! `/* FILE:LINE:KS */ DECLARATION; ...` (FILE:LINE = original location of the function's *name*,
//! K = N prototype / O old style / I implicit, S = C declaration / F definition); drop the nested
//! functions gcc also lists (their name is inside braces in the .i); compare the multiset of
//! (file, line, name) with `relay::frontend::parse_source(..).functions()`.
//!
//! gcc 12 -aux-info segfaults on prototypes with pointer-to-VLA parameters (`char (*p)[n]`); for
//! those fixtures gcc's definitions come from `-Wtraditional` / `-Wold-style-definition`, which warn
//! at the name of each file-scope definition (after an `In function 'NAME':` line), except in
//! system-header text, which is then left out on both sides.
//!
//! The compiler is `$RELAY_CROSSCHECK_CC`, else `$CC`, else `gcc`. Skipped, with a notice on stderr,
//! when it cannot be run.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

type Def = (String, u32, String);

fn cc() -> String {
    std::env::var("RELAY_CROSSCHECK_CC")
        .or_else(|_| std::env::var("CC"))
        .unwrap_or_else(|_| "gcc".to_string())
}

fn gcc_available(cc: &str) -> bool {
    Command::new(cc)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn fixture_std(src: &str) -> String {
    src.lines()
        .next()
        .and_then(|l| l.strip_prefix("// relay-std:"))
        .map(|s| s.split_whitespace().next().unwrap_or("").to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "gnu11".to_string())
}

/// What the brace-depth scan of a .i knows: the minimum brace depth of each identifier at each
/// original (file, line), and which original lines are system-header text (marker flag 3).
struct Scan {
    depth: HashMap<Def, u32>,
    system: HashSet<(String, u32)>,
}

/// Parses a line marker `# N "file" flags` (or `#line N "file"`): (N, file, system).
fn marker(line: &str) -> Option<(u32, String, bool)> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("line").unwrap_or(rest).trim_start();
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let n: u32 = digits.parse().ok()?;
    let rest = rest[digits.len()..].trim_start().strip_prefix('"')?;
    let mut file = String::new();
    let mut chars = rest.chars();
    loop {
        match chars.next()? {
            '\\' => file.push(chars.next()?),
            '"' => break,
            c => file.push(c),
        }
    }
    let system = chars.as_str().split_whitespace().any(|f| f == "3");
    Some((n, file, system))
}

fn scan(text: &str) -> Scan {
    let mut depth: HashMap<Def, u32> = HashMap::new();
    let mut system = HashSet::new();
    let (mut file, mut line, mut in_system) = (String::new(), 1u32, false);
    let mut d = 0u32;
    for phys in text.split('\n') {
        if phys.trim_start().starts_with('#') {
            if let Some((n, f, s)) = marker(phys) {
                (file, line, in_system) = (f, n, s);
                continue;
            }
            line += 1; // #pragma, #ident: one original line
            continue;
        }
        if in_system {
            system.insert((file.clone(), line));
        }
        let b = phys.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c == b'"' || c == b'\'' {
                i += 1;
                while i < b.len() && b[i] != c {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            } else if c.is_ascii_digit() {
                // pp-number, including C23 digit separators (1'000)
                i += 1;
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric()
                        || b[i] == b'_'
                        || b[i] == b'.'
                        || (b[i] == b'\''
                            && b.get(i + 1).is_some_and(|n| n.is_ascii_alphanumeric())))
                {
                    i += 1;
                }
            } else if c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80 {
                let start = i;
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric()
                        || b[i] == b'_'
                        || b[i] == b'$'
                        || b[i] >= 0x80)
                {
                    i += 1;
                }
                let key = (file.clone(), line, phys[start..i].to_string());
                let e = depth.entry(key).or_insert(d);
                *e = (*e).min(d);
            } else {
                if c == b'{' {
                    d += 1;
                } else if c == b'}' {
                    d = d.saturating_sub(1);
                }
                i += 1;
            }
        }
        line += 1;
    }
    Scan { depth, system }
}

/// The function name in a declaration printed by -aux-info: the first identifier followed by a `(`
/// that opens a parameter list (not a `(*` declarator group), skipping `__attribute__ ((...))`.
fn aux_name(decl: &str) -> Option<String> {
    let mut toks: Vec<&str> = Vec::new();
    let b = decl.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$') {
                i += 1;
            }
            toks.push(&decl[s..i]);
        } else {
            let len = decl[i..].chars().next().map_or(1, char::len_utf8);
            toks.push(&decl[i..i + len]);
            i += len;
        }
    }
    let mut k = 0;
    while k < toks.len() {
        let t = toks[k];
        if matches!(
            t,
            "__attribute__" | "__attribute" | "__typeof__" | "typeof" | "__asm__" | "asm"
        ) {
            let mut depth = 0;
            k += 1;
            while k < toks.len() {
                match toks[k] {
                    "(" => depth += 1,
                    ")" => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                k += 1;
            }
            k += 1;
            continue;
        }
        let ident =
            t.as_bytes()[0].is_ascii_alphabetic() || t.starts_with('_') || t.starts_with('$');
        if ident
            && toks.get(k + 1) == Some(&"(")
            && !matches!(toks.get(k + 2), Some(&"*") | Some(&"^"))
        {
            return Some(t.to_string());
        }
        k += 1;
    }
    None
}

/// `/* FILE:LINE:KS */ DECL` -> definitions (S = F).
fn parse_aux(aux: &str) -> Result<Vec<Def>, String> {
    let mut defs = Vec::new();
    for l in aux.lines() {
        if l.starts_with("/* compiled from:") {
            continue;
        }
        let Some(rest) = l.strip_prefix("/* ") else {
            continue;
        };
        let Some((head, decl)) = rest.split_once(" */ ") else {
            return Err(format!("unparsed aux-info line: {l}"));
        };
        let mut parts = head.rsplitn(3, ':');
        let (Some(kind), Some(line), Some(file)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(format!("unparsed aux-info line: {l}"));
        };
        if !matches!(kind, "NC" | "OC" | "IC" | "NF" | "OF" | "IF") {
            return Err(format!("unknown aux-info kind {kind:?}: {l}"));
        }
        if !kind.ends_with('F') {
            continue;
        }
        let line: u32 = line.parse().map_err(|_| format!("bad line in: {l}"))?;
        let name = aux_name(decl).ok_or_else(|| format!("no name in aux-info line: {l}"))?;
        defs.push((file.to_string(), line, name));
    }
    Ok(defs)
}

fn run(cmd: &mut Command) -> (bool, String) {
    let out = cmd
        .env("LC_ALL", "C")
        .output()
        .expect("cannot run the compiler");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Fallback listing from `-Wtraditional` / `-Wold-style-definition` (outside system headers).
fn diagnostics_listing(cc: &str, std: &str, ifile: &Path, dir: &Path) -> Result<Vec<Def>, String> {
    let (ok, err) = run(Command::new(cc)
        .current_dir(dir)
        .args(["-fsyntax-only", "-x", "cpp-output", &format!("-std={std}")])
        .args([
            "-Wtraditional",
            "-Wold-style-definition",
            "-fno-diagnostics-show-caret",
        ])
        .arg("-fdiagnostics-color=never")
        .arg(ifile));
    if !ok {
        return Err(format!("gcc failed on {}:\n{err}", ifile.display()));
    }
    let mut defs = Vec::new();
    let mut context: Option<String> = None;
    for l in err.lines() {
        if let Some(name) = l
            .strip_suffix("':")
            .and_then(|l| l.split_once(": In function '"))
            .map(|(_, n)| n)
        {
            context = Some(name.to_string());
            continue;
        }
        let Some((loc, msg)) = l.split_once(": warning: ") else {
            continue;
        };
        if !(msg.starts_with("traditional C rejects ISO C style function definitions")
            || msg.starts_with("old-style function definition"))
        {
            continue;
        }
        // FILE:LINE:COL
        let mut parts = loc.rsplitn(3, ':');
        let (Some(_col), Some(line), Some(file)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(format!("unparsed diagnostic: {l}"));
        };
        let name = context
            .take()
            .ok_or_else(|| format!("no function context for: {l}"))?;
        defs.push((
            file.to_string(),
            line.parse().map_err(|_| format!("bad line: {l}"))?,
            name,
        ));
    }
    Ok(defs)
}

struct Outcome {
    mismatches: Vec<String>,
    compared: usize,
    nested: usize,
    fallback: bool,
}

fn check_fixture(cc: &str, root: &Path, rel: &Path, tmp: &Path) -> Result<Outcome, String> {
    let src = std::fs::read_to_string(root.join(rel)).map_err(|e| e.to_string())?;
    let std = fixture_std(&src);
    let stem = rel.file_stem().unwrap().to_string_lossy();
    let ifile = tmp.join(format!("{stem}.i"));
    let (ok, err) = run(Command::new(cc)
        .current_dir(root)
        .arg("-E")
        .arg(format!("-std={std}"))
        .arg(rel)
        .arg("-o")
        .arg(&ifile));
    if !ok {
        return Err(format!(
            "gcc -E -std={std} {} failed:\n{err}",
            rel.display()
        ));
    }
    let text = std::fs::read_to_string(&ifile).map_err(|e| e.to_string())?;
    let scanned = scan(&text);

    let aux = tmp.join(format!("{stem}.aux"));
    let (ok, _) = run(Command::new(cc)
        .current_dir(root)
        .args([
            "-fsyntax-only",
            "-w",
            "-x",
            "cpp-output",
            &format!("-std={std}"),
            "-aux-info",
        ])
        .arg(&aux)
        .arg(&ifile));
    let (mut gcc_defs, mut nested, fallback) = (Vec::new(), 0, !ok);
    if ok {
        let listing = std::fs::read_to_string(&aux).map_err(|e| e.to_string())?;
        for d in parse_aux(&listing)? {
            match scanned.depth.get(&d) {
                Some(&depth) if depth > 0 => nested += 1,
                _ => gcc_defs.push(d),
            }
        }
    } else {
        gcc_defs = diagnostics_listing(cc, &std, &ifile, root)?;
    }
    let in_system = |d: &Def| fallback && scanned.system.contains(&(d.0.clone(), d.1));

    let parsed = relay::frontend::parse_source(rel.display().to_string(), text.clone());
    let relay_defs: Vec<Def> = parsed
        .functions()
        .into_iter()
        .map(|f| (f.location.file, f.location.line, f.name))
        .collect();

    let mut count: BTreeMap<Def, i64> = BTreeMap::new();
    for d in gcc_defs.into_iter().filter(|d| !in_system(d)) {
        *count.entry(d).or_default() += 1;
    }
    let mut compared = 0;
    for d in relay_defs.into_iter().filter(|d| !in_system(d)) {
        compared += 1;
        *count.entry(d).or_default() -= 1;
    }
    let mut mismatches = Vec::new();
    for ((file, line, name), n) in count {
        for _ in 0..n.abs() {
            let side = if n > 0 {
                "in gcc only:  "
            } else {
                "in relay only:"
            };
            mismatches.push(format!("  {}: {side} {file}:{line}\t{name}", rel.display()));
        }
    }
    for e in &parsed.errors {
        if !mismatches.is_empty() {
            mismatches.push(format!("  {}: relay syntax error: {e}", rel.display()));
        }
    }
    Ok(Outcome {
        mismatches,
        compared,
        nested,
        fallback,
    })
}

#[test]
fn function_definitions_match_gcc() {
    let cc = cc();
    if !gcc_available(&cc) {
        // Written past the test harness's capture so that the skip is visible.
        let _ = writeln!(
            std::io::stderr(),
            "crosscheck_gcc: SKIPPED: `{cc} --version` failed (gcc not installed?); \
             function definitions were not cross-checked against gcc"
        );
        return;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut fixtures: Vec<PathBuf> = std::fs::read_dir(root.join("fixtures/parse"))
        .expect("fixtures/parse")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .map(|p| p.strip_prefix(&root).unwrap().to_path_buf())
        .collect();
    fixtures.sort();
    assert!(!fixtures.is_empty(), "no fixtures in fixtures/parse");
    let tmp = tempfile::tempdir().unwrap();

    // Two workers: gcc dominates the time.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<(usize, Result<Outcome, String>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(rel) = fixtures.get(k) else { break };
                        out.push((k, check_fixture(&cc, &root, rel, tmp.path())));
                    }
                    out
                })
            })
            .collect();
        let mut all: Vec<_> = workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect();
        all.sort_by_key(|r| r.0);
        all
    });

    let (mut report, mut compared, mut nested, mut fallback) = (Vec::new(), 0, 0, Vec::new());
    for (k, r) in results {
        match r {
            Ok(o) => {
                report.extend(o.mismatches);
                compared += o.compared;
                nested += o.nested;
                if o.fallback {
                    fallback.push(fixtures[k].display().to_string());
                }
            }
            Err(e) => report.push(format!("  {}: {e}", fixtures[k].display())),
        }
    }
    println!(
        "crosscheck_gcc: {} fixtures, {compared} relay definitions compared, {nested} nested functions \
         excluded, diagnostics fallback (gcc -aux-info crash) for: {}",
        fixtures.len(),
        if fallback.is_empty() { "none".to_string() } else { fallback.join(", ") }
    );
    assert!(
        report.is_empty(),
        "function definitions differ between gcc and relay (file:line of the function name):\n{}",
        report.join("\n")
    );
}
