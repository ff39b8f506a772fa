//! A YAML emitter that reproduces go-yaml's output byte for byte for the documents Helm's
//! `toYaml` (sigs.k8s.io/yaml → goyaml.v2) and `toYamlPretty` (goyaml.v3, indent 2) write:
//! block style, natural key order, quoting decided by go-yaml's resolver and libyaml's
//! scalar analysis, literal blocks for multi-line strings, and v2's folding of long plain
//! and quoted scalars at column 80.

/// A YAML node as go-yaml's encoder sees it after the JSON round trip.
#[derive(Clone, Debug)]
pub enum YNode {
    Null,
    Bool(bool),
    /// Integer or float already formatted the way go-yaml prints it.
    Number(String),
    Str(String),
    Seq(Vec<YNode>),
    Map(Vec<(String, YNode)>),
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// goyaml.v2 via sigs.k8s.io/yaml: indentless sequences in maps, folding at 80.
    V2,
    /// goyaml.v3 with SetIndent(2): indented sequences, no folding, YAML 1.2 resolver.
    V3,
}

/// goyaml's keyList.Less for string keys: runs of digits compare numerically, letters
/// sort after non-letters. goyaml.v3 adds one rule: right after a digit, a letter sorts
/// before a non-letter.
pub fn natural_less(a: &str, b: &str, flavor: Flavor) -> bool {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let mut i = 0;
    let mut digits = false;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            digits = ar[i].is_ascii_digit();
            i += 1;
            continue;
        }
        let al = ar[i].is_alphabetic();
        let bl = br[i].is_alphabetic();
        if al && bl {
            return ar[i] < br[i];
        }
        if al || bl {
            return if digits && flavor == Flavor::V3 {
                al
            } else {
                bl
            };
        }
        let (mut an, mut bn): (i64, i64) = (0, 0);
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && ar[j - 1].is_ascii_digit() {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an
                .wrapping_mul(10)
                .wrapping_add(i64::from(ar[ai] as u8 - b'0'));
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn
                .wrapping_mul(10)
                .wrapping_add(i64::from(br[bi] as u8 - b'0'));
            bi += 1;
        }
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return ar[i] < br[i];
    }
    ar.len() < br.len()
}

pub fn sort_keys(entries: &mut [(String, YNode)], flavor: Flavor) {
    entries.sort_by(|(a, _), (b, _)| {
        if natural_less(a, b, flavor) {
            std::cmp::Ordering::Less
        } else if natural_less(b, a, flavor) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    });
}

// ---- resolver: would this plain text read back as something other than a string? ----

fn is_base60_float(s: &str) -> bool {
    // ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$
    let b = s.trim_start_matches(['-', '+']).as_bytes();
    if b.is_empty() || !b[0].is_ascii_digit() {
        return false;
    }
    let mut i = 1;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while i < b.len() && b[i] == b':' {
        i += 1;
        let st = i;
        while i < b.len() && b[i].is_ascii_digit() && i - st < 2 {
            i += 1;
        }
        let g = &b[st..i];
        let ok = match g.len() {
            1 => true,
            2 => g[0] <= b'5',
            _ => false,
        };
        if !ok {
            return false;
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

/// go-yaml's parseTimestamp: YYYY-M-D with optional time part.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i != 4 || i == b.len() || b[i] != b'-' {
        return false;
    }
    let num = |i: &mut usize, max: usize| -> Option<u32> {
        let st = *i;
        while *i < b.len() && b[*i].is_ascii_digit() && *i - st < max {
            *i += 1;
        }
        if *i == st {
            return None;
        }
        std::str::from_utf8(&b[st..*i]).ok()?.parse().ok()
    };
    i += 1;
    let Some(m) = num(&mut i, 2) else {
        return false;
    };
    if i >= b.len() || b[i] != b'-' {
        return false;
    }
    i += 1;
    let Some(d) = num(&mut i, 2) else {
        return false;
    };
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return false;
    }
    if i == b.len() {
        return true;
    }
    if !matches!(b[i], b'T' | b't' | b' ') {
        return false;
    }
    let space_form = b[i] == b' ';
    i += 1;
    let (Some(h), true) = (num(&mut i, 2), i < b.len() && b[i] == b':') else {
        return false;
    };
    i += 1;
    let (Some(mi), true) = (num(&mut i, 2), i < b.len() && b[i] == b':') else {
        return false;
    };
    i += 1;
    let Some(sec) = num(&mut i, 2) else {
        return false;
    };
    if h > 23 || mi > 59 || sec > 59 {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let st = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == st {
            return false;
        }
    }
    if i == b.len() {
        return true;
    }
    if space_form {
        return false;
    }
    let rest = &s[i..];
    if rest == "Z" {
        return true;
    }
    let rb = rest.as_bytes();
    rb.len() == 6
        && (rb[0] == b'+' || rb[0] == b'-')
        && rb[1].is_ascii_digit()
        && rb[2].is_ascii_digit()
        && rb[3] == b':'
        && rb[4].is_ascii_digit()
        && rb[5].is_ascii_digit()
}

