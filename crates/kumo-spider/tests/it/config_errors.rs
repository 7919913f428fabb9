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
        &LoadOptions { base: Some("http://127.0.0.1:9/".into()), ..Default::default() },
    )
    .unwrap();
    assert_eq!(ok.sites[0].crawl.seeds[0].as_str(), "http://127.0.0.1:9/x");
}

const POSTGRES: &str = "[site.output.postgres]\nurl = \"postgres://kumo@127.0.0.1:1/kumo\"\ntable = \"t\"\n";

#[test]
fn bad_postgres_column_type() {
    let e = err(&format!(
        "{HEAD}{POSTGRES}columns = [\n  {{ name = \"a\", type = \"text\" }},\n  {{ name = \"n\", type = \"integer\" }},\n]\n"
    ));
    assert_eq!((e.line, e.column), (9, 24), "{e}");
    assert_eq!(e.field.as_deref(), Some("site \"s\" → output.postgres.columns[1].type"));
    assert_eq!(
        e.message,
        "unknown column type \"integer\": use one of text, bigint, double precision, boolean, jsonb, timestamptz"
    );
}

#[test]
fn postgres_columns_and_key_are_checked() {
    let e = err(&format!(
        "{HEAD}{POSTGRES}columns = [{{ name = \"a\", type = \"text\" }}]\nkey = [\"a\", \"b\"]\n"
    ));
    assert_eq!((e.line, e.column), (8, 13), "{e}");
    assert_eq!(e.field.as_deref(), Some("site \"s\" → output.postgres.key[1]"));
    assert_eq!(e.message, "`b` is not one of the columns");

    let e = err(&format!(
        "{HEAD}{POSTGRES}columns = [{{ name = \"a\", type = \"text\" }}, {{ name = \"a\", type = \"bigint\" }}]\n"
    ));
    assert_eq!(e.field.as_deref(), Some("site \"s\" → output.postgres.columns[1].name"), "{e}");
    assert_eq!(e.message, "column `a` is given twice");

    let e = err(&format!("{HEAD}{POSTGRES}columns = []\n"));
    assert_eq!((e.line, e.column), (7, 11), "{e}");
    assert!(e.message.starts_with("no columns"), "{e}");

    let e = err(&format!("{HEAD}{POSTGRES}columns = [{{ name = \"a\", typ = \"text\" }}]\n"));
    assert_eq!(e.line, 7, "{e}");
    assert!(e.message.contains("unknown field `typ`"), "{e}");
}

#[test]
fn postgres_output_builds_typed_or_jsonb_sinks() {
    use kumo_pipeline::{ColumnSpec, PgMode, PgType};

    let file = |text: &str| SpiderFile::parse(text, "t.toml", &LoadOptions::default()).unwrap();
    let typed = file(&format!(
        "{HEAD}{POSTGRES}key = [\"url\"]\ncolumns = [{{ name = \"url\", type = \"text\" }}, \
         {{ name = \"price\", type = \"Double Precision\" }}, {{ name = \"seen\", type = \"timestamptz\" }}]\n"
    ));
    let pg = typed.sites[0].output.postgres.as_ref().expect("a postgres output");
    assert_eq!(pg.url, "postgres://kumo@127.0.0.1:1/kumo");
    assert_eq!(pg.sink.table, "t");
    assert_eq!(
        pg.sink.mode,
        PgMode::Columns(vec![
            ColumnSpec::new("url", PgType::Text),
            ColumnSpec::new("price", PgType::Double),
            ColumnSpec::new("seen", PgType::TimestampTz),
        ])
    );
    assert_eq!(pg.sink.key.as_deref(), Some(&["url".to_string()][..]));

    let jsonb = file(&format!("{HEAD}{POSTGRES}key = [\"id\"]\n"));
    let pg = jsonb.sites[0].output.postgres.as_ref().expect("a postgres output");
    assert_eq!((pg.sink.mode.clone(), pg.sink.key.clone()), (PgMode::Jsonb, Some(vec!["id".to_string()])));
}

