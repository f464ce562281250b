//! The SARIF 2.1.0 rendering (for code-scanning UIs).
//!
//! One run, one rule (`data-race`), one `result` per warning: `locations[0]` is the first
//! access, `relatedLocations[0]` the other, and one `codeFlow` with a `threadFlow` per access
//! (the calls from the thread entry, then the access). `partialFingerprints["relayKey/v1"]` is
//! the warning's stable key. A warning a filter removed (present only under `--show-filtered`)
//! carries one external `suppression` per filter.

use std::io::{self, Write};

use serde_json::{json, Value};

use super::text::{describe, kind, locks};
use super::{AccessSite, RaceWarning, Report, SourceLoc};

/// The SARIF schema URI written in `$schema`.
pub const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
/// The rule every result refers to.
pub const RULE_ID: &str = "data-race";
/// The partial fingerprint carrying [`RaceWarning::key`].
pub const FINGERPRINT: &str = "relayKey/v1";

/// Writes `report` as a SARIF 2.1.0 log (pretty JSON, trailing newline).
pub fn render_sarif(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &sarif(report))?;
    writeln!(out)
}

/// The SARIF log of `report` as a JSON value.
pub fn sarif(report: &Report) -> Value {
    let name = if report.tool.is_empty() {
        "relay"
    } else {
        &report.tool
    };
    let mut driver = json!({
        "name": name,
        "rules": [rule()],
    });
    if !report.tool_version.is_empty() {
        driver["version"] = report.tool_version.clone().into();
    }
    json!({
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": driver },
            "results": report.warnings.iter().map(result).collect::<Vec<_>>(),
            "properties": {
                "relaySchemaVersion": report.schema_version,
                "stats": report.stats,
            },
        }],
    })
}

fn rule() -> Value {
    json!({
        "id": RULE_ID,
        "name": "DataRace",
        "shortDescription": {
            "text": "Shared memory accessed concurrently without a common lock",
        },
        "fullDescription": {
            "text": "Two accesses, at least one a write, from thread entries that may run at the \
                     same time may touch the same memory while holding no lock in common.",
        },
        "help": {
            "text": "Protect every access to the shared location with the same lock, make the \
                     accesses atomic, or make sure the two threads cannot run at the same time. \
                     The code flows show the call path from each thread entry to its access.",
        },
        "defaultConfiguration": { "level": "warning" },
    })
}

fn result(w: &RaceWarning) -> Value {
    let first = w.accesses.first();
    let second = w.accesses.get(1).or(first);
    let mut r = json!({
        "ruleId": RULE_ID,
        "ruleIndex": 0,
        "level": "warning",
        "message": { "text": message(w) },
        "partialFingerprints": { FINGERPRINT: w.key },
        "properties": {
            "lvalue": w.lvalue,
            "group": w.group,
        },
    });
    if let Some(a) = first {
        r["locations"] = json!([location(&a.location, None, None)]);
    }
    let mut related = Vec::new();
    if let Some(b) = second {
        let msg = format!("the other access: {}", describe(b));
        related.push(location(&b.location, Some(1), Some(&msg)));
    }
    // Every other site of either access races the same way: code scanning shows them as
    // related locations of the one result (one result per pair of sites would multiply them).
    for a in &w.accesses {
        for at in &a.also_at {
            let msg = format!("the same access: {}", describe(a));
            let id = u32::try_from(related.len() + 1).unwrap_or(u32::MAX);
            related.push(location(at, Some(id), Some(&msg)));
        }
    }
    if !related.is_empty() {
        r["relatedLocations"] = json!(related);
    }
    if !w.accesses.is_empty() {
        r["codeFlows"] = json!([{
            "message": { "text": format!("the two accesses to `{}`", w.lvalue) },
            "threadFlows": w.accesses.iter().map(thread_flow).collect::<Vec<_>>(),
        }]);
    }
    if !w.filtered_by.is_empty() {
        r["suppressions"] = w
            .filtered_by
            .iter()
            .map(|f| json!({ "kind": "external", "justification": format!("removed by relay filter {f}") }))
            .collect();
    }
    if !w.notes.is_empty() {
        r["properties"]["notes"] = json!(w.notes);
    }
    r
}

