//! How deeply a selector nests, read without parsing it: skyscraper's XPath parser and
//! serde_json_path's JSONPath parser recurse once per level of `(`, `[` or a function call, with
//! large frames (an XPath level takes about 47 KiB of stack in a debug build, ~35 KiB in
//! release), so a nested expression from a spider file or a script would overflow the stack
//! and abort the process. Expressions past the limits here are refused before they reach those
//! parsers; the scan itself is a loop, so no input can make it recurse.

/// Deepest XPath bracket nesting accepted: 16 levels take ~0.75 MiB of stack in a debug build,
/// well inside a 2 MiB tokio worker (43 levels overflowed one).
pub const MAX_XPATH_NESTING: usize = 16;

/// Most XPath `then`, `else`, `return` and `satisfies` keywords accepted: each nests a
/// further expression (about 2 KiB of stack each in a debug build; 946 overflowed 2 MiB).
pub const MAX_XPATH_CLAUSES: usize = 64;

/// Deepest JSONPath bracket nesting accepted (109 levels overflowed a 256 KiB stack).
pub const MAX_JSONPATH_NESTING: usize = 32;

/// How an expression nests: the deepest bracket level and the nesting keywords it holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Nesting {
    pub(super) brackets: usize,
    pub(super) keywords: usize,
}

/// Measures `text`: brackets `(`, `[`, `{` outside string literals (quoted with `'` or `"`;
/// `escapes` when a backslash escapes the next character, as in JSONPath), and whole-word
/// occurrences of `keywords` outside literals.
pub(super) fn measure(text: &str, escapes: bool, keywords: &[&str]) -> Nesting {
    let bytes = text.as_bytes();
    let mut nesting = Nesting::default();
    let mut depth = 0usize;
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if let Some(q) = quote {
            if escapes && c == b'\\' {
                i += 1;
            } else if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        match c {
            b'\'' | b'"' => quote = Some(c),
            b'(' | b'[' | b'{' => {
                depth += 1;
                nesting.brackets = nesting.brackets.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            c if c.is_ascii_alphabetic() && (i == 0 || !is_word(bytes[i - 1])) => {
                let end = bytes[i..].iter().position(|&b| !is_word(b)).map_or(bytes.len(), |n| i + n);
                if keywords.iter().any(|k| k.as_bytes() == &bytes[i..end]) {
                    nesting.keywords += 1;
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    nesting
}

/// Characters of an XPath name (a keyword is a whole name, not part of `if-then`).
fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b':')
}

/// The keywords that nest an XPath expression inside another without a bracket.
pub(super) const XPATH_KEYWORDS: [&str; 4] = ["then", "else", "return", "satisfies"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_outside_literals() {
        assert_eq!(measure("//a[not(@x)]", false, &[]).brackets, 2);
        assert_eq!(measure("//a[@x='((((']", false, &[]).brackets, 1);
        assert_eq!(measure(r#"$['a\'(((']"#, true, &[]).brackets, 1);
        assert_eq!(measure("((()))()", false, &[]).brackets, 3);
        // Unbalanced closers do not go below zero.
        assert_eq!(measure(")))((", false, &[]).brackets, 2);
    }

    #[test]
    fn keywords_are_whole_words() {
        let n = measure("if (1) then 2 else for $x in 1 return $x", false, &XPATH_KEYWORDS);
        assert_eq!(n.keywords, 3);
        assert_eq!(measure("//then-else/return_x[@a='then']", false, &XPATH_KEYWORDS).keywords, 0);
    }
}
