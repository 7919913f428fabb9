//! Stretches of input that hold no tags: comments, doctypes, CDATA sections and the content of
//! raw-text elements. Each function returns where the data state resumes. Input that ends
//! inside one of them simply ends (the tokenizer's rules at end of file emit nothing we need).

use memchr::{memchr, memchr3, memmem};

use super::tag::is_space;

/// After `<!`: a comment, a doctype, a CDATA section (only where `cdata` is allowed, in SVG or
/// MathML) or a bogus comment.
pub(crate) fn markup_declaration(input: &[u8], from: usize, cdata: bool) -> usize {
    let rest = input.get(from..).unwrap_or_default();
    if rest.starts_with(b"--") {
        comment(input, from + 2)
    } else if cdata && rest.starts_with(b"[CDATA[") {
        let body = from + 7;
        input.get(body..).and_then(|b| memmem::find(b, b"]]>")).map_or(input.len(), |at| body + at + 3)
    } else {
        // A doctype ends at the first `>` even inside its quotes, like any bogus comment.
        bogus_comment(input, from)
    }
}

/// A bogus comment (`<?…>`, `</1…>`, `<!x…>`): everything up to and including the next `>`.
pub(crate) fn bogus_comment(input: &[u8], from: usize) -> usize {
    input.get(from..).and_then(|rest| memchr(b'>', rest)).map_or(input.len(), |at| from + at + 1)
}

/// A comment whose `<!--` ends just before `from`: up to `-->` or `--!>`, where `<!-->` and
/// `<!--->` are whole (empty) comments.
fn comment(input: &[u8], from: usize) -> usize {
    let rest = input.get(from..).unwrap_or_default();
    if rest.starts_with(b">") {
        return from + 1;
    }
    if rest.starts_with(b"->") {
        return from + 2;
    }
    let mut i = from;
    while let Some(at) = input.get(i..).and_then(|r| memmem::find(r, b"--")) {
        // Past the run of dashes: `--->` ends the comment as `-->` does.
        let mut j = i + at + 2;
        while input.get(j) == Some(&b'-') {
            j += 1;
        }
        match input.get(j..) {
            Some([b'>', ..]) => return j + 1,
            Some([b'!', b'>', ..]) => return j + 2,
            _ => i = j,
        }
    }
    input.len()
}

/// Where the end tag `</name` (followed by whitespace, `/` or `>`) of a RAWTEXT or RCDATA
/// element starts, looking from `from`; the end of the input if there is none. `name` is lower
/// case.
pub(crate) fn raw_text(input: &[u8], from: usize, name: &[u8]) -> usize {
    let mut i = from;
    while let Some(at) = input.get(i..).and_then(|r| memmem::find(r, b"</")) {
        let lt = i + at;
        if is_end_tag(input, lt + 2, name) {
            return lt;
        }
        i = lt + 2;
    }
    input.len()
}

/// Whether `name` (lower case), then whitespace, `/` or `>`, is written at `at` in any case:
/// an "appropriate end tag" when `at` follows `</`.
fn is_end_tag(input: &[u8], at: usize, name: &[u8]) -> bool {
    input.get(at..at + name.len()).is_some_and(|n| n.eq_ignore_ascii_case(name))
        && input.get(at + name.len()).is_some_and(|&c| is_space(c) || c == b'/' || c == b'>')
}

/// Where `<script>`'s content ends: the `<` of its `</script` end tag, or the end of the input.
///
/// Script data has the tokenizer's one nested mode: after `<!--`, a `<script` starts a "double
/// escaped" stretch in which `</script>` does not end the element, until `-->` or its own
/// `</script>`.
pub(crate) fn script(input: &[u8], from: usize) -> usize {
    let mut i = from;
    while let Some(at) = input.get(i..).and_then(|r| memchr(b'<', r)) {
        let lt = i + at;
        match input.get(lt + 1) {
            Some(b'/') if is_end_tag(input, lt + 2, b"script") => return lt,
            Some(b'!') if input.get(lt + 2..lt + 4) == Some(b"--") => match escaped(input, lt + 4) {
                Escaped::Closed(next) => i = next,
                Escaped::EndTag(at) => return at,
            },
            _ => i = lt + 1,
        }
    }
    input.len()
}

/// How an escaped stretch of script data (after `<!--`) ends.
enum Escaped {
    /// `-->`: plain script data resumes here.
    Closed(usize),
    /// The script's end tag starts here.
    EndTag(usize),
}

