//! Built-in models of library functions for the points-to analysis. The summaries/ files (a later
//! issue) will replace this table with declarative, user-extendable models.

/// How a body-less function affects points-to facts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Model {
    /// Returns a fresh object (one per call site). `copies_arg`: realloc-style, the result may
    /// also be the object the argument points to.
    Alloc { copies_arg: Option<usize> },
    /// Stores a fresh object through the pointer argument (`posix_memalign(&p, ...)`).
    AllocOut { arg: usize },
    /// Copies the pointed-to contents of `src` into `dst` (`memcpy`); returns `dst`.
    Copy { dst: usize, src: usize },
    /// Starts a thread running the function `start` with argument `arg`.
    ThreadCreate { start: usize, arg: usize },
    /// `va_arg`: the next variadic argument of the enclosing function.
    VaArg,
}

pub fn model(name: &str) -> Option<Model> {
    use Model::*;
    Some(match name {
        "malloc"
        | "calloc"
        | "strdup"
        | "strndup"
        | "aligned_alloc"
        | "valloc"
        | "memalign"
        | "pvalloc"
        | "__builtin_malloc"
        | "__builtin_alloca"
        | "alloca"
        | "kmalloc"
        | "kzalloc"
        | "kcalloc"
        | "kmalloc_array"
        | "kmalloc_node"
        | "kzalloc_node"
        | "__kmalloc"
        | "__kmalloc_node"
        | "vmalloc"
        | "vzalloc"
        | "kvmalloc"
        | "kvzalloc"
        | "kvmalloc_node"
        | "kmem_cache_alloc"
        | "kmem_cache_zalloc"
        | "kmem_cache_alloc_node"
        | "kmemdup"
        | "kstrdup"
        | "devm_kmalloc"
        | "devm_kzalloc"
        | "g_malloc"
        | "g_malloc0"
        | "g_new"
        | "g_strdup"
        | "xmalloc"
        | "xcalloc"
        | "xstrdup" => Alloc { copies_arg: None },
        "realloc" | "reallocarray" | "krealloc" | "kvrealloc" | "g_realloc" | "xrealloc" => Alloc {
            copies_arg: Some(0),
        },
        "posix_memalign" => AllocOut { arg: 0 },
        "memcpy" | "memmove" | "__builtin_memcpy" | "__builtin_memmove" | "strcpy" | "strncpy"
        | "strcat" | "strncat" | "__memcpy" | "bcopy" => Copy {
            dst: if name == "bcopy" { 1 } else { 0 },
            src: if name == "bcopy" { 0 } else { 1 },
        },
        "pthread_create" => ThreadCreate { start: 2, arg: 3 },
        "__builtin_va_arg" => VaArg,
        "thrd_create" => ThreadCreate { start: 1, arg: 2 },
        "kthread_create_on_node"
        | "kthread_create_on_cpu"
        | "kernel_thread"
        | "kthread_run_on_cpu" => ThreadCreate { start: 0, arg: 1 },
        "g_thread_new" | "g_thread_try_new" => ThreadCreate { start: 1, arg: 2 },
        _ => return None,
    })
}
