//! The one YAML emitter: go-yaml's output byte for byte, as `kustomize build` prints resources
//! and as Helm's `toYaml` (sigs.k8s.io/yaml → goyaml.v2) and `toYamlPretty` (goyaml.v3,
//! indent 2) write values. Block style, natural key order, quoting decided by go-yaml's
//! resolver and libyaml's scalar analysis, literal blocks for multi-line strings, and v2's
//! folding of long plain and quoted scalars at column 80.
//!
//! Both callers go through JSON first (kustomize and sigs.k8s.io/yaml convert to JSON and
//! back), so the emitter works on [`YNode`], a tree with JSON's types; [`to_yaml`] makes one
//! from a parsed [`Node`] the way kyaml (go-yaml v3, YAML 1.2) typed the input: a plain `yes`
//! in a manifest stays the string "yes" and prints as `"yes"`. Input quoting is not kept.

use super::float::format_float;
use super::node::{Node, Value};
use std::cmp::Ordering;

/// One document (no `---`), ending in a newline, as kustomize prints a resource.
pub fn to_yaml(node: &Node) -> String {
    emit(&ynode_of(node), Flavor::V2)
}

/// Documents joined by `---` lines, as kustomize prints a resource list.
pub fn to_yaml_stream<'a>(docs: impl IntoIterator<Item = &'a Node>) -> String {
    let mut out = String::new();
    for (i, doc) in docs.into_iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&to_yaml(doc));
    }
    out
}

/// A scalar as JSON sees it after kyaml reads the input.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonScalar<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(std::borrow::Cow<'a, str>),
}

/// How kyaml (YAML 1.2) types a node our YAML 1.1 parser typed: only `true`/`false` spellings
/// are booleans there, so `yes`/`on`/`y` written plain are strings.
pub fn json_scalar(node: &Node) -> Option<JsonScalar<'_>> {
    use std::borrow::Cow;
    Some(match &node.value {
        Value::Null => JsonScalar::Null,
        Value::Bool(b) => match node.raw() {
            Some(raw) if !matches!(raw, "true" | "True" | "TRUE" | "false" | "False" | "FALSE") => {
                JsonScalar::Str(Cow::Borrowed(raw))
            }
            _ => JsonScalar::Bool(*b),
        },
        Value::Int(i) => JsonScalar::Int(*i),
        Value::Float(f) => JsonScalar::Float(*f),
        Value::String(s) => JsonScalar::Str(Cow::Borrowed(s)),
        Value::Seq(_) | Value::Map(_) => return None,
    })
}

/// A parsed node as the JSON round trip leaves it: scalars typed as kyaml reads them, map
/// keys deduplicated (the last wins) and in go-yaml's order.
pub fn ynode_of(node: &Node) -> YNode {
    match &node.value {
        Value::Map(_) => YNode::Map(
            sorted_entries(node)
                .into_iter()
                .map(|(k, v)| (k, ynode_of(v)))
                .collect(),
        ),
        Value::Seq(items) => YNode::Seq(items.iter().map(ynode_of).collect()),
        _ => match json_scalar(node) {
            Some(JsonScalar::Null) | None => YNode::Null,
            Some(JsonScalar::Bool(b)) => YNode::Bool(b),
            Some(JsonScalar::Int(i)) => YNode::Number(i.to_string()),
            Some(JsonScalar::Float(f)) => YNode::Number(json_float(f)),
            Some(JsonScalar::Str(s)) => YNode::Str(s.into_owned()),
        },
    }
}

/// Map entries as JSON keeps them: last duplicate wins, then go-yaml's key order.
pub fn sorted_entries(node: &Node) -> Vec<(String, &Node)> {
    let Some(entries) = node.as_map() else {
        return Vec::new();
    };
    let mut out: Vec<(String, &Node)> = Vec::with_capacity(entries.len());
    // Position of each key in `out`: a scan per key is quadratic in a wide mapping.
    let mut at: std::collections::HashMap<String, usize> = Default::default();
    for e in entries {
        // Keys are typed the kyaml way too (`y:` stays the string "y").
        let k = match json_scalar(&e.key) {
            Some(JsonScalar::Str(s)) => s.into_owned(),
            _ => e.key.key_str().into_owned(),
        };
        let slot = if entries.len() > 16 {
            at.get(&k).copied()
        } else {
            out.iter().position(|(ek, _)| *ek == k)
        };
        match slot {
            Some(i) => out[i].1 = &e.value,
            None => {
                if entries.len() > 16 {
                    at.insert(k.clone(), out.len());
                }
                out.push((k, &e.value));
            }
        }
    }
    merge_sort_by(out, &|a: &(String, &Node), b: &(String, &Node)| {
        natural_cmp(&a.0, &b.0)
    })
}

