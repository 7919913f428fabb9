//! Decoding HTML character references (`&amp;`, `&#233;`, `&#x2F;`) in attribute values and in
//! `<title>` text, which the scan leaves raw.
//!
//! The common names (`amp lt gt quot apos nbsp`, punctuation) are looked up in a short table
//! first; any other name ending in `;` in the standard's full table (about 2,200, from
//! markup5ever, which scraper builds anyway), so `javascript&colon;…` is read as the
//! `javascript:` URL a browser sees. All numeric references are decoded; unknown names stay
//! as written. The standard's legacy rules are kept
//! where they matter for URLs: a few names are recognised without the `;`, except inside an
//! attribute value when the next character is `=` or alphanumeric, so `?a=1&copy=2` stays a
//! query string.

/// Where the text came from; attribute values are stricter about references without a `;`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Context {
    Attribute,
    Text,
}

/// `s` with its character references decoded: `s` itself when it has none (the common case,
/// no copy), otherwise the decoded text, written into `buf` (cleared first) so that one buffer
/// serves every value of a page.
pub(crate) fn decode<'a>(s: &'a str, context: Context, buf: &'a mut String) -> &'a str {
    if !s.contains('&') {
        return s;
    }
    buf.clear();
    decode_into(s, context, buf);
    buf
}

/// Appends `s` to `out` with its character references decoded.
pub(crate) fn decode_into(s: &str, context: Context, out: &mut String) {
    let mut literal_from = 0;
    let mut search_from = 0;
    while let Some(found) = s[search_from..].find('&') {
        let amp = search_from + found;
        search_from = amp + 1;
        if let Some((ch, second, len)) = reference(&s[amp + 1..], context) {
            out.push_str(&s[literal_from..amp]);
            out.push(ch);
            out.extend(second);
            search_from = amp + 1 + len;
            literal_from = search_from;
        }
    }
    out.push_str(&s[literal_from..]);
}

/// The character (two, for a few names) a reference starting right after a `&` stands for,
/// and how many bytes of `rest` it used; `None` when `rest` does not start a reference this
/// decoder knows.
fn reference(rest: &str, context: Context) -> Option<(char, Option<char>, usize)> {
    if let Some(numeric) = rest.strip_prefix('#') {
        return numeric_reference(numeric).map(|(ch, len)| (ch, None, len + 1));
    }
    let short = NAMED.iter().find(|(name, _, _)| rest.starts_with(name));
    if let Some(&(name, ch, _)) = short
        && rest.as_bytes().get(name.len()) == Some(&b';')
    {
        return Some((ch, None, name.len() + 1));
    }
    // The longest name wins: `&ltimes;` is ⋉, not `<` and `imes;`.
    if let Some(found) = full_table(rest) {
        return Some(found);
    }
    let &(name, ch, legacy) = short?;
    let after = rest[name.len()..].bytes().next();
    // Without a `;` only the legacy names count, and not where a URL would be broken by it.
    let blocked =
        context == Context::Attribute && after.is_some_and(|c| c == b'=' || c.is_ascii_alphanumeric());
    (legacy && !blocked).then_some((ch, None, name.len()))
}

/// The longest name in the standard is 31 letters (`CounterClockwiseContourIntegral`).
const LONGEST_NAME: usize = 32;

/// A name ending in `;` from the standard's full table.
fn full_table(rest: &str) -> Option<(char, Option<char>, usize)> {
    let name_len = rest.bytes().take(LONGEST_NAME + 1).take_while(u8::is_ascii_alphanumeric).count();
    if name_len == 0 || name_len > LONGEST_NAME || rest.as_bytes().get(name_len) != Some(&b';') {
        return None;
    }
    let &(first, second) = markup5ever::data::NAMED_ENTITIES.get(&rest[..=name_len])?;
    let first = char::from_u32(first).filter(|_| first != 0)?;
    Some((first, char::from_u32(second).filter(|_| second != 0), name_len + 1))
}

