//! The CSS the streaming extractor runs: selector lists of compound selectors (a type, `#id`,
//! `.class`, `[attr]`, `[attr=value]`) joined by descendant or child combinators. Anything else
//! (pseudo-classes, sibling combinators, namespaces, escapes, a bare `*`, the `html`, `head` and
//! `body` elements the walk does not keep) is left to the DOM: [`parse`] says `None`.
//!
//! The selector was already accepted by scraper; this parser only has to be right about what it
//! accepts, and the differential test checks that against scraper.

/// One compound selector: every part must hold for an element to match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Compound {
    /// Lower-case element name; `None` for any element.
    pub(super) tag: Option<Box<[u8]>>,
    pub(super) id: Option<Box<[u8]>>,
    pub(super) classes: Vec<Box<[u8]>>,
    pub(super) attrs: Vec<AttrTest>,
}

/// `[name]` or `[name=value]`; `name` lower case, `value` compared case-sensitively.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct AttrTest {
    pub(super) name: Box<[u8]>,
    pub(super) value: Option<Box<[u8]>>,
}

/// How a compound relates to the one on its right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Combinator {
    Descendant,
    Child,
}

/// One complex selector, left to right: `parts[i].1` joins `parts[i - 1]` to `parts[i]` (the
/// first one's is unused). The last compound is the subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Complex {
    pub(super) parts: Vec<(Compound, Combinator)>,
}

/// Elements the walk never keeps on its stack: a selector that could name them needs the DOM.
const UNKEPT: [&[u8]; 3] = [b"html", b"head", b"body"];

/// Attributes whose values selectors compare ASCII case-insensitively in HTML documents (the
/// selectors crate's list); an `[attr=value]` on one of these is left to the DOM.
const CASELESS_VALUES: &[&str] = &[
    "accept",
    "accept-charset",
    "align",
    "alink",
    "axis",
    "bgcolor",
    "charset",
    "checked",
    "clear",
    "codetype",
    "color",
    "compact",
    "declare",
    "defer",
    "dir",
    "direction",
    "disabled",
    "enctype",
    "face",
    "frame",
    "hreflang",
    "http-equiv",
    "lang",
    "language",
    "link",
    "media",
    "method",
    "multiple",
    "nohref",
    "noresize",
    "noshade",
    "nowrap",
    "readonly",
    "rel",
    "rev",
    "rules",
    "scope",
    "scrolling",
    "selected",
    "shape",
    "target",
    "text",
    "type",
    "valign",
    "valuetype",
    "vlink",
];

/// Parses a selector list into the subset above, or `None` when any part of it is outside.
pub(super) fn parse(selector: &str) -> Option<Vec<Complex>> {
    let mut list = Vec::new();
    for alternative in selector.split(',') {
        list.push(complex(alternative)?);
    }
    Some(list)
}

fn complex(text: &str) -> Option<Complex> {
    let mut parts = Vec::new();
    let mut rest = text.trim_matches(is_css_space);
    let mut combinator = Combinator::Descendant;
    while !rest.is_empty() {
        let (compound, after) = compound(rest)?;
        parts.push((compound, combinator));
        let trimmed = after.trim_start_matches(is_css_space);
        if trimmed.is_empty() {
            break;
        }
        if let Some(after_child) = trimmed.strip_prefix('>') {
            combinator = Combinator::Child;
            rest = after_child.trim_start_matches(is_css_space);
        } else if trimmed.len() < after.len() {
            combinator = Combinator::Descendant;
            rest = trimmed;
        } else {
            return None;
        }
    }
    (!parts.is_empty()).then_some(Complex { parts })
}

/// One compound at the start of `text`, and what follows it.
fn compound(text: &str) -> Option<(Compound, &str)> {
    let mut c = Compound { tag: None, id: None, classes: Vec::new(), attrs: Vec::new() };
    let mut rest = text;
    if let Some(after) = rest.strip_prefix('*') {
        rest = after;
    } else if let Some((name, after)) = ident(rest) {
        let name = name.to_ascii_lowercase();
        if UNKEPT.contains(&name.as_bytes()) {
            return None;
        }
        c.tag = Some(name.into_bytes().into());
        rest = after;
    }
    loop {
        if let Some(after) = rest.strip_prefix('.') {
            let (class, after) = ident(after)?;
            c.classes.push(class.as_bytes().into());
            rest = after;
        } else if let Some(after) = rest.strip_prefix('#') {
            let (id, after) = name_chars(after)?;
            if c.id.as_deref().is_some_and(|known| known != id.as_bytes()) {
                // `#a#b` matches nothing; not worth a rule of its own.
                return None;
            }
            c.id = Some(id.as_bytes().into());
            rest = after;
        } else if let Some(after) = rest.strip_prefix('[') {
            let (test, after) = attribute(after)?;
            c.attrs.push(test);
            rest = after;
        } else {
            break;
        }
    }
    let empty = c.tag.is_none() && c.id.is_none() && c.classes.is_empty() && c.attrs.is_empty();
    // Nothing, or a bare `*`, which also matches the elements the walk does not keep.
    if empty {
        return None;
    }
    Some((c, rest))
}

