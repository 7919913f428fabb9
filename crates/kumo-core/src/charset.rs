//! Character-encoding detection for fetched bodies.
//!
//! Order (WHATWG "encoding sniffing", with a statistical step where browsers would use their
//! locale default): byte-order mark → HTTP `charset` → `<meta>` [prescan] of the first
//! [`PRESCAN_LIMIT`] bytes → UTF-8 if the body is ASCII or valid UTF-8 → statistical detection
//! (chardetng, over a prefix of at most [`DETECTOR_LIMIT`] bytes).
//!
//! Performance: this runs on every page. The common cases (a BOM, a header charset, a `<meta>`
//! in the first KiB, or a plain-ASCII / valid-UTF-8 body) never reach chardetng, and the prescan
//! is a single allocation-free pass over at most 1 KiB (measured: ~80 ns with a header charset,
//! ~0.2 µs for a `<meta>` after 200 bytes of head, ~3 µs for an undeclared 13 KB UTF-8 page).
//!
//! Labels are looked up with [`Encoding::for_label_no_replacement`]: the `replacement` encoding
//! (labels such as `iso-2022-kr`) would turn the whole body into one U+FFFD, which protects
//! browsers from a class of XSS but leaves a crawler with nothing, so such labels count as unknown
//! and detection carries on.

use chardetng::EncodingDetector;
use encoding_rs::{Encoding, UTF_8, UTF_16BE, UTF_16LE, WINDOWS_1252, X_USER_DEFINED};

/// How many leading bytes of a body [`detect`] hands to [`prescan`], as the HTML standard
/// encourages. A `<meta>` further in is only honoured by a full HTML parser (which re-parses).
pub const PRESCAN_LIMIT: usize = 1024;

/// At most how many leading bytes of an undeclared, non-UTF-8 body chardetng looks at.
pub const DETECTOR_LIMIT: usize = 64 * 1024;

/// chardetng stops being fed once it has seen this many non-ASCII bytes: a few hundred letters
/// of text settle the guess.
const DETECTOR_ENOUGH_NON_ASCII: usize = 256;

/// The detector is fed in pieces this big, to stop soon after it has enough.
const DETECTOR_CHUNK: usize = 1024;

/// Where the encoding decision came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A UTF-8 or UTF-16 byte-order mark at the start of the body.
    Bom,
    /// The `charset` parameter of the `Content-Type` header.
    Header,
    /// A `<meta>` (or XML) declaration found by [`prescan`].
    Meta,
    /// The body's bytes: valid non-ASCII UTF-8, or chardetng's guess.
    Detector,
    /// Nothing to go on (a plain ASCII body, say): UTF-8.
    Default,
}

/// Detects the encoding of `body` served with the `Content-Type` value `content_type`.
pub fn detect(content_type: Option<&str>, body: &[u8]) -> (&'static Encoding, Source) {
    if let Some((enc, _)) = Encoding::for_bom(body) {
        return (enc, Source::Bom);
    }
    if let Some(enc) = content_type.and_then(charset_from_content_type) {
        return (enc, Source::Header);
    }
    if let Some(enc) = prescan(&body[..body.len().min(PRESCAN_LIMIT)]) {
        return (enc, Source::Meta);
    }
    sniff_bytes(body)
}

