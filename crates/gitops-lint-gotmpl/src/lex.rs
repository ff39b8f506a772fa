//! Lexer of Go's text/template: splits a template into text and action tokens.
//!
//! Follows `text/template/parse/lex.go`: trim markers (`{{- ` and ` -}}`), comments,
//! parenthesis depth, and the exact error texts the parser reports.

use std::borrow::Cow;

/// Kind of a lexical token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemKind {
    Error,
    Bool,
    Char,
    CharConstant,
    Comment,
    Complex,
    Assign,
    Declare,
    Eof,
    Field,
    Identifier,
    LeftDelim,
    LeftParen,
    Number,
    Pipe,
    RawString,
    RightDelim,
    RightParen,
    Space,
    String,
    Text,
    Variable,
    // Keywords.
    Block,
    Break,
    Continue,
    Dot,
    Define,
    Else,
    End,
    If,
    Nil,
    Range,
    Template,
    With,
}

impl ItemKind {
    fn is_keyword(self) -> bool {
        matches!(
            self,
            ItemKind::Block
                | ItemKind::Break
                | ItemKind::Continue
                | ItemKind::Dot
                | ItemKind::Define
                | ItemKind::Else
                | ItemKind::End
                | ItemKind::If
                | ItemKind::Nil
                | ItemKind::Range
                | ItemKind::Template
                | ItemKind::With
        )
    }
}

/// One token: its kind, text and byte offset in the template source.
#[derive(Clone, Debug)]
pub struct Item<'a> {
    pub kind: ItemKind,
    /// Borrowed from the template source (cheap to clone as the parser peeks); owned only for
    /// an error token's message.
    pub val: Cow<'a, str>,
    pub pos: usize,
    /// 1-based line of the token start.
    pub line: usize,
}

impl std::fmt::Display for Item<'_> {
    /// How the parser quotes a token in "unexpected X" messages (Go's item.String()).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            ItemKind::Eof => write!(f, "EOF"),
            ItemKind::Error => write!(f, "{}", self.val),
            k if k.is_keyword() => write!(f, "<{}>", self.val),
            _ => {
                let chars: Vec<char> = self.val.chars().collect();
                if chars.len() > 10 {
                    let head: String = chars[..10].iter().collect();
                    write!(f, "{}...", super::printf::go_quote(&head))
                } else {
                    write!(f, "{}", super::printf::go_quote(&self.val))
                }
            }
        }
    }
}

fn keyword(word: &str) -> Option<ItemKind> {
    Some(match word {
        "." => ItemKind::Dot,
        "block" => ItemKind::Block,
        "break" => ItemKind::Break,
        "continue" => ItemKind::Continue,
        "define" => ItemKind::Define,
        "else" => ItemKind::Else,
        "end" => ItemKind::End,
        "if" => ItemKind::If,
        "range" => ItemKind::Range,
        "nil" => ItemKind::Nil,
        "template" => ItemKind::Template,
        "with" => ItemKind::With,
        _ => return None,
    })
}

pub fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

pub fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphabetic() || c.is_numeric()
}

const LEFT_COMMENT: &str = "/*";
const RIGHT_COMMENT: &str = "*/";
const TRIM_LEN: usize = 2;

fn has_left_trim_marker(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0] == b'-' && is_space(b[1] as char)
}

fn has_right_trim_marker(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && is_space(b[0] as char) && b[1] == b'-'
}

fn left_trim_len(s: &str) -> usize {
    s.len() - s.trim_start_matches(is_space).len()
}

fn right_trim_len(s: &str) -> usize {
    s.len() - s.trim_end_matches(is_space).len()
}

/// Tokenizes a whole template. The token list always ends with `Eof` or `Error`.
pub fn lex<'a>(input: &'a str, left: &'a str, right: &'a str) -> Vec<Item<'a>> {
    lex_with_lines(input, left, right).0
}

/// [`lex`], and the byte offsets where the input's lines start (the parser needs them too).
pub fn lex_with_lines<'a>(
    input: &'a str,
    left: &'a str,
    right: &'a str,
) -> (Vec<Item<'a>>, Vec<usize>) {
    let mut l = Lexer {
        input,
        left: if left.is_empty() { "{{" } else { left },
        right: if right.is_empty() { "}}" } else { right },
        pos: 0,
        start: 0,
        paren_depth: 0,
        items: Vec::new(),
        line_starts: vec![0],
        line_cursor: 0,
    };
    l.line_starts
        .extend(memchr::memchr_iter(b'\n', input.as_bytes()).map(|i| i + 1));
    l.run();
    (l.items, l.line_starts)
}

