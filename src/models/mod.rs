//! Models of library and kernel functions: what a call does to locks, threads, memory and
//! points-to facts, read from the declarative files in `models/` (one TOML file per API
//! family, embedded in the binary; `--models DIR` adds or overrides files).
//!
//! A model *wins over a body*: `mutex_lock` has a body in the kernel (an atomic fast path), but
//! the analyses must see "acquires `*arg0`", so a function with a model is never analysed from
//! its body. Functions with neither a body nor a model are *unknown externals*: no lock effect,
//! no memory effect (documented default; the run counts them).
//!
//! The file format is documented in `models/README.md`.

use serde::{Deserialize, Serialize};

pub mod entries;
mod load;
pub mod trampolines;

pub use entries::{EntryFamily, FamilySwitches};
pub use load::{FamilyInfo, ModelError, ModelOrigin, Models, BUILTIN_FILES};
pub use trampolines::Trampoline;

/// How a lock is held: rwlocks and rwsems have a shared (read) mode; two holders of the same
/// lock exclude each other unless both hold it shared.
#[derive(
    Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum LockMode {
    #[default]
    Exclusive,
    Shared,
}

/// Which lock a lock operation names.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LockTarget {
    /// The object argument `arg` points to (`pthread_mutex_lock(&m)` locks `m`).
    Arg { arg: usize },
    /// A program-wide pseudo lock with this name (`rcu_read_lock()` holds `rcu`).
    Global { global: String },
}

/// The result value that means "acquired" for a conditional lock operation.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Success {
    /// `pthread_mutex_trylock`, `mutex_lock_interruptible`, `down_trylock`: 0 means acquired.
    Zero,
    /// `spin_trylock`, `mutex_trylock`: non-zero means acquired.
    Nonzero,
}

/// A lock acquisition or release. In a file: `{ arg = N }` or `{ global = "name" }`, with an
/// optional `mode` (`"exclusive"`, the default, or `"shared"`).
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(try_from = "load::RawLock")]
pub struct LockEffect {
    #[serde(flatten)]
    pub target: LockTarget,
    #[serde(default)]
    pub mode: LockMode,
}

/// A conditional acquisition: the lock is held on the branch where the result means `success`.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(try_from = "load::RawTryLock")]
pub struct TryLockEffect {
    #[serde(flatten)]
    pub target: LockTarget,
    #[serde(default)]
    pub mode: LockMode,
    pub success: Success,
}

/// Starts a thread running the function passed as argument `start` with the value of argument
/// `arg` (if any); `handle` is the argument through which the thread id is stored.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadCreateEffect {
    pub start: usize,
    #[serde(default)]
    pub arg: Option<usize>,
    #[serde(default)]
    pub handle: Option<usize>,
}

/// Waits for the thread whose id is argument `handle`.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadJoinEffect {
    pub handle: usize,
}

/// Returns a fresh object; `copies_arg`: realloc-style, the result may also be the object that
/// argument points to.
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllocEffect {
    #[serde(default)]
    pub copies_arg: Option<usize>,
    /// The allocator writes the new object (`calloc` zeroes it, `realloc` copies into it): a
    /// write at the call, private unless the object is published with a data race.
    #[serde(default)]
    pub fills: bool,
}

/// Stores a fresh object through pointer argument `arg` (`posix_memalign(&p, ...)`).
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllocOutEffect {
    pub arg: usize,
}

/// Copies the pointed-to contents of argument `src` into argument `dst` (`memcpy`).
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CopyEffect {
    pub dst: usize,
    pub src: usize,
}

/// An atomic access to the object argument `arg` points to (`__atomic_load_n(&x, ...)`,
/// kernel `atomic_inc(&v)`): recorded as an access that never races with another atomic one.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AtomicEffect {
    pub arg: usize,
    #[serde(default)]
    pub read: bool,
    #[serde(default)]
    pub write: bool,
}

/// How a callback handed to a library function runs.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CallbackRun {
    /// During the call, any number of times (`qsort`'s comparator, `pthread_once`'s routine).
    Sync,
    /// At any time, in any thread, any number of times (`signal` handlers, `atexit`): a thread
    /// entry of its own.
    Async,
    /// Registered: called by every later call of a function whose model has
    /// `runs_callbacks = <loop>` (libevent's `event_set` + `event_base_loop`), in its thread.
    Loop,
}

/// A function the model's function calls back: the function pointer is argument `arg`;
/// `args[k]` is the argument of the call that the callback receives as its formal `k` (`-1`:
/// nothing known, the formal keeps its own points-to class).
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallbackEffect {
    pub arg: usize,
    pub run: CallbackRun,
    /// The registry of a `Loop` callback (`"libevent"`).
    #[serde(default, rename = "loop")]
    pub loop_name: Option<String>,
    #[serde(default)]
    pub args: Vec<i64>,
}

impl CallbackEffect {
    /// The argument of the call passed as the callback's formal `k`, if any.
    pub fn actual_for(&self, k: usize) -> Option<usize> {
        self.args.get(k).and_then(|&a| usize::try_from(a).ok())
    }
}