/// The last resort: look at the bytes themselves.
fn sniff_bytes(body: &[u8]) -> (&'static Encoding, Source) {
    // ASCII decodes identically in UTF-8 and every legacy encoding we would guess, so there is
    // nothing to detect.
    if body.is_ascii() {
        return (UTF_8, Source::Default);
    }
    // Checking UTF-8 validity is far cheaper than chardetng's statistics and is the answer
    // chardetng would give anyway (with `allow_utf8`). A body cut off by the size cap may end
    // in the middle of a character: still UTF-8, as long as the complete part shows UTF-8
    // evidence (a lone legacy byte at the very end of ASCII text would look the same).
    match std::str::from_utf8(body) {
        Ok(_) => return (UTF_8, Source::Detector),
        Err(e) if e.error_len().is_none() && !body[..e.valid_up_to()].is_ascii() => {
            return (UTF_8, Source::Detector);
        }
        Err(_) => {}
    }
    // chardetng runs every live candidate decoder over the text around non-ASCII bytes (about
    // 90 µs per KiB of accented Latin prose here), so it gets the body in chunks until it has
    // seen enough non-ASCII to be confident, or a byte cap: a large undeclared page costs a
    // fraction of a millisecond, not tens. Long ASCII stretches (markup, scripts) are cheap.
    let mut detector = EncodingDetector::new();
    let (mut fed, mut non_ascii) = (0, 0);
    for chunk in body[..body.len().min(DETECTOR_LIMIT)].chunks(DETECTOR_CHUNK) {
        fed += chunk.len();
        // `last` only at the real end, so a character cut at the end of a prefix does not count
        // against the right candidate.
        detector.feed(chunk, fed == body.len());
        non_ascii += chunk.iter().filter(|b| !b.is_ascii()).count();
        if non_ascii >= DETECTOR_ENOUGH_NON_ASCII {
            break;
        }
    }
    (detector.guess(None, true), Source::Detector)
}

/// The encoding named by the `charset=` parameter of a `Content-Type` value, if it names one
/// the Encoding Standard knows. The first `charset` parameter decides, as in the Fetch
/// standard's MIME type parser; quotes (double, and leniently single) are removed.
pub fn charset_from_content_type(ct: &str) -> Option<&'static Encoding> {
    const HTTP_WS: &[char] = &[' ', '\t', '\r', '\n'];
    // The first piece is the type/subtype; parameters follow, separated by ';'.
    for param in ct.split(';').skip(1) {
        let Some((name, value)) = param.split_once('=') else {
            continue;
        };
        if !name.trim_matches(HTTP_WS).eq_ignore_ascii_case("charset") {
            continue;
        }
        let value = value.trim_matches(HTTP_WS);
        let value = strip_quotes(value, '"').or_else(|| strip_quotes(value, '\'')).unwrap_or(value);
        return Encoding::for_label_no_replacement(value.as_bytes());
    }
    None
}

fn strip_quotes(s: &str, quote: char) -> Option<&str> {
    s.strip_prefix(quote)?.strip_suffix(quote)
}

/// The HTML standard's "prescan a byte stream to determine its encoding", run over `head` (the
/// caller chooses the window; [`detect`] passes the first [`PRESCAN_LIMIT`] bytes).
///
/// It looks for `<meta charset>` and `<meta http-equiv="content-type" content="…charset=…">`,
/// skipping comments and other tags (with their attributes, so a `<meta` inside an attribute
/// value is not one) and `<!…>`, `</…>`, `<?…>` constructs. Reaching the end of `head` in the
/// middle of a construct means "no answer", as in the standard. A declared UTF-16 becomes UTF-8
/// and x-user-defined becomes windows-1252 (the bytes were readable as ASCII, so neither can be
/// right). If no `<meta>` answers, an XML declaration at the very start may
/// (`<?xml version="1.0" encoding="…"?>`, the standard's "get an XML encoding").
pub fn prescan(head: &[u8]) -> Option<&'static Encoding> {
    // "Prescan for UTF-16 XML declarations": `<?x` in UTF-16 without a BOM.
    if head.starts_with(&[0x3C, 0x00, 0x3F, 0x00, 0x78, 0x00]) {
        return Some(UTF_16LE);
    }
    if head.starts_with(&[0x00, 0x3C, 0x00, 0x3F, 0x00, 0x78]) {
        return Some(UTF_16BE);
    }
    scan_markup(head).or_else(|| xml_declaration_encoding(head))
}

