//! The front half of the pipeline: inputs → preprocessed text → syntax tree → IR → linked
//! program, with units read, parsed and lowered in parallel and linked as they finish.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rayon::prelude::*;

use crate::cache::file_status::{FileStatus, FileStatuses};
use crate::cache::tu::{self, CachedUnit, LoadedUnit};
use crate::cache::{Key, Store};
use crate::frontend::ast::ExternalDecl;
use crate::frontend::input::Input;
use crate::frontend::lower::lower_unit_with;
use crate::frontend::{parse_streaming, Diagnostic, FunctionInfo, ItemView};
use crate::ir::names::Names;
use crate::link::{Linker, Program};
use crate::progress::{Heartbeat, Progress};

/// What one unit contributed, besides its IR.
#[derive(Debug, Default)]
pub struct UnitReport {
    pub tu: String,
    pub bytes: u64,
    /// The unit could not be read or preprocessed.
    pub load_error: Option<String>,
    pub external_decls: usize,
    pub function_definitions: usize,
    /// One per skipped external declaration.
    pub parse_errors: Vec<Diagnostic>,
    /// File-scope function definitions, when asked for.
    pub functions: Vec<FunctionInfo>,
    /// Loaded from the cache instead of parsed and lowered (its errors are the cached ones).
    pub from_cache: bool,
    /// Its key in the cache ([`tu::unit_key`]), when a cache is used and it could be read.
    pub key: Option<Key>,
    /// Definitions not decoded from the cache: an earlier unit holds the same one.
    pub copies_skipped: usize,
}

/// A unit's cache key and size, as [`probe`] found them.
#[derive(Copy, Clone, Debug)]
pub struct ProbedUnit {
    pub key: Key,
    pub bytes: u64,
}

/// What to do with each unit.
#[derive(Copy, Clone, Debug, Default)]
pub struct BuildOptions<'a> {
    /// Collect the file-scope function definitions of each unit.
    pub list_functions: bool,
    /// Parse only: no lowering, and an empty program.
    pub syntax_only: bool,
    /// Load units whose preprocessed text is in this cache instead of parsing and lowering them,
    /// and store the others there. Not used with `syntax_only`.
    pub cache: Option<&'a Store>,
    /// Show progress on stderr, by units.
    pub progress: bool,
    /// Units [`probe`] found in the cache, by input index (may be shorter than the inputs):
    /// loaded by their key, their text not read again.
    pub probed: &'a [Option<ProbedUnit>],
    /// Where the status of each preprocessed input read and hashed is recorded.
    pub file_status: Option<&'a FileStatuses>,
}

pub struct Build {
    pub program: Program,
    /// In input order.
    pub units: Vec<UnitReport>,
    /// Units parsed by this run (units that could not be read are neither parsed nor reused).
    pub units_parsed: usize,
    /// Units loaded from the cache.
    pub units_reused: usize,
    /// Definitions of units loaded from the cache left undecoded: an earlier unit held the
    /// same `static` definition.
    pub copies_skipped: usize,
}

/// Reads, parses, lowers and links every input on `pool`.
pub fn build(inputs: &[Input], pool: &rayon::ThreadPool, options: BuildOptions<'_>) -> Build {
    let copies: Vec<Option<tu::UnitCopies>> = match options.cache {
        Some(store) => pool.install(|| {
            options
                .probed
                .par_iter()
                .map(|p| p.and_then(|p| store.get_value(tu::COPIES_KIND, &p.key)))
                .collect()
        }),
        None => Vec::new(),
    };
    let skip = tu::duplicate_copies(&copies);
    // The lists are hundreds of MB on the kernel: freed before the units are loaded, their
    // memory is reused for them instead of fresh pages.
    let listed: Vec<bool> = copies.iter().map(Option::is_some).collect();
    drop(copies);
    let build = build_skipping(inputs, pool, options, &skip);
    // A unit that lists its copies provides the bodies later units skipped: if one was not
    // linked after all (its text vanished and its entry was corrupt), link without skipping.
    let lost = |(i, u): (usize, &UnitReport)| {
        listed.get(i).copied().unwrap_or(false) && u.load_error.is_some()
    };
    let build = if build.units.iter().enumerate().any(lost) {
        build_skipping(inputs, pool, options, &[])
    } else {
        build
    };
    if let Some(store) = options.cache.filter(|_| !options.syntax_only) {
        // The units this run used stay in the cache while its list is among the latest.
        let keys: Vec<Key> = build.units.iter().filter_map(|u| u.key).collect();
        crate::cache::gc::record_units(store, &keys);
    }
    build
}

