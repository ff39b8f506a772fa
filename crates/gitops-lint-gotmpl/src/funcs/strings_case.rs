//! Case conversions of huandu/xstrings v1.5 (snakecase, kebabcase, camelcase = ToPascalCase).
//! Its word splitting has quirks charts can observe ("HTTPServer" → "http_server",
//! "Bld4Floor3rd" → "bld4_floor_3rd"), so the algorithm is followed step by step.

use super::unicode::{go_is_space, go_to_lower, go_to_upper};

fn is_connector(r: char) -> bool {
    r == '-' || r == '_' || go_is_space(r)
}

/// xstrings' isAlphabet: a letter that is not CJK.
fn is_alphabet(r: char) -> bool {
    r.is_alphabetic() && (r as u32) < 0x3400
}

fn is_punct(r: char) -> bool {
    r.is_ascii_punctuation() && !matches!(r, '$' | '+' | '<' | '=' | '>' | '^' | '`' | '|' | '~')
        || (!r.is_ascii() && !r.is_alphanumeric() && !r.is_whitespace() && !r.is_control())
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Wt {
    Invalid,
    Number,
    Upper,
    Alphabet,
    Connector,
    Punct,
    Other,
}

/// Splits the next word off `s` (a char slice).
fn next_word(s: &[char]) -> (Wt, &[char], &[char]) {
    if s.is_empty() {
        return (Wt::Invalid, s, s);
    }
    let r = s[0];
    let mut i = 1;
    let wt;
    if is_connector(r) {
        wt = Wt::Connector;
        while i < s.len() && is_connector(s[i]) {
            i += 1;
        }
    } else if is_punct(r) {
        wt = Wt::Punct;
        while i < s.len() && is_punct(s[i]) {
            i += 1;
        }
    } else if r.is_uppercase() {
        wt = Wt::Upper;
        if i < s.len() {
            let r2 = s[i];
            if r2.is_uppercase() {
                i += 1;
                while i < s.len() && s[i].is_uppercase() {
                    i += 1;
                }
                // "HTTPStatus" → "HTTP" + "Status": the last capital starts the next word.
                if i < s.len() && is_alphabet(s[i]) {
                    i -= 1;
                }
            } else if is_alphabet(r2) {
                i += 1;
                while i < s.len() && is_alphabet(s[i]) && !s[i].is_uppercase() {
                    i += 1;
                }
            }
        }
    } else if is_alphabet(r) {
        wt = Wt::Alphabet;
        while i < s.len() && is_alphabet(s[i]) && !s[i].is_uppercase() {
            i += 1;
        }
    } else if r.is_numeric() {
        wt = Wt::Number;
        while i < s.len() && s[i].is_numeric() {
            i += 1;
        }
    } else {
        wt = Wt::Other;
        while i < s.len() {
            let c = s[i];
            if is_connector(c) || is_alphabet(c) || c.is_numeric() || is_punct(c) {
                break;
            }
            i += 1;
        }
    }
    (wt, &s[..i], &s[i..])
}

fn to_lower(buf: &mut String, wt: Wt, word: &[char], connector: char) {
    if wt != Wt::Upper && wt != Wt::Connector {
        buf.extend(word.iter());
        return;
    }
    for &r in word {
        if is_connector(r) {
            buf.push(connector);
        } else if r.is_uppercase() {
            buf.push(go_to_lower(r));
        } else {
            buf.push(r);
        }
    }
}

pub fn camel_to_lower(st: &str, connector: char) -> String {
    if st.is_empty() {
        return String::new();
    }
    let chars: Vec<char> = st.chars().collect();
    let mut buf = String::new();
    let (mut wt, mut word, mut remaining) = next_word(&chars);
    while !remaining.is_empty() {
        if wt != Wt::Connector {
            to_lower(&mut buf, wt, word, connector);
        }
        let prev = wt;
        let last = word;
        (wt, word, remaining) = next_word(remaining);
        match prev {
            Wt::Number => {
                while wt == Wt::Alphabet || wt == Wt::Number {
                    to_lower(&mut buf, wt, word, connector);
                    (wt, word, remaining) = next_word(remaining);
                }
                if wt != Wt::Invalid && wt != Wt::Punct && wt != Wt::Connector {
                    buf.push(connector);
                }
            }
            Wt::Connector => to_lower(&mut buf, prev, last, connector),
            Wt::Punct => {}
            _ => {
                if wt != Wt::Number {
                    if wt != Wt::Connector && wt != Wt::Punct {
                        buf.push(connector);
                    }
                    continue;
                }
                if remaining.is_empty() {
                    continue;
                }
                let last = word;
                (wt, word, remaining) = next_word(remaining);
                if wt != Wt::Alphabet {
                    to_lower(&mut buf, Wt::Number, last, connector);
                    if wt != Wt::Connector && wt != Wt::Punct {
                        buf.push(connector);
                    }
                    continue;
                }
                buf.push(connector);
                to_lower(&mut buf, Wt::Number, last, connector);
                while wt == Wt::Alphabet || wt == Wt::Number {
                    to_lower(&mut buf, wt, word, connector);
                    (wt, word, remaining) = next_word(remaining);
                }
                if wt != Wt::Invalid && wt != Wt::Connector && wt != Wt::Punct {
                    buf.push(connector);
                }
            }
        }
    }
    to_lower(&mut buf, wt, word, connector);
    buf
}

/// xstrings.ToPascalCase.
pub fn to_pascal(st: &str) -> String {
    let chars: Vec<char> = st.chars().collect();
    if chars.is_empty() {
        return String::new();
    }
    let mut buf = String::new();
    let mut i = 0;
    let mut first_upper = false;
    let mut r0 = '\0';
    let mut found = false;
    while i < chars.len() {
        r0 = chars[i];
        i += 1;
        if !is_connector(r0) {
            first_upper = r0.is_uppercase();
            r0 = go_to_upper(r0);
            found = true;
            break;
        }
        buf.push(r0);
    }
    if i >= chars.len() {
        if found {
            buf.push(r0);
        }
        return buf;
    }
    while i < chars.len() {
        let r1 = r0;
        r0 = chars[i];
        i += 1;
        if is_connector(r0) && is_connector(r1) {
            buf.push(r1);
            continue;
        }
        if is_connector(r1) {
            first_upper = r0.is_uppercase();
            r0 = go_to_upper(r0);
        } else {
            if first_upper {
                if r0.is_uppercase() {
                    r0 = go_to_lower(r0);
                } else {
                    first_upper = false;
                }
            }
            buf.push(r1);
        }
    }
    buf.push(r0);
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xstrings_samples() {
        for (i, want) in [
            ("FirstName", "first_name"),
            ("HTTPServer", "http_server"),
            ("NoHTTPS", "no_https"),
            ("GO_PATH", "go_path"),
            ("GO PATH", "go_path"),
            ("GO-PATH", "go_path"),
            ("http2xx", "http_2xx"),
            ("HTTP20xOK", "http_20x_ok"),
            ("Duration2m3s", "duration_2m3s"),
            ("Bld4Floor3rd", "bld4_floor_3rd"),
        ] {
            assert_eq!(camel_to_lower(i, '_'), want, "{i}");
        }
        for (i, want) in [
            ("some_words", "SomeWords"),
            ("http_server", "HttpServer"),
            ("no_https", "NoHttps"),
            ("_complex__case_", "_Complex_Case_"),
            ("some words", "SomeWords"),
            ("GOLANG_IS_GREAT", "GolangIsGreat"),
            ("all", "All"),
            ("_camel_case", "_CamelCase"),
        ] {
            assert_eq!(to_pascal(i), want, "{i}");
        }
    }
}
