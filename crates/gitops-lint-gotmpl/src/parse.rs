//! Parser of Go's text/template (`text/template/parse/parse.go`): builds one tree for the
//! parsed text and one per `define`/`block`, with Go's error messages.

use std::sync::Arc;

use super::ast::{Arg, Branch, Command, Node, Pipe, Pos};
use super::lex::{Item, ItemKind, lex_with_lines};
use super::literal::{parse_number, unquote};

/// A named template body.
#[derive(Clone, Debug)]
pub struct Tree {
    pub name: String,
    /// Name of the parsed text (the file) the tree came from; positions refer to it.
    pub parse_name: Arc<str>,
    pub root: Vec<Node>,
}

/// A parse failure, printed as Go prints it: `template: NAME:LINE: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub message: String,
    pub file: String,
    /// Line Go reports (of the token where parsing stopped).
    pub line: usize,
    /// Byte offset and Go-style 0-based column of that token, for precise diagnostics.
    pub offset: usize,
    pub col: usize,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParseError {}

/// Nesting limit for parentheses and control structures: deeper input is rejected instead of
/// exhausting the stack (Go's own limit is 10000 expression levels).
pub const MAX_PARSE_DEPTH: usize = 200;

/// Stack the parser may use (debug builds have large frames): deeper nesting is an error.
const PARSE_STACK_BUDGET: usize = 512 << 10;

fn stack_addr() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// Parses `text` (named `name`) into its main tree and the trees it defines, in definition
/// order. `is_func` tells which identifiers are functions (Go rejects unknown ones when parsing).
pub fn parse<'a>(
    name: &str,
    text: &'a str,
    left: &'a str,
    right: &'a str,
    is_func: &dyn Fn(&str) -> bool,
) -> Result<Vec<Tree>, ParseError> {
    let (items, line_starts) = lex_with_lines(text, left, right);
    let mut p = Parser {
        items,
        idx: 0,
        last: 0,
        file: Arc::from(name),
        line_starts,
        vars: vec!["$".to_string()],
        range_depth: 0,
        action_line: 0,
        depth: 0,
        stack_base: stack_addr(),
        is_func,
        defined: Vec::new(),
    };
    let root = p.parse_top()?;
    let mut trees = vec![Tree {
        name: name.to_string(),
        parse_name: p.file.clone(),
        root,
    }];
    // Go adds the main tree to the set like any definition.
    let main = trees.remove(0);
    p.add(main)?;
    Ok(p.defined)
}

struct Parser<'a, 'f> {
    items: Vec<Item<'a>>,
    idx: usize,
    last: usize,
    file: Arc<str>,
    line_starts: Vec<usize>,
    vars: Vec<String>,
    range_depth: usize,
    action_line: usize,
    depth: usize,
    stack_base: usize,
    is_func: &'f dyn Fn(&str) -> bool,
    defined: Vec<Tree>,
}

type PResult<T> = Result<T, ParseError>;