/// `&#…` after the `#`: decimal, or hex after `x`/`X`; the `;` is optional, as in browsers.
fn numeric_reference(s: &str) -> Option<(char, usize)> {
    let (digits_at, radix) = match s.as_bytes().first() {
        Some(b'x' | b'X') => (1, 16),
        _ => (0, 10),
    };
    let digits = s[digits_at..]
        .bytes()
        .take_while(|c| c.is_ascii_digit() || (radix == 16 && c.is_ascii_hexdigit()))
        .count();
    if digits == 0 {
        return None;
    }
    // Saturate instead of overflowing: anything past U+10FFFF becomes U+FFFD below anyway.
    let value = s[digits_at..digits_at + digits].bytes().fold(0u32, |acc, c| {
        let digit = char::from(c).to_digit(radix).unwrap_or(0);
        acc.saturating_mul(radix).saturating_add(digit)
    });
    let mut len = digits_at + digits;
    if s.as_bytes().get(len) == Some(&b';') {
        len += 1;
    }
    Some((code_point(value), len))
}

/// The standard's "numeric character reference end state": NUL, surrogates and out-of-range
/// values become U+FFFD; C1 controls are read as the windows-1252 characters authors meant.
fn code_point(value: u32) -> char {
    if let Some(index) = value.checked_sub(0x80).filter(|&i| i < 0x20) {
        let mapped = C1_AS_WINDOWS_1252[index as usize];
        if mapped != 0 {
            return char::from_u32(mapped.into()).unwrap_or(char::REPLACEMENT_CHARACTER);
        }
    }
    match value {
        0 => char::REPLACEMENT_CHARACTER,
        v => char::from_u32(v).unwrap_or(char::REPLACEMENT_CHARACTER),
    }
}

/// windows-1252's characters for 0x80–0x9F; 0 where the standard leaves the control as is.
const C1_AS_WINDOWS_1252: [u16; 32] = [
    0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, // 80–87
    0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0, // 88–8F
    0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, // 90–97
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178, // 98–9F
];

/// `(name, character, recognised without a ';')`. No name is a prefix of a later one that
/// should win, so the first match is the longest.
const NAMED: &[(&str, char, bool)] = &[
    ("amp", '&', true),
    ("AMP", '&', true),
    ("lt", '<', true),
    ("LT", '<', true),
    ("gt", '>', true),
    ("GT", '>', true),
    ("quot", '"', true),
    ("QUOT", '"', true),
    ("apos", '\'', false),
    ("nbsp", '\u{A0}', true),
    ("copy", '©', true),
    ("COPY", '©', true),
    ("reg", '®', true),
    ("REG", '®', true),
    ("trade", '™', false),
    ("hellip", '…', false),
    ("mdash", '—', false),
    ("ndash", '–', false),
    ("lsquo", '‘', false),
    ("rsquo", '’', false),
    ("ldquo", '“', false),
    ("rdquo", '”', false),
    ("laquo", '«', true),
    ("raquo", '»', true),
    ("middot", '·', true),
    ("bull", '•', false),
    ("euro", '€', false),
];

/// A reference this decoder cannot decode the way a full HTML parser would: a name it does not
/// know, which the standard's 2,200-name table might.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unknown;

/// Appends `s` to `out` with its character references decoded exactly as the HTML tokenizer
/// decodes them, or says [`Unknown`] where that would need a name this decoder does not know.
/// What cannot be a reference in the full table stays literal without asking (`?a=1&b=2`).
pub(crate) fn decode_exact(s: &str, context: Context, out: &mut String) -> Result<(), Unknown> {
    let mut literal_from = 0;
    let mut search_from = 0;
    while let Some(found) = s[search_from..].find('&') {
        let amp = search_from + found;
        search_from = amp + 1;
        let rest = &s[amp + 1..];
        let decoded = if rest.starts_with('#') {
            reference(rest, context).map(|(ch, _, len)| (ch, len))
        } else {
            exact_named(rest, context)?
        };
        if let Some((ch, len)) = decoded {
            out.push_str(&s[literal_from..amp]);
            out.push(ch);
            search_from = amp + 1 + len;
            literal_from = search_from;
        }
    }
    out.push_str(&s[literal_from..]);
    Ok(())
}