/// The prescan's main loop. `None` when it ran out of bytes without an answer.
fn scan_markup(b: &[u8]) -> Option<&'static Encoding> {
    let mut pos = 0;
    // Only a '<' can start anything of interest, so jump from one to the next.
    while let Some(found) = b.get(pos..).and_then(|rest| find_byte(b'<', rest)) {
        pos += found;
        let rest = &b[pos..];
        if rest.starts_with(b"<!--") {
            // The comment ends at the first "-->" after "<!": its hyphens may be those of
            // "<!--" itself, so "<!-->" is a whole (empty) comment.
            pos += 2 + find(&rest[2..], b"-->")? + 3;
        } else if rest.len() > 5 && rest[1..5].eq_ignore_ascii_case(b"meta") && is_space_or_slash(rest[5]) {
            pos += 6;
            if let Some(enc) = meta(b, &mut pos)? {
                return Some(enc);
            }
            pos += 1;
        } else if let Some(name_at) = tag_name_start(rest) {
            // Some other start or end tag: skip its name, then its attributes, so that markup
            // inside attribute values is not mistaken for a tag.
            pos += name_at;
            pos += b[pos..].iter().position(|&c| is_space(c) || c == b'>')?;
            while attribute(b, &mut pos)?.is_some() {}
            pos += 1;
        } else if matches!(rest.get(1), Some(b'!' | b'/' | b'?')) {
            pos += 1 + find_byte(b'>', &rest[1..])? + 1;
        } else {
            pos += 1;
        }
    }
    None
}

/// For `<` + optional `/` + ASCII letter, the offset of the letter.
fn tag_name_start(rest: &[u8]) -> Option<usize> {
    match rest.get(1)? {
        c if c.is_ascii_alphabetic() => Some(1),
        b'/' if rest.get(2)?.is_ascii_alphabetic() => Some(2),
        _ => None,
    }
}

/// What the `charset` of a `<meta>` is, so far.
#[derive(Clone, Copy)]
enum Charset {
    Unset,
    /// A `charset` attribute named no known encoding; a later `content` may not fill it in.
    Failure,
    Found(&'static Encoding),
}

/// The attributes of a `<meta>` whose name has just been read. Outer `None`: out of bytes.
/// Inner `None`: this element declares nothing usable. `pos` is left on the byte that ended the
/// attributes (normally the `>`).
fn meta(b: &[u8], pos: &mut usize) -> Option<Option<&'static Encoding>> {
    // The standard keeps a list of attribute names seen so that only the first of each counts;
    // only these three names matter, so three flags do.
    let (mut seen_http_equiv, mut seen_content, mut seen_charset) = (false, false, false);
    let mut got_pragma = false;
    let mut need_pragma: Option<bool> = None;
    let mut charset = Charset::Unset;
    while let Some(attr) = attribute(b, pos)? {
        if attr.name.eq_ignore_ascii_case(b"http-equiv") {
            if !std::mem::replace(&mut seen_http_equiv, true) {
                got_pragma |= attr.value.eq_ignore_ascii_case(b"content-type");
            }
        } else if attr.name.eq_ignore_ascii_case(b"content") {
            if !std::mem::replace(&mut seen_content, true)
                && matches!(charset, Charset::Unset)
                && let Some(enc) = charset_from_meta_content(attr.value)
            {
                charset = Charset::Found(enc);
                need_pragma = Some(true);
            }
        } else if attr.name.eq_ignore_ascii_case(b"charset") && !std::mem::replace(&mut seen_charset, true) {
            charset = match Encoding::for_label_no_replacement(attr.value) {
                Some(enc) => Charset::Found(enc),
                None => Charset::Failure,
            };
            need_pragma = Some(false);
        }
    }
    // A `content` charset only counts next to `http-equiv="content-type"`.
    let found = match (need_pragma, charset) {
        (None, _) => None,
        (Some(true), _) if !got_pragma => None,
        (Some(_), Charset::Found(enc)) => Some(declared(enc)),
        (Some(_), _) => None,
    };
    Some(found)
}

