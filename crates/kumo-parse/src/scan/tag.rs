//! One tag, start or end, tokenized as the HTML tokenizer does from its tag-name state: the
//! name, then attributes (names, `=`, quoted or unquoted values), up to the `>` that ends it.
//!
//! Quotes matter only where a value starts, so `<div a"b>` has an attribute named `a"b` and
//! `<a title=">" href=x>` ends at the last `>`. A tag cut off by the end of the input is not a
//! tag at all (the tokenizer drops it), hence the `Option`s.

use std::ops::Range;

use memchr::memchr;

/// Longest tag name worth comparing; longer names are none of the tags the scanner knows.
const NAME_MAX: usize = 16;

/// HTML's ASCII whitespace as the tokenizer sees it (no vertical tab).
pub(crate) fn is_space(c: u8) -> bool {
    matches!(c, b'\t' | b'\n' | b'\x0C' | b'\r' | b' ')
}

/// A tag name, ASCII-lowercased into a fixed buffer so matching it allocates nothing.
#[derive(Clone, Copy)]
pub(crate) struct Name {
    bytes: [u8; NAME_MAX],
    /// The name's length, or `usize::MAX` when it is longer than the buffer.
    len: usize,
}

impl Name {
    /// The lower-cased name; empty for a name longer than any the scanner knows.
    pub(crate) fn get(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or_default()
    }
}

/// Reads the tag name starting at `from` (just past `<` or `</`, on an ASCII letter); returns it
/// and where it ends.
pub(crate) fn name(input: &[u8], from: usize) -> (Name, usize) {
    let rest = input.get(from..).unwrap_or_default();
    let len = rest.iter().position(|&c| is_space(c) || c == b'/' || c == b'>').unwrap_or(rest.len());
    let mut name = Name { bytes: [0; NAME_MAX], len: usize::MAX };
    if let Some(raw) = rest.get(..len).filter(|raw| raw.len() <= NAME_MAX) {
        for (to, from) in name.bytes.iter_mut().zip(raw) {
            *to = from.to_ascii_lowercase();
        }
        name.len = len;
    }
    (name, from + len)
}

/// The attributes a caller asks for, as byte ranges of their values (empty for an attribute
/// written without a value). The first of duplicate attributes wins, as in HTML.
pub(crate) struct Wanted<'n, const N: usize> {
    names: [&'n [u8]; N],
    pub(crate) values: [Option<Range<usize>>; N],
}

