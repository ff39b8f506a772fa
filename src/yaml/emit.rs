//! YAML output exactly as `kustomize build` prints it.
//!
//! kustomize prints each resource by converting it to JSON and back through
//! `sigs.k8s.io/yaml` (go-yaml v2): map keys come out sorted (go-yaml's "natural" order, where
//! `a2` < `a10`), strings that YAML 1.1 would read as something else are double-quoted, strings
//! with line breaks become literal blocks, long plain and quoted scalars are folded at column
//! 80, and block sequences under a key are not indented. Input quoting is *not* kept: the JSON
//! round trip forgets it. Input scalars are typed the way kyaml (go-yaml v3, YAML 1.2) reads
//! them, so a plain `yes` in a manifest stays the string "yes" and prints as `"yes"`.

use super::node::{Node, Value};
use super::resolve::format_float;
use std::cmp::Ordering;

const BEST_WIDTH: usize = 80;
/// libyaml writes keys longer than this (in bytes) as explicit `? key` entries.
const MAX_SIMPLE_KEY: usize = 128;

/// One document (no `---`), ending in a newline.
pub fn to_yaml(node: &Node) -> String {
    let mut e = Emitter::default();
    e.document(node);
    e.out
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
        Value::Bool(b) => match node.raw.as_deref() {
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

/// Map entries as JSON keeps them: last duplicate wins, then go-yaml's key order.
pub fn sorted_entries(node: &Node) -> Vec<(String, &Node)> {
    let Some(entries) = node.as_map() else {
        return Vec::new();
    };
    let mut out: Vec<(String, &Node)> = Vec::with_capacity(entries.len());
    for e in entries {
        // Keys are typed the kyaml way too (`y:` stays the string "y").
        let k = match json_scalar(&e.key) {
            Some(JsonScalar::Str(s)) => s.into_owned(),
            _ => e.key.key_str().into_owned(),
        };
        if let Some(slot) = out.iter_mut().find(|(ek, _)| *ek == k) {
            slot.1 = &e.value;
        } else {
            out.push((k, &e.value));
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

/// go-yaml v2's map key order: letters compare as characters, runs of digits as numbers,
/// and a non-letter sorts before a letter.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    if less(a, b) {
        Ordering::Less
    } else if less(b, a) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

fn less(a: &str, b: &str) -> bool {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let mut i = 0;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            i += 1;
            continue;
        }
        let al = ar[i].is_alphabetic();
        let bl = br[i].is_alphabetic();
        if al && bl {
            return ar[i] < br[i];
        }
        if al || bl {
            return bl;
        }
        let mut an: i64 = 0;
        let mut bn: i64 = 0;
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && ar[j - 1].is_ascii_digit() {
                if ar[j - 1] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
                j -= 1;
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an.wrapping_mul(10).wrapping_add(ar[ai] as i64 - '0' as i64);
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn.wrapping_mul(10).wrapping_add(br[bi] as i64 - '0' as i64);
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

/// Would go-yaml v2 read this plain text as something other than a string?
pub fn yaml11_non_string(s: &str) -> bool {
    if matches!(
        s,
        "" | "~"
            | "null"
            | "Null"
            | "NULL"
            | "y"
            | "Y"
            | "yes"
            | "Yes"
            | "YES"
            | "n"
            | "N"
            | "no"
            | "No"
            | "NO"
            | "true"
            | "True"
            | "TRUE"
            | "false"
            | "False"
            | "FALSE"
            | "on"
            | "On"
            | "ON"
            | "off"
            | "Off"
            | "OFF"
            | ".nan"
            | ".NaN"
            | ".NAN"
            | ".inf"
            | ".Inf"
            | ".INF"
            | "+.inf"
            | "+.Inf"
            | "+.INF"
            | "-.inf"
            | "-.Inf"
            | "-.INF"
            | "<<"
    ) {
        return true;
    }
    let first = s.as_bytes()[0];
    if !(first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.')) {
        return false;
    }
    let plain: String = s.chars().filter(|&c| c != '_').collect();
    if go_parse_int(&plain)
        || crate::yaml::resolve::is_yaml_float(&plain)
        || is_timestamp(s)
        || is_base60_float(s)
    {
        return true;
    }
    let bin = plain
        .strip_prefix("-0b")
        .or_else(|| plain.strip_prefix("0b"));
    if let Some(digits) = bin {
        return !digits.is_empty() && digits.bytes().all(|b| b == b'0' || b == b'1');
    }
    false
}

/// Go's `strconv.ParseInt(s, 0, 64)` / `ParseUint` acceptance (sign, 0x/0o/0b/0 prefixes).
fn go_parse_int(s: &str) -> bool {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    if body.is_empty() {
        return false;
    }
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
    !digits.is_empty() && u128::from_str_radix(digits, radix).is_ok_and(|v| v <= u64::MAX as u128)
}

/// `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`
fn is_base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    if i >= b.len() || !b[i].is_ascii_digit() {
        return false;
    }
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while i < b.len() && b[i] == b':' {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() && i - start < 2 {
            i += 1;
        }
        let n = i - start;
        if n == 0 || (n == 2 && b[start] > b'5') {
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

/// go-yaml's timestamp forms: `2006-1-2`, optionally with `T`/`t`/space and a time.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 8 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let mut i = 5;
    let num = |i: &mut usize, max: usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() && *i - start < max {
            *i += 1;
        }
        *i - start
    };
    if num(&mut i, 2) == 0 || i >= b.len() || b[i] != b'-' {
        return false;
    }
    i += 1;
    if num(&mut i, 2) == 0 {
        return false;
    }
    if i == b.len() {
        return true;
    }
    let sep = b[i];
    if !matches!(sep, b'T' | b't' | b' ') {
        return false;
    }
    i += 1;
    for k in 0..3 {
        if num(&mut i, 2) == 0 {
            return false;
        }
        if k < 2 {
            if i >= b.len() || b[i] != b':' {
                return false;
            }
            i += 1;
        }
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if num(&mut i, 9) == 0 {
            return false;
        }
    }
    if i == b.len() {
        return true;
    }
    if sep == b' ' {
        return false;
    }
    if b[i] == b'Z' && i + 1 == b.len() {
        return true;
    }
    if b[i] == b'+' || b[i] == b'-' {
        i += 1;
        if num(&mut i, 2) != 2 || i >= b.len() || b[i] != b':' {
            return false;
        }
        i += 1;
        return num(&mut i, 2) == 2 && i == b.len();
    }
    false
}

#[derive(Clone, Copy, PartialEq)]
enum ScalarStyle {
    Plain,
    Single,
    Double,
    Literal,
}

/// go-yaml v2's analysis of which styles can carry a scalar.
struct Analysis {
    multiline: bool,
    block_plain: bool,
    single: bool,
    block: bool,
}

fn is_printable(c: char) -> bool {
    matches!(c, '\n' | '\u{20}'..='\u{7E}' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}')
        && c != '\u{FEFF}'
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn analyze(value: &str) -> Analysis {
    if value.is_empty() {
        return Analysis {
            multiline: false,
            block_plain: true,
            single: true,
            block: false,
        };
    }
    let chars: Vec<char> = value.chars().collect();
    let mut block_ind = value.starts_with("---") || value.starts_with("...");
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) =
        (false, false, false, false);
    let (mut break_space, mut space_break, mut previous_space, mut previous_break) =
        (false, false, false, false);
    let (mut line_breaks, mut special) = (false, false);
    let mut preceded_by_ws = true;
    let n = chars.len();
    for i in 0..n {
        let c = chars[i];
        let followed_by_ws =
            i + 1 >= n || matches!(chars[i + 1], ' ' | '\t') || is_break(chars[i + 1]);
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => block_ind = true,
                '?' | ':' if followed_by_ws => block_ind = true,
                '-' if followed_by_ws => block_ind = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_ws => block_ind = true,
                '#' if preceded_by_ws => block_ind = true,
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
        preceded_by_ws = matches!(c, ' ' | '\t') || is_break(c);
    }
    let mut a = Analysis {
        multiline: line_breaks,
        block_plain: true,
        single: true,
        block: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.block_plain = false;
    }
    if trailing_space {
        a.block = false;
    }
    if break_space {
        a.block_plain = false;
        a.single = false;
    }
    if space_break || special {
        a.block_plain = false;
        a.single = false;
        a.block = false;
    }
    if line_breaks || block_ind {
        a.block_plain = false;
    }
    a
}

#[derive(Default)]
struct Emitter {
    out: String,
    column: usize,
}

impl Emitter {
    fn put(&mut self, s: &str) {
        for c in s.chars() {
            self.put_char(c);
        }
    }

    fn put_char(&mut self, c: char) {
        self.out.push(c);
        if c == '\n' {
            self.column = 0;
        } else {
            self.column += 1;
        }
    }

    fn newline_indent(&mut self, indent: usize) {
        self.put_char('\n');
        for _ in 0..indent {
            self.put_char(' ');
        }
    }

    fn pad(&mut self, indent: usize) {
        while self.column < indent {
            self.put_char(' ');
        }
    }

    fn document(&mut self, node: &Node) {
        match &node.value {
            Value::Map(m) if !m.is_empty() => self.map(node, 0),
            Value::Seq(s) if !s.is_empty() => self.seq(node, 0),
            _ => {
                self.scalar_or_empty(node, 0, false);
                self.put_char('\n');
            }
        }
    }

    /// Block map whose first key is written at the current column (already at `indent`).
    fn map(&mut self, node: &Node, indent: usize) {
        for (i, (key, value)) in sorted_entries(node).into_iter().enumerate() {
            if i > 0 {
                self.pad(indent);
            }
            if key.len() > MAX_SIMPLE_KEY {
                // As libyaml: a long key is written explicitly (`? key` then `: value`); an
                // implicit key over 1024 characters does not parse (found by fuzzing).
                self.put("? ");
                self.string(&key, indent + 2, true);
                self.put_char('\n');
                self.pad(indent);
            } else {
                self.string(&key, indent, true);
            }
            self.put_char(':');
            self.value_after_key(value, indent);
        }
    }

    fn value_after_key(&mut self, value: &Node, indent: usize) {
        match &value.value {
            Value::Map(m) if !m.is_empty() => {
                self.newline_indent(indent + 2);
                self.map(value, indent + 2);
            }
            Value::Seq(s) if !s.is_empty() => {
                self.newline_indent(indent);
                self.seq(value, indent);
            }
            _ => {
                self.put_char(' ');
                self.scalar_or_empty(value, indent + 2, false);
                self.put_char('\n');
            }
        }
    }

    fn seq(&mut self, node: &Node, indent: usize) {
        let items = node.as_seq().unwrap_or(&[]);
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.pad(indent);
            }
            self.put_char('-');
            match &item.value {
                Value::Map(m) if !m.is_empty() => {
                    self.put_char(' ');
                    self.map(item, indent + 2);
                }
                Value::Seq(s) if !s.is_empty() => {
                    self.put_char(' ');
                    self.seq(item, indent + 2);
                }
                _ => {
                    self.put_char(' ');
                    self.scalar_or_empty(item, indent + 2, false);
                    self.put_char('\n');
                }
            }
        }
    }

    /// A scalar, `{}` or `[]`, without the trailing newline (literal blocks end with one
    /// line break less than written, which the caller adds).
    fn scalar_or_empty(&mut self, node: &Node, indent: usize, key: bool) {
        match &node.value {
            Value::Map(_) => self.put("{}"),
            Value::Seq(_) => self.put("[]"),
            _ => match json_scalar(node) {
                Some(JsonScalar::Null) | None => self.put("null"),
                Some(JsonScalar::Bool(b)) => self.put(if b { "true" } else { "false" }),
                Some(JsonScalar::Int(i)) => self.put(&i.to_string()),
                Some(JsonScalar::Float(f)) => self.put(&json_float(f)),
                Some(JsonScalar::Str(s)) => self.string(&s, indent, key),
            },
        }
    }

    fn string(&mut self, s: &str, indent: usize, key: bool) {
        let a = analyze(s);
        let mut style = if s.contains('\n') {
            ScalarStyle::Literal
        } else if !yaml11_non_string(s) {
            ScalarStyle::Plain
        } else {
            ScalarStyle::Double
        };
        if key && a.multiline {
            style = ScalarStyle::Double;
        }
        if style == ScalarStyle::Plain && (!a.block_plain || (s.is_empty() && key)) {
            style = ScalarStyle::Single;
        }
        if style == ScalarStyle::Single && !a.single {
            style = ScalarStyle::Double;
        }
        if style == ScalarStyle::Literal && (!a.block || key) {
            style = ScalarStyle::Double;
        }
        let allow_breaks = !key;
        match style {
            ScalarStyle::Plain => self.plain(s, indent, allow_breaks),
            ScalarStyle::Single => self.single(s, indent, allow_breaks),
            ScalarStyle::Double => self.double(s, indent, allow_breaks),
            ScalarStyle::Literal => self.literal(s, indent),
        }
    }

    fn plain(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        let chars: Vec<char> = s.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && chars.get(i + 1) != Some(&' ')
                {
                    self.newline_indent(indent);
                } else {
                    self.put_char(c);
                }
                spaces = true;
            } else {
                self.put_char(c);
                spaces = false;
            }
        }
    }

    fn single(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        let chars: Vec<char> = s.chars().collect();
        self.put_char('\'');
        let mut spaces = false;
        let n = chars.len();
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i > 0
                    && i + 1 < n
                    && chars.get(i + 1) != Some(&' ')
                {
                    self.newline_indent(indent);
                } else {
                    self.put_char(c);
                }
                spaces = true;
            } else {
                if c == '\'' {
                    self.put_char('\'');
                }
                self.put_char(c);
                spaces = false;
            }
        }
        self.put_char('\'');
    }

    fn double(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        let chars: Vec<char> = s.chars().collect();
        self.put_char('"');
        let mut spaces = false;
        let n = chars.len();
        for (i, &c) in chars.iter().enumerate() {
            if !is_printable(c) || c == '\u{FEFF}' || is_break(c) || c == '"' || c == '\\' {
                self.put_char('\\');
                let esc = match c {
                    '\0' => "0".to_string(),
                    '\u{7}' => "a".into(),
                    '\u{8}' => "b".into(),
                    '\t' => "t".into(),
                    '\n' => "n".into(),
                    '\u{b}' => "v".into(),
                    '\u{c}' => "f".into(),
                    '\r' => "r".into(),
                    '\u{1b}' => "e".into(),
                    '"' => "\"".into(),
                    '\\' => "\\".into(),
                    '\u{85}' => "N".into(),
                    '\u{A0}' => "_".into(),
                    '\u{2028}' => "L".into(),
                    '\u{2029}' => "P".into(),
                    c if (c as u32) <= 0xFF => format!("x{:02X}", c as u32),
                    c if (c as u32) <= 0xFFFF => format!("u{:04X}", c as u32),
                    c => format!("U{:08X}", c as u32),
                };
                self.put(&esc);
                spaces = false;
            } else if c == ' ' {
                if allow_breaks && !spaces && self.column > BEST_WIDTH && i > 0 && i + 1 < n {
                    self.newline_indent(indent);
                    if chars.get(i + 1) == Some(&' ') {
                        self.put_char('\\');
                    }
                } else {
                    self.put_char(c);
                }
                spaces = true;
            } else {
                self.put_char(c);
                spaces = false;
            }
        }
        self.put_char('"');
    }

    fn literal(&mut self, s: &str, mut indent: usize) {
        self.put_char('|');
        let chars: Vec<char> = s.chars().collect();
        if chars.first().is_some_and(|&c| c == ' ' || is_break(c)) {
            self.put_char('2');
        }
        // go-yaml indents a document-level block scalar by its best indent (2) too: at column
        // 0 the `|2` indicator would not parse back, nor would a line that is `...` or `---`
        // (both found by fuzzing).
        indent = indent.max(2);
        let n = chars.len();
        let chomp = if n == 0 || !is_break(chars[n - 1]) {
            "-"
        } else if n == 1 || is_break(chars[n - 2]) {
            "+"
        } else {
            ""
        };
        self.put(chomp);
        self.put_char('\n');
        let mut breaks = true;
        for (i, &c) in chars.iter().enumerate() {
            if is_break(c) {
                // The final line break is the caller's newline.
                if i + 1 == n {
                    break;
                }
                self.put_char('\n');
                breaks = true;
            } else {
                if breaks {
                    self.pad(indent);
                    breaks = false;
                }
                self.put_char(c);
            }
        }
    }
}

/// A float as JSON then go-yaml print it: integral values become integers.
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
}
