//! The JSON rendering: the report model itself, pretty-printed, versioned by
//! [`SCHEMA_VERSION`].

use std::io::{self, Write};

use anyhow::{bail, Context};

use super::{Report, SCHEMA_VERSION};

/// Writes `report` as pretty JSON followed by a newline.
pub fn render_json(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report)?;
    writeln!(out)
}

/// Reads a report written by [`render_json`]. A report of another `schema_version` is an
/// error (naming both versions) rather than a partial read.
pub fn read_json(text: &str) -> anyhow::Result<Report> {
    let value: serde_json::Value =
        serde_json::from_str(text).context("a relay JSON report is not valid JSON")?;
    let Some(obj) = value.as_object() else {
        bail!("not a relay JSON report: expected an object at the top level");
    };
    match obj.get("schema_version") {
        None => bail!("not a relay JSON report: no `schema_version` field"),
        Some(v) if v.as_u64() == Some(u64::from(SCHEMA_VERSION)) => {}
        Some(v) => bail!(
            "unsupported relay report schema_version {v} (this relay {} reads version {SCHEMA_VERSION}); \
             re-run the analysis with this version",
            env!("CARGO_PKG_VERSION")
        ),
    }
    serde_json::from_value(value).context("invalid relay JSON report")
}

#[cfg(test)]
mod tests {
    use super::super::sample;
    use super::*;

    fn json(report: &Report) -> String {
        let mut out = Vec::new();
        render_json(report, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn round_trip() {
        let report = sample::report("drivers/net/airo.c");
        let text = json(&report);
        assert!(text.ends_with("}\n"));
        assert!(text.contains("\"schema_version\": 2"));
        assert!(text.contains("\"kind\": \"write\""));
        assert_eq!(read_json(&text).unwrap(), report);
        // Deterministic.
        assert_eq!(text, json(&report));
    }

    #[test]
    fn rejects_other_versions_and_garbage() {
        let mut value: serde_json::Value =
            serde_json::from_str(&json(&sample::report("a.c"))).unwrap();
        value["schema_version"] = 99.into();
        let err = read_json(&value.to_string()).unwrap_err().to_string();
        assert!(err.contains("schema_version 99"), "{err}");
        assert!(
            err.contains(&format!("reads version {SCHEMA_VERSION}")),
            "{err}"
        );

        value.as_object_mut().unwrap().remove("schema_version");
        let err = read_json(&value.to_string()).unwrap_err().to_string();
        assert!(err.contains("no `schema_version`"), "{err}");

        assert!(read_json("[1]").is_err());
        assert!(read_json("{").is_err());
        let err = format!(
            "{:#}",
            read_json("{\"schema_version\": 2, \"tool\": 3}").unwrap_err()
        );
        assert!(err.contains("invalid relay JSON report"), "{err}");
    }
}