/// A stable merge sort that accepts any comparator. go-yaml's key order is not a total order
/// (digit runs past i64 wrap, the leading-zero rule), and std's sort may panic on such a
/// comparator (found by fuzzing); Go's sort just returns some order.
fn merge_sort_by<T>(mut v: Vec<T>, cmp: &impl Fn(&T, &T) -> Ordering) -> Vec<T> {
    if v.len() <= 1 {
        return v;
    }
    let right = v.split_off(v.len() / 2);
    let left = merge_sort_by(v, cmp);
    let right = merge_sort_by(right, cmp);
    let mut out = Vec::with_capacity(left.len() + right.len());
    let mut l = left.into_iter().peekable();
    let mut r = right.into_iter().peekable();
    loop {
        let take_right = match (l.peek(), r.peek()) {
            (Some(a), Some(b)) => cmp(b, a) == Ordering::Less,
            (Some(_), None) => false,
            (None, Some(_)) => true,
            (None, None) => break,
        };
        out.extend(if take_right { r.next() } else { l.next() });
    }
    out
}

/// go-yaml v2's map key order (what kustomize prints).
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    natural_order(a, b, Flavor::V2)
}

/// A float as Go's encoding/json writes it and go-yaml then prints it.
fn json_float(f: f64) -> String {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e21 {
        format!("{}", f as i128)
    } else if f.is_nan() {
        ".nan".into()
    } else if f.is_infinite() {
        if f > 0.0 {
            ".inf".into()
        } else {
            "-.inf".into()
        }
    } else {
        format_float(f)
    }
}

/// Go's `strconv.ParseInt(s, 0, 64)`: an optional sign, a 0x/0o/0b or leading-0 prefix, and
/// a magnitude that fits an int64.
fn go_parse_int(s: &str) -> bool {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    go_magnitude(body).is_some_and(|v| {
        if negative {
            v <= 1u128 << 63
        } else {
            v < 1u128 << 63
        }
    })
}

/// Go's `strconv.ParseUint(s, 0, 64)` (no sign).
fn go_parse_uint(s: &str) -> bool {
    go_magnitude(s).is_some_and(|v| v <= u64::MAX as u128)
}

