//! Syntax tree of a parsed template, as `text/template/parse` builds it. Every node carries
//! its source position; `Display` prints a node back the way Go's `Node.String()` does (used
//! in error contexts such as `executing "x" at <.Values.foo>`).

use std::fmt::{self, Write};
use std::sync::Arc;

use super::literal::Number;

/// Where a node starts: parse name (the file), byte offset, 1-based line, and Go's column
/// (0-based byte offset within the line, as Go's `ErrorContext` prints it).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pos {
    pub file: Arc<str>,
    pub offset: usize,
    pub line: usize,
    pub col: usize,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

#[derive(Clone, Debug)]
pub enum Node {
    Text {
        pos: Pos,
        text: Arc<str>,
    },
    Action {
        pos: Pos,
        pipe: Pipe,
    },
    If(Box<Branch>),
    Range(Box<Branch>),
    With(Box<Branch>),
    Template {
        pos: Pos,
        name: String,
        pipe: Option<Pipe>,
    },
    Break(Pos),
    Continue(Pos),
}

/// Shared shape of `if`, `range` and `with`.
#[derive(Clone, Debug)]
pub struct Branch {
    pub pos: Pos,
    pub pipe: Pipe,
    pub list: Vec<Node>,
    pub else_list: Option<Vec<Node>>,
}

#[derive(Clone, Debug)]
pub struct Pipe {
    pub pos: Pos,
    pub is_assign: bool,
    /// Declared or assigned variables (`$x`), at most two.
    pub decl: Vec<(Pos, String)>,
    pub cmds: Vec<Command>,
}

#[derive(Clone, Debug)]
pub struct Command {
    pub pos: Pos,
    pub args: Vec<Arg>,
}

#[derive(Clone, Debug)]
pub enum Arg {
    /// `.A.B`: the field names without dots.
    Field {
        pos: Pos,
        idents: Vec<String>,
    },
    /// `$x.A.B`: `idents[0]` is the variable name with its `$`.
    Variable {
        pos: Pos,
        idents: Vec<String>,
    },
    /// `(pipeline).A.B` or `fn.A`.
    Chain {
        pos: Pos,
        node: Box<Arg>,
        fields: Vec<String>,
    },
    Identifier {
        pos: Pos,
        name: String,
    },
    Dot(Pos),
    Nil(Pos),
    Bool {
        pos: Pos,
        val: bool,
    },
    Number {
        pos: Pos,
        num: Number,
    },
    String {
        pos: Pos,
        quoted: String,
        text: Arc<str>,
    },
    Pipe(Box<Pipe>),
}

impl Arg {
    pub fn pos(&self) -> &Pos {
        match self {
            Arg::Field { pos, .. }
            | Arg::Variable { pos, .. }
            | Arg::Chain { pos, .. }
            | Arg::Identifier { pos, .. }
            | Arg::Dot(pos)
            | Arg::Nil(pos)
            | Arg::Bool { pos, .. }
            | Arg::Number { pos, .. }
            | Arg::String { pos, .. } => pos,
            Arg::Pipe(p) => &p.pos,
        }
    }
}

impl Node {
    pub fn pos(&self) -> &Pos {
        match self {
            Node::Text { pos, .. } | Node::Action { pos, .. } | Node::Template { pos, .. } => pos,
            Node::Break(pos) | Node::Continue(pos) => pos,
            Node::If(b) | Node::Range(b) | Node::With(b) => &b.pos,
        }
    }
}

/// Go's `parse.IsEmptyTree`: only whitespace text (an empty `define` does not replace one).
pub fn is_empty_tree(list: &[Node]) -> bool {
    list.iter()
        .all(|n| matches!(n, Node::Text { text, .. } if text.trim().is_empty()))
}

/// Writes a node list as Go's `ListNode.String()`; `quote_text` prints text like `%q`.
pub fn write_list(out: &mut String, list: &[Node], quote_text: bool) {
    for n in list {
        write_node(out, n, quote_text);
    }
}

fn write_node(out: &mut String, node: &Node, q: bool) {
    match node {
        Node::Text { text, .. } => {
            if q {
                out.push_str(&super::printf::go_quote(text));
            } else {
                out.push_str(text);
            }
        }
        Node::Action { pipe, .. } => {
            let _ = write!(out, "{{{{{pipe}}}}}");
        }
        Node::If(b) => write_branch(out, "if", b, q),
        Node::Range(b) => write_branch(out, "range", b, q),
        Node::With(b) => write_branch(out, "with", b, q),
        Node::Template { name, pipe, .. } => {
            let _ = write!(out, "{{{{template {}", super::printf::go_quote(name));
            if let Some(p) = pipe {
                let _ = write!(out, " {p}");
            }
            out.push_str("}}");
        }
        Node::Break(_) => out.push_str("{{break}}"),
        Node::Continue(_) => out.push_str("{{continue}}"),
    }
}

fn write_branch(out: &mut String, name: &str, b: &Branch, q: bool) {
    let _ = write!(out, "{{{{{name} {}}}}}", b.pipe);
    write_list(out, &b.list, q);
    if let Some(e) = &b.else_list {
        out.push_str("{{else}}");
        write_list(out, e, q);
    }
    out.push_str("{{end}}");
}

impl fmt::Display for Pipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.decl.is_empty() {
            for (i, (_, v)) in self.decl.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                f.write_str(v)?;
            }
            f.write_str(if self.is_assign { " = " } else { " := " })?;
        }
        for (i, c) in self.cmds.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, a) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            match a {
                Arg::Pipe(p) => write!(f, "({p})")?,
                _ => write!(f, "{a}")?,
            }
        }
        Ok(())
    }
}

impl fmt::Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arg::Field { idents, .. } => {
                for i in idents {
                    write!(f, ".{i}")?;
                }
                Ok(())
            }
            Arg::Variable { idents, .. } => f.write_str(&idents.join(".")),
            Arg::Chain { node, fields, .. } => {
                match node.as_ref() {
                    Arg::Pipe(p) => write!(f, "({p})")?,
                    n => write!(f, "{n}")?,
                }
                for field in fields {
                    write!(f, ".{field}")?;
                }
                Ok(())
            }
            Arg::Identifier { name, .. } => f.write_str(name),
            Arg::Dot(_) => f.write_str("."),
            Arg::Nil(_) => f.write_str("nil"),
            Arg::Bool { val, .. } => write!(f, "{val}"),
            Arg::Number { num, .. } => f.write_str(&num.text),
            Arg::String { quoted, .. } => f.write_str(quoted),
            Arg::Pipe(p) => write!(f, "{p}"),
        }
    }
}