/// [`build`], leaving out of the `i`-th unit loaded from the cache its definitions `skip[i]`.
fn build_skipping(
    inputs: &[Input],
    pool: &rayon::ThreadPool,
    options: BuildOptions<'_>,
    skip: &[Vec<u32>],
) -> Build {
    let names = Arc::new(Names::new());
    let linker = Mutex::new(Linker::new(names.clone()));
    let progress = Progress::new(options.progress, "front end", "units", inputs.len() as u64);
    let bytes = AtomicU64::new(0);
    let units: Vec<UnitReport> = pool.install(|| {
        inputs
            .par_iter()
            .enumerate()
            .map(|(i, input)| {
                let skip = skip.get(i).map_or(&[][..], Vec::as_slice);
                let report = read_unit(i, input, &names, &linker, options, skip);
                let read = bytes.fetch_add(report.bytes, Ordering::Relaxed) + report.bytes;
                progress.advance_with(1, || format!(", {} MiB read", read >> 20));
                report
            })
            .collect()
    });
    progress.finish();
    let beat = Heartbeat::start(options.progress, "linking");
    let program = linker
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .finish();
    drop(beat);
    let units_reused = units.iter().filter(|u| u.from_cache).count();
    let units_parsed = units.iter().filter(|u| u.load_error.is_none()).count() - units_reused;
    let copies_skipped = units.iter().map(|u| u.copies_skipped).sum();
    Build {
        program,
        units,
        units_parsed,
        units_reused,
        copies_skipped,
    }
}

/// Reads and hashes the inputs while each one's IR is in `store`, and stops once more than an
/// eighth of them are not (their text changed, or they cannot be read: a cold run): by input
/// index, the units found (`None` for those not looked at or missing). All are `Some` only
/// when every unit is stored, which is what a run with unchanged inputs needs to know; the
/// others save [`build`] reading them again and let it skip their duplicate definitions.
pub fn probe(
    inputs: &[Input],
    pool: &rayon::ThreadPool,
    store: &Store,
    statuses: &FileStatuses,
    progress: bool,
) -> Vec<Option<ProbedUnit>> {
    let missed = AtomicU64::new(0);
    let give_up = inputs.len() as u64 / 8;
    let progress = Progress::new(progress, "checking inputs", "units", inputs.len() as u64);
    let found = pool.install(|| {
        inputs
            .par_iter()
            .map(|input| {
                if missed.load(Ordering::Relaxed) > give_up {
                    return None;
                }
                let name = input.display_name();
                let keyed = match input {
                    Input::Preprocessed(path) => preprocessed_key(&name, path, statuses),
                    Input::Source { .. } => input
                        .load_bytes()
                        .ok()
                        .map(|text| (tu::unit_key(&name, &text), text.len() as u64)),
                };
                let found = keyed.and_then(|(key, bytes)| {
                    store
                        .entry_path(tu::KIND, &key)
                        .exists()
                        .then_some(ProbedUnit { key, bytes })
                });
                if found.is_none() {
                    missed.fetch_add(1, Ordering::Relaxed);
                }
                progress.advance(1);
                found
            })
            .collect()
    });
    progress.finish();
    found
}

/// The unit key and size of the preprocessed file `path` named `name`: the key recorded with
/// its status if that is unchanged ([`crate::cache::file_status`]), else its text's (recorded).
fn preprocessed_key(
    name: &str,
    path: &std::path::Path,
    statuses: &FileStatuses,
) -> Option<(Key, u64)> {
    let status = FileStatus::of(path);
    if let Some(key) = status.and_then(|s| statuses.known_key(name, path, &s)) {
        return status.map(|s| (key, s.size()));
    }
    let (key, bytes) = tu::file_key(name, path).ok()?;
    if let Some(s) = status {
        statuses.record(name, path, s, key);
    }
    Some((key, bytes))
}

