//! The robots.txt parser and matcher (RFC 9309), kept small and linear-time.
//!
//! Lines are read one by one; a line that is not a known `key: value` is skipped alone, never
//! the file. Patterns are globs (`*` any run of octets, a final `$` the end of the path),
//! compiled to literal segments and matched greedily: each segment is looked up once, left to
//! right, so a rule costs time linear in the path and the pattern, whatever its wildcards.

use memchr::memmem;

/// The rules of one robots.txt for one product token, with its crawl delay and sitemaps.
#[derive(Debug, Clone, Default)]
pub struct Robot {
    rules: Vec<Rule>,
    /// `Crawl-delay` in seconds, for our group (or one given before any group).
    pub delay: Option<f32>,
    /// Every `Sitemap:` URL, whatever group it is in (they concern all crawlers).
    pub sitemaps: Vec<String>,
}

#[derive(Debug, Clone)]
struct Rule {
    allow: bool,
    pattern: Pattern,
}

/// A path pattern, normalised, its runs of `*` collapsed and a final `$` taken off: kept as
/// one string (split at its `*` as it is matched), so a rule costs its length in memory.
#[derive(Debug, Clone)]
struct Pattern {
    body: Box<[u8]>,
    /// Ended with `$` (and not with `*$`): the part after the last `*` must end the path.
    anchored: bool,
    /// The pattern's length as written (normalised): the longer the match, the more it counts.
    len: usize,
}

/// One line that means something.
enum Line<'a> {
    Agent(&'a [u8]),
    Rule { allow: bool, pattern: &'a [u8] },
    Delay(f32),
    Sitemap(&'a [u8]),
}

impl Robot {
    /// The rules of `txt` for `agent` (a product token, compared without case): those of the
    /// groups naming it, else those of the `*` groups, else none.
    pub fn new(agent: &str, txt: &[u8]) -> Robot {
        let txt = txt.strip_prefix(b"\xef\xbb\xbf").unwrap_or(txt);
        let lines: Vec<Line> = txt.split(|&b| matches!(b, b'\n' | b'\r' | 0)).filter_map(line).collect();
        let sitemaps = lines
            .iter()
            .filter_map(|l| match l {
                Line::Sitemap(s) => std::str::from_utf8(s).ok().map(str::to_string),
                _ => None,
            })
            .collect();
        let names_us = |a: &[u8]| a.eq_ignore_ascii_case(agent.as_bytes());
        let ours = lines.iter().any(|l| matches!(l, Line::Agent(a) if names_us(a)));
        let wanted = |a: &[u8]| if ours { names_us(a) } else { a == b"*" };
        let any_group = lines.iter().any(|l| matches!(l, Line::Agent(_)));
        let mut robot = Robot { sitemaps, ..Robot::default() };
        // Without any User-agent line the rules are everyone's; otherwise those before the
        // first group belong to none.
        let mut capturing = !any_group;
        let mut in_agents = false;
        let mut seen_agent = false;
        let mut early_delay = None;
        for l in &lines {
            match *l {
                Line::Agent(a) => {
                    // Consecutive User-agent lines name one group.
                    capturing = (in_agents && capturing) || wanted(a);
                    in_agents = true;
                    seen_agent = true;
                }
                Line::Rule { allow, pattern } => {
                    in_agents = false;
                    if capturing && !pattern.is_empty() {
                        robot.rules.push(Rule { allow, pattern: Pattern::new(pattern) });
                    }
                }
                Line::Delay(d) => {
                    in_agents = false;
                    if capturing {
                        robot.delay = robot.delay.or(Some(d));
                    } else if !seen_agent {
                        // Given before any group: every crawler's, unless its group says.
                        early_delay = early_delay.or(Some(d));
                    }
                }
                Line::Sitemap(_) => {}
            }
        }
        robot.delay = robot.delay.or(early_delay);
        robot
    }

    /// Whether `path` (the path and query of a URL, as the `url` crate writes them) may be
    /// fetched: the longest matching rule decides, `Allow` on a tie; no match allows.
    pub fn allowed(&self, path: &str) -> bool {
        let path = normalize(path.as_bytes());
        if path == b"/robots.txt" {
            return true;
        }
        let mut best: Option<(usize, bool)> = None;
        for r in &self.rules {
            if best.is_some_and(|(len, allow)| (len, allow) >= (r.pattern.len, r.allow)) {
                continue;
            }
            if r.pattern.matches(&path) {
                best = Some((r.pattern.len, r.allow));
            }
        }
        best.is_none_or(|(_, allow)| allow)
    }
}

/// One line, its comment cut: `key: value` (or `key value`) for the keys RFC 9309 and common
/// practice know, with their usual misspellings; anything else is `None`.
fn line(raw: &[u8]) -> Option<Line<'_>> {
    let raw = raw.split(|&b| b == b'#').next().unwrap_or_default().trim_ascii();
    // `Key: value`, else `Key value`.
    let split = |at: Option<usize>| at.map(|i| (raw[..i].trim_ascii(), raw[i + 1..].trim_ascii()));
    let by_colon = split(raw.iter().position(|&b| b == b':'));
    let by_space = split(raw.iter().position(u8::is_ascii_whitespace));
    [by_colon, by_space].into_iter().flatten().find_map(|(key, value)| keyed(key, value))
}

fn keyed<'a>(key: &[u8], value: &'a [u8]) -> Option<Line<'a>> {
    let key: Vec<u8> =
        key.iter().filter(|b| !matches!(b, b'-' | b' ' | b'_')).map(u8::to_ascii_lowercase).collect();
    Some(match key.as_slice() {
        b"useragent" => Line::Agent(value),
        b"allow" => Line::Rule { allow: true, pattern: value },
        b"disallow" | b"dissallow" | b"dissalow" | b"disalow" | b"diasllow" | b"disallaw" => {
            Line::Rule { allow: false, pattern: value }
        }
        b"sitemap" => Line::Sitemap(value),
        b"crawldelay" => {
            let d: f32 = std::str::from_utf8(value).ok()?.parse().ok()?;
            (d >= 0.0).then_some(Line::Delay(d))?
        }
        _ => return None,
    })
}

