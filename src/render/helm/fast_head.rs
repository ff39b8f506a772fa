//! A fast reading of a rendered document's head (kind, apiVersion, metadata.name and the
//! annotations) for the common case: block-style YAML written one entry per line.
//!
//! Helm reads every rendered document with a full YAML parse (`SimpleHead`), so any syntax
//! error anywhere fails the render, and `manifest::simple_head` does the same with the
//! span-preserving parser: a tenth of a chart render, most of it in CRDs. This scanner proves
//! a document valid line by line within a strict subset (ASCII, space indentation, simple
//! keys, single-line scalars, `|`/`>` blocks, `[]`/`{}`) and reads the head on the way. Any
//! line outside the subset, and any head field that is not plainly a string, returns `None`
//! and the caller falls back to the full parse: the answer, when there is one, is the full
//! parse's answer (pinned by a differential test over the corpus and by the yaml_load fuzz
//! target).

use crate::yaml::Value;
use crate::yaml::resolve::resolve_plain;

/// Nesting this scanner follows; deeper documents go to the full parse, whose limit
/// (`Limits::max_depth`, 256 by default) is then the one that applies.
const MAX_LEVELS: usize = 200;

/// kind, name and the `helm.sh/hook` annotation, as `simple_head` returns them.
pub type Head = (String, String, Option<String>);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Map,
    Seq,
}

/// What a map level is, for the head fields.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Root,
    Metadata,
    Annotations,
    Other,
}

#[derive(Clone, Copy)]
struct Level {
    indent: usize,
    kind: Kind,
    role: Role,
}

/// A `key:` or `-` with nothing after it: the next line may open its child.
#[derive(Clone, Copy)]
struct Pending {
    indent: usize,
    /// Role of the child map if one opens (from the key's name and its map's role).
    child: Role,
    /// After `key:` a sequence may start at the key's own indent; after `-` it may not.
    from_key: bool,
    /// The key is a head field: a value on the next line needs the parser.
    head: bool,
}

/// A value written on one line (or starting on it: see `Cont`).
enum Scalar<'a> {
    Str(std::borrow::Cow<'a, str>),
    Null,
    /// A number, boolean or other non-string: the full parse decides (an error for a head field).
    NotString,
    EmptyMap,
    EmptySeq,
    /// `|` or `>`, or a quoted scalar that goes on: a string whose text the full parse reads
    /// when a head field needs it.
    LongString,
    /// Nothing after `key:`: null, or a child on the next lines.
    Empty,
}

/// How a value may go on over the next lines.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cont {
    /// Finished on its line.
    No,
    /// A plain scalar: more-indented lines fold into it.
    Plain,
    /// A plain scalar cut by a comment: only comments and blank lines may follow deeper.
    PlainEnded,
    /// A single-quoted scalar without its closing quote yet.
    Single,
    /// A double-quoted scalar without its closing quote yet.
    Double,
    /// A `|` or `>` block.
    Block,
}

/// A multi-line value being read: lines indented deeper than `parent` belong to it.
struct Open {
    cont: Cont,
    parent: usize,
    /// A head field: its text would need folding, so a continuation line ends the fast path.
    head: bool,
    /// Block scalars: the indent of the first content line, and the longest all-space line
    /// before it.
    content: Option<usize>,
    leading_blank: usize,
}

#[derive(Default)]
struct HeadFields {
    kind: Option<String>,
    api_version_seen: bool,
    name: Option<String>,
    hook: Option<String>,
    metadata_seen: bool,
    annotations_seen: bool,
}

