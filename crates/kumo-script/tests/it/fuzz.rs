//! Hundreds of generated scripts, made of the snippets most likely to upset an engine (async,
//! generators, proxies, symbols, getters, deep recursion, huge strings, backtracking
//! regexes, prototype changes, odd throws, cyclic answers, imports): each loads and answers
//! or fails with a `ScriptError`, and nothing aborts, in a call or when the thread that ran
//! them exits and frees their sandboxes.

use std::time::{Duration, Instant};

use kumo_script::{Limits, Page, PageView, Script, ScriptError};

/// Statements that may stand at the top level or in a hook.
const ANYWHERE: &[&str] = &[
    "async function a1() { await null; return 1; } a1();",
    "(async () => { throw 1; })();",
    "function* g1() { let i = 0; while (i < 100) yield i++; } [...g1()];",
    "const px = new Proxy({}, { get() { return 1; } });",
    "Symbol('x'); Symbol.for('k'); ({ [Symbol.iterator]: null });",
    "const gx = { get x() { return this.x; } }; gx.x;",
    "function rr(n) { return n ? rr(n - 1) + 1 : 0; } rr(1e6);",
    "'x'.repeat(1 << 25);",
    "/^(a+)+$/.test('a'.repeat(28) + 'b');",
    "Object.prototype.polluted = 1;",
    "Array.prototype.push = null;",
    "throw 42;",
    "throw null;",
    "throw { toString() { throw 1; } };",
    "throw Symbol('s');",
    "const cy = {}; cy.self = cy;",
    "import('x').catch(() => 0);",
    "new Promise(() => {});",
    "Promise.reject(new Error('x'));",
    "Promise.resolve().then(() => { throw 2; });",
    "eval('1');",
    "Function('return 1')();",
    "const bg = []; for (let i = 0; i < 1e5; i++) bg.push({ i });",
    "new Map([[1, 2]]).forEach(() => {}); new WeakMap().set({}, 1); new WeakSet().add({});",
    "Array.prototype.map.call(null, (x) => x);",
    "JSON.parse('{\"a\":'.repeat(10000));",
    "JSON.stringify(Array.from({ length: 2000 }).reduce((a) => [a], []));",
    "Reflect.ownKeys(globalThis).forEach((k) => globalThis[k]);",
    "Object.getOwnPropertyNames(Object.getPrototypeOf(function* () {}));",
    "typeof queueMicrotask === 'function' && queueMicrotask(() => {});",
    "class Cx { #p = 1; static s = 2; get p() { return this.#p; } } new Cx().p;",
    "lb: { break lb; }",
    "Object.freeze(globalThis); Object.defineProperty(globalThis, 'z', { value: 1 });",
    "Object.setPrototypeOf(Object.prototype, {});",
    "const bi = 2n ** 64n; Object(bi);",
    "new Error('e', { cause: new Error('c') }).stack;",
    "Error.captureStackTrace && Error.captureStackTrace({});",
    "Error.prepareStackTrace = () => 1;",
    "String.fromCharCode(...Array.from({ length: 1e5 }, () => 65));",
    "Array(2 ** 32 - 1).join(',');",
    "[].concat.apply([], Array.from({ length: 1e4 }, () => [1]));",
    "'abc'.replace(/b/g, () => { throw 3; });",
    "Iterator.from({ next() { return { done: false, value: 1 }; } }).take(10).toArray();",
    "Object.getPrototypeOf(async function* () {}).constructor('yield 1');",
    "for (;;) {}",
];

/// Statements that read the page (only in a hook).
const IN_HOOK: &[&str] = &[
    "page.css('a'); page.css('a', 'href'); page.xpath('//a/@href');",
    "page.regex('(x');",
    "page.json('$.a');",
    "page.css('div[');",
    "page.body.length; page.headers; page.url.split('/');",
    "Object.getPrototypeOf(page).css.call({}, 'a');",
    "page.xpath('((//a))');",
];

/// What `extract` answers.
const ANSWERS: &[&str] = &[
    "[]",
    "[{ a: 1 }]",
    "cyc()",
    "undefined",
    "42",
    "[1]",
    "new Map()",
    "{ toJSON() { throw 1; } }",
    "Promise.resolve([])",
    "[{ big: 'x'.repeat(1e6) }]",
    "[{ d: Array.from({ length: 100 }).reduce((a) => ({ a }), {}) }]",
    "[{ s: Symbol('x'), f() {}, u: undefined, n: NaN }]",
    "new Proxy([], {})",
    "[{ g: (function* () { yield 1; })() }]",
    "[Object.create(null)]",
    "{ get boom() { throw 5; } }",
];

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

/// Snippet `s`, sometimes inside a try/catch (or a function so that its `const`s do not
/// clash with the next snippet's).
fn statement(rng: &mut Rng, s: &str) -> String {
    match rng.below(3) {
        0 => format!("try {{ {s} }} catch (e) {{ String(e); }}"),
        1 => format!("(function () {{ {s} }})();"),
        _ => format!("{{ {s} }}"),
    }
}

fn generate(rng: &mut Rng) -> String {
    let mut text = String::from("function cyc() { const c = [{}]; c[0].c = c; return c; }\n");
    for _ in 0..rng.below(3) {
        let s = rng.pick(ANYWHERE);
        text += &statement(rng, s);
        text.push('\n');
    }
    text += "function extract(page) {\n";
    for _ in 0..1 + rng.below(3) {
        let s = if rng.below(3) == 0 { rng.pick(IN_HOOK) } else { rng.pick(ANYWHERE) };
        text += &statement(rng, s);
        text.push('\n');
    }
    text += &format!("return {};\n}}\n", rng.pick(ANSWERS));
    text
}

#[test]
fn generated_scripts_load_and_answer_or_fail_cleanly() {
    let limits = Limits { call: Duration::from_millis(20), ..Limits::default() };
    let outcomes = std::thread::spawn(move || {
        let page = Page::new(&PageView {
            url: "http://127.0.0.1/p",
            status: 200,
            headers: vec![("content-type", "text/html")],
            body: "<div><a href='/x'>x</a></div>",
        });
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let (mut answered, mut failed, mut refused) = (0, 0, 0);
        for n in 0..300 {
            let source = generate(&mut rng);
            let started = Instant::now();
            match Script::load("fuzz.js", &source, limits) {
                Ok(s) => match s.extract(&page) {
                    Ok(_) => answered += 1,
                    Err(ScriptError::Load { .. }) => panic!("#{n}: a call fails as a load\n{source}"),
                    Err(_) => failed += 1,
                },
                Err(ScriptError::Load { .. }) => refused += 1,
                Err(e) => panic!("#{n}: a load fails as {e}\n{source}"),
            }
            // Load (1 s at most) and call (20 ms) are each cut at their budget.
            assert!(started.elapsed() < Duration::from_secs(3), "#{n}: {:?}\n{source}", started.elapsed());
        }
        (answered, failed, refused)
    })
    .join()
    .expect("the thread ends, its sandboxes freed");
    let (answered, failed, refused) = outcomes;
    eprintln!("answered {answered}, failed {failed}, refused at load {refused}");
    assert!(answered > 0 && failed > 0 && refused > 0, "the mix covers each outcome");
}
