//! Bad spider files: each mistake is an error naming the line and the field.

use kumo_spider::{LoadOptions, SpiderConfigError, SpiderFile};

fn err(text: &str) -> SpiderConfigError {
    SpiderFile::parse(text, "t.toml", &LoadOptions::default()).expect_err("should be refused")
}

const HEAD: &str = "[[site]]\nname = \"s\"\nseeds = [\"http://127.0.0.1:1/\"]\n";

#[test]
fn unknown_field() {
    let e = err(&format!("{HEAD}max_deph = 3\n"));
    assert_eq!((e.line, e.column), (4, 1), "{e}");
    assert!(e.to_string().contains("unknown field `max_deph`"), "{e}");
}

#[test]
fn unknown_field_in_a_model() {
    let e = err(&format!("{HEAD}[[site.model]]\nname = \"q\"\nfields = []\nroots = 1\n"));
    assert_eq!(e.line, 4, "{e}");
    assert!(e.to_string().contains("roots"), "{e}");
}

#[test]
fn bad_selector() {
    let e = err(&format!(
        "{HEAD}\n[[site.model]]\nname = \"q\"\nfields = [{{ name = \"t\", css = \"span[[\" }}]\n"
    ));
    assert_eq!(e.line, 5, "{e}");
    assert_eq!(e.field.as_deref(), Some("site \"s\" → model[0]"));
    assert!(e.to_string().contains("field `t`"), "{e}");
}

#[test]
fn bad_regex() {
    let e = err(&format!("{HEAD}targets = ['/ok/', '/page/(\\d+/']\n"));
    assert_eq!((e.line, e.column), (4, 20), "{e}");
    assert_eq!(e.field.as_deref(), Some("site \"s\" → targets[1]"));
    assert!(e.message.starts_with("bad regex"), "{e}");
}

#[test]
fn missing_seeds() {
    let e = err("\n[[site]]\nname = \"s\"\n");
    assert_eq!(e.line, 2, "{e}");
    assert!(e.to_string().contains("missing field `seeds`"), "{e}");
    let e = err("[[site]]\nname = \"s\"\nseeds = []\n");
    assert_eq!(e.line, 3, "{e}");
    assert_eq!(e.to_string(), "t.toml:3:9: site \"s\" → seeds: no start URL given");
}

#[test]
fn base_placeholder_needs_a_base() {
    let e = err("[[site]]\nname = \"s\"\nseeds = [\"{base}/\"]\n");
    assert!(e.to_string().contains("no base is set"), "{e}");
    let ok = SpiderFile::parse(
        "[[site]]\nname = \"s\"\nseeds = [\"{base}/x\"]\n",
        "t.toml",
        &LoadOptions { base: Some("http://127.0.0.1:9/".into()) },
    )
    .unwrap();
    assert_eq!(ok.sites[0].crawl.seeds[0].as_str(), "http://127.0.0.1:9/x");
}