/// Reads, parses and lowers the `i`-th input and hands its IR to the linker.
fn read_unit(
    i: usize,
    input: &Input,
    names: &Arc<Names>,
    linker: &Mutex<Linker>,
    options: BuildOptions<'_>,
    skip: &[u32],
) -> UnitReport {
    let mut report = UnitReport {
        tu: input.display_name(),
        ..Default::default()
    };
    let probed = options.probed.get(i).copied().flatten();
    let stored = probed.zip(options.cache).and_then(|(p, store)| {
        let unit = load_stored(store, &p.key, names, skip, options.list_functions)?;
        Some((unit, p))
    });
    if let Some((out, p)) = stored {
        report.bytes = p.bytes;
        report.key = Some(p.key);
        report.from_cache = true;
        return link_unit(i, report, out, linker, options);
    }
    // Before reading: a status recorded with the key must be the one the text had.
    let status = match (input, options.file_status) {
        (Input::Preprocessed(path), Some(_)) => FileStatus::of(path),
        _ => None,
    };
    let raw = match input.load_bytes() {
        Ok(t) => t,
        Err(e) => {
            report.load_error = Some(format!("{e:#}"));
            return report;
        }
    };
    report.bytes = raw.len() as u64;
    report.key = options.cache.map(|_| tu::unit_key(&report.tu, &raw));
    if let (Input::Preprocessed(path), Some(statuses), Some(status), Some(key)) =
        (input, options.file_status, status, report.key)
    {
        statuses.record(&report.tu, path, status, key);
    }
    let text = crate::frontend::input::into_text(raw);
    let mut functions = Vec::new();
    let mut on_item = |item: &ItemView<'_>| {
        if options.list_functions {
            functions.extend(item.function_info());
        }
    };
    if options.syntax_only {
        let summary = parse_streaming(report.tu.clone(), &text, |item| {
            on_item(item);
            report.function_definitions += matches!(item.item, ExternalDecl::Function(_)) as usize;
        });
        report.functions = functions;
        report.external_decls = summary.external_decls;
        report.parse_errors = summary.errors;
        return report;
    }
    let cached = options
        .cache
        .zip(report.key.as_ref())
        .and_then(|(store, key)| {
            lower_cached(store, key, &report.tu, &text, names, options.list_functions)
        });
    let (out, from_cache) = match cached {
        Some(c) => c,
        None => {
            let out = lower_unit_with(report.tu.clone(), &text, names, on_item);
            let out = LoadedUnit {
                unit: out.unit,
                skipped: Default::default(),
                external_decls: out.external_decls,
                function_definitions: out.function_definitions,
                parse_errors: out.parse_errors,
                functions,
            };
            (out, false)
        }
    };
    drop(text);
    report.from_cache = from_cache;
    link_unit(i, report, out, linker, options)
}

/// Completes the report of the `i`-th unit from its lowered form and hands its IR to the linker.
fn link_unit(
    i: usize,
    mut report: UnitReport,
    out: LoadedUnit,
    linker: &Mutex<Linker>,
    options: BuildOptions<'_>,
) -> UnitReport {
    if options.list_functions {
        report.functions = out.functions;
    }
    report.external_decls = out.external_decls;
    report.function_definitions = out.function_definitions;
    report.parse_errors = out.parse_errors;
    report.copies_skipped = out.skipped.count;
    linker
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .add_skipping(i as u32, out.unit, &out.skipped);
    report
}

/// The unit stored under `key` without its definitions `skip`, if it is there and decodes (a
/// corrupt entry is invalidated).
fn load_stored(
    store: &Store,
    key: &Key,
    names: &Names,
    skip: &[u32],
    list_functions: bool,
) -> Option<LoadedUnit> {
    // Only the bodies decoded are read and checked ([`tu::load_entry`]).
    let loaded = store.read_parts(tu::KIND, key).and_then(|payload| {
        payload
            .map(|p| tu::load_entry(&p, names, skip, list_functions))
            .transpose()
    });
    match loaded {
        Ok(unit) => unit,
        Err(c) => {
            store.invalidate(tu::KIND, key, &c);
            None
        }
    }
}

/// The unit stored under `key` (its [`tu::unit_key`]), or parsed and lowered with its own
/// interner and stored. `None` only if a freshly lowered unit cannot be compressed (out of
/// memory) or renamed, which would be a bug: the caller lowers it without the cache then.
fn lower_cached(
    store: &Store,
    key: &Key,
    tu: &str,
    text: &str,
    names: &Names,
    list_functions: bool,
) -> Option<(LoadedUnit, bool)> {
    if let Some(unit) = load_stored(store, key, names, &[], list_functions) {
        return Some((unit, true));
    }
    let own = Names::new();
    let mut functions = Vec::new();
    let out = lower_unit_with(tu.to_string(), text, &own, |item| {
        functions.extend(item.function_info())
    });
    let (cached, stored) = CachedUnit::from_lowered(&own, out, functions).ok()?;
    let written = tu::encode_entry(&cached, &stored).and_then(|p| store.put(tu::KIND, key, &p));
    store.warn_unwritten(written);
    store.put_value_or_warn(tu::COPIES_KIND, key, &cached.copies());
    cached
        .into_program(&stored, names, &[], list_functions)
        .ok()
        .map(|unit| (unit, false))
}