/// The head when `doc` is in the subset, else `None` (the caller parses in full).
pub fn fast_head(doc: &str) -> Option<Head> {
    if !doc.is_ascii() && !doc.chars().all(printable_non_break) {
        return None;
    }
    let mut stack: Vec<Level> = Vec::new();
    let mut pending: Option<Pending> = None;
    let mut open: Option<Open> = None;
    let mut head = HeadFields::default();

    for line in doc.split('\n') {
        // Tabs, carriage returns and other control bytes: left to the parser.
        if line.bytes().any(|b| b < 0x20 || b == 0x7f) {
            return None;
        }
        let indent = line.len() - line.trim_start_matches(' ').len();
        let rest = &line[indent..];
        if let Some(o) = &mut open {
            if continues(o, indent, rest)? {
                continue;
            }
            open = None;
        }
        if rest.is_empty() || rest.starts_with('#') {
            continue;
        }
        if indent == 0 && (rest.starts_with("---") || rest.starts_with("...")) {
            return None;
        }
        let is_seq_entry = rest == "-" || rest.starts_with("- ");
        // Place the line: a child of the pending key, or an entry of an open level.
        if let Some(p) = pending.take() {
            if indent > p.indent && !is_seq_entry && split_key(rest).is_none() {
                // `key:` with its value on the next line (metadata or annotations: `{}` only).
                let (value, cont) = scalar(rest)?;
                let empty_map = matches!(value, Scalar::EmptyMap) && cont == Cont::No;
                if p.head || (p.child != Role::Other && !empty_map) {
                    return None;
                }
                open = opened(cont, p.indent, false);
                continue;
            }
            let opens_child =
                indent > p.indent || (indent == p.indent && is_seq_entry && p.from_key);
            if opens_child && p.head {
                return None; // a head field holding a list or map: the full parse errs
            }
            if indent > p.indent {
                if is_seq_entry && p.child != Role::Other {
                    return None; // metadata or annotations as a list: the full parse errs
                }
                stack.push(Level {
                    indent,
                    kind: if is_seq_entry { Kind::Seq } else { Kind::Map },
                    role: if is_seq_entry { Role::Other } else { p.child },
                });
            } else if indent == p.indent && is_seq_entry && p.from_key {
                if p.child != Role::Other {
                    return None;
                }
                stack.push(Level {
                    indent,
                    kind: Kind::Seq,
                    role: Role::Other,
                });
            }
        }
        if stack.is_empty() {
            if indent != 0 || is_seq_entry {
                return None; // the root must be a map
            }
            stack.push(Level {
                indent: 0,
                kind: Kind::Map,
                role: Role::Root,
            });
        }
        // Close deeper levels; a map key at a compact sequence's indent closes it too.
        while let Some(top) = stack.last() {
            let closes = top.indent > indent
                || (top.indent == indent && top.kind == Kind::Seq && !is_seq_entry);
            if !closes {
                break;
            }
            stack.pop();
        }
        let top = *stack.last()?;
        if stack.len() > MAX_LEVELS {
            return None; // near the full parse's nesting limit: let it decide
        }
        if top.indent != indent {
            return None; // a continuation line or a bad indent
        }
        let (entry_indent, entry) = match top.kind {
            Kind::Seq => {
                if !is_seq_entry {
                    return None;
                }
                let after = rest[1..].trim_start_matches(' ');
                if after.is_empty() || after.starts_with('#') {
                    pending = Some(Pending {
                        indent,
                        child: Role::Other,
                        from_key: false,
                        head: false,
                    });
                    continue;
                }
                let col = indent + (rest.len() - after.len());
                if after == "-" || after.starts_with("- ") {
                    return None; // `- - x`
                }
                if split_key(after).is_none() {
                    // `- value`: continuation lines two columns past the dash, as renderers
                    // write them; shallower ones are left to the parser.
                    let (_, cont) = scalar(after)?;
                    open = opened(cont, indent + 1, false);
                    continue;
                }
                // `- key: value`: a map whose first entry is on the dash's line.
                stack.push(Level {
                    indent: col,
                    kind: Kind::Map,
                    role: Role::Other,
                });
                (col, after)
            }
            Kind::Map => {
                if is_seq_entry {
                    return None;
                }
                (indent, rest)
            }
        };
        let role = stack.last().map_or(Role::Other, |l| l.role);
        let (key, value_text) = split_key(entry)?;
        let (value, cont) = scalar(value_text)?;
        let is_head = record_head(&mut head, role, key, &value)?;
        if let Scalar::Empty = value {
            pending = Some(Pending {
                indent: entry_indent,
                child: child_role(role, key),
                from_key: true,
                head: is_head,
            });
        }
        open = opened(cont, entry_indent, is_head);
    }
    if stack.is_empty() || open.is_some_and(|o| matches!(o.cont, Cont::Single | Cont::Double)) {
        return None; // only comments (a null document), or an unclosed quote
    }
    Some((
        head.kind.unwrap_or_default(),
        head.name.unwrap_or_default(),
        head.hook,
    ))
}

