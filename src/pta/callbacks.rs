//! Callbacks handed to code relay cannot see: functions whose address is passed to a library
//! function. Three ways they run:
//!
//! - **synchronously**, during the call (`qsort`'s comparator, `pthread_once`'s routine): the
//!   call site calls them too (call-graph edges, summaries applied at the call);
//! - **registered** under a loop name (libevent's `event_set` + `event_base_loop`): every call
//!   of a function whose model runs that loop calls every function registered under it, in the
//!   calling thread;
//! - **asynchronously**, at any time, in any thread, any number of times: `signal` handlers,
//!   `atexit`, and — the sound default — every function reachable from an argument of an
//!   *unknown external* (no body, no model). These become thread entries of their own
//!   ([`EscapedCallback`], with where they came from).
//!
//! Points-to: a callback's formal `k` receives the argument the model names for it; for an
//! unknown external, every formal receives every other argument of the call (the data a
//! callback is handed usually travels in the same call, `register(cb, data)`; data registered
//! through another call is not followed). Values handed to asynchronous or registered
//! callbacks become escape roots, like a thread's argument.

use rustc_hash::FxHashMap;

use crate::ir::{Expr, FuncId, Loc};
use crate::models::{CallbackRun, Model};

/// A callback that runs as a thread entry of its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EscapedCallback {
    pub func: FuncId,
    /// The library or unknown function it was handed to.
    pub via: FuncId,
    /// The function and place of that call (the first one found).
    pub caller: FuncId,
    pub loc: Loc,
    /// Handed to a function with no body and no model (not to a model saying `async`).
    pub unknown: bool,
}

/// A callback called at a call site: `formals[k]` is the index of the call's argument the
/// callback receives as its formal `k` (`None`: nothing known).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallbackCall {
    pub func: FuncId,
    pub formals: Vec<Option<usize>>,
}

/// What calling a modelled function calls back.
#[derive(Clone, Debug)]
enum Spec {
    /// The functions argument `arg` points to, with the model's argument mapping.
    Sync {
        arg: usize,
        formals: Vec<Option<usize>>,
    },
    /// Every function registered under this loop name.
    Loop(String),
}

/// The program's callbacks, found by the points-to solver.
#[derive(Clone, Debug, Default)]
pub struct CallbackTable {
    specs: FxHashMap<FuncId, Vec<Spec>>,
    registered: FxHashMap<String, Vec<FuncId>>,
    escaped: Vec<EscapedCallback>,
    escaped_set: rustc_hash::FxHashSet<FuncId>,
}

impl CallbackTable {
    /// The call specs of the modelled functions (`sync` callbacks and loop runners).
    pub(super) fn new(models: &[Option<&Model>]) -> CallbackTable {
        let mut specs = FxHashMap::default();
        for (i, m) in models.iter().enumerate() {
            let Some(m) = m else { continue };
            let f = FuncId(i as u32);
            let sync = m.callbacks.iter().filter(|c| c.run == CallbackRun::Sync);
            let mut spec: Vec<Spec> = sync
                .map(|cb| Spec::Sync {
                    arg: cb.arg,
                    formals: (0..cb.args.len()).map(|k| cb.actual_for(k)).collect(),
                })
                .collect();
            spec.extend(m.runs_callbacks.iter().map(|name| Spec::Loop(name.clone())));
            if !spec.is_empty() {
                specs.insert(f, spec);
            }
        }
        CallbackTable {
            specs,
            ..Default::default()
        }
    }

    pub(super) fn register(&mut self, name: &str, funcs: impl IntoIterator<Item = FuncId>) {
        let list = self.registered.entry(name.to_string()).or_default();
        list.extend(funcs);
        list.sort_unstable();
        list.dedup();
    }

    /// Records an escaped callback unless that function already escaped.
    pub(super) fn escape(&mut self, e: EscapedCallback) -> bool {
        if !self.escaped_set.insert(e.func) {
            return false;
        }
        self.escaped.push(e);
        true
    }

    pub(super) fn finish(&mut self) {
        self.escaped.sort_by_key(|e| e.func);
    }

    /// Every callback that runs as a thread entry of its own, by function id.
    pub fn escaped(&self) -> &[EscapedCallback] {
        &self.escaped
    }

    /// The callbacks a call to the modelled function `g` makes; `targets` gives the functions
    /// an argument may point to.
    pub fn calls(
        &self,
        g: FuncId,
        args: &[Expr],
        targets: impl Fn(&Expr) -> Vec<FuncId>,
    ) -> Vec<CallbackCall> {
        let mut out = Vec::new();
        for spec in self.specs.get(&g).into_iter().flatten() {
            match spec {
                Spec::Sync { arg, formals } => out.extend(
                    args.get(*arg)
                        .map(&targets)
                        .unwrap_or_default()
                        .into_iter()
                        .map(|func| CallbackCall {
                            func,
                            formals: formals.clone(),
                        }),
                ),
                Spec::Loop(name) => out.extend(
                    self.registered
                        .get(name)
                        .into_iter()
                        .flatten()
                        .map(|&func| CallbackCall {
                            func,
                            formals: Vec::new(),
                        }),
                ),
            }
        }
        out
    }

    /// Escaped callbacks, of which to unknown externals, and registered ones.
    pub fn counts(&self) -> (usize, usize, usize) {
        let unknown = self.escaped.iter().filter(|e| e.unknown).count();
        let registered = self.registered.values().map(Vec::len).sum();
        (self.escaped.len(), unknown, registered)
    }

    /// Whether calls to `g` call anything back.
    pub fn has_spec(&self, g: FuncId) -> bool {
        self.specs.contains_key(&g)
    }
}