/// A named reference right after a `&`, decided as the tokenizer does with the whole table: the
/// longest name that prefixes `rest` wins; a name written without `;` counts only if it is one
/// of the legacy names, and in an attribute not before `=` or an alphanumeric.
fn exact_named(rest: &str, context: Context) -> Result<Option<(char, usize)>, Unknown> {
    let run = rest.bytes().take_while(u8::is_ascii_alphanumeric).count();
    if run == 0 {
        return Ok(None);
    }
    let known = |name: &str| NAMED.iter().find(|(n, _, _)| *n == name).map(|&(_, ch, _)| ch);
    if rest.as_bytes().get(run) == Some(&b';') {
        // `&name;`: a name of the table this decoder may not know.
        return known(&rest[..run]).map(|ch| Some((ch, run + 1))).ok_or(Unknown);
    }
    // Without `;` only legacy names can match: the longest one that prefixes the run.
    let Some(legacy) = (1..=run).rev().map(|len| &rest[..len]).find(|name| LEGACY.contains(name)) else {
        return Ok(None);
    };
    if context == Context::Attribute {
        let after = rest.as_bytes().get(legacy.len());
        if after.is_some_and(|&c| c == b'=' || c.is_ascii_alphanumeric()) {
            return Ok(None);
        }
    }
    known(legacy).map(|ch| Some((ch, legacy.len()))).ok_or(Unknown)
}

/// The names the standard recognises without a `;`.
const LEGACY: &[&str] = &[
    "AElig", "AMP", "Aacute", "Acirc", "Agrave", "Aring", "Atilde", "Auml", "COPY", "Ccedil", "ETH",
    "Eacute", "Ecirc", "Egrave", "Euml", "GT", "Iacute", "Icirc", "Igrave", "Iuml", "LT", "Ntilde", "Oacute",
    "Ocirc", "Ograve", "Oslash", "Otilde", "Ouml", "QUOT", "REG", "THORN", "Uacute", "Ucirc", "Ugrave",
    "Uuml", "Yacute", "aacute", "acirc", "acute", "aelig", "agrave", "amp", "aring", "atilde", "auml",
    "brvbar", "ccedil", "cedil", "cent", "copy", "curren", "deg", "divide", "eacute", "ecirc", "egrave",
    "eth", "euml", "frac12", "frac14", "frac34", "gt", "iacute", "icirc", "iexcl", "igrave", "iquest",
    "iuml", "laquo", "lt", "macr", "micro", "middot", "nbsp", "not", "ntilde", "oacute", "ocirc", "ograve",
    "ordf", "ordm", "oslash", "otilde", "ouml", "para", "plusmn", "pound", "quot", "raquo", "reg", "sect",
    "shy", "sup1", "sup2", "sup3", "szlig", "thorn", "times", "uacute", "ucirc", "ugrave", "uml", "uuml",
    "yacute", "yen", "yuml",
];