impl<'a> Parser<'a, '_> {
    fn pos(&self, offset: usize) -> Pos {
        let line = self.line_starts.partition_point(|&s| s <= offset);
        let start = self
            .line_starts
            .get(line.saturating_sub(1))
            .copied()
            .unwrap_or(0);
        // Go's ErrorContext quirk: on the first line the column is the offset itself.
        Pos {
            file: self.file.clone(),
            offset,
            line,
            col: offset - start,
        }
    }

    /// `pos` of a token, whose line the lexer already knows.
    fn pos_of(&self, item: &Item) -> Pos {
        let start = self
            .line_starts
            .get(item.line.saturating_sub(1))
            .copied()
            .filter(|&s| s <= item.pos)
            .unwrap_or(0);
        Pos {
            file: self.file.clone(),
            offset: item.pos,
            line: item.line,
            col: item.pos - start,
        }
    }

    fn cur_line(&self) -> usize {
        self.items.get(self.last).map(|i| i.line).unwrap_or(1)
    }

    fn err<T>(&self, msg: impl Into<String>) -> PResult<T> {
        let line = self.cur_line();
        let offset = self.items.get(self.last).map(|i| i.pos).unwrap_or(0);
        Err(ParseError {
            message: format!("template: {}:{}: {}", self.file, line, msg.into()),
            file: self.file.to_string(),
            line,
            offset,
            col: self.pos(offset).col,
        })
    }

    /// Returns the next token; past the end it keeps returning the final EOF/error token.
    fn next(&mut self) -> Item<'a> {
        let i = self.idx.min(self.items.len().saturating_sub(1));
        self.idx += 1;
        self.last = i;
        self.items.get(i).cloned().unwrap_or(Item {
            kind: ItemKind::Eof,
            val: "".into(),
            pos: 0,
            line: 1,
        })
    }

    fn backup(&mut self) {
        self.idx = self.idx.saturating_sub(1);
    }

    fn peek(&mut self) -> Item<'a> {
        let i = self.next();
        self.backup();
        i
    }

    fn next_non_space(&mut self) -> Item<'a> {
        loop {
            let i = self.next();
            if i.kind != ItemKind::Space {
                return i;
            }
        }
    }

    fn peek_non_space(&mut self) -> Item<'a> {
        let i = self.next_non_space();
        self.backup();
        i
    }

    fn expect(&mut self, kind: ItemKind, context: &str) -> PResult<Item<'a>> {
        let t = self.next_non_space();
        if t.kind != kind {
            return self.unexpected(&t, context);
        }
        Ok(t)
    }

    fn unexpected<T>(&self, token: &Item, context: &str) -> PResult<T> {
        if token.kind == ItemKind::Error {
            let mut extra = String::new();
            if self.action_line != 0 && self.action_line != token.line {
                extra = format!(" in action started at {}:{}", self.file, self.action_line);
                if token.val.ends_with(" action") {
                    extra = extra[" in action".len()..].to_string();
                }
            }
            return self.err(format!("{token}{extra}"));
        }
        self.err(format!("unexpected {token} in {context}"))
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        let used = self.stack_base.abs_diff(stack_addr());
        if self.depth > MAX_PARSE_DEPTH || used > PARSE_STACK_BUDGET {
            return self.err("max expression depth exceeded");
        }
        Ok(())
    }

    /// Adds a finished tree to the parse result (Go's `(*Tree).add`).
    fn add(&mut self, tree: Tree) -> PResult<()> {
        if let Some(i) = self.defined.iter().position(|t| t.name == tree.name) {
            if super::ast::is_empty_tree(&self.defined[i].root) {
                self.defined[i] = tree;
                return Ok(());
            }
            if !super::ast::is_empty_tree(&tree.root) {
                return self.err(format!(
                    "template: multiple definition of template {}",
                    super::printf::go_quote(&tree.name)
                ));
            }
            return Ok(());
        }
        self.defined.push(tree);
        Ok(())
    }

    fn parse_top(&mut self) -> PResult<Vec<Node>> {
        let mut root = Vec::new();
        while self.peek().kind != ItemKind::Eof {
            if self.peek().kind == ItemKind::LeftDelim {
                let mark = self.idx;
                self.next();
                if self.next_non_space().kind == ItemKind::Define {
                    self.parse_definition()?;
                    continue;
                }
                self.idx = mark;
            }
            match self.text_or_action()? {
                Parsed::Node(n) => root.push(n),
                Parsed::End => return self.err("unexpected {{end}}"),
                Parsed::Else => return self.err("unexpected {{else}}"),
            }
        }
        Ok(root)
    }

    fn parse_definition(&mut self) -> PResult<()> {
        let context = "define clause";
        let token = self.next_non_space();
        if !matches!(token.kind, ItemKind::String | ItemKind::RawString) {
            return self.unexpected(&token, context);
        }
        let name = unquote(&token.val).or_else(|e| self.err(e))?;
        self.expect(ItemKind::RightDelim, context)?;
        let saved_vars = std::mem::replace(&mut self.vars, vec!["$".to_string()]);
        let (root, end) = self.item_list()?;
        self.vars = saved_vars;
        if !matches!(end, Parsed::End) {
            return self.err(format!("unexpected {} in {context}", end.describe()));
        }
        self.add(Tree {
            name,
            parse_name: self.file.clone(),
            root,
        })
    }

    fn item_list(&mut self) -> PResult<(Vec<Node>, Parsed)> {
        self.enter()?;
        let mut list = Vec::new();
        while self.peek_non_space().kind != ItemKind::Eof {
            match self.text_or_action()? {
                Parsed::Node(n) => list.push(n),
                other => {
                    self.depth -= 1;
                    return Ok((list, other));
                }
            }
        }
        self.err("unexpected EOF")
    }

    fn text_or_action(&mut self) -> PResult<Parsed> {
        let token = self.next_non_space();
        match token.kind {
            ItemKind::Text => Ok(Parsed::Node(Node::Text {
                pos: self.pos_of(&token),
                text: Arc::from(&*token.val),
            })),
            ItemKind::LeftDelim => {
                self.action_line = token.line;
                let r = self.action();
                self.action_line = 0;
                r
            }
            _ => self.unexpected(&token, "input"),
        }
    }

    fn action(&mut self) -> PResult<Parsed> {
        let token = self.next_non_space();
        let pos = self.pos_of(&token);
        match token.kind {
            ItemKind::Block => return self.block_control(),
            ItemKind::Break | ItemKind::Continue => {
                let word = if token.kind == ItemKind::Break {
                    "break"
                } else {
                    "continue"
                };
                let t = self.next_non_space();
                if t.kind != ItemKind::RightDelim {
                    return self.unexpected(&t, &format!("{{{{{word}}}}}"));
                }
                if self.range_depth == 0 {
                    return self.err(format!("{{{{{word}}}}} outside {{{{range}}}}"));
                }
                return Ok(Parsed::Node(if token.kind == ItemKind::Break {
                    Node::Break(pos)
                } else {
                    Node::Continue(pos)
                }));
            }
            ItemKind::Else => {
                let peek = self.peek_non_space();
                // "{{else if …" / "{{else with …": leave the keyword for parse_control.
                if !matches!(peek.kind, ItemKind::If | ItemKind::With) {
                    self.expect(ItemKind::RightDelim, "else")?;
                }
                return Ok(Parsed::Else);
            }
            ItemKind::End => {
                self.expect(ItemKind::RightDelim, "end")?;
                return Ok(Parsed::End);
            }
            ItemKind::If => return Ok(Parsed::Node(Node::If(Box::new(self.parse_control("if")?)))),
            ItemKind::Range => {
                return Ok(Parsed::Node(Node::Range(Box::new(
                    self.parse_control("range")?,
                ))));
            }
            ItemKind::With => {
                return Ok(Parsed::Node(Node::With(Box::new(
                    self.parse_control("with")?,
                ))));
            }
            ItemKind::Template => return self.template_control(),
            _ => {}
        }
        self.backup();
        let token = self.peek();
        let pos = self.pos_of(&token);
        let pipe = self.pipeline("command", ItemKind::RightDelim)?;
        Ok(Parsed::Node(Node::Action { pos, pipe }))
    }

    fn parse_control(&mut self, context: &str) -> PResult<Branch> {
        let vars_mark = self.vars.len();
        let pipe = self.pipeline(context, ItemKind::RightDelim)?;
        if context == "range" {
            self.range_depth += 1;
        }
        let (list, next) = self.item_list()?;
        if context == "range" {
            self.range_depth -= 1;
        }
        let mut else_list = None;
        match next {
            Parsed::End => {}
            Parsed::Else => {
                // "{{else if x}}" is "{{else}}{{if x}}…{{end}}{{end}}" with the inner end shared.
                let chained = match self.peek().kind {
                    ItemKind::If if context == "if" => Some(ItemKind::If),
                    ItemKind::With if context == "with" => Some(ItemKind::With),
                    _ => None,
                };
                if let Some(kind) = chained {
                    self.next();
                    let inner = self.parse_control(context)?;
                    else_list = Some(vec![if kind == ItemKind::If {
                        Node::If(Box::new(inner))
                    } else {
                        Node::With(Box::new(inner))
                    }]);
                } else {
                    let (l, next) = self.item_list()?;
                    if !matches!(next, Parsed::End) {
                        return self.err(format!("expected end; found {}", next.describe()));
                    }
                    else_list = Some(l);
                }
            }
            Parsed::Node(_) => {}
        }
        self.vars.truncate(vars_mark);
        Ok(Branch {
            pos: pipe.pos.clone(),
            pipe,
            list,
            else_list,
        })
    }

    fn template_name(&mut self, token: &Item, context: &str) -> PResult<String> {
        match token.kind {
            ItemKind::String | ItemKind::RawString => unquote(&token.val).or_else(|e| self.err(e)),
            _ => self.unexpected(token, context),
        }
    }

    fn template_control(&mut self) -> PResult<Parsed> {
        let context = "template clause";
        let token = self.next_non_space();
        let name = self.template_name(&token, context)?;
        let pipe = if self.next_non_space().kind != ItemKind::RightDelim {
            self.backup();
            Some(self.pipeline(context, ItemKind::RightDelim)?)
        } else {
            None
        };
        Ok(Parsed::Node(Node::Template {
            pos: self.pos_of(&token),
            name,
            pipe,
        }))
    }

    fn block_control(&mut self) -> PResult<Parsed> {
        let context = "block clause";
        let token = self.next_non_space();
        let name = self.template_name(&token, context)?;
        let pipe = self.pipeline(context, ItemKind::RightDelim)?;
        let saved_vars = std::mem::replace(&mut self.vars, vec!["$".to_string()]);
        let saved_range = std::mem::replace(&mut self.range_depth, 0);
        let (root, end) = self.item_list()?;
        self.vars = saved_vars;
        self.range_depth = saved_range;
        if !matches!(end, Parsed::End) {
            return self.err(format!("unexpected {} in {context}", end.describe()));
        }
        self.add(Tree {
            name: name.clone(),
            parse_name: self.file.clone(),
            root,
        })?;
        Ok(Parsed::Node(Node::Template {
            pos: self.pos_of(&token),
            name,
            pipe: Some(pipe),
        }))
    }

    fn pipeline(&mut self, context: &str, end: ItemKind) -> PResult<Pipe> {
        self.enter()?;
        let token = self.peek_non_space();
        let mut pipe = Pipe {
            pos: self.pos_of(&token),
            is_assign: false,
            decl: Vec::new(),
            cmds: Vec::new(),
        };
        'decls: loop {
            let v = self.peek_non_space();
            if v.kind != ItemKind::Variable {
                break;
            }
            let mark = self.idx;
            self.next_non_space();
            let next = self.peek_non_space();
            match next.kind {
                ItemKind::Assign | ItemKind::Declare => {
                    pipe.is_assign = next.kind == ItemKind::Assign;
                    self.next_non_space();
                    pipe.decl.push((self.pos_of(&v), v.val.to_string()));
                    self.vars.push(v.val.to_string());
                    break;
                }
                ItemKind::Char if &*next.val == "," => {
                    self.next_non_space();
                    pipe.decl.push((self.pos_of(&v), v.val.to_string()));
                    self.vars.push(v.val.to_string());
                    if context == "range" && pipe.decl.len() < 2 {
                        match self.peek_non_space().kind {
                            ItemKind::Variable | ItemKind::RightDelim | ItemKind::RightParen => {
                                continue 'decls;
                            }
                            _ => return self.err("range can only initialize variables"),
                        }
                    }
                    return self.err(format!("too many declarations in {context}"));
                }
                _ => {
                    self.idx = mark;
                    break;
                }
            }
        }
        loop {
            let token = self.next_non_space();
            match token.kind {
                k if k == end => {
                    self.check_pipeline(&pipe, context)?;
                    self.depth -= 1;
                    return Ok(pipe);
                }
                ItemKind::Bool
                | ItemKind::CharConstant
                | ItemKind::Complex
                | ItemKind::Dot
                | ItemKind::Field
                | ItemKind::Identifier
                | ItemKind::Number
                | ItemKind::Nil
                | ItemKind::RawString
                | ItemKind::String
                | ItemKind::Variable
                | ItemKind::LeftParen => {
                    self.backup();
                    let cmd = self.command()?;
                    pipe.cmds.push(cmd);
                }
                _ => return self.unexpected(&token, context),
            }
        }
    }

    fn check_pipeline(&self, pipe: &Pipe, context: &str) -> PResult<()> {
        if pipe.cmds.is_empty() {
            return self.err(format!("missing value for {context}"));
        }
        for (i, c) in pipe.cmds.iter().enumerate().skip(1) {
            if matches!(
                c.args.first(),
                Some(
                    Arg::Bool { .. }
                        | Arg::Dot(_)
                        | Arg::Nil(_)
                        | Arg::Number { .. }
                        | Arg::String { .. }
                )
            ) {
                return self.err(format!(
                    "non executable command in pipeline stage {}",
                    i + 1
                ));
            }
        }
        Ok(())
    }

    fn command(&mut self) -> PResult<Command> {
        let first = self.peek_non_space();
        let mut cmd = Command {
            pos: self.pos_of(&first),
            args: Vec::new(),
        };
        loop {
            self.peek_non_space();
            if let Some(operand) = self.operand()? {
                cmd.args.push(operand);
            }
            let token = self.next();
            match token.kind {
                ItemKind::Space => continue,
                ItemKind::RightDelim | ItemKind::RightParen => self.backup(),
                ItemKind::Pipe => {}
                _ => return self.unexpected(&token, "operand"),
            }
            break;
        }
        if cmd.args.is_empty() {
            return self.err("empty command");
        }
        Ok(cmd)
    }

    fn operand(&mut self) -> PResult<Option<Arg>> {
        let Some(node) = self.term()? else {
            return Ok(None);
        };
        if self.peek().kind != ItemKind::Field {
            return Ok(Some(node));
        }
        let chain_offset = self.peek().pos;
        let chain_pos = self.pos(chain_offset);
        let mut fields = Vec::new();
        while self.peek().kind == ItemKind::Field {
            let f = self.next();
            fields.extend(
                f.val
                    .split('.')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
            );
        }
        Ok(Some(match node {
            Arg::Field { mut idents, .. } => {
                idents.extend(fields);
                Arg::Field {
                    pos: chain_pos,
                    idents,
                }
            }
            Arg::Variable { mut idents, .. } => {
                idents.extend(fields);
                Arg::Variable {
                    pos: chain_pos,
                    idents,
                }
            }
            Arg::Bool { .. }
            | Arg::String { .. }
            | Arg::Number { .. }
            | Arg::Nil(_)
            | Arg::Dot(_) => {
                return self.err(format!(
                    "unexpected . after term {}",
                    super::printf::go_quote(&node.to_string())
                ));
            }
            other => Arg::Chain {
                pos: chain_pos,
                node: Box::new(other),
                fields,
            },
        }))
    }

    fn term(&mut self) -> PResult<Option<Arg>> {
        let token = self.next_non_space();
        let pos = self.pos_of(&token);
        Ok(Some(match token.kind {
            ItemKind::Identifier => {
                if !(self.is_func)(&token.val) {
                    return self.err(format!(
                        "function {} not defined",
                        super::printf::go_quote(&token.val)
                    ));
                }
                Arg::Identifier {
                    pos,
                    name: token.val.to_string(),
                }
            }
            ItemKind::Dot => Arg::Dot(pos),
            ItemKind::Nil => Arg::Nil(pos),
            ItemKind::Variable => {
                let idents: Vec<String> = token.val.split('.').map(str::to_string).collect();
                if !self.vars.iter().any(|v| *v == idents[0]) {
                    return self.err(format!(
                        "undefined variable {}",
                        super::printf::go_quote(&idents[0])
                    ));
                }
                Arg::Variable { pos, idents }
            }
            ItemKind::Field => Arg::Field {
                pos,
                idents: token
                    .val
                    .split('.')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect(),
            },
            ItemKind::Bool => Arg::Bool {
                pos,
                val: &*token.val == "true",
            },
            ItemKind::CharConstant | ItemKind::Complex | ItemKind::Number => {
                let num = parse_number(
                    &token.val,
                    token.kind == ItemKind::CharConstant,
                    token.kind == ItemKind::Complex,
                )
                .or_else(|e| self.err(e))?;
                Arg::Number { pos, num }
            }
            ItemKind::LeftParen => Arg::Pipe(Box::new(
                self.pipeline("parenthesized pipeline", ItemKind::RightParen)?,
            )),
            ItemKind::String | ItemKind::RawString => {
                let text = unquote(&token.val).or_else(|e| self.err(e))?;
                Arg::String {
                    pos,
                    quoted: token.val.to_string(),
                    text: text.into(),
                }
            }
            _ => {
                self.backup();
                return Ok(None);
            }
        }))
    }
}

/// What `textOrAction` produced: a node, or an `{{end}}`/`{{else}}` closing the current list.
enum Parsed {
    Node(Node),
    End,
    Else,
}

impl Parsed {
    fn describe(&self) -> &'static str {
        match self {
            Parsed::Node(_) => "node",
            Parsed::End => "{{end}}",
            Parsed::Else => "{{else}}",
        }
    }
}