fn go_magnitude(body: &str) -> Option<u128> {
    let (digits, radix) = if let Some(h) = body.strip_prefix("0x").or(body.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(o) = body.strip_prefix("0o").or(body.strip_prefix("0O")) {
        (o, 8)
    } else if let Some(b) = body.strip_prefix("0b").or(body.strip_prefix("0B")) {
        (b, 2)
    } else if body.len() > 1 && body.starts_with('0') {
        (&body[1..], 8)
    } else {
        (body, 10)
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    u128::from_str_radix(digits, radix).ok()
}

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

/// Sort map entries into go-yaml's key order (stable; see [`merge_sort_by`]).
pub fn sort_keys(entries: &mut Vec<(String, YNode)>, flavor: Flavor) {
    let taken = std::mem::take(entries);
    *entries = merge_sort_by(taken, &|a: &(String, YNode), b: &(String, YNode)| {
        natural_order(&a.0, &b.0, flavor)
    });
}

/// [`natural_less`] as an ordering.
pub fn natural_order(a: &str, b: &str, flavor: Flavor) -> Ordering {
    if natural_less(a, b, flavor) {
        Ordering::Less
    } else if natural_less(b, a, flavor) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
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
    // Go's time.Parse checks the day against the month (2001-02-30 is no date).
    let y: u32 = s[..4].parse().unwrap_or(0);
    let leap = y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400));
    let days = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=12).contains(&m) || d < 1 || d > days {
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
            if go_parse_int(&plain) {
                return true;
            }
            if go_parse_uint(&plain) {
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
                if go_parse_int(&plain)
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

struct Emitter<'a> {
    out: String,
    /// Whether the output may grow to this many bytes (the caller's memory budget).
    fits: &'a dyn Fn(usize) -> bool,
    column: usize,
    whitespace: bool,
    indention: bool,
    indent: i64,
    best_width: usize,
    flavor: Flavor,
}

impl Emitter<'_> {
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
        if !(self.fits)(self.out.len()) {
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
    emit_within(n, flavor, &|_| true)
}

/// [`emit`], stopping (with a truncated document) once `fits` refuses the output's length:
/// a template's memory budget applies to what `toYaml` writes.
pub fn emit_within(n: &YNode, flavor: Flavor, fits: &dyn Fn(usize) -> bool) -> String {
    let mut e = Emitter {
        out: String::new(),
        fits,
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
    use crate::source::{FileId, Span};
    use crate::yaml::{Limits, parse_str};

    fn roundtrip(src: &str) -> String {
        let parsed = parse_str(src, FileId(0), &Limits::default());
        let docs: Vec<&Node> = parsed.docs.iter().map(|d| &d.root).collect();
        to_yaml_stream(docs)
    }

    #[test]
    fn a_wide_mapping_with_duplicates_emits_in_linear_time() {
        let mut src = String::new();
        for i in 0..200_000 {
            src.push_str(&format!("k{i}: a\n"));
        }
        src.push_str("k5: last\n");
        let started = std::time::Instant::now();
        let parsed = parse_str(&src, FileId(0), &Limits::default());
        let entries = sorted_entries(&parsed.docs[0].root);
        let took = started.elapsed();
        assert_eq!(entries.len(), 200_000);
        let k5 = entries
            .iter()
            .find(|(k, _)| k == "k5")
            .map(|(_, v)| v.as_str());
        assert_eq!(k5, Some(Some("last")));
        let bound = if cfg!(debug_assertions) { 20 } else { 2 };
        assert!(took < std::time::Duration::from_secs(bound), "{took:?}");
    }

    #[test]
    fn sorts_keys_and_unindents_sequences() {
        let out = roundtrip(
            "kind: A\napiVersion: v1\nspec:\n  containers:\n    - name: a\n      image: b\n",
        );
        assert_eq!(
            out,
            "apiVersion: v1\nkind: A\nspec:\n  containers:\n  - image: b\n    name: a\n"
        );
    }

    #[test]
    fn quotes_yaml11_lookalikes() {
        let out = roundtrip(
            "a: \"true\"\nb: \"1\"\nc: yes\nd: \"\"\ne: \"12:30\"\nf: '2001-12-14'\ng: peach\n",
        );
        assert_eq!(
            out,
            "a: \"true\"\nb: \"1\"\nc: \"yes\"\nd: \"\"\ne: \"12:30\"\nf: \"2001-12-14\"\ng: peach\n"
        );
    }

    #[test]
    fn literal_blocks_and_chomping() {
        let out = roundtrip("a: |\n  x\n  y\nb: \"x\\ny\"\nc: \"x\\n\\n\"\n");
        assert_eq!(out, "a: |\n  x\n  y\nb: |-\n  x\n  y\nc: |+\n  x\n\n");
    }

    #[test]
    fn document_level_literal_parses_back() {
        // Found by fuzzing: `|2`, or a `...` line, at the document level with content at column 0.
        for text in ["\n>\n", " x\ny\n", "a\n...\nb", "x\n--- y\n"] {
            let out = to_yaml(&Node::string(text, Span::default()));
            let back = parse_str(&out, FileId::default(), &Limits::default());
            assert!(back.error.is_none(), "{out:?}");
            assert_eq!(back.docs.first().and_then(|d| d.root.as_str()), Some(text));
        }
        // What helm 3.18 prints for `toYaml "a\n...\nb"` and `toYaml " a\nb"`.
        let emit = |t: &str| to_yaml(&Node::string(t, Span::default()));
        assert_eq!(emit("a\n...\nb"), "|-\n  a\n  ...\n  b\n");
        assert_eq!(emit(" a\nb"), "|2-\n   a\n  b\n");
    }

    #[test]
    fn long_keys_are_explicit_and_parse_back() {
        let key = "k".repeat(1100);
        let out = roundtrip(&format!("? \"{key}\"\n: v\nb: 1\n"));
        assert_eq!(out, format!("b: 1\n? {key}\n: v\n"));
        let back = parse_str(&out, FileId::default(), &Limits::default());
        assert!(back.error.is_none());
        assert_eq!(
            back.docs.first().and_then(|d| d.root.get_str(&key)),
            Some("v")
        );
    }

    #[test]
    fn natural_key_order() {
        assert_eq!(natural_cmp("a2", "a10"), Ordering::Less);
        assert_eq!(natural_cmp("a-b", "ab"), Ordering::Less);
        // Not a total order (wrapping digit runs): sorting must still not panic.
        let keys: Vec<String> = (0..64)
            .map(|i| format!("{}{}", "9".repeat(18 + i % 5), i))
            .collect();
        let sorted = merge_sort_by(keys.clone(), &|a: &String, b: &String| natural_cmp(a, b));
        assert_eq!(sorted.len(), keys.len());
    }

    #[test]
    fn special_strings_single_quoted() {
        let out = roundtrip("a: \"*x\"\nb: \"x: y\"\nc: \"- a\"\n");
        assert_eq!(out, "a: '*x'\nb: 'x: y'\nc: '- a'\n");
    }

    #[test]
    fn what_kubectl_kustomize_and_helm_print_for_merge_keys_dates_and_multiline_keys() {
        // Both oracles (kubectl kustomize, helm 3.18 toYaml) agree: `<<` stays plain, an
        // impossible date is no timestamp, a multi-line key is an explicit `? |-` key.
        let out = roundtrip(
            "a: \"<<\"\nb: \"2001-02-30\"\nc: \"2001-1-1\"\nd: \"-0xFFFFFFFFFFFFFFFF\"\ne: \"0xFFFFFFFFFFFFFFFF\"\n\"x\\ny\": w\n",
        );
        assert_eq!(
            out,
            "a: <<\nb: 2001-02-30\nc: \"2001-1-1\"\nd: -0xFFFFFFFFFFFFFFFF\ne: \"0xFFFFFFFFFFFFFFFF\"\n? |-\n  x\n  y\n: w\n"
        );
        assert_eq!(
            emit(&YNode::Str("2004-02-29".into()), Flavor::V2),
            "\"2004-02-29\"\n"
        );
    }

    // ---- the YNode emitter, as Helm's toYaml / toYamlPretty use it ----

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