/// A declaration read from ASCII bytes cannot truthfully name UTF-16, and x-user-defined is
/// never what a page means.
fn declared(enc: &'static Encoding) -> &'static Encoding {
    if enc == UTF_16BE || enc == UTF_16LE {
        UTF_8
    } else if enc == X_USER_DEFINED {
        WINDOWS_1252
    } else {
        enc
    }
}

/// One attribute as the prescan sees it: both parts are slices of the input (the standard
/// lower-cases them; every comparison here is ASCII case-insensitive instead).
struct Attr<'a> {
    name: &'a [u8],
    value: &'a [u8],
}

/// The standard's "get an attribute". Outer `None`: out of bytes. Inner `None`: no more
/// attributes (`pos` is on the `>`).
fn attribute<'a>(b: &'a [u8], pos: &mut usize) -> Option<Option<Attr<'a>>> {
    const NO_VALUE: &[u8] = b"";
    while matches!(b.get(*pos)?, c if is_space_or_slash(*c)) {
        *pos += 1;
    }
    if b[*pos] == b'>' {
        return Some(None);
    }
    let name_start = *pos;
    // The name runs to '=', whitespace, '/' or '>'; a leading '=' is part of the name.
    loop {
        match *b.get(*pos)? {
            b'=' if *pos > name_start => break,
            c if is_space(c) => break,
            b'/' | b'>' => {
                let name = &b[name_start..*pos];
                return Some(Some(Attr { name, value: NO_VALUE }));
            }
            _ => *pos += 1,
        }
    }
    let name = &b[name_start..*pos];
    while is_space(*b.get(*pos)?) {
        *pos += 1;
    }
    if b[*pos] != b'=' {
        return Some(Some(Attr { name, value: NO_VALUE }));
    }
    *pos += 1;
    while is_space(*b.get(*pos)?) {
        *pos += 1;
    }
    let value = match b[*pos] {
        quote @ (b'"' | b'\'') => {
            let start = *pos + 1;
            let len = find_byte(quote, b.get(start..)?)?;
            *pos = start + len + 1;
            &b[start..start + len]
        }
        b'>' => NO_VALUE,
        _ => {
            let start = *pos;
            *pos += 1;
            while !matches!(*b.get(*pos)?, c if is_space(c) || c == b'>') {
                *pos += 1;
            }
            &b[start..*pos]
        }
    };
    Some(Some(Attr { name, value }))
}

/// The standard's "extract a character encoding from a meta element", given the `content`
/// attribute's value (`text/html; charset=…`). Unlike HTTP, single quotes are allowed and an
/// unterminated quote yields nothing.
fn charset_from_meta_content(s: &[u8]) -> Option<&'static Encoding> {
    let mut pos = 0;
    loop {
        pos += find_ignore_ascii_case(&s[pos..], b"charset")? + b"charset".len();
        while s.get(pos).is_some_and(|&c| is_space(c)) {
            pos += 1;
        }
        if s.get(pos) != Some(&b'=') {
            // Not a `charset=`: keep looking from here.
            continue;
        }
        pos += 1;
        while s.get(pos).is_some_and(|&c| is_space(c)) {
            pos += 1;
        }
        let rest = &s[pos..];
        return match *rest.first()? {
            quote @ (b'"' | b'\'') => {
                let len = find_byte(quote, &rest[1..])?;
                Encoding::for_label_no_replacement(&rest[1..1 + len])
            }
            _ => {
                let len = rest.iter().position(|&c| is_space(c) || c == b';').unwrap_or(rest.len());
                Encoding::for_label_no_replacement(&rest[..len])
            }
        };
    }
}

/// The standard's "get an XML encoding": `encoding="…"` in an XML declaration that starts the
/// stream. UTF-16 becomes UTF-8 for the same reason as in a `<meta>`.
fn xml_declaration_encoding(b: &[u8]) -> Option<&'static Encoding> {
    if !b.starts_with(b"<?xml") {
        return None;
    }
    let decl = &b[..find_byte(b'>', b)?];
    let mut pos = find_ignore_ascii_case(decl, b"encoding")? + b"encoding".len();
    while decl.get(pos).is_some_and(|&c| c <= 0x20) {
        pos += 1;
    }
    if decl.get(pos) != Some(&b'=') {
        return None;
    }
    pos += 1;
    while decl.get(pos).is_some_and(|&c| c <= 0x20) {
        pos += 1;
    }
    let quote = *decl.get(pos).filter(|&&q| q == b'"' || q == b'\'')?;
    let start = pos + 1;
    let label = &decl[start..start + find_byte(quote, &decl[start..])?];
    if label.iter().any(|&c| c <= 0x20) {
        return None;
    }
    Encoding::for_label_no_replacement(label).map(declared)
}