impl<'n, const N: usize> Wanted<'n, N> {
    pub(crate) fn new(names: [&'n [u8]; N]) -> Self {
        Self { names, values: std::array::from_fn(|_| None) }
    }

    fn offer(&mut self, name: &[u8], value: Range<usize>) {
        for (want, slot) in self.names.iter().zip(&mut self.values) {
            if slot.is_none() && name.eq_ignore_ascii_case(want) {
                *slot = Some(value);
                return;
            }
        }
    }
}

/// How a tag ended.
pub(crate) struct End {
    /// Just past the closing `>`.
    pub(crate) at: usize,
    /// Written `/>`.
    pub(crate) self_closing: bool,
}

/// Tokenizes the attributes from `from` (just past the tag name) to the closing `>`, handing
/// the wanted ones to `wanted` (none when it is `None`). `None` when the input ends first.
pub(crate) fn attributes<const N: usize>(
    input: &[u8],
    from: usize,
    mut wanted: Option<&mut Wanted<'_, N>>,
) -> Option<End> {
    each_attribute(input, from, |name, value| {
        if let Some(wanted) = wanted.as_deref_mut() {
            wanted.offer(name, value);
        }
    })
}

/// Tokenizes the attributes from `from` (just past the tag name) to the closing `>`, handing
/// every one, duplicates included, to `offer` as its raw name and the range of its raw value.
/// `None` when the input ends first.
pub(crate) fn each_attribute(
    input: &[u8],
    from: usize,
    mut offer: impl FnMut(&[u8], Range<usize>),
) -> Option<End> {
    let mut i = from;
    let skip_space = |mut i: usize| {
        while input.get(i).copied().is_some_and(is_space) {
            i += 1;
        }
        i
    };
    loop {
        // Before attribute name.
        i = skip_space(i);
        match *input.get(i)? {
            b'>' => return Some(End { at: i + 1, self_closing: false }),
            b'/' => {
                // Self-closing start tag state: only `/>` closes; anything else is read again as
                // the start of an attribute.
                i += 1;
                if *input.get(i)? == b'>' {
                    return Some(End { at: i + 1, self_closing: true });
                }
                continue;
            }
            _ => {}
        }
        // Attribute name: its first character may be `=`, any later one ends it.
        let name_start = i;
        i += 1;
        while let Some(&c) = input.get(i) {
            if is_space(c) || matches!(c, b'/' | b'>' | b'=') {
                break;
            }
            i += 1;
        }
        let name = name_start..i;
        // After attribute name.
        i = skip_space(i);
        let value = if input.get(i) == Some(&b'=') {
            i = skip_space(i + 1);
            match *input.get(i)? {
                quote @ (b'"' | b'\'') => {
                    let close = i + 1 + memchr(quote, input.get(i + 1..)?)?;
                    let value = i + 1..close;
                    i = close + 1;
                    value
                }
                // `<a href=>`: an empty value, and the tag ends here.
                b'>' => i..i,
                _ => {
                    let start = i;
                    while let Some(&c) = input.get(i) {
                        if is_space(c) || c == b'>' {
                            break;
                        }
                        i += 1;
                    }
                    start..i
                }
            }
        } else {
            i..i
        };
        offer(&input[name], value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wanted values of the tag starting at `<`, as strings, and whether it self-closes.
    fn read<'a>(html: &'a str, want: [&str; 2]) -> Option<(Vec<Option<&'a str>>, bool, usize)> {
        let input = html.as_bytes();
        let (_, after) = name(input, 1);
        let mut wanted = Wanted::new(want.map(str::as_bytes));
        let end = attributes(input, after, Some(&mut wanted))?;
        let values = wanted.values.iter().map(|v| v.clone().map(|r| &html[r])).collect();
        Some((values, end.self_closing, end.at))
    }

    #[test]
    fn names_are_lower_cased_and_long_ones_dropped() {
        let (n, end) = name(b"<ForeignObject x>", 1);
        assert_eq!((n.get(), end), (&b"foreignobject"[..], 14));
        let (n, end) = name(b"<abcdefghijklmnopq>", 1);
        assert_eq!((n.get(), end), (&b""[..], 18));
        let (n, end) = name(b"<a/>", 1);
        assert_eq!((n.get(), end), (&b"a"[..], 2));
    }

    #[test]
    fn values_in_every_quoting() {
        let r = read(r#"<a href="x y" rel='next'>"#, ["href", "rel"]).unwrap();
        assert_eq!(r.0, [Some("x y"), Some("next")]);
        let r = read("<a HREF = x rel>", ["href", "rel"]).unwrap();
        assert_eq!(r.0, [Some("x"), Some("")]);
        let r = read("<a href=x/>", ["href", "rel"]).unwrap();
        assert_eq!((r.0, r.1), (vec![Some("x/"), None], false));
        let r = read("<a href=x />", ["href", "rel"]).unwrap();
        assert_eq!((r.0, r.1), (vec![Some("x"), None], true));
        let r = read("<a href=>", ["href", "rel"]).unwrap();
        assert_eq!(r.0, [Some(""), None]);
    }

    #[test]
    fn quotes_count_only_where_a_value_starts() {
        let r = read(r#"<a title=">" href=x>"#, ["href", "title"]).unwrap();
        assert_eq!(r.0, [Some("x"), Some(">")]);
        let r = read(r#"<a x"y=">" href=z>"#, ["href", "x\"y"]).unwrap();
        // `x"y` is a name, its value is `">"`; `href=z` follows.
        assert_eq!(r.0, [Some("z"), Some(">")]);
        let r = read(r#"<a href="a"href="b">"#, ["href", "rel"]).unwrap();
        assert_eq!(r.0, [Some("a"), None]);
        let r = read("<a =x href=y>", ["href", "=x"]).unwrap();
        assert_eq!(r.0, [Some("y"), Some("")]);
    }

    #[test]
    fn slashes_between_attributes() {
        let r = read("<a/href=x/ rel=y>", ["href", "rel"]).unwrap();
        assert_eq!(r.0, [Some("x/"), Some("y")]);
        let r = read("<a / href = 'q' / >", ["href", "rel"]).unwrap();
        assert_eq!((r.0, r.1), (vec![Some("q"), None], false));
    }

    #[test]
    fn a_tag_cut_off_is_no_tag() {
        assert!(read("<a href=x", ["href", "rel"]).is_none());
        assert!(read("<a href='x>", ["href", "rel"]).is_none());
        assert!(read("<a href", ["href", "rel"]).is_none());
        assert!(read("<a /", ["href", "rel"]).is_none());
    }
}