/// The standard's "strip and collapse ASCII whitespace" (what `document.title` does), appended
/// to a new string.
pub(crate) fn collapse_whitespace(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_ascii_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(s: &str) -> String {
        let mut buf = String::new();
        decode(s, Context::Attribute, &mut buf).to_owned()
    }

    fn text(s: &str) -> String {
        let mut buf = String::new();
        decode(s, Context::Text, &mut buf).to_owned()
    }

    #[test]
    fn named_basics() {
        assert_eq!(
            text("a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos;&nbsp;f"),
            "a & b <c> \"d\" 'e'\u{A0}f"
        );
        assert_eq!(text("&copy; 2024 &mdash; &hellip;"), "© 2024 — …");
    }

    #[test]
    fn named_from_the_full_table() {
        assert_eq!(attr("javascript&colon;alert(1)"), "javascript:alert(1)");
        assert_eq!(text("&ltimes; &lt;"), "\u{22C9} <");
        assert_eq!(text("&NotEqualTilde;"), "\u{2242}\u{338}");
        assert_eq!(
            text("&Colon; &colon &bogus; &CounterClockwiseContourIntegral;"),
            "\u{2237} &colon &bogus; \u{2233}"
        );
        assert_eq!(text(&format!("&{};", "a".repeat(40))), format!("&{};", "a".repeat(40)));
    }

    #[test]
    fn numeric() {
        assert_eq!(text("&#65;&#x42;&#X43;&#0068;"), "ABCD");
        assert_eq!(text("&#233 &#xe9"), "é é");
        assert_eq!(text("&#150;&#x80;&#x81;"), "–€\u{81}");
        assert_eq!(text("&#0;&#xD800;&#x110000;&#99999999999999;"), "\u{FFFD}".repeat(4));
        assert_eq!(text("&#; &#x; &#xZ"), "&#; &#x; &#xZ");
    }

    #[test]
    fn unknown_and_bare_ampersands_stay() {
        assert_eq!(text("R&D & more &bogus; &"), "R&D & more &bogus; &");
        assert_eq!(text("&apos"), "&apos");
    }

    #[test]
    fn attribute_legacy_rule() {
        assert_eq!(attr("?a=1&amp;b=2"), "?a=1&b=2");
        assert_eq!(attr("?a=1&copy=2&ampx=3"), "?a=1&copy=2&ampx=3");
        assert_eq!(attr("?a=1&amp b"), "?a=1& b");
        assert_eq!(text("&copy=2 &ampx"), "©=2 &x");
    }

    #[test]
    fn borrowed_without_references() {
        let mut buf = String::new();
        let s = "/plain/path?x=1";
        assert!(std::ptr::eq(decode(s, Context::Attribute, &mut buf), s));
    }

    fn exact(s: &str, context: Context) -> Result<String, Unknown> {
        let mut out = String::new();
        decode_exact(s, context, &mut out).map(|()| out)
    }

    #[test]
    fn exact_decoding_or_unknown() {
        assert_eq!(LEGACY.len(), 106);
        let t = Context::Text;
        let a = Context::Attribute;
        assert_eq!(exact("a &amp; b &#233;&#x41 R&D & x", t).unwrap(), "a & b éA R&D & x");
        assert_eq!(exact("?a=1&b=2&copy=3&ampx", a).unwrap(), "?a=1&b=2&copy=3&ampx");
        assert_eq!(exact("&copy=3 &ampx &amp b", t).unwrap(), "©=3 &x & b");
        assert_eq!(exact("&amp b", a).unwrap(), "& b");
        // Names the table has but this decoder does not know.
        assert_eq!(exact("&eacute;", t), Err(Unknown));
        assert_eq!(exact("&notin;", t), Err(Unknown));
        assert_eq!(exact("&notit", t), Err(Unknown));
        assert_eq!(exact("&yen", a), Err(Unknown));
        assert_eq!(exact("&yen=1&yenx", a).unwrap(), "&yen=1&yenx");
        // No legacy name prefixes `bogus`, and without `;` nothing else can match.
        assert_eq!(exact("&bogus &b", t).unwrap(), "&bogus &b");
    }

    #[test]
    fn collapse() {
        assert_eq!(collapse_whitespace("  a \n\t b\x0C c  "), "a b c");
        assert_eq!(collapse_whitespace("a\u{A0}b"), "a\u{A0}b");
        assert_eq!(collapse_whitespace(" \n "), "");
    }
}