/// Would go-yaml (v2 or v3) resolve this plain scalar to a non-string?
pub fn resolves_non_string(s: &str, flavor: Flavor) -> bool {
    let Some(&first) = s.as_bytes().first() else {
        return true; // "" is null
    };
    let v2_map = [
        "~", "null", "Null", "NULL", "y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "n", "N",
        "no", "No", "NO", "off", "Off", "OFF", "true", "True", "TRUE", "false", "False", "FALSE",
        ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf",
        "-.Inf", "-.INF",
    ];
    match flavor {
        Flavor::V2 => {
            if !matches!(
                first,
                b'+' | b'-' | b'0'
                    ..=b'9'
                        | b'.'
                        | b'y'
                        | b'Y'
                        | b'n'
                        | b'N'
                        | b't'
                        | b'T'
                        | b'f'
                        | b'F'
                        | b'o'
                        | b'O'
                        | b'~'
            ) {
                return false;
            }
            if v2_map.contains(&s) {
                return true;
            }
            match first {
                b'.' => return s.parse::<f64>().is_ok() && crate::yaml::resolve::is_yaml_float(s),
                b'+' | b'-' | b'0'..=b'9' => {}
                _ => return false,
            }
            if first.is_ascii_digit() && is_timestamp(s) {
                return true;
            }
            let plain = s.replace('_', "");
            if super::conv::parse_go_int(&plain, 0).is_some() {
                return true;
            }
            if super::conv::parse_go_uint_body(plain.trim_start_matches('+'), 0).is_some()
                && !plain.starts_with('-')
            {
                return true;
            }
            if crate::yaml::resolve::is_yaml_float(&plain) {
                return true;
            }
            if let Some(r) = plain
                .strip_prefix("0b")
                .or_else(|| plain.strip_prefix("-0b"))
            {
                return !r.is_empty() && r.bytes().all(|c| c == b'0' || c == b'1');
            }
            false
        }
        Flavor::V3 => {
            // YAML 1.2 core schema plus v3's compatibility quoting of YAML 1.1 bools.
            if v2_map.contains(&s) {
                return true;
            }
            if matches!(first, b'+' | b'-' | b'0'..=b'9' | b'.') {
                let plain = s.replace('_', "");
                if super::conv::parse_go_int(&plain, 0).is_some()
                    || crate::yaml::resolve::is_yaml_float(&plain)
                    || is_timestamp(s)
                {
                    return true;
                }
            }
            false
        }
    }
}

// ---- emitter ----

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_blankz(c: Option<char>) -> bool {
    match c {
        None => true,
        Some(c) => c == ' ' || c == '\t' || is_break(c) || c == '\0',
    }
}

fn is_printable(c: char) -> bool {
    let u = c as u32;
    u == 0x0A
        || (0x20..=0x7E).contains(&u)
        || (0xA0..=0xD7FF).contains(&u)
        || ((0xE000..=0xFFFD).contains(&u) && u != 0xFEFF)
}

#[derive(Default)]
struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

