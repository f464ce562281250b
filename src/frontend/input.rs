//! Inputs: `.i` files, `.c` files (run through the system preprocessor), directories of either,
//! and `compile_commands.json` entries (preprocessed with their own flags).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde::Deserialize;

/// One translation unit to read.
#[derive(Clone, Debug)]
pub enum Input {
    /// Already preprocessed text.
    Preprocessed(PathBuf),
    /// A source file to preprocess with `compiler args... -E file`, run in `dir`.
    Source {
        file: PathBuf,
        compiler: String,
        args: Vec<String>,
        dir: PathBuf,
    },
}

impl Input {
    pub fn display_name(&self) -> String {
        match self {
            Input::Preprocessed(p) => p.display().to_string(),
            Input::Source { file, dir, .. } if dir == Path::new(".") => file.display().to_string(),
            Input::Source { file, dir, .. } => dir.join(file).display().to_string(),
        }
    }

    /// Reads or preprocesses the unit. Invalid UTF-8 is replaced, not rejected.
    pub fn load(&self) -> Result<String> {
        self.load_bytes().map(into_text)
    }

    /// The preprocessed text as bytes, before [`into_text`] (what a unit's cache key hashes).
    pub fn load_bytes(&self) -> Result<Vec<u8>> {
        match self {
            Input::Preprocessed(p) => {
                std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))
            }
            Input::Source {
                file,
                compiler,
                args,
                dir,
            } => preprocess(compiler, args, file, dir),
        }
    }
}

/// Preprocessed bytes as text; invalid UTF-8 is replaced.
pub fn into_text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn preprocess(compiler: &str, args: &[String], file: &Path, dir: &Path) -> Result<Vec<u8>> {
    let out = Command::new(compiler)
        .args(args)
        .arg("-E")
        .arg(file)
        .current_dir(dir)
        .output()
        .with_context(|| format!("cannot run preprocessor `{compiler}`"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let first: Vec<&str> = stderr.lines().take(5).collect();
        bail!(
            "preprocessor failed ({}): {}",
            out.status,
            first.join(" | ")
        );
    }
    Ok(out.stdout)
}

/// How `.c` files named on the command line are preprocessed.
#[derive(Clone, Debug, Default)]
pub struct PreprocessOptions {
    pub compiler: Option<String>,
    /// `-I`, `-D`, `-U`, `-include`, `-std` ... passed through.
    pub flags: Vec<String>,
}

impl PreprocessOptions {
    fn compiler(&self) -> String {
        self.compiler
            .clone()
            .or_else(|| std::env::var("CC").ok())
            .unwrap_or_else(|| "cc".into())
    }
}

/// Expands paths (files and directories, recursively, sorted) into inputs.
pub fn collect_paths(paths: &[PathBuf], pp: &PreprocessOptions) -> Result<Collected> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut files)
                .with_context(|| format!("cannot read directory {}", p.display()))?;
        } else if p.exists() {
            files.push(p.clone());
        } else {
            bail!("no such file or directory: {}", p.display());
        }
    }
    // `x.c` beside its own `x.i` is one unit, not two (every warning would be reported twice):
    // the preprocessed form is what the build saw.
    let preprocessed: std::collections::HashSet<PathBuf> = files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "i"))
        .cloned()
        .collect();
    let (twins, files): (Vec<PathBuf>, Vec<PathBuf>) = files.into_iter().partition(|f| {
        f.extension().is_some_and(|e| e == "c") && preprocessed.contains(&f.with_extension("i"))
    });
    Ok(Collected {
        inputs: files.into_iter().map(|f| classify(f, pp)).collect(),
        twins,
    })
}

/// The inputs named on the command line, and the `.c` files left out for their `.i` twin.
pub struct Collected {
    pub inputs: Vec<Input>,
    pub twins: Vec<PathBuf>,
}

fn classify(file: PathBuf, pp: &PreprocessOptions) -> Input {
    match file.extension().and_then(|e| e.to_str()) {
        Some("c" | "h") => Input::Source {
            file,
            compiler: pp.compiler(),
            args: pp.flags.clone(),
            dir: PathBuf::from("."),
        },
        _ => Input::Preprocessed(file),
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out)?;
        } else if matches!(p.extension().and_then(|e| e.to_str()), Some("i" | "c")) {
            out.push(p);
        }
    }
    Ok(())
}

#[derive(Deserialize)]
struct CompileCommand {
    directory: PathBuf,
    file: PathBuf,
    #[serde(default)]
    arguments: Option<Vec<String>>,
    #[serde(default)]
    command: Option<String>,
}

/// Reads a `compile_commands.json`: each entry becomes a unit preprocessed with its own flags.
pub fn collect_compile_commands(path: &Path) -> Result<Vec<Input>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let entries: Vec<CompileCommand> = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a compilation database", path.display()))?;
    let mut inputs = Vec::new();
    for (i, e) in entries.into_iter().enumerate() {
        let argv = match (e.arguments, e.command) {
            (Some(a), _) => a,
            (None, Some(c)) => shlex::split(&c)
                .with_context(|| format!("{}: entry {i}: cannot split command", path.display()))?,
            (None, None) => bail!(
                "{}: entry {i} has neither `arguments` nor `command`",
                path.display()
            ),
        };
        let Some((compiler, rest)) = argv.split_first() else {
            bail!("{}: entry {i} has an empty command", path.display());
        };
        let args = preprocessing_args(rest, &e.directory.join(&e.file), &e.directory);
        inputs.push(Input::Source {
            file: e.file,
            compiler: compiler.clone(),
            args,
            dir: e.directory,
        });
    }
    Ok(inputs)
}

/// Compile flags minus what would compile, write outputs or name the source file itself
/// (`file` is absolute or relative to `dir`, like the arguments: bear writes an absolute
/// `file` and relative arguments).
fn preprocessing_args(args: &[String], file: &Path, dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-c" | "-MD" | "-MMD" | "-MP" | "-M" | "-MM" | "-S" | "-E" => {}
            "-o" | "-MF" | "-MT" | "-MQ" => {
                it.next();
            }
            _ if a.starts_with("-o")
                || a.starts_with("-MF")
                || a.starts_with("-Wp,-MD")
                || a.starts_with("-Wp,-MMD") => {}
            _ if dir.join(a) == file => {}
            _ => out.push(a.clone()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compile_command_flags_lose_outputs_and_source() {
        let args: Vec<String> = [
            "-O2", "-c", "-o", "x.o", "-Iinc", "-DX=1", "-MD", "-MF", "x.d", "x.c",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            preprocessing_args(&args, Path::new("/src/x.c"), Path::new("/src")),
            vec!["-O2", "-Iinc", "-DX=1"]
        );
    }
}
