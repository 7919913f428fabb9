//! Running a compiled model on a [`Document`]: roots become items, fields become values, nested
//! models become objects, `required` decides valid or invalid, `dig` values become URLs.
//! Nothing here fails: a selector that cannot run on this page is an issue and finds nothing.

use std::collections::HashSet;

use kumo_core::Item;
use scraper::ElementRef;
use serde_json::{Map, Value};
use skyscraper::xpath::grammar::XpathItemTreeNode;
use skyscraper::xpath::grammar::data_model::XpathItem;
use url::Url;

use super::compile::{Compiled, CompiledField, CompiledModel};
use super::document::{Document, Unusable};
use super::limits::{ExtractError, MAX_VALUE_BYTES};
use super::{Extraction, InvalidItem, css, json, value, xpath};

/// Where selectors look: the whole page or inside one match.
#[derive(Clone, Copy)]
enum Scope<'d> {
    Page,
    Css(ElementRef<'d>),
    XPath(&'d XpathItemTreeNode),
    Json(&'d Value),
}

/// One thing a selector found.
enum Match<'d> {
    Css(ElementRef<'d>),
    XPath(XpathItem<'d>),
    Json(&'d Value),
    /// A regex selector's kept text.
    Text(String),
}

/// Most issues kept per extraction; a broken selector on a long list page would otherwise
/// report once per item.
const MAX_ISSUES: usize = 32;

struct Run<'d, 'a> {
    doc: &'d Document<'a>,
    model: &'d str,
    issues: Vec<String>,
    suppressed: usize,
    dig: Vec<Url>,
    dug: HashSet<Url>,
    /// Why the run stopped, once the page is past a limit.
    stop: Option<ExtractError>,
    /// Bytes of text values taken so far.
    taken: usize,
}

impl CompiledModel {
    /// Extracts this model's items from one page. For several models on the same page, build
    /// one [`Document`] and call [`extract_from`](Self::extract_from) for each (or use
    /// [`extract_all`](super::extract_all)), so the page is parsed once.
    pub fn extract(&self, body: &str, content_type_is_json: bool, page_url: &Url) -> Extraction {
        self.extract_from(&Document::new(body, content_type_is_json, page_url))
    }

    /// Extracts this model's items from a page other models may already have parsed.
    pub fn extract_from(&self, doc: &Document<'_>) -> Extraction {
        doc.budget().start();
        if let Err(e) = doc.budget().check() {
            return Extraction::failed(e);
        }
        if let Some(found) = self.fast.as_ref().and_then(|fast| fast.extract(self, doc)) {
            return found;
        }
        self.extract_with_dom(doc)
    }

    /// [`extract_from`](Self::extract_from) without the streaming path: always the DOM.
    pub(super) fn extract_with_dom(&self, doc: &Document<'_>) -> Extraction {
        let mut run = Run {
            doc,
            model: &self.name,
            issues: Vec::new(),
            suppressed: 0,
            dig: Vec::new(),
            dug: HashSet::new(),
            stop: None,
            taken: 0,
        };
        let scopes = match &self.root {
            None => vec![Scope::Page],
            Some(root) => {
                let matches = run.select(root, Scope::Page, true, "root");
                let mut scopes = Vec::with_capacity(matches.len());
                for found in &matches {
                    match scope_of(found) {
                        Some(scope) => scopes.push(scope),
                        None => run.issue("root", "a match that is not an element yields no item"),
                    }
                }
                scopes
            }
        };
        let mut extraction = Extraction::default();
        for scope in scopes {
            if run.halted() {
                break;
            }
            let mut missing = Vec::new();
            let item = Item(run.fields(&self.fields, scope, "", &mut missing));
            if missing.is_empty() {
                extraction.items.push(item);
            } else {
                extraction.invalid.push(InvalidItem { item, missing });
            }
        }
        if let Some(e) = run.stop {
            return Extraction::failed(e);
        }
        if run.suppressed > 0 {
            run.issues.push(format!("{} more issues not listed", run.suppressed));
        }
        extraction.dig = run.dig;
        extraction.issues = run.issues;
        extraction
    }
}

impl<'d> Run<'d, '_> {
    /// Whether the run must stop: the page is past a limit (checked now for the time budget).
    fn halted(&mut self) -> bool {
        if self.stop.is_none()
            && let Err(e) = self.doc.budget().check()
        {
            self.stop = Some(e);
        }
        self.stop.is_some()
    }

    /// Counts a value's text against [`MAX_VALUE_BYTES`].
    fn account(&mut self, value: &Value) {
        if let Value::String(text) = value {
            self.taken += text.len();
            if self.taken > MAX_VALUE_BYTES {
                self.stop.get_or_insert(ExtractError::TooLarge { limit: MAX_VALUE_BYTES });
            }
        }
    }

    fn issue(&mut self, at: &str, problem: &str) {
        let text = format!("model `{}`, {at}: {problem}", self.model);
        if self.issues.contains(&text) {
            return;
        }
        if self.issues.len() < MAX_ISSUES {
            self.issues.push(text);
        } else {
            self.suppressed += 1;
        }
    }

    /// The values of `fields` inside `scope`, in field order; required fields without a value
    /// are added to `missing` as dotted paths (`author.name`, `quotes[2].text`).
    fn fields(
        &mut self,
        fields: &[CompiledField],
        scope: Scope<'d>,
        prefix: &str,
        missing: &mut Vec<String>,
    ) -> Map<String, Value> {
        let mut object = Map::with_capacity(fields.len());
        for field in fields {
            if self.halted() {
                break;
            }
            let path = format!("{prefix}{}", field.name);
            let value = self.field(field, scope, &path, missing);
            if field.required && !value::present(&value) {
                missing.push(path);
            }
            object.insert(field.name.clone(), value);
        }
        object
    }

    fn field(
        &mut self,
        field: &CompiledField,
        scope: Scope<'d>,
        path: &str,
        missing: &mut Vec<String>,
    ) -> Value {
        let matches = self.select(&field.selector, scope, field.list, &format!("field `{path}`"));
        let mut values = Vec::new();
        for found in &matches {
            if self.halted() {
                break;
            }
            let produced = match &field.nested {
                Some(sub) => {
                    let Some(inner) = scope_of(found) else {
                        self.issue(
                            &format!("field `{path}`"),
                            "a match is not an element, so nested fields cannot look inside it",
                        );
                        continue;
                    };
                    let sub_path =
                        if field.list { format!("{path}[{}].", values.len()) } else { format!("{path}.") };
                    Some(Value::Object(self.fields(&sub.fields, inner, &sub_path, missing)))
                }
                None => self.value(field, found),
            };
            let Some(produced) = produced else { continue };
            self.account(&produced);
            let produced = if field.dig { self.dig(produced, path) } else { produced };
            values.push(produced);
            if !field.list {
                break;
            }
        }
        if field.list { Value::Array(values) } else { values.into_iter().next().unwrap_or(Value::Null) }
    }

    /// Everything `selector` finds in `scope`; with `all` false, a regex stops at its first
    /// non-empty match (the other kinds return every match: the first one with a value wins).
    fn select(&mut self, selector: &Compiled, scope: Scope<'d>, all: bool, at: &str) -> Vec<Match<'d>> {
        let doc = self.doc;
        let found: Result<Vec<Match<'d>>, Unusable> = match (selector, scope) {
            (Compiled::Css(css), Scope::Page) => doc.html().and_then(|html| {
                let found = css::select_page(html, css, doc.budget())?;
                Ok(found.into_iter().map(Match::Css).collect())
            }),
            (Compiled::Css(css), Scope::Css(element)) => css::select_in(element, css, doc.budget())
                .map(|found| found.into_iter().map(Match::Css).collect())
                .map_err(Unusable::Stop),
            (Compiled::XPath(expression), Scope::Page | Scope::XPath(_)) => {
                doc.xpath_tree().and_then(|tree| {
                    let node = if let Scope::XPath(node) = scope { Some(node) } else { None };
                    xpath::select(expression, tree, node)
                        .map(|items| items.into_iter().map(Match::XPath).collect())
                        .map_err(Unusable::Issue)
                })
            }
            (Compiled::Json(path), Scope::Page) => doc
                .json()
                .map(|root| json::select(root, path).into_iter().map(Match::Json).collect())
                .map_err(Unusable::Issue),
            (Compiled::Json(path), Scope::Json(value)) => {
                Ok(json::select(value, path).into_iter().map(Match::Json).collect())
            }
            (Compiled::Regex(regex), _) => {
                let owned;
                let haystack: &str = match scope {
                    Scope::Page => doc.body(),
                    Scope::Css(element) => {
                        owned = element.html();
                        &owned
                    }
                    Scope::XPath(node) => {
                        owned = doc.xpath_tree().map(|tree| xpath::source(node, tree)).unwrap_or_default();
                        &owned
                    }
                    Scope::Json(value) => {
                        owned = json::source(value);
                        &owned
                    }
                };
                let kept = regex
                    .captures_iter(haystack)
                    .filter_map(|c| super::regex::kept(regex, &c))
                    .filter(|s| !s.trim().is_empty());
                let texts: Vec<Match<'d>> = if all {
                    kept.map(|s| Match::Text(s.to_owned())).collect()
                } else {
                    kept.take(1).map(|s| Match::Text(s.to_owned())).collect()
                };
                Ok(texts)
            }
            // Compilation only lets a selector run inside a match of its own kind.
            _ => Err(Unusable::Issue("this selector cannot look inside this kind of match".to_owned())),
        };
        match found {
            Ok(found) => found,
            Err(Unusable::Issue(problem)) => {
                self.issue(at, &problem);
                Vec::new()
            }
            Err(Unusable::Stop(e)) => {
                self.stop.get_or_insert(e);
                Vec::new()
            }
        }
    }

    /// The value one match gives the field, or `None` when it gives nothing.
    fn value(&mut self, field: &CompiledField, found: &Match<'d>) -> Option<Value> {
        let filter = field.filter.as_ref();
        match found {
            Match::Css(element) => value::string(css::take(*element, &field.take)?, filter),
            Match::XPath(item) => {
                let tree = self.doc.xpath_tree().ok()?;
                value::string(xpath::take(item, tree, &field.take)?, filter)
            }
            Match::Json(json) => value::json(json, filter),
            Match::Text(text) => value::string(value::collapse(text), filter),
        }
    }

    /// Resolves a `dig` value against the page's base URL, records it for following, and
    /// returns it absolute. Only http(s) URLs are followed; a value that is no URL stays as it
    /// was and becomes an issue.
    fn dig(&mut self, produced: Value, path: &str) -> Value {
        let Value::String(raw) = &produced else {
            self.issue(&format!("field `{path}`"), "a `dig` value is not a string");
            return produced;
        };
        match self.doc.base().join(raw) {
            Ok(mut url) => {
                url.set_fragment(None);
                let absolute = Value::String(url.to_string());
                if matches!(url.scheme(), "http" | "https") && self.dug.insert(url.clone()) {
                    self.dig.push(url);
                }
                absolute
            }
            Err(e) => {
                self.issue(&format!("field `{path}`"), &format!("cannot follow {raw:?}: {e}"));
                produced
            }
        }
    }
}

/// The scope a match opens for the fields looked up inside it.
fn scope_of<'d>(found: &Match<'d>) -> Option<Scope<'d>> {
    match found {
        Match::Css(element) => Some(Scope::Css(*element)),
        Match::XPath(item) => xpath::scope_of(item).map(Scope::XPath),
        Match::Json(value) => Some(Scope::Json(value)),
        Match::Text(_) => None,
    }
}
