//! The User-Agent a request is sent with: kumo's own (default), one fixed string, a list
//! rotated in turn, or a randomly generated browser string per request (the gocrawler
//! course's random User-Agent).

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::DEFAULT_USER_AGENT;

/// How requests are identified.
#[derive(Debug)]
pub enum UserAgent {
    /// This string on every request (kumo's own by default).
    Fixed(String),
    /// The list in turn, one per request.
    Rotate {
        /// The strings, in order (none: kumo's own is sent).
        list: Vec<String>,
        /// Strings handed out so far: the next is `list[next % list.len()]`.
        next: AtomicUsize,
    },
    /// A plausible desktop browser string, new for each request.
    Random,
}

impl Default for UserAgent {
    fn default() -> Self {
        UserAgent::Fixed(DEFAULT_USER_AGENT.to_string())
    }
}

impl Clone for UserAgent {
    fn clone(&self) -> Self {
        match self {
            UserAgent::Fixed(s) => UserAgent::Fixed(s.clone()),
            UserAgent::Rotate { list, .. } => UserAgent::rotate(list.clone()),
            UserAgent::Random => UserAgent::Random,
        }
    }
}

impl UserAgent {
    /// Rotates through `list`; an empty list means kumo's default.
    pub fn rotate(list: Vec<String>) -> Self {
        if list.is_empty() {
            return UserAgent::default();
        }
        UserAgent::Rotate { list, next: AtomicUsize::new(0) }
    }

    /// The string for the next request.
    pub fn next(&self) -> Cow<'_, str> {
        match self {
            UserAgent::Fixed(s) => Cow::Borrowed(s),
            UserAgent::Rotate { list, next } => match list.len() {
                0 => Cow::Borrowed(DEFAULT_USER_AGENT),
                n => Cow::Borrowed(&list[next.fetch_add(1, Ordering::Relaxed) % n]),
            },
            UserAgent::Random => Cow::Owned(random_browser()),
        }
    }

    /// The name robots.txt groups are matched against: the fixed string itself, or `kumo`
    /// when the string changes per request.
    pub fn robots_name(&self) -> &str {
        match self {
            UserAgent::Fixed(s) => s,
            _ => "kumo",
        }
    }
}

const PLATFORMS: [&str; 4] = [
    "Windows NT 10.0; Win64; x64",
    "Macintosh; Intel Mac OS X 10_15_7",
    "X11; Linux x86_64",
    "X11; Ubuntu; Linux x86_64",
];

fn random_browser() -> String {
    let os = PLATFORMS[fastrand::usize(..PLATFORMS.len())];
    match fastrand::u8(..3) {
        0 => {
            let major = fastrand::u32(120..=140);
            format!(
                "Mozilla/5.0 ({os}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{major}.0.{}.{} Safari/537.36",
                fastrand::u32(6000..7000),
                fastrand::u32(0..200)
            )
        }
        1 => {
            let v = fastrand::u32(120..=140);
            format!("Mozilla/5.0 ({os}; rv:{v}.0) Gecko/20100101 Firefox/{v}.0")
        }
        _ => format!(
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/{}.{} Safari/605.1.15",
            fastrand::u32(16..=18),
            fastrand::u32(0..6)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_rotate_and_random() {
        assert!(UserAgent::default().next().starts_with("kumo/"));
        let r = UserAgent::rotate(vec!["a".into(), "b".into()]);
        let got: Vec<String> = (0..5).map(|_| r.next().into_owned()).collect();
        assert_eq!(got, ["a", "b", "a", "b", "a"]);
        let random: Vec<String> = (0..20).map(|_| UserAgent::Random.next().into_owned()).collect();
        assert!(random.iter().all(|s| s.starts_with("Mozilla/5.0 (")));
        assert!(random.iter().collect::<std::collections::HashSet<_>>().len() > 10, "they vary");
        assert_eq!(UserAgent::Random.robots_name(), "kumo");
    }

    #[test]
    fn an_empty_rotation_built_by_hand_sends_kumos_own() {
        let empty = UserAgent::Rotate { list: Vec::new(), next: AtomicUsize::new(0) };
        assert_eq!(empty.next(), DEFAULT_USER_AGENT, "not a division by zero");
    }
}