fn opened(cont: Cont, parent: usize, head: bool) -> Option<Open> {
    (cont != Cont::No).then_some(Open {
        cont,
        parent,
        head,
        content: None,
        leading_blank: 0,
    })
}

/// Whether a line belongs to the open multi-line value (`Some(false)`: the value ended
/// before it; `None`: a line this scanner leaves to the parser).
fn continues(o: &mut Open, indent: usize, rest: &str) -> Option<bool> {
    match o.cont {
        Cont::No => Some(false),
        Cont::Block => {
            if rest.is_empty() {
                if o.content.is_none() {
                    o.leading_blank = o.leading_blank.max(indent);
                }
                return Some(true);
            }
            match o.content {
                None if indent > o.parent => {
                    if o.leading_blank > indent {
                        return None;
                    }
                    o.content = Some(indent);
                    Some(true)
                }
                Some(c) if indent >= c => Some(true),
                Some(_) if indent > o.parent => None,
                _ => Some(false),
            }
        }
        Cont::Plain | Cont::PlainEnded => {
            if rest.is_empty() {
                return Some(true); // folded
            }
            if indent <= o.parent {
                return Some(false);
            }
            if rest.starts_with('#') {
                o.cont = Cont::PlainEnded; // a comment ends the scalar
                return Some(true);
            }
            // A deeper line: more of the scalar (an error after a comment). Any text but
            // a mapping value or a comment; `- ` left to the parser.
            if o.cont == Cont::PlainEnded
                || o.head
                || rest == "-"
                || rest.starts_with("- ")
                || !plain_body_ok(rest)
            {
                return None;
            }
            Some(true)
        }
        Cont::Single | Cont::Double => {
            if rest.is_empty() {
                return Some(true);
            }
            if indent <= o.parent || o.head {
                return None;
            }
            let end = if o.cont == Cont::Single {
                single_quote_end(rest.as_bytes())
            } else {
                double_quote_end(rest)?
            };
            match end {
                None => Some(true),
                Some(end) => {
                    if !trailing_ok(&rest[end + 1..]) {
                        return None;
                    }
                    o.cont = Cont::No;
                    Some(true)
                }
            }
        }
    }
}

/// YAML's printable characters other than ASCII ones, minus what YAML 1.1 reads as line
/// breaks (NEL, LS, PS) and the byte-order mark.
fn printable_non_break(c: char) -> bool {
    c.is_ascii()
        || matches!(c as u32, 0xA0..=0xD7FF | 0xE000..=0xFFFD | 0x10000..=0x10FFFF)
            && !matches!(c, '\u{2028}' | '\u{2029}' | '\u{FEFF}')
}

fn child_role(parent: Role, key: &str) -> Role {
    match (parent, key) {
        (Role::Root, "metadata") => Role::Metadata,
        (Role::Metadata, "annotations") => Role::Annotations,
        _ => Role::Other,
    }
}

/// Checks a head field's value and keeps it. `Some(true)` for a head field, `Some(false)`
/// for any other key; `None` when the full parse must decide (a repeated field, a value that
/// is not a string, or a string whose text needs the parser).
fn record_head(head: &mut HeadFields, role: Role, key: &str, value: &Scalar) -> Option<bool> {
    let text = |v: &Scalar| -> Option<Option<String>> {
        match v {
            Scalar::Str(s) => Some(Some(s.to_string())),
            Scalar::Null | Scalar::Empty => Some(None),
            _ => None,
        }
    };
    match (role, key) {
        (Role::Root, "kind") => {
            if head.kind.is_some() {
                return None;
            }
            head.kind = Some(text(value)?.unwrap_or_default());
        }
        (Role::Root, "apiVersion") => {
            if head.api_version_seen {
                return None;
            }
            head.api_version_seen = true;
            text(value)?;
        }
        (Role::Root, "metadata") => {
            if head.metadata_seen
                || !matches!(value, Scalar::Empty | Scalar::Null | Scalar::EmptyMap)
            {
                return None;
            }
            head.metadata_seen = true;
            return Some(false); // its children are checked as they come
        }
        (Role::Metadata, "name") => {
            if head.name.is_some() {
                return None;
            }
            head.name = Some(text(value)?.unwrap_or_default());
        }
        (Role::Metadata, "annotations") => {
            if head.annotations_seen
                || !matches!(value, Scalar::Empty | Scalar::Null | Scalar::EmptyMap)
            {
                return None;
            }
            head.annotations_seen = true;
            return Some(false);
        }
        (Role::Annotations, _) => {
            // Every annotation must be a string (or null) for Helm's map[string]string.
            let v = match value {
                Scalar::LongString if key != "helm.sh/hook" => None,
                Scalar::Empty => return None, // may open a nested map: an error, decided in full
                _ => text(value)?,
            };
            if key == "helm.sh/hook" {
                if head.hook.is_some() {
                    return None;
                }
                head.hook = Some(v.unwrap_or_default());
            }
            // A multi-line annotation that is not the hook is a string whatever it says.
            return Some(key == "helm.sh/hook");
        }
        _ => return Some(false),
    }
    Some(true)
}

