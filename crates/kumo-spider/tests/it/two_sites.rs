//! Two sites in one file run at once, each on its own engine, and each ends within its own
//! limits.

use kumo_pipeline::{CollectSink, Sink};
use kumo_spider::{LoadOptions, SpiderFile, run_site};
use kumo_testsite::{ServerBuilder, SiteConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_sites_complete_within_their_limits() {
    let a = ServerBuilder::new().synthetic(SiteConfig::default()).start().await.unwrap();
    let b = ServerBuilder::new().synthetic(SiteConfig::default()).start().await.unwrap();
    let text = format!(
        r#"
[[site]]
name = "a"
seeds = ["{}"]
max_pages = 7
concurrency = 2
[[site.model]]
name = "page"
fields = [{{ name = "title", css = "title" }}]

[[site]]
name = "b"
seeds = ["{}"]
max_depth = 1
concurrency = 4
per_host = 2
[[site.model]]
name = "page"
fields = [{{ name = "title", css = "title" }}]
"#,
        a.url("/"),
        b.url("/")
    );
    let file = SpiderFile::parse(&text, "two.toml", &LoadOptions::default()).unwrap();
    let sa = CollectSink::new();
    let sb = CollectSink::new();
    let (ia, ib) = (sa.items(), sb.items());
    let (site_a, site_b) = (&file.sites[0], &file.sites[1]);
    assert_eq!(site_a.name, "a");
    let (ra, rb) = tokio::join!(
        run_site(site_a, vec![Box::new(sa) as Box<dyn Sink>]),
        run_site(site_b, vec![Box::new(sb) as Box<dyn Sink>]),
    );
    let (sa, sb) = (ra.unwrap(), rb.unwrap());
    assert!(sa.pages <= 7 && sa.pages > 0, "{sa}");
    assert!(sb.pages > 1, "{sb}");
    // Site b: the seed and its links only (depth 1).
    assert!(b.max_in_flight() <= 2, "per-host limit of b: {}", b.max_in_flight());
    assert!(!ia.lock().unwrap().is_empty() && !ib.lock().unwrap().is_empty());
    assert!(ib.lock().unwrap().iter().all(|i| i.get("_model").is_some()));
}
