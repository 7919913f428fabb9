//! A spider file's scope settings as they reach the engine: the spider-trap limits.

use kumo_frontier::{Scope, ScopeConfig};
use kumo_spider::{LoadOptions, SpiderFile};

const HEAD: &str = "[[site]]\nname = \"s\"\nseeds = [\"http://127.0.0.1:1/\"]\n";

fn scope(text: &str) -> ScopeConfig {
    let f = SpiderFile::parse(text, "t.toml", &LoadOptions::default()).expect("a valid file");
    f.sites[0].crawl.scope.clone()
}

#[test]
fn trap_limits_are_site_settings() {
    let d = scope(HEAD);
    assert_eq!((d.max_path_segments, d.max_segment_repeats), (0, 0), "left out: the defaults");
    let set = scope(&format!("{HEAD}max_path_segments = 3\nmax_segment_repeats = 1\n"));
    assert_eq!((set.max_path_segments, set.max_segment_repeats), (3, 1));
    let s = Scope::new(&ScopeConfig { any_domain: true, ..set }, &[]).unwrap();
    let req = |u: &str| kumo_core::Request::get(u.parse().unwrap());
    assert_eq!(s.check(&req("http://127.0.0.1:1/a/b/c/d")), Err(kumo_core::SkipReason::Trap));
    assert_eq!(s.check(&req("http://127.0.0.1:1/a/a")), Err(kumo_core::SkipReason::Trap));
    assert_eq!(s.check(&req("http://127.0.0.1:1/a/b")), Ok(()));
}