#[test]
fn schedules_are_read_and_their_mistakes_placed() {
    use kumo_spider::schedule::Cadence;

    let ok = |text: &str| SpiderFile::parse(text, "t.toml", &LoadOptions::default()).unwrap();
    let f = ok(&format!("{HEAD}[site.schedule]\nevery = \"6h\"\nstart = 2026-12-01T06:00:00Z\ntimes = 3\n"));
    let s = f.sites[0].schedule.as_ref().expect("a schedule");
    assert!(matches!(s.cadence, Cadence::Every(d) if d.as_secs() == 6 * 3600), "{s:?}");
    assert_eq!(s.times, Some(3));
    let start = s.start.expect("a start").duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    assert_eq!(start, 1_796_104_800, "2026-12-01T06:00:00Z");
    let f = ok(&format!("{HEAD}[site.schedule]\ncron = \"0 */6 * * *\"\nstart = \"2026-12-01T06:00:00Z\"\n"));
    assert_eq!(f.sites[0].schedule.as_ref().unwrap().cadence.describe(), "cron \"0 */6 * * *\" (UTC)");
    assert!(ok(HEAD).sites[0].schedule.is_none(), "no table: no schedule");

    let e = err(&format!("{HEAD}[site.schedule]\ncron = \"61 * * * *\"\n"));
    assert_eq!((e.line, e.field.as_deref()), (5, Some("site \"s\" → schedule.cron")), "{e}");
    assert!(e.message.contains("bad cron pattern"), "{e}");
    let e = err(&format!("{HEAD}[site.schedule]\nevery = \"1h\"\ncron = \"* * * * *\"\n"));
    assert!(e.message.contains("exactly one of `every`"), "{e}");
    let e = err(&format!("{HEAD}[site.schedule]\nevery = \"soon\"\n"));
    assert!(e.message.contains("not a duration"), "{e}");
    let e = err(&format!("{HEAD}[site.schedule]\nevery = \"1h\"\nstart = \"2026-12-01 06:00\"\n"));
    assert!(e.message.contains("not a date and time"), "{e}");
    let e = err(&format!("{HEAD}[site.schedule]\nevery = \"1h\"\nstart = 2026-12-01T06:00:00\n"));
    assert!(e.message.contains("has no offset") && e.message.contains("set `tz`"), "{e}");
    assert_eq!(e.field.as_deref(), Some("site \"s\" → schedule.start"), "{e}");

    // Time zones: an offset anywhere, a local time on the clock of `tz`, cron on that clock.
    let start_of = |f: &SpiderFile| {
        let s = f.sites[0].schedule.as_ref().unwrap();
        s.start.unwrap().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
    };
    let f = ok(&format!("{HEAD}[site.schedule]\nevery = \"1h\"\nstart = 2026-12-01T08:00:00+02:00\n"));
    assert_eq!(start_of(&f), 1_796_104_800, "08:00+02:00 is 06:00Z");
    let f = ok(&format!(
        "{HEAD}[site.schedule]\ncron = \"0 7 * * *\"\ntz = \"Europe/Paris\"\nstart = \"2026-12-01T07:00:00\"\n"
    ));
    assert_eq!(start_of(&f), 1_796_104_800, "07:00 in Paris in December is 06:00Z");
    assert_eq!(f.sites[0].schedule.as_ref().unwrap().cadence.describe(), "cron \"0 7 * * *\" (Europe/Paris)");
    let e = err(&format!("{HEAD}[site.schedule]\ncron = \"0 7 * * *\"\ntz = \"Paris\"\n"));
    assert_eq!((e.line, e.field.as_deref()), (6, Some("site \"s\" → schedule.tz")), "{e}");
    assert!(e.message.contains("not a time zone"), "{e}");
    let e = err(&format!(
        "{HEAD}[site.schedule]\nevery = \"1h\"\ntz = \"Europe/Paris\"\nstart = 2026-03-29T02:30:00\n"
    ));
    assert!(e.message.contains("never happens in Europe/Paris"), "{e}");
    let e = err(&format!("{HEAD}[site.schedule]\nevery = \"1h\"\ntimes = 0\n"));
    assert!(e.message.contains("at least 1"), "{e}");
    let e = err(&format!("{HEAD}[site.schedule]\nevry = \"1h\"\n"));
    assert!(e.to_string().contains("unknown field `evry`"), "{e}");
}

#[test]
fn revisit_rules_are_read_and_their_mistakes_placed() {
    let ok = |text: &str| SpiderFile::parse(text, "t.toml", &LoadOptions::default()).unwrap();
    let f = ok(&format!(
        "{HEAD}[site.revisit]\nevery = \"7d\"\nrules = [{{ match = '/news/', every = \"1h\" }}]\nadaptive = {{}}\n"
    ));
    let r = &f.sites[0].crawl.revisit;
    let url = |s: &str| url::Url::parse(s).unwrap();
    assert_eq!(r.base(&url("http://a/news/1")).as_secs(), 3600);
    assert_eq!(r.base(&url("http://a/about")).as_secs(), 7 * 86_400);
    assert_eq!(r.adaptive, Some(kumo_engine::Adaptive::default()));
    assert!(ok(HEAD).sites[0].crawl.revisit.every_run(), "no table: every run");

    let e = err(&format!("{HEAD}[site.revisit]\nrules = [{{ match = '(', every = \"1h\" }}]\n"));
    assert_eq!((e.line, e.field.as_deref()), (5, Some("site \"s\" → revisit.rules[0].match")), "{e}");
    let e = err(&format!("{HEAD}[site.revisit]\nevery = \"weekly\"\n"));
    assert!(e.message.contains("not a duration"), "{e}");
    let e = err(&format!("{HEAD}[site.revisit]\nadaptive = {{ rate = 0.9 }}\n"));
    assert!(e.message.contains("at most 0.4"), "{e}");
    let e = err(&format!("{HEAD}[site.revisit]\nemit = \"some\"\n"));
    assert!(e.message.contains("\"changed\" or \"all\""), "{e}");
    assert!(ok(&format!("{HEAD}[site.revisit]\nemit = \"all\"\n")).sites[0].crawl.emit_unchanged);
}

/// An output file named for another format than its key writes is refused, naming both; a
/// name without a known extension is taken as given.
#[test]
fn an_output_file_named_for_another_format() {
    let e = err(&format!("{HEAD}output = {{ jsonl = \"items.csv\" }}\n"));
    assert_eq!(e.field.as_deref(), Some("site \"s\" → output.jsonl"), "{e}");
    assert!(e.message.contains("use csv = \"items.csv\", or name the file .jsonl"), "{e}");
    let e = err(&format!("{HEAD}output = {{ csv = \"items.json\" }}\n"));
    assert!(e.message.contains("use json = \"items.json\""), "{e}");
    let ok = format!("{HEAD}output = {{ jsonl = \"items.jsonl\", csv = \"items\", json = \"all.json\" }}\n");
    let f = SpiderFile::parse(&ok, "t.toml", &LoadOptions::default()).unwrap();
    let files: Vec<_> = f.sites[0].output.files().map(|p| p.display().to_string()).collect();
    assert_eq!(files, ["items.jsonl", "items", "all.json"]);
}