struct Lexer<'a> {
    input: &'a str,
    left: &'a str,
    right: &'a str,
    pos: usize,
    start: usize,
    paren_depth: i32,
    items: Vec<Item<'a>>,
    line_starts: Vec<usize>,
    /// Index into `line_starts` of the last token's line: tokens come in source order, so
    /// finding the next token's line is a short walk forward.
    line_cursor: usize,
}

#[derive(Clone, Copy)]
enum State {
    Text,
    LeftDelim,
    Comment,
    RightDelim,
    InsideAction,
    Done,
}

impl<'a> Lexer<'a> {
    fn line_of(&mut self, pos: usize) -> usize {
        let starts = &self.line_starts;
        if starts.get(self.line_cursor).is_some_and(|&s| s > pos) {
            // Not in source order (never expected): search from the start.
            self.line_cursor = 0;
        }
        while starts.get(self.line_cursor + 1).is_some_and(|&s| s <= pos) {
            self.line_cursor += 1;
        }
        self.line_cursor + 1
    }

    fn rest(&self) -> &'a str {
        &self.input[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn backup(&mut self, c: Option<char>) {
        if let Some(c) = c {
            self.pos -= c.len_utf8();
        }
    }

    fn accept(&mut self, valid: &str) -> bool {
        match self.peek() {
            Some(c) if valid.contains(c) => {
                self.pos += c.len_utf8();
                true
            }
            _ => false,
        }
    }

    fn accept_run(&mut self, valid: &str) {
        while self.accept(valid) {}
    }

    fn emit(&mut self, kind: ItemKind) -> State {
        let input = self.input;
        self.emit_item(kind, &input[self.start..self.pos], self.start)
    }

    fn emit_item(&mut self, kind: ItemKind, val: &'a str, pos: usize) -> State {
        let line = self.line_of(pos);
        self.items.push(Item {
            kind,
            val: Cow::Borrowed(val),
            pos,
            line,
        });
        self.start = self.pos;
        State::InsideAction
    }

    fn ignore(&mut self) {
        self.start = self.pos;
    }

    fn error(&mut self, msg: String) -> State {
        let line = self.line_of(self.start);
        self.items.push(Item {
            kind: ItemKind::Error,
            val: Cow::Owned(msg),
            pos: self.start,
            line,
        });
        State::Done
    }

    fn run(&mut self) {
        let mut state = State::Text;
        loop {
            state = match state {
                State::Text => self.lex_text(),
                State::LeftDelim => self.lex_left_delim(),
                State::Comment => self.lex_comment(),
                State::RightDelim => self.lex_right_delim(),
                State::InsideAction => self.lex_inside_action(),
                State::Done => return,
            };
        }
    }

    fn lex_text(&mut self) -> State {
        // memmem: str::find's two-way searcher was a visible share of lexing big text tokens.
        if let Some(x) = memchr::memmem::find(self.rest().as_bytes(), self.left.as_bytes()) {
            if x > 0 {
                self.pos += x;
                let delim_end = self.pos + self.left.len();
                let trim = if has_left_trim_marker(&self.input[delim_end..]) {
                    right_trim_len(&self.input[self.start..self.pos])
                } else {
                    0
                };
                let input = self.input;
                let text = &input[self.start..self.pos - trim];
                let start = self.start;
                if !text.is_empty() {
                    self.emit_item(ItemKind::Text, text, start);
                }
                self.ignore();
            }
            return State::LeftDelim;
        }
        self.pos = self.input.len();
        if self.pos > self.start {
            self.emit(ItemKind::Text);
        }
        self.emit(ItemKind::Eof);
        State::Done
    }

    fn at_right_delim(&self) -> (bool, bool) {
        let rest = self.rest();
        if has_right_trim_marker(rest) && rest[TRIM_LEN..].starts_with(self.right) {
            return (true, true);
        }
        (rest.starts_with(self.right), false)
    }

    fn lex_left_delim(&mut self) -> State {
        self.pos += self.left.len();
        let trim = has_left_trim_marker(self.rest());
        let after = if trim { TRIM_LEN } else { 0 };
        if self.rest()[after..].starts_with(LEFT_COMMENT) {
            self.pos += after;
            self.ignore();
            return State::Comment;
        }
        let val = self.left;
        let start = self.start;
        self.pos += after;
        self.emit_item(ItemKind::LeftDelim, val, start);
        self.ignore();
        self.paren_depth = 0;
        State::InsideAction
    }

    fn lex_comment(&mut self) -> State {
        self.pos += LEFT_COMMENT.len();
        let Some(x) = memchr::memmem::find(self.rest().as_bytes(), RIGHT_COMMENT.as_bytes()) else {
            return self.error("unclosed comment".into());
        };
        self.pos += x + RIGHT_COMMENT.len();
        let (delim, trim) = self.at_right_delim();
        if !delim {
            return self.error("comment ends before closing delimiter".into());
        }
        if trim {
            self.pos += TRIM_LEN;
        }
        self.pos += self.right.len();
        if trim {
            self.pos += left_trim_len(self.rest());
        }
        self.ignore();
        State::Text
    }

    fn lex_right_delim(&mut self) -> State {
        let (_, trim) = self.at_right_delim();
        if trim {
            self.pos += TRIM_LEN;
            self.ignore();
        }
        self.pos += self.right.len();
        self.emit(ItemKind::RightDelim);
        if trim {
            self.pos += left_trim_len(self.rest());
            self.ignore();
        }
        State::Text
    }

    fn lex_inside_action(&mut self) -> State {
        let (delim, _) = self.at_right_delim();
        if delim {
            if self.paren_depth == 0 {
                return State::RightDelim;
            }
            return self.error("unclosed left paren".into());
        }
        let Some(c) = self.next() else {
            return self.error("unclosed action".into());
        };
        match c {
            c if is_space(c) => {
                self.backup(Some(c));
                self.lex_space()
            }
            '=' => self.emit(ItemKind::Assign),
            ':' => {
                if self.next() != Some('=') {
                    return self.error("expected :=".into());
                }
                self.emit(ItemKind::Declare)
            }
            '|' => self.emit(ItemKind::Pipe),
            '"' => self.lex_quote(),
            '`' => self.lex_raw_quote(),
            '$' => self.lex_field_or_variable(ItemKind::Variable),
            '\'' => self.lex_char(),
            '.' if !matches!(self.peek(), Some('0'..='9')) => {
                self.lex_field_or_variable(ItemKind::Field)
            }
            '.' | '+' | '-' | '0'..='9' => {
                self.backup(Some(c));
                self.lex_number()
            }
            c if is_alphanumeric(c) => {
                self.backup(Some(c));
                self.lex_identifier()
            }
            '(' => {
                self.paren_depth += 1;
                self.emit(ItemKind::LeftParen)
            }
            ')' => {
                self.paren_depth -= 1;
                if self.paren_depth < 0 {
                    return self.error("unexpected right paren".into());
                }
                self.emit(ItemKind::RightParen)
            }
            c if c.is_ascii() && !c.is_ascii_control() => self.emit(ItemKind::Char),
            c => self.error(format!(
                "unrecognized character in action: {}",
                unicode_repr(c)
            )),
        }
    }

    fn lex_space(&mut self) -> State {
        let mut n = 0;
        while let Some(c) = self.peek() {
            if !is_space(c) {
                break;
            }
            self.pos += c.len_utf8();
            n += 1;
        }
        // A space followed by "-}}" is a trim marker, not a separator.
        let before = &self.input[self.pos - 1..];
        if has_right_trim_marker(before) && before[TRIM_LEN..].starts_with(self.right) {
            self.pos -= 1;
            if n == 1 {
                return State::RightDelim;
            }
        }
        self.emit(ItemKind::Space)
    }

    fn at_terminator(&self) -> bool {
        match self.peek() {
            None => true,
            Some(c) if is_space(c) => true,
            Some('.' | ',' | '|' | ':' | ')' | '(') => true,
            _ => self.rest().starts_with(self.right),
        }
    }

    fn lex_identifier(&mut self) -> State {
        loop {
            let c = self.next();
            if matches!(c, Some(c) if is_alphanumeric(c)) {
                continue;
            }
            self.backup(c);
            if !self.at_terminator() {
                return self.error(format!("bad character {}", unicode_repr(c.unwrap_or('\0'))));
            }
            let word = &self.input[self.start..self.pos];
            let kind = match keyword(word) {
                Some(k) => k,
                None if word.starts_with('.') => ItemKind::Field,
                None if word == "true" || word == "false" => ItemKind::Bool,
                None => ItemKind::Identifier,
            };
            return self.emit(kind);
        }
    }

    fn lex_field_or_variable(&mut self, kind: ItemKind) -> State {
        if self.at_terminator() {
            return self.emit(if kind == ItemKind::Variable {
                kind
            } else {
                ItemKind::Dot
            });
        }
        let mut c;
        loop {
            c = self.next();
            if !matches!(c, Some(ch) if is_alphanumeric(ch)) {
                self.backup(c);
                break;
            }
        }
        if !self.at_terminator() {
            return self.error(format!("bad character {}", unicode_repr(c.unwrap_or('\0'))));
        }
        self.emit(kind)
    }

    fn lex_char(&mut self) -> State {
        loop {
            match self.next() {
                Some('\\') => {
                    if matches!(self.next(), None | Some('\n')) {
                        return self.error("unterminated character constant".into());
                    }
                }
                None | Some('\n') => return self.error("unterminated character constant".into()),
                Some('\'') => break,
                _ => {}
            }
        }
        self.emit(ItemKind::CharConstant)
    }

    fn lex_quote(&mut self) -> State {
        loop {
            match self.next() {
                Some('\\') => {
                    if matches!(self.next(), None | Some('\n')) {
                        return self.error("unterminated quoted string".into());
                    }
                }
                None | Some('\n') => return self.error("unterminated quoted string".into()),
                Some('"') => break,
                _ => {}
            }
        }
        self.emit(ItemKind::String)
    }

    fn lex_raw_quote(&mut self) -> State {
        loop {
            match self.next() {
                None => return self.error("unterminated raw quoted string".into()),
                Some('`') => break,
                _ => {}
            }
        }
        self.emit(ItemKind::RawString)
    }

    fn lex_number(&mut self) -> State {
        if !self.scan_number() {
            let text = self.input[self.start..self.pos].to_string();
            return self.error(format!(
                "bad number syntax: {}",
                super::printf::go_quote(&text)
            ));
        }
        if matches!(self.peek(), Some('+' | '-')) {
            // Complex: 1+2i, no spaces, must end in 'i'.
            if !self.scan_number() || !self.input[..self.pos].ends_with('i') {
                let text = self.input[self.start..self.pos].to_string();
                return self.error(format!(
                    "bad number syntax: {}",
                    super::printf::go_quote(&text)
                ));
            }
            return self.emit(ItemKind::Complex);
        }
        self.emit(ItemKind::Number)
    }

    fn scan_number(&mut self) -> bool {
        self.accept("+-");
        let mut digits = "0123456789_";
        if self.accept("0") {
            if self.accept("xX") {
                digits = "0123456789abcdefABCDEF_";
            } else if self.accept("oO") {
                digits = "01234567_";
            } else if self.accept("bB") {
                digits = "01_";
            }
        }
        self.accept_run(digits);
        if self.accept(".") {
            self.accept_run(digits);
        }
        if digits.len() == 11 && self.accept("eE") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        if digits.len() == 23 && self.accept("pP") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        self.accept("i");
        if matches!(self.peek(), Some(c) if is_alphanumeric(c)) {
            self.next();
            return false;
        }
        true
    }
}

/// Go's `%#U`: `U+0023 '#'`.
pub fn unicode_repr(c: char) -> String {
    if c.is_control() {
        format!("U+{:04X}", c as u32)
    } else {
        format!("U+{:04X} '{}'", c as u32, c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<(ItemKind, String)> {
        lex(s, "", "")
            .into_iter()
            .map(|i| (i.kind, i.val.to_string()))
            .collect()
    }

    #[test]
    fn trim_markers_remove_surrounding_space() {
        let k = kinds("a \n{{- 3 -}}\n b");
        assert_eq!(k[0], (ItemKind::Text, "a".into()));
        assert_eq!(k[2], (ItemKind::Number, "3".into()));
        assert_eq!(k[4], (ItemKind::Text, "b".into()));
    }

    #[test]
    fn trimmed_comment_vanishes() {
        let k = kinds("x  {{- /* c */ -}}  y");
        assert_eq!(k[0], (ItemKind::Text, "x".into()));
        assert_eq!(k[1], (ItemKind::Text, "y".into()));
    }

    #[test]
    fn unclosed_comment_is_an_error() {
        let k = kinds("{{/* x }}");
        assert_eq!(k.last().map(|i| i.0), Some(ItemKind::Error));
    }
}