/// "Data race on `x`: write in f (thread T) and read in g (thread main), no common lock."
fn message(w: &RaceWarning) -> String {
    let sides: Vec<String> = w.accesses.iter().map(describe).collect();
    format!(
        "Data race on `{}`: {}, without a common lock.",
        w.lvalue,
        sides.join(" and ")
    )
}

fn thread_flow(a: &AccessSite) -> Value {
    let mut locs: Vec<Value> = Vec::new();
    for (depth, f) in a.call_path.iter().enumerate() {
        let msg = format!("{} calls {}", f.caller, f.callee);
        locs.push(json!({
            "location": location(&f.location, None, Some(&msg)),
            "nestingLevel": depth,
            "kinds": ["call"],
        }));
    }
    let mut msg = format!(
        "{} of `{}` in {}; locks held: {}",
        kind(a),
        a.lvalue,
        a.function,
        locks(&a.locks)
    );
    if a.call_path_truncated {
        msg.push_str(" (call path truncated)");
    }
    locs.push(json!({
        "location": location(&a.location, None, Some(&msg)),
        "nestingLevel": a.call_path.len(),
        "kinds": ["memory"],
    }));
    json!({
        "message": { "text": format!("thread {}", a.entry) },
        "locations": locs,
    })
}

/// A SARIF `location`: the physical location (omitted for an unknown file), an optional id and
/// message.
fn location(loc: &SourceLoc, id: Option<u32>, msg: Option<&str>) -> Value {
    let mut l = json!({});
    if let Some(id) = id {
        l["id"] = id.into();
    }
    if !loc.file.is_empty() {
        let mut phys = json!({ "artifactLocation": { "uri": uri(&loc.file) } });
        if loc.line > 0 {
            phys["region"] = json!({ "startLine": loc.line });
            if loc.col > 0 {
                phys["region"]["startColumn"] = loc.col.into();
            }
        }
        l["physicalLocation"] = phys;
    }
    if let Some(msg) = msg {
        l["message"] = json!({ "text": msg });
    }
    l
}

/// The URI of a source path as given: relative paths stay relative URIs, absolute ones become
/// `file://` URIs (`/a b.c` → `file:///a%20b.c`, `C:\x.c` → `file:///C:/x.c`).
pub fn uri(path: &str) -> String {
    let path = path.replace('\\', "/");
    let b = path.as_bytes();
    let drive = b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'/';
    if path.starts_with('/') {
        format!("file://{}", encode(&path, false))
    } else if drive {
        format!("file:///{}:{}", &path[..1], encode(&path[2..], false))
    } else {
        encode(&path, true)
    }
}