/// Percent-encodes what RFC 3986 wants encoded (octets outside printable ASCII, and the few
/// printable ones never left bare), upper-cases escapes, and decodes escaped unreserved
/// characters, so that a pattern and a path written differently compare equal. `*` and `$`
/// are left as they are (operators in a pattern, literal in a path; `%2A` stays escaped).
fn normalize(s: &[u8]) -> Vec<u8> {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        let hex = |j: usize| s.get(j).and_then(|c| (*c as char).to_digit(16));
        if b == b'%'
            && let (Some(h), Some(l)) = (hex(i + 1), hex(i + 2))
        {
            let c = (h * 16 + l) as u8;
            if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~') {
                out.push(c);
            } else {
                out.extend_from_slice(&[b'%', HEX[(c >> 4) as usize], HEX[(c & 15) as usize]]);
            }
            i += 3;
            continue;
        }
        if b <= b' '
            || b >= 0x7f
            || matches!(b, b'"' | b'<' | b'>' | b'`' | b'{' | b'}' | b'|' | b'\\' | b'^')
        {
            out.extend_from_slice(&[b'%', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
        } else {
            out.push(b);
        }
        i += 1;
    }
    out
}

impl Pattern {
    fn new(raw: &[u8]) -> Pattern {
        let norm = normalize(raw);
        let len = norm.len();
        // Only a final `$` anchors; one elsewhere is a literal character.
        let (body, dollar) = match norm.strip_suffix(b"$") {
            Some(b) => (b, true),
            None => (norm.as_slice(), false),
        };
        let anchored = dollar && !body.ends_with(b"*");
        let mut collapsed = Vec::with_capacity(body.len());
        for &b in body {
            if !(b == b'*' && collapsed.last() == Some(&b'*')) {
                collapsed.push(b);
            }
        }
        Pattern { body: collapsed.into_boxed_slice(), anchored, len }
    }

