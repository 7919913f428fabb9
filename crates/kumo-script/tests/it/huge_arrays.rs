//! Built-ins that walk an array's `length` in C without polling the budget: over a sparse
//! array or an array-like of a huge length they would run for hours. Each is refused or cut
//! at its budget; and an answer holding such an array is refused before kumo reads it.

use std::time::{Duration, Instant};

use kumo_script::{Limits, Page, PageView, Script, ScriptError};

fn run(body: &str) -> (Result<(), ScriptError>, Duration) {
    let s = Script::load("rules.js", &format!("function extract() {{ {body} }}"), Limits::default())
        .unwrap_or_else(|e| panic!("{body}: {e}"));
    let page = Page::new(&PageView { url: "http://a/", ..Default::default() });
    let started = Instant::now();
    let got = s.extract(&page).map(|_| ());
    (got, started.elapsed())
}

#[test]
fn array_built_ins_over_huge_lengths_end_at_once() {
    for expr in [
        "Array(2 ** 32 - 1).join(',')",
        "String(Array(2 ** 32 - 1))",
        "`${Array(2 ** 32 - 1)}`",
        "Array(2 ** 32 - 1).toLocaleString()",
        "JSON.stringify(Array(2 ** 32 - 1))",
        "JSON.stringify({ toJSON() { return Array(2 ** 32 - 1); } }, null, 2)",
        "Array.prototype.copyWithin.call({ length: 2 ** 53 - 1 }, 0, 1)",
        "Array.prototype.reverse.call({ length: 2 ** 53 - 1 })",
        "Array.prototype.sort.call({ length: 2 ** 53 - 1 })",
        "Array.prototype.unshift.call({ length: 2 ** 53 - 2 }, 1)",
        "Array.prototype.shift.call({ length: 2 ** 53 - 1 })",
        "Array(2 ** 32 - 1).slice()",
        "Array.prototype.flat.call({ length: 2 ** 53 - 1 })",
        "[Array(2 ** 32 - 1)].flat()",
        "[1].flatMap(() => [Array(2 ** 32 - 1)]).flat()",
        "[].concat({ length: 2 ** 53 - 1, [Symbol.isConcatSpreadable]: true })",
        "Array.prototype.fill.call({ length: 2 ** 53 - 1 }, 0)",
        "Array.prototype.join.call({ get length() { return 2 ** 53 - 1; } })",
    ] {
        let (got, took) = run(&format!("return [{{ v: typeof ({expr}) }}];"));
        assert!(got.is_err(), "{expr}: {got:?}");
        assert!(took < Duration::from_secs(2), "{expr}: {took:?}");
    }
}

#[test]
fn an_answer_with_a_huge_sparse_array_is_refused() {
    for answer in ["Array(2 ** 32 - 1)", "[{ a: Array(2 ** 32 - 1) }]", "[{ a: Array(5e6) }]"] {
        let (got, took) = run(&format!("return {answer};"));
        assert!(matches!(got, Err(ScriptError::BadAnswer { .. })), "{answer}: {got:?}");
        assert!(took < Duration::from_secs(2), "{answer}: {took:?}");
    }
}

#[test]
fn the_guarded_methods_still_do_their_work() {
    let s = Script::load(
        "rules.js",
        r#"function extract() {
          const a = [3, 1, 2];
          return [{
            join: a.join("-"), str: String(a), sorted: a.slice().sort(), rev: [1, 2].reverse(),
            flat: [1, [2, [3, [4]]]].flat(), deep: [1, [2, [3, [4]]]].flat(Infinity),
            flatMap: [1, 2].flatMap((x) => [x, [x * 10]]), holes: [1, , 3].flat(),
            concat: [1].concat([2], 3, { length: 1, 0: "x" }), spliced: a.toSpliced(0, 1),
            like: Array.prototype.join.call({ length: 2, 0: "a", 1: "b" }, "+"),
            json: JSON.stringify({ a: [1, undefined, () => 1], d: new Map() }),
            replaced: JSON.stringify({ a: 1, b: 2 }, (k, v) => (k === "b" ? undefined : v)),
            listed: JSON.stringify({ a: 1, b: 2 }, ["b"]),
          }];
        }"#,
        Limits::default(),
    )
    .unwrap();
    let page = Page::new(&PageView { url: "http://a/", ..Default::default() });
    let got = serde_json::Value::Object(s.extract(&page).unwrap().unwrap().remove(0));
    assert_eq!(
        got,
        serde_json::json!({
            "join": "3-1-2", "str": "3,1,2", "sorted": [1, 2, 3], "rev": [2, 1],
            "flat": [1, 2, [3, [4]]], "deep": [1, 2, 3, 4], "flatMap": [1, [10], 2, [20]], "holes": [1, 3],
            "concat": [1, 2, 3, { "0": "x", "length": 1 }], "spliced": [1, 2], "like": "a+b",
            "json": "{\"a\":[1,null,null],\"d\":{}}", "replaced": "{\"a\":1}", "listed": "{\"b\":2}",
        })
    );
}