/// ASCII whitespace as the HTML standard counts it (no vertical tab).
fn is_space(c: u8) -> bool {
    matches!(c, b'\t' | b'\n' | b'\x0C' | b'\r' | b' ')
}

fn is_space_or_slash(c: u8) -> bool {
    is_space(c) || c == b'/'
}

fn find_byte(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&c| c == needle)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn find_ignore_ascii_case(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::{EUC_JP, ISO_8859_2, SHIFT_JIS, WINDOWS_1251};

    #[test]
    fn bom_wins_over_everything() {
        let body = b"\xEF\xBB\xBF<meta charset=\"iso-8859-2\">";
        assert_eq!(detect(Some("text/html; charset=windows-1251"), body), (UTF_8, Source::Bom));
        assert_eq!(detect(None, b"\xFF\xFEa\x00"), (UTF_16LE, Source::Bom));
        assert_eq!(detect(None, b"\xFE\xFF\x00a"), (UTF_16BE, Source::Bom));
    }

    #[test]
    fn header_charset() {
        assert_eq!(detect(Some("text/html; charset=ISO-8859-2"), b"<p>hi"), (ISO_8859_2, Source::Header));
    }

    #[test]
    fn header_wins_over_meta() {
        let body = b"<html><head><meta charset=\"euc-jp\"></head>";
        assert_eq!(detect(Some("text/html;charset=\"Shift_JIS\""), body), (SHIFT_JIS, Source::Header));
        // An unknown header label is ignored, so the meta decides.
        assert_eq!(detect(Some("text/html; charset=no-such-thing"), body), (EUC_JP, Source::Meta));
    }

    #[test]
    fn content_type_parameters() {
        let cases: &[(&str, Option<&'static Encoding>)] = &[
            ("text/html; charset=utf-8", Some(UTF_8)),
            ("text/html;charset=UTF-8;foo=bar", Some(UTF_8)),
            ("text/html; foo=bar; Charset = 'windows-1251' ", Some(WINDOWS_1251)),
            ("text/html; charset=\"latin1\"", Some(WINDOWS_1252)),
            ("text/html; xcharset=utf-8", None),
            ("text/html", None),
            ("charset=utf-8", None),
            ("text/html; charset=", None),
            ("text/html; charset=iso-2022-kr", None),
            // The first charset parameter decides, even when it names nothing.
            ("text/html; charset=bogus; charset=utf-8", None),
        ];
        for &(ct, want) in cases {
            assert_eq!(charset_from_content_type(ct), want, "{ct}");
        }
    }

    #[test]
    fn meta_prescan() {
        assert_eq!(
            detect(Some("text/html"), b"<!doctype html><meta charset=koi8-r>"),
            (encoding_rs::KOI8_R, Source::Meta)
        );
        let http_equiv = br#"<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">"#;
        assert_eq!(detect(None, http_equiv), (WINDOWS_1251, Source::Meta));
        assert_eq!(prescan(b"<meta charset=x-user-defined>"), Some(WINDOWS_1252));
        assert_eq!(prescan(b"<meta charset=utf-16le>"), Some(UTF_8));
        assert_eq!(prescan(b"<meta charset=iso-2022-kr>"), None);
    }

    #[test]
    fn meta_beyond_the_window_is_not_seen() {
        let mut body = b"<!doctype html><!-- ".to_vec();
        body.resize(PRESCAN_LIMIT, b'x');
        body.extend_from_slice(b" --><meta charset=\"iso-8859-2\"><p>plain ascii");
        assert_eq!(detect(None, &body), (UTF_8, Source::Default));
        assert_eq!(prescan(&body), Some(ISO_8859_2));
    }

    #[test]
    fn xml_declarations() {
        assert_eq!(prescan(br#"<?xml version="1.0" encoding="EUC-JP"?><a/>"#), Some(EUC_JP));
        assert_eq!(prescan(br#"<?xml version="1.0" encoding='utf-16'?>"#), Some(UTF_8));
        assert_eq!(prescan(br#"<?xml version="1.0" encoding="euc jp"?>"#), None);
        // A meta wins over the XML declaration.
        assert_eq!(
            prescan(br#"<?xml version="1.0" encoding="EUC-JP"?><meta charset=koi8-u>"#),
            Some(encoding_rs::KOI8_U)
        );
        assert_eq!(prescan(b"<\0?\0x\0m\0l\0"), Some(UTF_16LE));
        assert_eq!(prescan(b"\0<\0?\0x\0m\0l"), Some(UTF_16BE));
    }

    /// Russian prose, repeated enough for a statistical guess.
    const RUSSIAN: &str = "Москва — столица России, крупнейший по численности населения город страны \
        и её политический, экономический и культурный центр. В городе расположены органы \
        государственной власти, многочисленные музеи, театры и университеты. ";

    /// Japanese prose.
    const JAPANESE: &str = "東京は日本の首都であり、政治、経済、文化の中心地です。多くの企業の本社が\
        集まり、世界有数の大都市として知られています。歴史的な寺院や神社も数多くあります。";

    #[test]
    fn detector_guesses_windows_1251() {
        let text = format!("<html><body><p>{}</p></body></html>", RUSSIAN.repeat(3));
        let (bytes, _, unmappable) = WINDOWS_1251.encode(&text);
        assert!(!unmappable);
        assert_eq!(detect(Some("text/html"), &bytes), (WINDOWS_1251, Source::Detector));
    }

    #[test]
    fn detector_reads_a_prefix_of_long_bodies() {
        let text = format!("<html><body><p>{}</p></body></html>", RUSSIAN.repeat(400));
        let (bytes, _, _) = WINDOWS_1251.encode(&text);
        assert!(bytes.len() > DETECTOR_LIMIT);
        assert_eq!(detect(None, &bytes), (WINDOWS_1251, Source::Detector));
    }

    #[test]
    fn detector_guesses_windows_1252_for_french() {
        let text = "Le château se trouve près de la forêt, où l'été dure longtemps. Les élèves \
            étudient à l'école française depuis déjà trois années. ";
        let html = format!("<html><body><p>{}</p></body></html>", text.repeat(40));
        let (bytes, _, _) = WINDOWS_1252.encode(&html);
        assert_eq!(detect(None, &bytes), (WINDOWS_1252, Source::Detector));
    }

    #[test]
    fn detector_guesses_shift_jis() {
        let text = format!("<html><body><p>{}</p></body></html>", JAPANESE.repeat(3));
        let (bytes, _, unmappable) = SHIFT_JIS.encode(&text);
        assert!(!unmappable);
        assert_eq!(detect(None, &bytes), (SHIFT_JIS, Source::Detector));
    }

    #[test]
    fn valid_utf8_is_utf8_even_when_truncated() {
        let text = format!("<p>{RUSSIAN}</p>");
        assert_eq!(detect(None, text.as_bytes()), (UTF_8, Source::Detector));
        // Cut in the middle of the two-byte "ы" before the final ". ".
        let cut = &RUSSIAN.as_bytes()[..RUSSIAN.len() - 3];
        assert!(std::str::from_utf8(cut).is_err());
        assert_eq!(detect(None, cut), (UTF_8, Source::Detector));
    }

    #[test]
    fn default_is_utf8() {
        assert_eq!(detect(None, b""), (UTF_8, Source::Default));
        assert_eq!(detect(Some("text/html"), b"<html><body>plain</body></html>"), (UTF_8, Source::Default));
    }
}