/// `key: rest` with a simple plain key; `None` for anything else (quoted or complex keys,
/// keys that read as non-strings, a line that is a scalar).
fn split_key(entry: &str) -> Option<(&str, &str)> {
    let b = entry.as_bytes();
    let first = *b.first()?;
    if first == b'"' || first == b'\'' {
        // A quoted key without escapes: always a string.
        let close = entry[1..].find(first as char)? + 1;
        let key = &entry[1..close];
        let rest = entry[close + 1..].strip_prefix(':')?;
        if key.contains('\\') || !(rest.is_empty() || rest.starts_with(' ')) {
            return None;
        }
        return Some((key, rest));
    }
    if !(first.is_ascii_alphabetic() || matches!(first, b'_' | b'$' | b'/' | b'.')) {
        return None;
    }
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b':' => {
                if i + 1 == b.len() || b[i + 1] == b' ' {
                    break;
                }
                return None; // `a:b` in a key: leave it to the parser
            }
            c if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'/' | b'-' | b'$') => {}
            _ => return None,
        }
        i += 1;
    }
    if i == b.len() {
        return None;
    }
    let key = &entry[..i];
    if !matches!(resolve_plain(key), Value::String(_)) {
        return None; // `true:`, `null:`, `y:` ...
    }
    Some((key, &entry[i + 1..]))
}

/// Characters that start something other than a plain scalar (or that this scanner leaves
/// to the parser at the start of one).
fn is_indicator(b: u8) -> bool {
    matches!(
        b,
        b'&' | b'*'
            | b'!'
            | b'%'
            | b'@'
            | b'`'
            | b','
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'?'
            | b':'
            | b'#'
            | b'|'
            | b'>'
            | b'\''
            | b'"'
    )
}

/// Text of a plain scalar line: no `: ` (a mapping value), no ` #` (a comment), no
/// trailing `:`.
fn plain_body_ok(text: &str) -> bool {
    let t = text.trim_end_matches(' ');
    !(t.contains(": ") || t.contains(" #") || t.ends_with(':'))
}

/// After a quoted scalar or block header: nothing, or spaces and a comment.
fn trailing_ok(after: &str) -> bool {
    let a = after.trim_start_matches(' ');
    a.is_empty() || (a.starts_with('#') && a.len() < after.len())
}