    /// Greedy glob matching: the part before the first `*` at the start, each part after it
    /// at its leftmost place after the one before; when anchored, the last part at the end.
    /// Leftmost places leave the most room for what follows, so greed finds a match whenever
    /// there is one, and each part is looked for once.
    fn matches(&self, path: &[u8]) -> bool {
        let body = &self.body[..];
        let Some(first_star) = memchr::memchr(b'*', body) else {
            return path.strip_prefix(body).is_some_and(|tail| !self.anchored || tail.is_empty());
        };
        let Some(mut tail) = path.strip_prefix(&body[..first_star]) else { return false };
        let mut middle = &body[first_star + 1..];
        if self.anchored {
            // Not ending with `*`, so there is a last part after the last `*`.
            let last_star = memchr::memrchr(b'*', body).unwrap_or(first_star);
            let Some(t) = tail.strip_suffix(&body[last_star + 1..]) else { return false };
            tail = t;
            middle = body.get(first_star + 1..last_star).unwrap_or_default();
        }
        for part in middle.split(|&b| b == b'*').filter(|p| !p.is_empty()) {
            match memmem::find(tail, part) {
                Some(at) => tail = &tail[at + part.len()..],
                None => return false,
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, path: &str) -> bool {
        Pattern::new(pattern.as_bytes()).matches(&normalize(path.as_bytes()))
    }

    #[test]
    fn globs_match_as_rfc_9309_says() {
        for (pattern, path, want) in [
            ("/fish", "/fish.html", true),
            ("/fish", "/Fish", false),
            ("/fish*", "/fishheads/x", true),
            ("/*.php", "/index.php", true),
            ("/*.php", "/folder/filename.php?parameters", true),
            ("/*.php$", "/filename.php", true),
            ("/*.php$", "/filename.php?parameters", false),
            ("/*.php$", "/filename.php5", false),
            ("/fish*.php", "/fishheads/catfish.php?p", true),
            ("/fish*.php", "/Fish.PHP", false),
            ("/a$", "/a", true),
            ("/a$", "/ab", false),
            ("/a*$", "/abc", true),
            ("/a$b", "/a$b/c", true),
            ("*/x", "/y/x", true),
            ("/*a*b*c$", "/xaxbxc", true),
            ("/*a*b*c$", "/xaxbxcx", false),
            ("/*ab*ab$", "/abab", true),
            ("/*ab*ab$", "/aba", false),
            ("/a**b", "/axb", true),
        ] {
            assert_eq!(matches(pattern, path), want, "{pattern} against {path}");
        }
    }

    /// Glob matching by dynamic programming over (pattern, path) positions: slow and plainly
    /// right, to check the greedy matcher against.
    fn slow_match(pattern: &[u8], path: &[u8]) -> bool {
        let (pat, anchored) = match pattern.strip_suffix(b"$") {
            Some(p) => (p, true),
            None => (pattern, false),
        };
        // can[j]: the pattern so far can end at path position j.
        let mut can = vec![false; path.len() + 1];
        can[0] = true;
        for &c in pat {
            let mut next = vec![false; path.len() + 1];
            for j in 0..=path.len() {
                if c == b'*' {
                    next[j] = can[..=j].iter().any(|&x| x);
                } else if j > 0 && can[j - 1] && path[j - 1] == c {
                    next[j] = true;
                }
            }
            can = next;
        }
        if anchored { can[path.len()] } else { can.iter().any(|&x| x) }
    }

    proptest::proptest! {
        #[test]
        fn greed_agrees_with_the_slow_matcher(
            pattern in "/[ab*]{0,8}[$]?",
            path in "/[ab]{0,10}",
        ) {
            let want = slow_match(pattern.as_bytes(), path.as_bytes());
            proptest::prop_assert_eq!(matches(&pattern, &path), want, "{} against {}", pattern, path);
        }
    }

    #[test]
    fn escapes_compare_equal_however_written() {
        assert!(matches("/a%3cb", "/a%3Cb"));
        assert!(matches("/%7Euser", "/~user/x"));
        assert!(matches("/é", "/%C3%A9"));
        assert!(matches("/a b", "/a%20b"));
    }

    #[test]
    fn lines_and_groups() {
        let txt = b"\xef\xbb\xbfCrawl-delay: 5\nuser-agent: a\nUSER-AGENT: kumo\ndisallow /x # c\n\n\
            User-agent: *\nDisallow: /\nSitemap: http://h/s.xml\nUser-agent: kumo\nAllow: /x/y\n";
        let r = Robot::new("kumo", txt);
        assert!(!r.allowed("/x/z"));
        assert!(r.allowed("/x/y/z"), "the groups naming us are merged");
        assert!(r.allowed("/other"), "the * group is not ours");
        assert_eq!(r.delay, Some(5.0), "given before any group");
        assert_eq!(r.sitemaps, ["http://h/s.xml"]);
        let r = Robot::new("a", txt);
        assert!(!r.allowed("/x/z"), "two User-agent lines name one group");
        let r = Robot::new("other", txt);
        assert!(!r.allowed("/anything"));
        assert!(r.allowed("/robots.txt"), "robots.txt itself is always allowed");
        let r = Robot::new("kumo", b"Disallow: /p\n");
        assert!(!r.allowed("/p"), "without any group the rules are everyone's");
    }

    #[test]
    fn the_longest_match_decides_and_allow_wins_a_tie() {
        let r = Robot::new(
            "kumo",
            b"User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /a/b/\nAllow: /c\nDisallow: /c\n",
        );
        assert!(!r.allowed("/a/x"));
        assert!(r.allowed("/a/bx"));
        assert!(!r.allowed("/a/b/x"));
        assert!(r.allowed("/c"));
        let r = Robot::new("kumo", b"User-agent: *\nDisallow:\nAllow:\n");
        assert!(r.allowed("/x"), "empty rules mean nothing");
    }
}
