//! Regular expressions from spider files: built with a size limit on the `regex` crate's
//! finite-automata engine, which runs in time linear in the input whatever the pattern (no
//! backtracking), so neither a pattern nor a page can make extraction blow up.

use regex::{Captures, Regex, RegexBuilder};

use super::compile::Problem;

/// Most memory one compiled pattern may take. Ordinary patterns need a few KiB; the cap stops
/// things like `\w{1000}{1000}`, which would otherwise take gigabytes.
pub(super) const SIZE_LIMIT: usize = 1 << 20;

/// Deepest nesting of groups and repetitions accepted. The `regex` crate's default (250)
/// is past what its compiler's recursion fits in a 256 KiB stack in a debug build (198).
pub(super) const NEST_LIMIT: u32 = 64;

/// Compiles a user pattern, or says why it cannot be used.
pub(super) fn build(pattern: &str) -> Result<Regex, Problem> {
    RegexBuilder::new(pattern)
        .size_limit(SIZE_LIMIT)
        .nest_limit(NEST_LIMIT)
        .build()
        .map_err(|e| Problem::Regex { pattern: pattern.to_owned(), reason: one_line(&e.to_string()) })
}

/// The part of a match a field keeps: capture group 1 when the pattern has groups (an
/// optional group that did not take part gives nothing), else the whole match.
pub(super) fn kept<'h>(regex: &Regex, captures: &Captures<'h>) -> Option<&'h str> {
    if regex.captures_len() > 1 {
        captures.get(1).map(|m| m.as_str())
    } else {
        captures.get(0).map(|m| m.as_str())
    }
}

/// The first kept part of a match in `haystack`, the post-filter of a field.
pub(super) fn filter<'h>(regex: &Regex, haystack: &'h str) -> Option<&'h str> {
    regex.captures_iter(haystack).find_map(|c| kept(regex, &c))
}

/// The regex crate renders syntax errors over several lines, with a caret under the problem;
/// one line reads better inside a message that already names the model and the field.
fn one_line(message: &str) -> String {
    let lines: Vec<&str> = message.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    match lines.iter().find_map(|l| l.strip_prefix("error: ")) {
        Some(problem) => problem.to_owned(),
        None => lines.join(" "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_one_when_present_else_whole_match() {
        let with_group = build(r"born (\d{4})").unwrap();
        assert_eq!(filter(&with_group, "he was born 1879 in Ulm"), Some("1879"));
        let without = build(r"\d{4}").unwrap();
        assert_eq!(filter(&without, "1879"), Some("1879"));
        assert_eq!(filter(&without, "no year"), None);
    }

    #[test]
    fn huge_patterns_are_refused() {
        let Err(Problem::Regex { reason, .. }) = build(r"\w{1000}{1000}") else { panic!("built") };
        assert!(reason.contains("size limit"), "{reason}");
    }

    #[test]
    fn syntax_errors_read_on_one_line() {
        let Err(Problem::Regex { reason, .. }) = build(r"(\w+") else { panic!("built") };
        assert_eq!(reason, "unclosed group");
    }
}
