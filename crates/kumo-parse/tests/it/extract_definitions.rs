//! Model definitions as spider files write them (TOML), and the exact errors a bad one gets:
//! at deserialization (unknown keys, zero or two selectors) and at compilation (selectors,
//! patterns and combinations that cannot run).

use kumo_parse::extract::{Field, Model, ModelError, Place, Problem, Selector, Take};

fn parse(toml_text: &str) -> Result<Model, String> {
    toml::from_str::<Model>(toml_text).map_err(|e| e.message().to_owned())
}

fn with_fields(fields: &str) -> String {
    format!("name = \"m\"\nfields = [\n{fields}\n]\n")
}

fn compile_error(fields: &str) -> String {
    let model = parse(&with_fields(fields)).unwrap_or_else(|e| panic!("{e}"));
    model.compile().expect_err("the model must not compile").to_string()
}

#[test]
fn fields_read_naturally() {
    let model = parse(&with_fields(
        r#"
        { name = "author", css = "small.author" },
        { name = "tags", css = "a.tag", list = true },
        { name = "link", css = "a", attr = "href", dig = true },
        { name = "price", xpath = "//span[@class='price']/text()", required = true },
        { name = "id", json = "$.data.id" },
        { name = "born", css = ".author-born-date", regex = "(\\w+ \\d+, \\d{4})" },
        { name = "raw", regex = "id=(\\d+)" },
        { name = "body", css = "div.body", take = "inner_html" },
        { name = "box", xpath = "//div", take = "outer_html" },
        { name = "alt", css = "img", take = { attr = "alt" } },
        { name = "author2", css = "div.author", fields = [ { name = "name", css = "h3" } ] },
        "#,
    ))
    .unwrap();
    let expected = Model::new(
        "m",
        vec![
            Field::css("author", "small.author"),
            Field::css("tags", "a.tag").list(),
            Field::css("link", "a").attr("href").dig(),
            Field::xpath("price", "//span[@class='price']/text()").required(),
            Field::json("id", "$.data.id"),
            Field::css("born", ".author-born-date").filter(r"(\w+ \d+, \d{4})"),
            Field::regex("raw", r"id=(\d+)"),
            Field::css("body", "div.body").take(Take::InnerHtml),
            Field::xpath("box", "//div").take(Take::OuterHtml),
            Field::css("alt", "img").attr("alt"),
            Field::css("author2", "div.author").nested(Model::new("author2", vec![Field::css("name", "h3")])),
        ],
    );
    assert_eq!(model, expected);
    assert!(model.compile().is_ok());
}

#[test]
fn roots_and_model_lists_read_naturally() {
    #[derive(serde::Deserialize)]
    struct Spider {
        models: Vec<Model>,
    }
    let spider: Spider = toml::from_str(
        r#"
        [[models]]
        name = "quote"
        root = { css = "div.quote" }
        fields = [{ name = "text", css = "span.text" }]

        [[models]]
        name = "api"
        root = { json = "$.results[*]" }
        fields = [{ name = "id", json = "$.id" }]
        "#,
    )
    .unwrap();
    assert_eq!(spider.models[0].root, Some(Selector::css("div.quote")));
    assert_eq!(spider.models[1].root, Some(Selector::json("$.results[*]")));
}

