//! Hand-built reports for the renderers' unit tests.

use super::*;

pub(crate) fn loc(file: &str, line: u32, col: u32) -> SourceLoc {
    SourceLoc {
        file: file.to_string(),
        line,
        col,
    }
}

/// A write under `airo_thread` (two calls deep, no lock) against a read in `main` holding
/// `dev->lock`.
pub(crate) fn warning(file: &str) -> RaceWarning {
    RaceWarning {
        key: "data-race|rx_p->count|airo_thread:airo_read_stats|main:airo_ioctl".to_string(),
        lvalue: "rx_p->count".to_string(),
        group: "struct rx.count".to_string(),
        accesses: vec![
            AccessSite {
                lvalue: "rx_p->count".to_string(),
                kind: AccessKind::Write,
                atomic: false,
                location: loc(file, 3, 5),
                function: "airo_read_stats".to_string(),
                entry: "airo_thread".to_string(),
                entry_multiple: true,
                locks: vec![],
                call_path: vec![CallFrame {
                    caller: "airo_thread".to_string(),
                    callee: "airo_read_stats".to_string(),
                    location: loc(file, 9, 3),
                }],
                call_path_truncated: false,
                also_at: vec![loc(file, 4, 5)],
                collapsed_scc: None,
            },
            AccessSite {
                lvalue: "dev->rx.count".to_string(),
                kind: AccessKind::Read,
                atomic: true,
                location: loc(file, 12, 9),
                function: "airo_ioctl".to_string(),
                entry: "main".to_string(),
                entry_multiple: false,
                locks: vec!["dev->lock".to_string(), "cfg_lock (read)".to_string()],
                call_path: vec![
                    CallFrame {
                        caller: "main".to_string(),
                        callee: "dev_ioctl".to_string(),
                        location: loc(file, 20, 5),
                    },
                    CallFrame {
                        caller: "dev_ioctl".to_string(),
                        callee: "airo_ioctl".to_string(),
                        location: loc(file, 16, 12),
                    },
                ],
                call_path_truncated: false,
                also_at: vec![],
                collapsed_scc: None,
            },
        ],
        filtered_by: vec![],
        notes: vec![],
    }
}

/// Source text matching [`warning`]'s locations.
pub(crate) const SOURCE: &str = "struct rx { int count; };\n\
void airo_read_stats(struct rx *rx_p) {\n\
\x20   rx_p->count = 0;\n\
}\n";

/// A report with [`warning`] plus a filtered self-race, and filled-in stats.
pub(crate) fn report(file: &str) -> Report {
    let mut filtered = warning(file);
    filtered.key = "data-race|stats.n|worker:worker|worker:worker".to_string();
    filtered.lvalue = "stats.n".to_string();
    filtered.group = "stats".to_string();
    filtered.filtered_by = vec!["large-repr".to_string(), "init-only".to_string()];
    filtered.notes =
        vec!["summary of worker was widened: locks at this access are joined".to_string()];
    for a in &mut filtered.accesses {
        a.lvalue = "stats.n".to_string();
        a.kind = AccessKind::Write;
        a.atomic = false;
        a.location = loc("/abs/dir/my file.c", 40, 2);
        a.function = "worker".to_string();
        a.entry = "worker".to_string();
        a.entry_multiple = true;
        a.locks.clear();
        a.call_path.clear();
    }
    filtered.accesses[1].call_path_truncated = true;
    Report {
        schema_version: SCHEMA_VERSION,
        tool: "relay".to_string(),
        tool_version: "0.1.0".to_string(),
        warnings: vec![warning(file), filtered],
        stats: RunStats {
            functions: 1234,
            thread_entries: 3,
            family_entries: vec![crate::report::FamilyEntries {
                family: "workqueue".into(),
                entries: 2,
                warnings: 1,
            }],
            callback_warnings: 1,
            collapsed_scc_warnings: 0,
            callback_entries: vec![crate::report::CallbackEntry {
                function: "on_read".into(),
                via: "event_set".into(),
                at: SourceLoc {
                    file: "src/net.c".into(),
                    line: 40,
                    col: 5,
                },
                unknown: false,
            }],
            pairs_considered: 100_000,
            pairs_private_arg: 0,
            pairs_type_alias: 0,
            pairs_distinct_objects: 0,
            pairs_may_alias: 5_000,
            pairs_concurrent: 3_000,
            pairs_unlocked: 200,
            warnings_before_filters: 12,
            filters: vec![
                FilterStat {
                    name: "large-repr".to_string(),
                    enabled: true,
                    removed: 8,
                    remaining: 4,
                },
                FilterStat {
                    name: "init-only".to_string(),
                    enabled: false,
                    removed: 0,
                    remaining: 4,
                },
            ],
            warnings_reported: 1,
            baseline_suppressed: 3,
            times: vec![
                ("front end".to_string(), 1.25),
                ("summaries".to_string(), 0.5),
            ],
            unread: Default::default(),
        },
    }
}
