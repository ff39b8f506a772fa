//! go-yaml's leniency inside flow collections. go-yaml (a libyaml port, and so Helm and
//! Kubernetes) checks indentation only in block context: a flow sequence or mapping may
//! spread over lines at any indentation, its closing bracket at the parent key's column or
//! at column 0, and tabs separate tokens there. saphyr's scanner checks indentation inside
//! flow collections too, so a file it rejects is read again from a copy where, inside flow
//! collections, line breaks at token boundaries and tabs outside quotes become spaces and
//! comments are blanked. Every replacement is one character for one character, so the
//! scanner's character positions are the original file's.

/// The lenient copy, or None when the text has nothing it would change.
pub fn flow_lenient(text: &str) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = chars.clone();
    let mut depth = 0usize;
    // The quote character of an open quoted scalar inside a flow collection.
    let mut quote: Option<char> = None;
    let mut changed = false;
    // Block scalar (`|`, `>`) content at depth 0: lines indented deeper than this.
    let mut block_scalar_indent: Option<usize> = None;
    let mut line_start = true;
    let mut indent = 0usize;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if line_start {
            indent = chars[i..].iter().take_while(|&&c| c == ' ').count();
            line_start = false;
            if let Some(bi) = block_scalar_indent {
                let blank = chars[i + indent..]
                    .first()
                    .is_none_or(|&c| c == '\n' || c == '\r');
                if depth == 0 && (blank || indent > bi) {
                    i = skip_line(&chars, i);
                    line_start = true;
                    continue;
                }
                block_scalar_indent = None;
            }
        }
        if let Some(q) = quote {
            if q == '"' && c == '\\' {
                i += 2;
                continue;
            }
            if c == q {
                // '' inside single quotes is an escaped quote
                if q == '\'' && chars.get(i + 1) == Some(&'\'') {
                    i += 2;
                    continue;
                }
                quote = None;
            }
            if c == '\n' {
                line_start = true;
            }
            i += 1;
            continue;
        }
        match c {
            '\n' => {
                if depth > 0 && at_token_boundary(&out, i, &chars) {
                    out[i] = ' ';
                    changed = true;
                    if i > 0 && out[i - 1] == '\r' {
                        out[i - 1] = ' ';
                    }
                }
                line_start = true;
            }
            '#' if i == 0 || matches!(chars[i - 1], ' ' | '\t' | '\n') => {
                let end = chars[i..]
                    .iter()
                    .position(|&c| c == '\n')
                    .map_or(chars.len(), |p| i + p);
                if depth > 0 {
                    for ch in out.iter_mut().take(end).skip(i) {
                        *ch = ' ';
                    }
                    changed = true;
                }
                i = end;
                continue;
            }
            '\t' if depth > 0 => {
                out[i] = ' ';
                changed = true;
            }
            '"' | '\'' if depth > 0 || starts_token(&chars, i) => {
                if depth > 0 {
                    quote = Some(c);
                } else {
                    // a quoted scalar at depth 0: skip it whole
                    i = skip_quoted(&chars, i);
                    continue;
                }
            }
            '[' | '{' if depth > 0 || starts_token(&chars, i) => depth += 1,
            ']' | '}' if depth > 0 => depth -= 1,
            '|' | '>' if depth == 0 && starts_token(&chars, i) => {
                block_scalar_indent = Some(indent);
            }
            _ => {}
        }
        i += 1;
    }
    changed.then(|| out.into_iter().collect())
}

/// Index just past the line holding `i` (past its '\n').
fn skip_line(chars: &[char], i: usize) -> usize {
    chars[i..]
        .iter()
        .position(|&c| c == '\n')
        .map_or(chars.len(), |p| i + p + 1)
}

/// Index just past the quoted scalar starting at `i`.
fn skip_quoted(chars: &[char], i: usize) -> usize {
    let q = chars[i];
    let mut j = i + 1;
    while j < chars.len() {
        match chars[j] {
            '\\' if q == '"' => j += 1,
            '\'' if q == '\'' && chars.get(j + 1) == Some(&'\'') => j += 1,
            c if c == q => return j + 1,
            _ => {}
        }
        j += 1;
    }
    chars.len()
}

/// Does a token start at `i` in block context (after indentation, `: `, `- `, `? `)?
fn starts_token(chars: &[char], i: usize) -> bool {
    let before: Vec<char> = chars[..i]
        .iter()
        .rev()
        .take_while(|&&c| c != '\n')
        .copied()
        .collect();
    let trimmed: Vec<char> = before
        .iter()
        .skip_while(|&&c| c == ' ' || c == '\t')
        .copied()
        .collect();
    if trimmed.is_empty() {
        return true;
    }
    let spaced = trimmed.len() < before.len();
    spaced && matches!(trimmed[0], ':' | '-' | '?')
}

/// Is the line break at `i` between two tokens, so that a space reads the same? The text
/// before it (comments already blanked in `out`) ends with `[`, `{` or `,`, or the next line
/// starts with `]`, `}` or `,`, or both sides are complete quoted scalars or keys.
fn at_token_boundary(out: &[char], i: usize, chars: &[char]) -> bool {
    let prev = out[..i]
        .iter()
        .rev()
        .find(|&&c| !matches!(c, ' ' | '\t' | '\r'));
    let next = chars[i + 1..]
        .iter()
        .find(|&&c| !matches!(c, ' ' | '\t' | '\r' | '\n'));
    matches!(prev, Some('[' | '{' | ',' | '"' | '\'' | ':'))
        || matches!(next, Some(']' | '}' | ',' | '#'))
}

#[cfg(test)]
mod tests {
    use super::flow_lenient;

    #[test]
    fn closing_bracket_at_the_parent_indent_joins_its_line() {
        let text = "server:\n  args: [\n    \"server\",\n    \"-dev\"\n  ]\n";
        let alt = flow_lenient(text).unwrap_or_default();
        assert_eq!(alt.len(), text.len());
        assert_eq!(alt, "server:\n  args: [     \"server\",     \"-dev\"   ]\n");
    }

    #[test]
    fn plain_scalars_spanning_lines_are_left_to_fold() {
        // `y` and `z` may be one plain scalar: the break is not a token boundary
        assert_eq!(flow_lenient("a: [x, y\n  z]\n"), None);
    }

    #[test]
    fn block_context_and_block_scalars_are_untouched() {
        assert_eq!(flow_lenient("a:\n  b: 1\n"), None);
        assert_eq!(flow_lenient("a: |\n  [x,\n  y]\nb: 2\n"), None);
        assert_eq!(flow_lenient("a: \"[x,\n  y]\"\n"), None);
    }

    #[test]
    fn tabs_and_comments_inside_flow_become_spaces() {
        let alt = flow_lenient("a: [\n\tx, # first\n\ty]\n").unwrap_or_default();
        assert_eq!(alt, "a: [  x,          y]\n");
    }
}