#[test]
fn unknown_keys_are_rejected_with_a_suggestion() {
    assert_eq!(
        parse(&with_fields(r#"{ name = "link", css = "a", atr = "href" }"#)).unwrap_err(),
        "field `link`: unknown key `atr` (did you mean `attr`?); expected one of `name`, `css`, `xpath`, \
         `regex`, `json`, `attr`, `take`, `list`, `required`, `dig`, `fields`"
    );
    assert_eq!(
        parse(&with_fields(r#"{ name = "link", css = "a", selector = "a" }"#)).unwrap_err(),
        "field `link`: unknown key `selector`; expected one of `name`, `css`, `xpath`, `regex`, `json`, \
         `attr`, `take`, `list`, `required`, `dig`, `fields`"
    );
    assert_eq!(
        parse("name = \"m\"\nroots = { css = \"a\" }\nfields = []").unwrap_err(),
        "model `m`: unknown key `roots` (did you mean `root`?); expected one of `name`, `root`, `fields`"
    );
    assert_eq!(
        parse("name = \"m\"\nroot = { cs = \"a\" }\nfields = []").unwrap_err(),
        "selector: unknown key `cs` (did you mean `css`?); expected one of `css`, `xpath`, `regex`, `json`"
    );
    let bad_take = parse(&with_fields(r#"{ name = "x", css = "a", take = "html" }"#)).unwrap_err();
    assert!(bad_take.contains("unknown variant `html`, expected one of"), "{bad_take}");
}

#[test]
fn a_field_needs_exactly_one_selector() {
    assert_eq!(
        parse(&with_fields(r#"{ name = "price", css = ".price", xpath = "//span" }"#)).unwrap_err(),
        "field `price`: has two selectors, `css` and `xpath`; give exactly one of `css`, `xpath`, `regex`, `json`"
    );
    assert_eq!(
        parse(&with_fields(r#"{ name = "price", json = "$.p", css = ".price", regex = "\\d+" }"#))
            .unwrap_err(),
        "field `price`: has two selectors, `css` and `json`; give exactly one of `css`, `xpath`, `regex`, `json`"
    );
    assert_eq!(
        parse(&with_fields(r#"{ name = "price", list = true }"#)).unwrap_err(),
        "field `price`: no selector; give exactly one of `css`, `xpath`, `regex`, `json`"
    );
    assert_eq!(
        parse("name = \"m\"\nroot = { css = \"a\", json = \"$\" }\nfields = []").unwrap_err(),
        "selector: has two selectors, `css` and `json`; give exactly one of `css`, `xpath`, `regex`, `json`"
    );
    assert_eq!(
        parse(&with_fields(r#"{ name = "a", css = "a", attr = "href", take = "text" }"#)).unwrap_err(),
        "field `a`: has both `take` and `attr`; `attr = \"name\"` alone takes an attribute"
    );
    assert_eq!(parse(&with_fields(r#"{ css = "a" }"#)).unwrap_err(), "missing field `name`");
}

#[test]
fn bad_selectors_and_patterns_fail_compilation_precisely() {
    assert_eq!(
        compile_error(r#"{ name = "author", css = "small.author[" }"#),
        r#"model `m`, field `author`: invalid CSS selector "small.author[": unexpected end of the selector"#
    );
    assert_eq!(
        compile_error(r#"{ name = "author", css = "div >" }"#),
        r#"model `m`, field `author`: invalid CSS selector "div >": dangling combinator"#
    );
    assert_eq!(
        compile_error(r#"{ name = "price", xpath = "//span[@class='price'" }"#),
        r#"model `m`, field `price`: invalid XPath "//span[@class='price'": unexpected trailing input: "[@class='price'""#
    );
    assert_eq!(
        compile_error(r#"{ name = "born", css = "span", regex = "(\\d{4}" }"#),
        r#"model `m`, field `born`: invalid regex "(\\d{4}": unclosed group"#
    );
    assert_eq!(
        compile_error(r#"{ name = "raw", regex = "\\w{1000}{1000}" }"#),
        format!(
            r#"model `m`, field `raw`: invalid regex "\\w{{1000}}{{1000}}": Compiled regex exceeds size limit of {} bytes."#,
            kumo_parse::extract::REGEX_SIZE_LIMIT
        )
    );
    assert_eq!(
        compile_error(r#"{ name = "id", json = "$.data[" }"#),
        r#"model `m`, field `id`: invalid JSONPath "$.data[": at position 6, parser error"#
    );
    assert_eq!(
        compile_error(r#"{ name = "id", json = "data.id" }"#),
        r#"model `m`, field `id`: invalid JSONPath "data.id": at position 0, parser error"#
    );
}

#[test]
fn errors_name_nested_fields_and_roots() {
    assert_eq!(
        compile_error(
            r#"{ name = "author", css = "div", fields = [ { name = "url", css = "a[", attr = "href" } ] }"#
        ),
        r#"model `m`, field `author.url`: invalid CSS selector "a[": unexpected end of the selector"#
    );
    let model =
        parse("name = \"quotes\"\nroot = { xpath = \"//div[\" }\nfields = [{ name = \"a\", xpath = \"a\" }]")
            .unwrap();
    let err = model.compile().unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"model `quotes`, root: invalid XPath "//div[": unexpected trailing input: "[""#
    );
    assert_eq!(err.place, Place::Root);
    assert!(matches!(err.problem, Problem::XPath { .. }));
}

#[test]
fn combinations_that_cannot_work_fail_compilation() {
    let cases = [
        (
            r#"{ name = "a", css = "a" }, { name = "a", css = "b" }"#,
            "model `m`, field `a`: the name is used by an earlier field of the same model",
        ),
        (
            r#"{ name = "id", json = "$.id", attr = "href" }"#,
            "model `m`, field `id`: `attr` and `take` apply to css and xpath matches only",
        ),
        (
            r#"{ name = "a", regex = "x", fields = [ { name = "b", regex = "y" } ] }"#,
            "model `m`, field `a`: nested `fields` need a css, xpath or json selector to look inside",
        ),
        (
            r#"{ name = "a", css = "a", dig = true, fields = [ { name = "b", css = "b" } ] }"#,
            "model `m`, field `a`: nested `fields` do not combine with `attr`, `take`, a `regex` filter or `dig`",
        ),
        (
            r#"{ name = "a", css = "div", fields = [ { name = "b", xpath = ".//b" } ] }"#,
            "model `m`, field `a.b`: inside a css match, fields must use css or regex selectors",
        ),
        (r#"{ name = "a", css = "div", fields = [] }"#, "model `m`, field `a`: no fields"),
        (
            r#"{ name = "a", css = "a", take = "outer_html", dig = true }"#,
            "model `m`, field `a`: `dig` needs URLs: take the text or an attribute, not HTML",
        ),
    ];
    for (fields, expected) in cases {
        assert_eq!(compile_error(fields), expected);
    }

    let css_root_xpath_field =
        Model::new("q", vec![Field::xpath("t", ".//span")]).with_root(Selector::css("div"));
    assert_eq!(
        css_root_xpath_field.compile().unwrap_err().to_string(),
        "model `q`, field `t`: inside a css match, fields must use css or regex selectors"
    );
    let regex_root = Model::new("q", vec![Field::regex("t", "x")]).with_root(Selector::regex("y"));
    assert_eq!(
        regex_root.compile().unwrap_err().to_string(),
        "model `q`, root: a root must be a css, xpath or json selector"
    );
    let nested_root = Field::css("a", "div")
        .nested(Model::new("a", vec![Field::css("b", "b")]).with_root(Selector::css("p")));
    assert_eq!(
        Model::new("q", vec![nested_root]).compile().unwrap_err().to_string(),
        "model `q`, field `a`: a nested model has no root: its items are the field's matches"
    );
    let empty: Result<_, ModelError> = Model::new("q", vec![]).compile();
    assert_eq!(empty.unwrap_err().to_string(), "model `q`: no fields");
    assert_eq!(
        Model::new(" ", vec![Field::css("a", "a")]).compile().unwrap_err().to_string(),
        "model ` `: the model has no name"
    );
}