/// The tokenizer's script-data-escaped and double-escaped states, from just past `<!--`.
fn escaped(input: &[u8], from: usize) -> Escaped {
    // Dashes seen just before the current byte; the `--` of `<!--` counts, so `<!-->` closes.
    let mut dashes = 2;
    let mut double = false;
    let mut i = from;
    while let Some(&c) = input.get(i) {
        match c {
            b'-' => {
                dashes += 1;
                i += 1;
                continue;
            }
            b'>' if dashes >= 2 => return Escaped::Closed(i + 1),
            b'<' if !double && input.get(i + 1) == Some(&b'/') => {
                if is_end_tag(input, i + 2, b"script") {
                    return Escaped::EndTag(i);
                }
                i += 2;
            }
            b'<' if !double && is_end_tag(input, i + 1, b"script") => {
                double = true;
                i += 1 + 6;
            }
            b'<' if double && input.get(i + 1) == Some(&b'/') && is_end_tag(input, i + 2, b"script") => {
                double = false;
                i += 2 + 6;
            }
            _ => i += 1,
        }
        dashes = 0;
        // Nothing but a dash, `<` or `>` can change the state: skip to the next of them.
        if let Some(at) = input.get(i..).and_then(|r| memchr3(b'-', b'<', b'>', r)) {
            i += at;
        } else {
            break;
        }
    }
    Escaped::Closed(input.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the data state resumes after `<!` at the start of `html`.
    fn decl(html: &str, cdata: bool) -> &str {
        &html[markup_declaration(html.as_bytes(), 2, cdata)..]
    }

    #[test]
    fn comments_end_where_the_tokenizer_ends_them() {
        assert_eq!(decl("<!-- a -->b", false), "b");
        assert_eq!(decl("<!-->b", false), "b");
        assert_eq!(decl("<!--->b", false), "b");
        assert_eq!(decl("<!---->b", false), "b");
        assert_eq!(decl("<!-- a --->b", false), "b");
        assert_eq!(decl("<!-- a --!>b", false), "b");
        assert_eq!(decl("<!-- a --!-->b", false), "b");
        assert_eq!(decl("<!-- a -- > --!x -->b", false), "b");
        assert_eq!(decl("<!-- <a href=x> -- >", false), "");
    }

    #[test]
    fn doctypes_cdata_and_bogus_comments() {
        assert_eq!(decl("<!DOCTYPE html>b", false), "b");
        assert_eq!(decl(r#"<!DOCTYPE html PUBLIC "a>b" "c">d"#, false), r#"b" "c">d"#);
        assert_eq!(decl("<![CDATA[<a>]]>b", true), "b");
        assert_eq!(decl("<![CDATA[<a>]]>b", false), "]]>b");
        assert_eq!(decl("<![CDATA[x", true), "");
        assert_eq!(decl("<!x>b", false), "b");
        assert_eq!(&"<?php x ?>b"[bogus_comment(b"<?php x ?>b", 1)..], "b");
    }

    #[test]
    fn raw_text_ends_at_its_own_end_tag() {
        let html = "x</styles></style x>";
        assert_eq!(&html[raw_text(html.as_bytes(), 0, b"style")..], "</style x>");
        let html = "x</STYLE>";
        assert_eq!(&html[raw_text(html.as_bytes(), 0, b"style")..], "</STYLE>");
        assert_eq!(raw_text(b"x</style", 0, b"style"), 8);
    }

    fn script_rest(html: &str) -> &str {
        &html[script(html.as_bytes(), 0)..]
    }

    #[test]
    fn script_data_and_its_escapes() {
        assert_eq!(script_rest("a<b</script>x"), "</script>x");
        assert_eq!(script_rest("a</scripts></script>x"), "</script>x");
        // Escaped: the end tag still ends the script.
        assert_eq!(script_rest("<!-- a </script>x"), "</script>x");
        // Double escaped: `</script>` only leaves the double escape; `-->` then ends the escape.
        assert_eq!(script_rest("<!-- <script> </script> --> </script>x"), "</script>x");
        assert_eq!(script_rest("<!-- <script> </script> </script>x"), "</script>x");
        assert_eq!(script_rest("<!-- <script> </script>x"), "");
        assert_eq!(script_rest("<!-- <script> --> </script>x"), "</script>x");
        // `<!-->` opens and closes at once.
        assert_eq!(script_rest("<!--><script></script>x"), "</script>x");
        assert_eq!(script_rest("<!-- - -> <script> --- > </script> ---> </script>x"), "</script>x");
        assert_eq!(script_rest("<!-- <scripts> </script>x"), "</script>x");
    }
}