/// Index of the closing quote of a single-quoted scalar's text (`''` is a quote inside).
fn single_quote_end(body: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i < body.len() {
        if body[i] == b'\'' {
            if body.get(i + 1) == Some(&b'\'') {
                i += 2;
                continue;
            }
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Index of the closing quote of a double-quoted scalar's text on one line: `Some(None)`
/// when the line ends first (it goes on), `None` for an invalid escape.
fn double_quote_end(text: &str) -> Option<Option<usize>> {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => return escapes_ok(&text[..i]).then_some(Some(i)),
            b'\\' if i + 1 == b.len() => {
                // an escaped line break
                return escapes_ok(&text[..i]).then_some(None);
            }
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    escapes_ok(text).then_some(None)
}

/// The rest of a line after a one-line flow sequence of scalars (`["a", 'b', c]`; the
/// opening bracket already read), `None` for anything else.
fn flow_sequence_end(text: &str) -> Option<&str> {
    let mut t = text.trim_start_matches(' ');
    if let Some(after) = t.strip_prefix(']') {
        return Some(after);
    }
    loop {
        let item_end = match t.as_bytes().first()? {
            b'"' => 1 + double_quote_end(&t[1..])?? + 1,
            b'\'' => 1 + single_quote_end(&t.as_bytes()[1..])? + 1,
            &c if is_indicator(c) || c == b'-' || c == b' ' => return None,
            _ => {
                let end = t.find([',', ']', '[', '{', '}', '#', ':'])?;
                if t.as_bytes()[end] != b',' && t.as_bytes()[end] != b']' {
                    return None;
                }
                end
            }
        };
        if t.get(..item_end).is_some_and(|item| item.contains(" #")) {
            return None;
        }
        t = t.get(item_end..)?.trim_start_matches(' ');
        if let Some(after) = t.strip_prefix(']') {
            return Some(after);
        }
        t = t.strip_prefix(',')?.trim_start_matches(' ');
    }
}

/// The escapes a double-quoted scalar may use (YAML 1.2, as the parser reads them).
fn escapes_ok(content: &str) -> bool {
    let b = content.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        let hex_len = match b.get(i + 1) {
            Some(b'0' | b'a' | b'b' | b't' | b'n' | b'v' | b'f' | b'r' | b'e' | b' ' | b'"')
            | Some(b'/' | b'\\' | b'N' | b'_' | b'L' | b'P') => 0,
            Some(b'x') => 2,
            Some(b'u') => 4,
            Some(b'U') => 8,
            _ => return false,
        };
        let digits = content.get(i + 2..i + 2 + hex_len);
        let valid = digits.is_some_and(|d| {
            d.bytes().all(|c| c.is_ascii_hexdigit())
                && u32::from_str_radix(d, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .is_some()
        });
        if hex_len > 0 && !valid {
            return false;
        }
        i += 2 + hex_len;
    }
    true
}

/// A value on its key's line (the text after the colon, or after a sequence dash).
fn scalar(text: &str) -> Option<(Scalar<'_>, Cont)> {
    let t = text.trim_start_matches(' ');
    if t.is_empty() || t.starts_with('#') {
        return Some((Scalar::Empty, Cont::No));
    }
    let first = t.as_bytes()[0];
    match first {
        b'"' => {
            let body = &t[1..];
            let Some(end) = double_quote_end(body)? else {
                return Some((Scalar::LongString, Cont::Double));
            };
            if !trailing_ok(&body[end + 1..]) {
                return None;
            }
            let content = &body[..end];
            if content.contains('\\') {
                return Some((Scalar::LongString, Cont::No));
            }
            Some((Scalar::Str(content.into()), Cont::No))
        }
        b'\'' => {
            let body = &t[1..];
            let Some(end) = single_quote_end(body.as_bytes()) else {
                return Some((Scalar::LongString, Cont::Single));
            };
            if !trailing_ok(&body[end + 1..]) {
                return None;
            }
            let content = &body[..end];
            Some((
                Scalar::Str(if content.contains("''") {
                    content.replace("''", "'").into()
                } else {
                    content.into()
                }),
                Cont::No,
            ))
        }
        b'{' => {
            let after = t[1..].trim_start_matches(' ').strip_prefix('}')?;
            trailing_ok(after).then_some((Scalar::EmptyMap, Cont::No))
        }
        b'[' => {
            let after = flow_sequence_end(&t[1..])?;
            trailing_ok(after).then_some((Scalar::EmptySeq, Cont::No))
        }
        b'|' | b'>' => {
            let header = t[1..].strip_prefix(['-', '+']).unwrap_or(&t[1..]);
            if !trailing_ok(header) {
                return None; // indentation indicators and anything else
            }
            Some((Scalar::LongString, Cont::Block))
        }
        b'-' if t.len() == 1 || t.as_bytes()[1] == b' ' => None,
        b if is_indicator(b) => None,
        _ => {
            // A plain scalar to the end of the line or a ` #` comment (after which it
            // cannot go on).
            let comment = t.find(" #");
            let value = comment.map_or(t, |i| &t[..i]).trim_end_matches(' ');
            if !plain_body_ok(value) {
                return None;
            }
            let v = match resolve_plain(value) {
                Value::String(_) => Scalar::Str(value.into()),
                Value::Null => Scalar::Null,
                _ => Scalar::NotString,
            };
            Some((
                v,
                if comment.is_some() {
                    Cont::No
                } else {
                    Cont::Plain
                },
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(doc: &str) -> Option<Head> {
        fast_head(doc)
    }

    #[test]
    fn reads_a_plain_manifest() {
        let doc = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    app: web\n  annotations:\n    helm.sh/hook: pre-install\n    checksum/config: 3f2a\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n      - name: web\n        image: \"nginx:1.27\"\n        args: []\n        resources: {}\n        command:\n          - sh\n          - -c\n";
        assert_eq!(
            head(doc),
            Some((
                "Deployment".into(),
                "web".into(),
                Some("pre-install".into())
            ))
        );
        let doc = doc.replace("          - -c\n", "          - 'echo ''hi'''\n");
        assert_eq!(
            head(&doc),
            Some((
                "Deployment".into(),
                "web".into(),
                Some("pre-install".into())
            ))
        );
    }

    #[test]
    fn block_scalars_and_comments() {
        let doc = "kind: ConfigMap # a comment\nmetadata:\n  name: cfg\ndata:\n  a.conf: |\n    x: 1\n\n    - not a list\n  b: >-\n      folded\n    less but deeper than the key\n";
        assert_eq!(
            head(doc),
            None,
            "a block line less indented than its first line"
        );
        let doc = "kind: ConfigMap # a comment\nmetadata:\n  name: cfg\ndata:\n  a.conf: |\n    x: 1\n\n    - not a list\n  b: >-\n    folded\n";
        assert_eq!(head(doc), Some(("ConfigMap".into(), "cfg".into(), None)));
    }

    #[test]
    fn leaves_the_rest_to_the_parser() {
        for doc in [
            "kind: 12\n",                                       // not a string
            "kind: Pod\nkind: Service\n",                       // repeated head field
            "- a\n",                                            // root is a list
            "kind: Pod\nmetadata:\n  name: a\n  b\n",           // continuation line
            "kind: Pod\nmetadata:\n  annotations:\n    a: 1\n", // number annotation
            "kind: Pod\n  x: 1\n",                              // bad indent
            "kind: \"a\\tb\"\n",                                // escapes
            "kind: Pod\nspec: &a {x: 1}\n",                     // anchors, flow maps
            "kind: Pod\nspec:\n\tx: 1\n",                       // tab
            "kind: Pod\n---\nkind: Service\n",                  // a document marker
            "kind: Pod\nx: a: b\n",                             // mapping value in a plain scalar
            "kind: Pod\nmetadata:\n- a\n",                      // metadata as a list
            "kind: Pod\nx: a\u{2028}b\n",                       // a YAML 1.1 line break
            "kind: Pod\nx: 'open\n  quote\n",                   // unclosed quote
            "kind: Pod\nx: a # c\n  b\n",                       // a line after a comment
            "kind: Pod\nmetadata:\n  name: a\n    b\n",         // a multi-line head field
            "# only a comment\n",
        ] {
            assert_eq!(head(doc), None, "{doc:?}");
        }
    }

    #[test]
    fn multi_line_values() {
        let doc = "kind: CRD\nmetadata:\n  name: caf\u{e9}\nspec:\n  description: A long text\n    that folds, \"quoted\"\n\n    and goes on.\n  other: 'single\n    quoted'' text'\n  esc: \"a\\tb\\u00e9\"\n  next:\n    on the next line\n";
        assert_eq!(head(doc), Some(("CRD".into(), "caf\u{e9}".into(), None)));
    }

    #[test]
    fn compact_sequences_and_dash_maps() {
        let doc = "kind: Role\nmetadata:\n  name: r\nrules:\n- apiGroups:\n  - \"\"\n  resources: [\"pods\"]\n";
        assert_eq!(head(doc), Some(("Role".into(), "r".into(), None)));
        let doc = doc.replace("[\"pods\"]", "[\"pods\", {a: b}]");
        assert_eq!(head(&doc), None, "a flow map in a flow sequence");
        let doc = "kind: Role\nmetadata:\n  name: r\nrules:\n- apiGroups:\n  - \"\"\n  resources:\n  - pods\n  verbs:\n    - get\n-\n  apiGroups: []\n";
        assert_eq!(head(doc), Some(("Role".into(), "r".into(), None)));
    }

    /// Every YAML file of the corpus (rendered charts, kustomize inputs and outputs), split
    /// as Helm splits rendered output.
    fn corpus_documents() -> Option<Vec<String>> {
        let dir = match std::env::var_os("GITOPS_LINT_CORPUS") {
            Some(d) => std::path::PathBuf::from(d),
            None => std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
        };
        if !dir.is_dir() {
            return None;
        }
        let mut docs = Vec::new();
        for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
            let Ok(entry) = entry else { continue };
            let path = entry.path();
            let is_yaml = path.extension().is_some_and(|e| e == "yaml" || e == "yml");
            if !is_yaml || entry.metadata().map_or(true, |m| m.len() > 2 << 20) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            for range in super::super::manifest::split_manifests(&text) {
                docs.push(text[range].to_string());
            }
        }
        Some(docs)
    }

    /// Where the scanner answers, the full parse gives the same answer: on every corpus
    /// document, and on 40,000 mutations of them (a byte deleted, inserted or changed to a
    /// YAML-significant one, a line's indent changed, a line duplicated).
    #[test]
    fn agrees_with_the_full_parse() {
        let Some(docs) = corpus_documents() else {
            eprintln!("corpus not found (../shared/corpus or GITOPS_LINT_CORPUS): skipped");
            return;
        };
        let slow = super::super::manifest::simple_head;
        let (mut answered, mut bytes, mut answered_bytes) = (0usize, 0usize, 0usize);
        for doc in &docs {
            bytes += doc.len();
            if let Some(h) = fast_head(doc) {
                answered += 1;
                answered_bytes += doc.len();
                assert_eq!(slow(doc), Ok(h), "{doc}");
            }
        }
        eprintln!(
            "fast head: {answered}/{} corpus documents, {:.0}% of {bytes} bytes",
            docs.len(),
            100.0 * answered_bytes as f64 / bytes.max(1) as f64
        );
        assert!(
            answered * 2 > docs.len(),
            "the scanner should answer most documents"
        );

        let small: Vec<&String> = docs.iter().filter(|d| d.len() < 3000).collect();
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        let mut rand = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n.max(1) as u64) as usize
        };
        const SIGNIFICANT: &[u8] = b" :-#'\"|>[]{}&*!?,\n\t0yn~.\\";
        let (mut tried, mut still_answered) = (0, 0);
        for _ in 0..40_000 {
            let doc = small[rand(small.len())].as_bytes();
            let mut m = doc.to_vec();
            let at = rand(m.len());
            match rand(5) {
                0 => {
                    m.remove(at.min(m.len().saturating_sub(1)));
                }
                1 => {
                    let b = SIGNIFICANT[rand(SIGNIFICANT.len())];
                    m.insert(at, b);
                }
                2 => {
                    let b = SIGNIFICANT[rand(SIGNIFICANT.len())];
                    let i = at.min(m.len().saturating_sub(1));
                    m[i] = b;
                }
                3 => {
                    // indent the line holding `at` by one or two more spaces, or one less
                    let start = m[..at]
                        .iter()
                        .rposition(|&b| b == b'\n')
                        .map_or(0, |i| i + 1);
                    match rand(3) {
                        0 => m.insert(start, b' '),
                        1 => m.splice(start..start, *b"  ").for_each(drop),
                        _ if m.get(start) == Some(&b' ') => {
                            m.remove(start);
                        }
                        _ => {}
                    }
                }
                _ => {
                    let start = m[..at]
                        .iter()
                        .rposition(|&b| b == b'\n')
                        .map_or(0, |i| i + 1);
                    let end = m[at..]
                        .iter()
                        .position(|&b| b == b'\n')
                        .map_or(m.len(), |i| at + i);
                    let line: Vec<u8> = m[start..end].to_vec();
                    m.splice(start..start, line.into_iter().chain([b'\n']))
                        .for_each(drop);
                }
            }
            let Ok(text) = String::from_utf8(m) else {
                continue;
            };
            // As Helm hands it over: split and trimmed.
            for range in super::super::manifest::split_manifests(&text) {
                let doc = &text[range];
                tried += 1;
                if let Some(h) = fast_head(doc) {
                    still_answered += 1;
                    assert_eq!(slow(doc), Ok(h), "mutated document:\n{doc}");
                }
            }
        }
        eprintln!(
            "fast head: {still_answered}/{tried} mutated documents answered, all as the full parse"
        );
    }
}
