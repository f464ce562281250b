//! Maps byte offsets in preprocessed text back to original `file:line:col`, using the
//! preprocessor's line markers (`# 42 "include/linux/list.h" 2`).
//!
//! Built in one pass over the text (memchr over newlines); a lookup is two binary searches.

use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Location {
    pub file: String,
    pub line: u32,
    pub col: u32,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

#[derive(Clone, Copy, Debug)]
struct Marker {
    /// Physical line (0-based) of the line that carries original line number `line`.
    phys_line: u32,
    file: u32,
    line: u32,
}

pub struct LineMap {
    line_starts: Vec<u32>,
    markers: Vec<Marker>,
    files: Vec<String>,
}

impl LineMap {
    /// `default_file` names text that precedes any marker (or a file without markers).
    pub fn new(src: &str, default_file: &str) -> LineMap {
        let bytes = src.as_bytes();
        let mut line_starts = vec![0u32];
        line_starts.extend(memchr::memchr_iter(b'\n', bytes).map(|i| i as u32 + 1));
        let mut map = LineMap {
            line_starts,
            markers: Vec::new(),
            files: vec![default_file.to_string()],
        };
        for phys in 0..map.line_starts.len() {
            let start = map.line_starts[phys] as usize;
            let rest = &bytes[start..];
            let trimmed = rest
                .iter()
                .position(|&c| c != b' ' && c != b'\t')
                .unwrap_or(rest.len());
            if rest.get(trimmed) == Some(&b'#') {
                let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
                map.parse_marker(&rest[trimmed + 1..end], phys as u32);
            }
        }
        map
    }

    /// Parses `# N "file" flags` or `#line N "file"`; other directives are ignored.
    fn parse_marker(&mut self, line: &[u8], phys: u32) {
        let text = String::from_utf8_lossy(line);
        let mut rest = text.trim_start();
        if let Some(r) = rest.strip_prefix("line") {
            rest = r.trim_start();
        }
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let Ok(number) = rest[..digits].parse::<u32>() else {
            return;
        };
        let rest = rest[digits..].trim_start();
        let file = match rest.strip_prefix('"') {
            Some(quoted) => {
                let name = unescape_until_quote(quoted);
                match self.files.iter().position(|f| *f == name) {
                    Some(i) => i as u32,
                    None => {
                        self.files.push(name);
                        (self.files.len() - 1) as u32
                    }
                }
            }
            None => self.markers.last().map_or(0, |m| m.file),
        };
        self.markers.push(Marker {
            phys_line: phys + 1,
            file,
            line: number,
        });
    }

    /// Original (file index, line, column) of a byte offset; lines and columns are 1-based.
    pub fn resolve(&self, offset: u32) -> (u32, u32, u32) {
        let phys = self
            .line_starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        let col = offset - self.line_starts[phys] + 1;
        let m = self
            .markers
            .partition_point(|m| m.phys_line as usize <= phys);
        match m.checked_sub(1).map(|i| self.markers[i]) {
            Some(mk) => (mk.file, mk.line + (phys as u32 - mk.phys_line), col),
            None => (0, phys as u32 + 1, col),
        }
    }

    pub fn location(&self, offset: u32) -> Location {
        let (file, line, col) = self.resolve(offset);
        Location {
            file: self.files[file as usize].clone(),
            line,
            col,
        }
    }

    /// Every file named by a marker (index 0 is the unit itself), as `resolve` numbers them.
    pub fn files(&self) -> &[String] {
        &self.files
    }

    pub fn file_name(&self, index: u32) -> &str {
        &self.files[index as usize]
    }

    pub fn heap_bytes(&self) -> usize {
        self.line_starts.capacity() * 4 + self.markers.capacity() * 12
    }
}

fn unescape_until_quote(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => out.extend(chars.next()),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_through_markers() {
        let src = "# 1 \"a.c\"\nint a;\n# 10 \"inc/b.h\" 1 3\n\nint b;\n# 3 \"a.c\" 2\n  int c;\n";
        let map = LineMap::new(src, "tu.i");
        let at = |needle: &str| map.location(src.find(needle).unwrap() as u32);
        assert_eq!(at("int a").to_string(), "a.c:1:1");
        assert_eq!(at("int b").to_string(), "inc/b.h:11:1");
        assert_eq!(at("int c").to_string(), "a.c:3:3");
    }

    #[test]
    fn text_without_markers_uses_the_default_name() {
        let map = LineMap::new("x\ny", "t.i");
        assert_eq!(map.location(2).to_string(), "t.i:2:1");
        assert_eq!(map.location(3).to_string(), "t.i:2:2");
    }

    #[test]
    fn malformed_markers_are_ignored() {
        let src = "# \"x\nint a;\n#line 7\nb";
        let map = LineMap::new(src, "t.i");
        assert_eq!(
            map.location(src.find('b').unwrap() as u32).to_string(),
            "t.i:7:1"
        );
    }
}