/// Percent-encodes a path (bytes of UTF-8) for a URI: unreserved characters and `/` are kept;
/// in absolute paths also `:@+,`. In a relative reference `:` is encoded so that it cannot be
/// read as a scheme.
fn encode(path: &str, relative: bool) -> String {
    let mut s = String::with_capacity(path.len());
    for &c in path.as_bytes() {
        let keep = c.is_ascii_alphanumeric()
            || matches!(c, b'-' | b'.' | b'_' | b'~' | b'/')
            || (!relative && matches!(c, b':' | b'@' | b'+' | b','));
        if keep {
            s.push(c as char);
        } else {
            s.push_str(&format!("%{c:02X}"));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::super::sample;
    use super::*;

    fn parsed(report: &Report) -> Value {
        let mut out = Vec::new();
        render_sarif(report, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.ends_with("}\n"));
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn log_and_results() {
        let report = sample::report("drivers/net/airo.c");
        let log = parsed(&report);
        assert_eq!(log["$schema"], SARIF_SCHEMA);
        assert_eq!(log["version"], "2.1.0");
        let runs = log["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 1);
        let driver = &runs[0]["tool"]["driver"];
        assert_eq!(driver["name"], "relay");
        assert_eq!(driver["version"], "0.1.0");
        assert_eq!(driver["rules"][0]["id"], "data-race");
        assert!(driver["rules"][0]["shortDescription"]["text"].is_string());
        assert!(driver["rules"][0]["help"]["text"].is_string());

        let results = runs[0]["results"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        let r = &results[0];
        assert!(r["ruleId"].as_str().unwrap().contains("race"));
        assert_eq!(r["level"], "warning");
        let msg = r["message"]["text"].as_str().unwrap();
        assert!(
            msg.contains("`rx_p->count`") && msg.contains("airo_thread") && msg.contains("main")
        );
        let phys = &r["locations"][0]["physicalLocation"];
        assert_eq!(phys["artifactLocation"]["uri"], "drivers/net/airo.c");
        assert_eq!(phys["region"]["startLine"], 3);
        assert_eq!(phys["region"]["startColumn"], 5);
        let rel = &r["relatedLocations"][0];
        assert_eq!(rel["id"], 1);
        assert_eq!(rel["physicalLocation"]["region"]["startLine"], 12);
        assert_eq!(
            rel["message"]["text"],
            "the other access: atomic read in airo_ioctl (thread main)"
        );
        let flows = r["codeFlows"][0]["threadFlows"].as_array().unwrap();
        assert_eq!(flows.len(), 2);
        let second = flows[1]["locations"].as_array().unwrap();
        assert_eq!(second.len(), 3, "two calls then the access");
        assert_eq!(
            second[0]["location"]["message"]["text"],
            "main calls dev_ioctl"
        );
        assert_eq!(
            second[0]["location"]["physicalLocation"]["region"]["startLine"],
            20
        );
        assert_eq!(second[2]["nestingLevel"], 2);
        assert_eq!(
            second[2]["location"]["physicalLocation"]["region"]["startLine"],
            12
        );
        assert_eq!(
            r["partialFingerprints"]["relayKey/v1"],
            report.warnings[0].key
        );
        assert!(r.get("suppressions").is_none());
    }

    #[test]
    fn filtered_warning_has_suppressions() {
        let log = parsed(&sample::report("a.c"));
        let r = &log["runs"][0]["results"][1];
        let sup = r["suppressions"].as_array().unwrap();
        assert_eq!(sup.len(), 2);
        assert_eq!(sup[0]["kind"], "external");
        assert_eq!(
            sup[0]["justification"],
            "removed by relay filter large-repr"
        );
        assert_eq!(sup[1]["justification"], "removed by relay filter init-only");
        let uri = &r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
        assert_eq!(uri, "file:///abs/dir/my%20file.c");
        assert_eq!(r["properties"]["notes"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn uris_and_degenerate_locations() {
        assert_eq!(uri("src/a.c"), "src/a.c");
        assert_eq!(uri("./a b.c"), "./a%20b.c");
        assert_eq!(uri("/usr/include/stdio.h"), "file:///usr/include/stdio.h");
        assert_eq!(uri("C:\\src\\x.c"), "file:///C:/src/x.c");
        assert_eq!(uri("<built-in>"), "%3Cbuilt-in%3E");
        assert_eq!(uri("a:b.c"), "a%3Ab.c");
        let l = location(
            &SourceLoc {
                file: String::new(),
                line: 0,
                col: 0,
            },
            None,
            Some("m"),
        );
        assert!(l.get("physicalLocation").is_none());
        let l = location(
            &SourceLoc {
                file: "x.c".into(),
                line: 4,
                col: 0,
            },
            None,
            None,
        );
        assert!(l["physicalLocation"]["region"].get("startColumn").is_none());
    }
}