/// Hidden library state (`rand`'s seed, `strtok`'s position, `getenv`'s environment): an
/// object named by the model, read and/or written by every call.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateEffect {
    pub name: String,
    #[serde(default)]
    pub read: bool,
    #[serde(default)]
    pub write: bool,
}

/// Everything a model can say about one function. All fields are optional; a model with none
/// of them set says "no effect" (like `pure = true`, which exists to say so explicitly).
///
/// Several effects may be combined. When a model has both `unlock` and `lock` (kernel
/// `downgrade_write`: exclusive to shared), the `unlock` applies first. `pure` cannot be
/// combined with any effect (the loader rejects it).
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    #[serde(default)]
    pub lock: Option<LockEffect>,
    #[serde(default)]
    pub unlock: Option<LockEffect>,
    #[serde(default)]
    pub trylock: Option<TryLockEffect>,
    #[serde(default)]
    pub thread_create: Option<ThreadCreateEffect>,
    #[serde(default)]
    pub thread_join: Option<ThreadJoinEffect>,
    #[serde(default)]
    pub alloc: Option<AllocEffect>,
    #[serde(default)]
    pub alloc_out: Option<AllocOutEffect>,
    #[serde(default)]
    pub copy: Option<CopyEffect>,
    #[serde(default)]
    pub atomic: Option<AtomicEffect>,
    /// Returns its argument number `returns_arg` (`spinlock_check(l)` returns `l`'s lock).
    #[serde(default)]
    pub returns_arg: Option<usize>,
    /// `va_arg`: reads the next variadic argument of the enclosing function.
    #[serde(default)]
    pub va_arg: bool,
    /// Reads the objects these arguments point to (`strlen(s)`, `write(fd, buf, n)`).
    #[serde(default)]
    pub reads: Vec<usize>,
    /// Writes the objects these arguments point to (`memset(p, ...)`, `read(fd, buf, n)`,
    /// `free(p)`).
    #[serde(default)]
    pub writes: Vec<usize>,
    /// Reads the objects every argument from this index on points to (`printf`'s `%s`).
    #[serde(default)]
    pub reads_from: Option<usize>,
    /// Writes the objects every argument from this index on points to (`scanf`'s targets).
    #[serde(default)]
    pub writes_from: Option<usize>,
    /// Hidden state the function reads or writes (`rand`, `strtok`, `getenv`).
    #[serde(default)]
    pub state: Option<StateEffect>,
    /// The function pointer arguments the function calls back (`callback` or `callbacks` in
    /// a model file).
    #[serde(default)]
    pub callbacks: Vec<CallbackEffect>,
    /// Calls every callback registered (`run = "loop"`) under this name (`event_base_loop`).
    #[serde(default)]
    pub runs_callbacks: Option<String>,
    /// No memory or lock effect worth modelling (`strlen`, `printf`).
    #[serde(default)]
    pub pure: bool,
}

impl Model {
    /// Whether the model says anything at all (some effect besides `pure`).
    pub fn has_effect(&self) -> bool {
        let Model {
            lock,
            unlock,
            trylock,
            thread_create,
            thread_join,
            alloc,
            alloc_out,
            copy,
            atomic,
            returns_arg,
            va_arg,
            reads,
            writes,
            reads_from,
            writes_from,
            state,
            callbacks,
            runs_callbacks,
            pure: _,
        } = self;
        lock.is_some()
            || unlock.is_some()
            || trylock.is_some()
            || thread_create.is_some()
            || thread_join.is_some()
            || alloc.is_some()
            || alloc_out.is_some()
            || copy.is_some()
            || atomic.is_some()
            || returns_arg.is_some()
            || *va_arg
            || !reads.is_empty()
            || !writes.is_empty()
            || reads_from.is_some()
            || writes_from.is_some()
            || state.is_some()
            || !callbacks.is_empty()
            || runs_callbacks.is_some()
    }

    /// The program-wide names the model gives pseudo locations: its global locks and hidden
    /// state.
    pub fn pseudo_names(&self) -> impl Iterator<Item = &str> {
        let locks = [
            self.lock.as_ref().map(|l| &l.target),
            self.unlock.as_ref().map(|l| &l.target),
            self.trylock.as_ref().map(|l| &l.target),
        ];
        locks
            .into_iter()
            .flatten()
            .filter_map(|t| match t {
                LockTarget::Global { global } => Some(global.as_str()),
                LockTarget::Arg { .. } => None,
            })
            .chain(self.state.as_ref().map(|s| s.name.as_str()))
    }

    /// Whether a call may access memory the model names (arguments' objects, hidden state).
    pub fn accesses_memory(&self) -> bool {
        self.atomic.is_some()
            || self.copy.is_some()
            || !self.reads.is_empty()
            || !self.writes.is_empty()
            || self.reads_from.is_some()
            || self.writes_from.is_some()
            || self.state.is_some()
    }
}

#[cfg(test)]
mod tests;
