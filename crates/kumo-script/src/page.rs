//! A page as the hooks that read it see it (`item`, `extract`): copied once for all the calls
//! made on it, its body parsed only if a script queries it. In a call, `page` is an object
//! whose own fields are `url` and `status`; `body`, `headers` and the query methods (`css`,
//! `xpath`, `regex`, `json`) come from a prototype every page shares, and reach the page's
//! data only during the call that was handed that page.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use kumo_parse::extract::{Document, Field, Query};
use rquickjs::function::{Opt, This};
use rquickjs::{Array, Ctx, Exception, Function, Object};

use crate::MAX_BODY;

/// A page as a hook's caller describes it: plain data, borrowed.
#[derive(Debug, Clone, Default)]
pub struct PageView<'a> {
    /// The page's URL (`page.url`); one that does not parse becomes `about:blank`.
    pub url: &'a str,
    /// The HTTP status code (`page.status`).
    pub status: u16,
    /// Response headers as name and value; names in any case.
    pub headers: Vec<(&'a str, &'a str)>,
    /// The body as text; a script sees at most [`MAX_BODY`] bytes of it.
    pub body: &'a str,
}

/// A page ready for the hooks: its body (cut at [`MAX_BODY`]) and headers copied once.
#[derive(Debug, Clone)]
pub struct Page(pub(crate) Rc<PageData>);

#[derive(Debug)]
pub(crate) struct PageData {
    pub doc: Document<'static>,
    pub status: u16,
    /// Names in lower case.
    pub headers: Vec<(String, String)>,
}

impl Page {
    /// Copies `view` for the hooks: body cut to [`MAX_BODY`] bytes at a character boundary,
    /// header names lower-cased. With a `content-type` header containing `json`, the page is
    /// a JSON response, to which `page.css` and `page.xpath` do not apply.
    pub fn new(view: &PageView<'_>) -> Page {
        let headers: Vec<(String, String)> =
            view.headers.iter().map(|(n, v)| (n.to_ascii_lowercase(), v.to_string())).collect();
        let is_json = headers.iter().any(|(n, v)| n == "content-type" && v.contains("json"));
        let url = url::Url::parse(view.url)
            .unwrap_or_else(|_| url::Url::parse("about:blank").expect("a valid URL"));
        let doc =
            Document::owned(view.body[..view.body.floor_char_boundary(MAX_BODY)].to_string(), is_json, url);
        Page(Rc::new(PageData { doc, status: view.status, headers }))
    }
}

/// The page handed to the running call, with the number its JS object carries: the methods
/// of a page object kept past its call find another number and refuse.
pub(crate) type Current = Rc<RefCell<Option<(f64, Rc<PageData>)>>>;

/// The property that ties a page object to its call (not enumerable, not writable).
const TAG: &str = "__kumo_page";

/// Selectors a thread keeps compiled, by kind, selector and attribute; past this many the
/// cache starts over.
const CACHED_QUERIES: usize = 256;

type QueryKey = (String, String, Option<String>);

/// The prototype of every page object, built once per sandbox: its methods and getters call
/// one native function that reads `current`.
pub(crate) fn prototype<'js>(ctx: &Ctx<'js>, current: Current) -> rquickjs::Result<Object<'js>> {
    let queries: Rc<RefCell<HashMap<QueryKey, Rc<Query>>>> = Rc::default();
    let native = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>,
              this: This<Object<'js>>,
              what: String,
              a: Opt<Option<String>>,
              b: Opt<Option<String>>| {
            let tag: f64 = this.0.get(TAG).unwrap_or(f64::NAN);
            let page = match &*current.borrow() {
                Some((n, page)) if *n == tag => page.clone(),
                _ => {
                    return Err(Exception::throw_message(
                        &ctx,
                        "page: this page belongs to a call that has ended",
                    ));
                }
            };
            match what.as_str() {
                "body" => rquickjs::String::from_str(ctx.clone(), page.doc.body()).map(|s| s.into_value()),
                "headers" => {
                    let o = Object::new(ctx.clone())?;
                    for (name, value) in &page.headers {
                        o.set(name.as_str(), value.as_str())?;
                    }
                    Ok(o.into_value())
                }
                kind => {
                    let Some(selector) = a.0.flatten() else {
                        return Err(Exception::throw_type(
                            &ctx,
                            &format!("page.{kind}: a selector is needed"),
                        ));
                    };
                    let key = (kind.to_string(), selector, b.0.flatten());
                    let query = cached(&queries, key, &ctx)?;
                    let found = query.run(&page.doc);
                    if let Some(issue) = found.issues.first() {
                        return Err(Exception::throw_message(&ctx, &format!("page.{kind}: {issue}")));
                    }
                    let list = Array::new(ctx.clone())?;
                    for (i, v) in found.values.iter().enumerate() {
                        match v {
                            serde_json::Value::String(s) => list.set(i, s.as_str())?,
                            other => list.set(i, ctx.json_parse(other.to_string())?)?,
                        }
                    }
                    Ok(list.into_value())
                }
            }
        },
    )?;
    let make: Function = ctx.eval(
        r#"(function (q) {
            'use strict';
            return Object.freeze({
                css(selector, attr) { return q.call(this, 'css', selector, attr); },
                xpath(expression) { return q.call(this, 'xpath', expression); },
                regex(pattern) { return q.call(this, 'regex', pattern); },
                json(path) { return q.call(this, 'json', path); },
                get body() { return q.call(this, 'body'); },
                get headers() { return q.call(this, 'headers'); },
            });
        })"#,
    )?;
    make.call((native,))
}

/// The compiled query for `key`, compiled now if this thread has not yet.
fn cached<'js>(
    queries: &RefCell<HashMap<QueryKey, Rc<Query>>>,
    key: QueryKey,
    ctx: &Ctx<'js>,
) -> rquickjs::Result<Rc<Query>> {
    if let Some(q) = queries.borrow().get(&key) {
        return Ok(q.clone());
    }
    let (kind, selector, attr) = &key;
    let field = match kind.as_str() {
        "css" => Field::css("v", selector.as_str()),
        "xpath" => Field::xpath("v", selector.as_str()),
        "regex" => Field::regex("v", selector.as_str()),
        _ => Field::json("v", selector.as_str()),
    };
    let field = match attr {
        Some(a) => field.attr(a.as_str()),
        None => field,
    };
    let query = Query::new(field)
        .map_err(|e| Exception::throw_type(ctx, &format!("page.{kind}({selector:?}): {}", e.problem)))?;
    let query = Rc::new(query);
    let mut queries = queries.borrow_mut();
    if queries.len() >= CACHED_QUERIES {
        queries.clear();
    }
    queries.insert(key, query.clone());
    Ok(query)
}

/// A page object for one call: `url`, `status` and the tag `n` as own fields.
pub(crate) fn object<'js>(
    ctx: &Ctx<'js>,
    proto: &Object<'js>,
    page: &PageData,
    n: f64,
) -> rquickjs::Result<Object<'js>> {
    let o = Object::new(ctx.clone())?;
    o.set_prototype(Some(proto))?;
    o.set("url", page.doc.url().as_str())?;
    o.set("status", page.status)?;
    o.prop(TAG, rquickjs::object::Property::from(n))?;
    Ok(o)
}