fn analyze(value: &str) -> Analysis {
    if value.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let chars: Vec<char> = value.chars().collect();
    let mut block_indicators = value.starts_with("---") || value.starts_with("...");
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) =
        (false, false, false, false);
    let (mut break_space, mut space_break, mut previous_space, mut previous_break) =
        (false, false, false, false);
    let (mut line_breaks, mut special) = (false, false);
    let mut preceded_by_ws = true;
    let n = chars.len();
    for i in 0..n {
        let c = chars[i];
        let followed_by_ws = is_blankz(chars.get(i + 1).copied());
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => block_indicators = true,
                '?' | ':' | '-' if followed_by_ws => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_ws => block_indicators = true,
                '#' if preceded_by_ws => block_indicators = true,
                _ => {}
            }
        }
        if !is_printable(c) {
            special = true;
        }
        if c == ' ' {
            if i == 0 {
                leading_space = true;
            }
            if i + 1 == n {
                trailing_space = true;
            }
            if previous_break {
                break_space = true;
            }
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            line_breaks = true;
            if i == 0 {
                leading_break = true;
            }
            if i + 1 == n {
                trailing_break = true;
            }
            if previous_space {
                space_break = true;
            }
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_ws = is_blankz(Some(c));
    }
    let mut a = Analysis {
        multiline: line_breaks,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
        a.block_allowed = false;
    }
    if line_breaks {
        a.block_plain_allowed = false;
    }
    if block_indicators {
        a.block_plain_allowed = false;
    }
    a
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

struct Emitter {
    out: String,
    column: usize,
    whitespace: bool,
    indention: bool,
    indent: i64,
    best_width: usize,
    flavor: Flavor,
}