/// After `[`: `name]`, `name=value]` with the value an identifier or a quoted string without
/// escapes; spaces allowed around the parts.
fn attribute(text: &str) -> Option<(AttrTest, &str)> {
    let rest = text.trim_start_matches(is_css_space);
    let (name, rest) = ident(rest)?;
    let name = name.to_ascii_lowercase();
    let rest = rest.trim_start_matches(is_css_space);
    if let Some(after) = rest.strip_prefix(']') {
        return Some((AttrTest { name: name.into_bytes().into(), value: None }, after));
    }
    let rest = rest.strip_prefix('=')?.trim_start_matches(is_css_space);
    let (value, rest) = match rest.chars().next()? {
        quote @ ('"' | '\'') => {
            let inner = &rest[1..];
            let close = inner.find(quote)?;
            let value = &inner[..close];
            if value.contains('\\') {
                return None;
            }
            (value, &inner[close + 1..])
        }
        _ => ident(rest)?,
    };
    let rest = rest.trim_start_matches(is_css_space).strip_prefix(']')?;
    if CASELESS_VALUES.contains(&name.as_str()) {
        return None;
    }
    Some((AttrTest { name: name.into_bytes().into(), value: Some(value.as_bytes().into()) }, rest))
}

/// A CSS identifier without escapes: letters, digits, `-`, `_` and non-ASCII, not starting with
/// a digit (nor a `-` and a digit).
fn ident(text: &str) -> Option<(&str, &str)> {
    let (name, rest) = name_chars(text)?;
    let mut chars = name.chars();
    let first = chars.next()?;
    let second = chars.next();
    let starts_badly = first.is_ascii_digit() || (first == '-' && second.is_some_and(|c| c.is_ascii_digit()));
    (!starts_badly).then_some((name, rest))
}

/// The longest run of name characters at the start of `text` (an `#id` may start with a digit).
fn name_chars(text: &str) -> Option<(&str, &str)> {
    let end = text
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || !c.is_ascii()))
        .map_or(text.len(), |(i, _)| i);
    if end == 0 || text[end..].starts_with('\\') {
        return None;
    }
    Some((&text[..end], &text[end..]))
}

/// Whether the class list `classes` (a `class` attribute's value) holds `want`.
pub(super) fn has_class(classes: Option<&str>, want: &[u8]) -> bool {
    classes.is_some_and(|list| {
        list.split(|c: char| c.is_ascii() && crate::scan::tag::is_space(c as u8))
            .any(|t| t.as_bytes() == want)
    })
}

/// Whether `[name]` (`want` none) or `[name=want]` holds for an attribute value `have`.
pub(super) fn attr_holds(want: &Option<Box<[u8]>>, have: Option<&str>) -> bool {
    match (want, have) {
        (_, None) => false,
        (None, Some(_)) => true,
        (Some(want), Some(have)) => have.as_bytes() == &**want,
    }
}

fn is_css_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0C')
}

/// One complex selector: compound indexes with the combinator joining each to the one before,
/// and the first of its states (one per compound left of the subject).
///
/// Matching runs left to right as an automaton over the open elements, so it costs the same
/// at any depth: state `first_state + j` is set on an element when compounds `0..=j` match a
/// chain ending at it; each open element keeps its own states and the union of its
/// ancestors'. (Right to left, trying every ancestor for each descendant combinator, took time
/// that grew with depth to the power of the combinators.)
#[derive(Debug, Clone)]
pub(super) struct Alternative {
    pub(super) parts: Vec<(usize, Combinator)>,
    pub(super) first_state: usize,
}

/// Most states a plan may have: each is one bit of an open element's state set.
pub(super) const MAX_STATES: usize = 128;

impl Alternative {
    /// For an element matching `bits` whose parent holds states `parent` and whose ancestors
    /// together hold `above`: whether the subject matches, and the states the element holds.
    pub(super) fn step(&self, bits: u64, parent: u128, above: u128) -> (bool, u128) {
        let mut states = 0u128;
        let mut subject = false;
        let last = self.parts.len().saturating_sub(1);
        for (j, &(compound, combinator)) in self.parts.iter().enumerate() {
            if bits & (1 << compound) == 0 {
                continue;
            }
            let holds = j == 0 || {
                let before = 1u128 << (self.first_state + j - 1);
                let held = if combinator == Combinator::Child { parent } else { above };
                held & before != 0
            };
            if holds && j == last {
                subject = true;
            } else if holds {
                states |= 1u128 << (self.first_state + j);
            }
        }
        (subject, states)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(selector: &str) -> Option<Vec<usize>> {
        parse(selector).map(|list| list.iter().map(|c| c.parts.len()).collect())
    }

    #[test]
    fn the_subset() {
        assert_eq!(names("div.product > h1.product-title"), Some(vec![2]));
        assert_eq!(names("span.price, span.sku"), Some(vec![1, 1]));
        assert_eq!(names("ul li a[href]"), Some(vec![3]));
        assert_eq!(names("*.x [data-sku='SKU-1'] #main"), Some(vec![3]));
        assert_eq!(names("  DIV  >  P  "), Some(vec![2]));
        let c = &parse("A.b#c[HREF][x=\"y z\"]").unwrap()[0].parts[0].0;
        assert_eq!(c.tag.as_deref(), Some(&b"a"[..]));
        assert_eq!(c.classes, vec![Box::from(&b"b"[..])]);
        assert_eq!(c.attrs[0].name.as_ref(), b"href");
        assert_eq!(c.attrs[1].value.as_deref(), Some(&b"y z"[..]));
    }

    #[test]
    fn everything_else_is_left_to_the_dom() {
        for selector in [
            "*",
            "div > *",
            "a:first-child",
            "a + b",
            "a ~ b",
            "svg|a",
            r"a\.b",
            "body p",
            "html",
            ".a\\:b",
            "[lang=en]",
            "[x^=y]",
            "[x=y i]",
            "::before",
            "a:not(.b)",
            "",
        ] {
            assert_eq!(parse(selector), None, "{selector}");
        }
    }
}