impl Emitter {
    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    fn write_indent(&mut self) {
        let indent = self.indent.max(0) as usize;
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn write_indicator(&mut self, ind: &str, need_ws: bool, is_ws: bool, is_indention: bool) {
        if need_ws && !self.whitespace {
            self.put(' ');
        }
        for c in ind.chars() {
            self.put(c);
        }
        self.whitespace = is_ws;
        self.indention = self.indention && is_indention;
    }

    fn folding(&self) -> bool {
        self.flavor == Flavor::V2
    }

    fn write_plain(&mut self, value: &str, allow_breaks: bool) {
        if !self.whitespace {
            self.put(' ');
        }
        let chars: Vec<char> = value.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_space = chars.get(i + 1) == Some(&' ');
                if allow_breaks
                    && self.folding()
                    && !spaces
                    && self.column > self.best_width
                    && !next_space
                {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    fn write_single(&mut self, value: &str, allow_breaks: bool) {
        self.write_indicator("'", true, false, false);
        let chars: Vec<char> = value.chars().collect();
        let mut spaces = false;
        let n = chars.len();
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_space = chars.get(i + 1) == Some(&' ');
                if allow_breaks
                    && self.folding()
                    && !spaces
                    && self.column > self.best_width
                    && i != 0
                    && i + 1 != n
                    && !next_space
                {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
                spaces = false;
            }
        }
        self.write_indicator("'", false, false, false);
    }

    fn write_double(&mut self, value: &str, allow_breaks: bool) {
        self.write_indicator("\"", true, false, false);
        let chars: Vec<char> = value.chars().collect();
        let mut spaces = false;
        let n = chars.len();
        let mut i = 0;
        while i < n {
            let c = chars[i];
            if !is_printable(c) || c == '\u{FEFF}' || is_break(c) || c == '"' || c == '\\' {
                let esc = match c {
                    '\0' => "\\0".to_string(),
                    '\x07' => "\\a".into(),
                    '\x08' => "\\b".into(),
                    '\t' => "\\t".into(),
                    '\n' => "\\n".into(),
                    '\x0b' => "\\v".into(),
                    '\x0c' => "\\f".into(),
                    '\r' => "\\r".into(),
                    '\x1b' => "\\e".into(),
                    '"' => "\\\"".into(),
                    '\\' => "\\\\".into(),
                    '\u{85}' => "\\N".into(),
                    '\u{a0}' => "\\_".into(),
                    '\u{2028}' => "\\L".into(),
                    '\u{2029}' => "\\P".into(),
                    c if (c as u32) <= 0xFF => format!("\\x{:02X}", c as u32),
                    c if (c as u32) <= 0xFFFF => format!("\\u{:04X}", c as u32),
                    c => format!("\\U{:08X}", c as u32),
                };
                for e in esc.chars() {
                    self.put(e);
                }
                spaces = false;
            } else if c == ' ' {
                if allow_breaks
                    && self.folding()
                    && !spaces
                    && self.column > self.best_width
                    && i != 0
                    && i + 1 != n
                {
                    self.write_indent();
                    if chars.get(i + 1) == Some(&' ') {
                        self.put('\\');
                    }
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
            i += 1;
        }
        self.write_indicator("\"", false, false, false);
    }

    fn write_literal(&mut self, value: &str) {
        self.write_indicator("|", true, false, false);
        let chars: Vec<char> = value.chars().collect();
        if chars.first().is_some_and(|&c| c == ' ' || is_break(c)) {
            self.put('2');
        }
        let n = chars.len();
        let chomp = if n == 0 || !is_break(chars[n - 1]) {
            Some('-')
        } else if n == 1 || is_break(chars[n - 2]) {
            Some('+')
        } else {
            None
        };
        if let Some(c) = chomp {
            self.put(c);
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for &c in &chars {
            if is_break(c) {
                // libyaml's write_break: '\n' is a line break, other breaks are copied.
                if c == '\n' {
                    self.put_break();
                } else {
                    self.out.push(c);
                    self.column = 0;
                }
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                    breaks = false;
                }
                self.put(c);
                self.indention = false;
            }
        }
    }

    /// A scalar: `implicit_plain` says the resolver reads the plain text back as the same
    /// type (strings that look like numbers, bools or null must not be plain).
    fn scalar(&mut self, value: &str, requested: Style, simple_key: bool) {
        let a = analyze(value);
        let mut style = requested;
        if style == Style::Plain {
            if !a.block_plain_allowed {
                style = Style::Single;
            }
            if value.is_empty() && simple_key {
                style = Style::Single;
            }
        }
        if style == Style::Single && !a.single_quoted_allowed {
            style = Style::Double;
        }
        if style == Style::Literal && (!a.block_allowed || simple_key) {
            style = Style::Double;
        }
        let _ = a.multiline;
        // Scalars are written one indentation step deeper than their parent.
        let saved = self.indent;
        self.indent = if self.indent < 0 { 2 } else { self.indent + 2 };
        let allow_breaks = !simple_key;
        match style {
            Style::Plain => self.write_plain(value, allow_breaks),
            Style::Single => self.write_single(value, allow_breaks),
            Style::Double => self.write_double(value, allow_breaks),
            Style::Literal => self.write_literal(value),
        }
        self.indent = saved;
    }

    fn string_style(&self, s: &str) -> Style {
        let can_plain = !resolves_non_string(s, self.flavor) && !is_base60_float(s);
        if s.contains('\n') {
            Style::Literal
        } else if can_plain {
            Style::Plain
        } else {
            Style::Double
        }
    }

    fn node(&mut self, n: &YNode, mapping_context: bool, simple_key: bool) {
        // Past the render's memory budget the document is cut short (and the render fails).
        if !super::memory::fits(self.out.len()) {
            return;
        }
        match n {
            YNode::Null => self.scalar("null", Style::Plain, simple_key),
            YNode::Bool(b) => {
                self.scalar(if *b { "true" } else { "false" }, Style::Plain, simple_key)
            }
            YNode::Number(s) => self.scalar(s, Style::Plain, simple_key),
            YNode::Str(s) => {
                let st = self.string_style(s);
                self.scalar(s, st, simple_key)
            }
            YNode::Seq(items) if items.is_empty() => self.write_indicator("[]", true, false, false),
            YNode::Map(items) if items.is_empty() => self.write_indicator("{}", true, false, false),
            YNode::Seq(items) => {
                let saved = self.indent;
                let indentless = self.flavor == Flavor::V2 && mapping_context && !self.indention;
                self.indent = if self.indent < 0 {
                    0
                } else if indentless {
                    self.indent
                } else {
                    self.indent + 2
                };
                for it in items {
                    self.write_indent();
                    self.write_indicator("-", true, false, true);
                    self.node(it, false, false);
                }
                self.indent = saved;
            }
            YNode::Map(items) => {
                let saved = self.indent;
                self.indent = if self.indent < 0 { 0 } else { self.indent + 2 };
                for (k, v) in items {
                    self.write_indent();
                    // libyaml's check_simple_key: at most 128 bytes and a single line;
                    // other keys are written in the explicit `? key` / `: value` form.
                    if k.len() <= 128 && !k.chars().any(is_break) {
                        self.node(&YNode::Str(k.clone()), false, true);
                        self.write_indicator(":", false, false, false);
                    } else {
                        self.write_indicator("?", true, false, true);
                        self.node(&YNode::Str(k.clone()), true, false);
                        self.write_indent();
                        self.write_indicator(":", true, false, true);
                    }
                    self.node(v, true, false);
                }
                self.indent = saved;
            }
        }
    }
}

/// The whole document, with go-yaml's trailing newline.
pub fn emit(n: &YNode, flavor: Flavor) -> String {
    let mut e = Emitter {
        out: String::new(),
        column: 0,
        whitespace: true,
        indention: true,
        indent: -1,
        best_width: 80,
        flavor,
    };
    e.node(n, false, false);
    // Document end: a final line break unless we are already at the start of a line.
    if !(e.indention && e.column == 0) {
        e.put_break();
    }
    e.out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> YNode {
        YNode::Str(x.into())
    }

    #[test]
    fn quoting() {
        for (v, want) in [
            ("yes", "\"yes\"\n"),
            ("1", "\"1\"\n"),
            ("1.5", "\"1.5\"\n"),
            ("", "\"\"\n"),
            ("~", "\"~\"\n"),
            ("a: b", "'a: b'\n"),
            ("- x", "'- x'\n"),
            ("2021-01-01", "\"2021-01-01\"\n"),
            ("hello", "hello\n"),
            ("a\tb", "\"a\\tb\"\n"),
            ("1:20", "\"1:20\"\n"),
            ("0x1F", "\"0x1F\"\n"),
            ("*.example.com", "'*.example.com'\n"),
        ] {
            assert_eq!(emit(&s(v), Flavor::V2), want, "{v:?}");
        }
    }

    #[test]
    fn block_layout() {
        let doc = YNode::Map(vec![
            (
                "a".into(),
                YNode::Seq(vec![
                    s("x"),
                    YNode::Map(vec![
                        ("k".into(), s("v")),
                        ("l".into(), YNode::Number("1".into())),
                    ]),
                ]),
            ),
            (
                "b".into(),
                YNode::Map(vec![("c".into(), s("line1\nline2"))]),
            ),
            ("d".into(), YNode::Map(vec![])),
            ("e".into(), YNode::Seq(vec![])),
            ("f".into(), YNode::Null),
        ]);
        assert_eq!(
            emit(&doc, Flavor::V2),
            "a:\n- x\n- k: v\n  l: 1\nb:\n  c: |-\n    line1\n    line2\nd: {}\ne: []\nf: null\n"
        );
        assert_eq!(
            emit(&doc, Flavor::V3),
            "a:\n  - x\n  - k: v\n    l: 1\nb:\n  c: |-\n    line1\n    line2\nd: {}\ne: []\nf: null\n"
        );
    }

    #[test]
    fn complex_keys() {
        let long = "k".repeat(130);
        let doc = YNode::Map(vec![(long.clone(), s("v")), ("a\nb".into(), s("w"))]);
        assert_eq!(
            emit(&doc, Flavor::V2),
            format!("? {long}\n: v\n? |-\n  a\n  b\n: w\n")
        );
    }

    #[test]
    fn natural_order() {
        assert!(natural_less("a2", "a10", Flavor::V2));
        assert!(natural_less("B", "a", Flavor::V2));
        assert!(natural_less("_x", "ax", Flavor::V2));
        assert!(natural_less("1_", "1a", Flavor::V2));
        assert!(natural_less("1a", "1_", Flavor::V3));
    }

    #[test]
    fn folding_long_plain() {
        let long = "word ".repeat(20).trim_end().to_string();
        let out = emit(&YNode::Map(vec![("k".into(), s(&long))]), Flavor::V2);
        assert!(out.contains("\n  word"), "{out}");
    }
}
