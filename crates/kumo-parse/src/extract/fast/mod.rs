//! The streaming path for CSS models: one pass over the page's bytes instead of a DOM, for the
//! models and pages where that pass gives exactly what the DOM would.
//!
//! Building scraper's DOM (html5ever's tokenizer and tree builder, an arena of nodes, interned
//! names) was about 40 % of the crawler's CPU in a crawl with a product model, several times
//! the cost of everything else done to a page. Most models are a root and a few fields found by
//! class and tag, and most pages are well-formed enough that a stack of open elements is the
//! tree. So a model whose selectors are all simple CSS (see `selector`) and whose fields take
//! text or an attribute gets a [`FastModel`]; it walks the page (see `walk`), and on a page the
//! walk cannot follow, or where the result would carry an issue, it declines and the DOM path
//! runs as before. A differential test (`oracle.rs`) checks the two agree wherever the fast
//! path answers.

pub(super) mod elements;
mod selector;
mod walk;

#[cfg(test)]
mod oracle;

use std::collections::HashSet;

use serde_json::{Map, Value};
use url::Url;

use kumo_core::Item;

use super::compile::CompiledModel;
use super::document::Document;
use super::limits::{ExtractError, MAX_VALUE_BYTES};
use super::model::{Field, Model, Selector, Take};
use super::{Extraction, InvalidItem, value};
use selector::{Alternative, Complex, Compound, MAX_STATES};
use walk::{Hit, Plan, Stop, Target, Want};

/// A model's plan for the streaming path.
#[derive(Debug, Clone)]
pub(super) struct FastModel {
    plan: Plan,
    /// The root's target, if the model has a root.
    root: Option<usize>,
    /// Each top-level field's target, in field order.
    fields: Vec<usize>,
}

impl FastModel {
    /// The plan for `model`, or `None` when some part of it needs the DOM: a selector outside
    /// the subset, an HTML take, a nested model, a regex or XPath or JSON selector.
    pub(super) fn new(model: &Model) -> Option<FastModel> {
        let mut builder = Builder::default();
        let root = match &model.root {
            None => None,
            Some(Selector::Css(css)) => Some(builder.target(css, Want::Element)?),
            Some(_) => return None,
        };
        let mut fields = Vec::with_capacity(model.fields.len());
        for field in &model.fields {
            fields.push(builder.field(field)?);
        }
        let fits = builder.compounds.len() <= 64 && builder.states <= MAX_STATES;
        fits.then(|| FastModel { plan: builder.finish(), root, fields })
    }

    /// The model's extraction from `doc`, or `None` when the DOM path must decide.
    pub(super) fn extract(&self, model: &CompiledModel, doc: &Document<'_>) -> Option<Extraction> {
        if doc.is_json() {
            return None;
        }
        let walked = match walk::walk(&self.plan, doc.body(), doc.budget()) {
            Ok(walked) => walked,
            Err(Stop::NeedsDom) => return None,
            Err(Stop::Failed(e)) => {
                if matches!(e, ExtractError::TooDeep { .. }) {
                    doc.set_too_deep();
                }
                return Some(Extraction::failed(e));
            }
        };
        // As `Document::base`: the first `<base href>`, resolved against the page.
        let base = walked
            .base
            .as_deref()
            .and_then(|href| doc.url().join(href.trim()).ok())
            .unwrap_or_else(|| doc.url().clone());
        let scopes: Vec<Option<(u32, u32)>> = match self.root {
            None => vec![None],
            Some(root) => walked.hits[root].iter().map(|hit| Some((hit.element, hit.end))).collect(),
        };
        let mut out = Extraction::default();
        let mut dug = HashSet::new();
        let mut taken = 0usize;
        for scope in scopes {
            if let Err(e) = doc.budget().check() {
                return Some(Extraction::failed(e));
            }
            let mut object = Map::with_capacity(self.fields.len());
            let mut missing = Vec::new();
            for (field, &target) in model.fields.iter().zip(&self.fields) {
                let mut values = Vec::new();
                for hit in inside(&walked.hits[target], scope) {
                    let Some(raw) = &hit.value else { continue };
                    taken += raw.len();
                    if taken > MAX_VALUE_BYTES {
                        return Some(Extraction::failed(ExtractError::TooLarge { limit: MAX_VALUE_BYTES }));
                    }
                    let taken = match field.take {
                        Take::Text => value::collapse(raw),
                        _ => raw.clone(),
                    };
                    let Some(produced) = value::string(taken, field.filter.as_ref()) else { continue };
                    let produced =
                        if field.dig { dig(produced, &base, &mut dug, &mut out.dig)? } else { produced };
                    values.push(produced);
                    if !field.list {
                        break;
                    }
                }
                let value = if field.list {
                    Value::Array(values)
                } else {
                    values.into_iter().next().unwrap_or(Value::Null)
                };
                if field.required && !value::present(&value) {
                    missing.push(field.name.clone());
                }
                object.insert(field.name.clone(), value);
            }
            let item = Item(object);
            if missing.is_empty() {
                out.items.push(item);
            } else {
                out.invalid.push(InvalidItem { item, missing });
            }
        }
        Some(out)
    }
}

/// The hits inside `scope` (a root's element number and the end of its extent), all of them
/// without one. Hits are in document order, so the scope's are one run, found by binary search
/// (a filter over all hits per root was quadratic on a page of many roots).
fn inside(hits: &[Hit], scope: Option<(u32, u32)>) -> &[Hit] {
    let Some((root, end)) = scope else { return hits };
    let from = hits.partition_point(|hit| hit.element <= root);
    let to = hits.partition_point(|hit| hit.element < end);
    hits.get(from..to.max(from)).unwrap_or_default()
}

/// A `dig` value made absolute and recorded, as the DOM path does; `None` (let the DOM path
/// run and report it) when it is no URL.
fn dig(produced: Value, base: &Url, dug: &mut HashSet<Url>, dig: &mut Vec<Url>) -> Option<Value> {
    let Value::String(raw) = &produced else { return None };
    let mut url = base.join(raw).ok()?;
    url.set_fragment(None);
    let absolute = Value::String(url.to_string());
    if matches!(url.scheme(), "http" | "https") && dug.insert(url.clone()) {
        dig.push(url);
    }
    Some(absolute)
}

/// Collects the compounds, targets and attribute names of a plan, sharing equal compounds.
#[derive(Default)]
struct Builder {
    compounds: Vec<Compound>,
    targets: Vec<Target>,
    attributes: Vec<Box<[u8]>>,
    /// States given out to alternatives so far.
    states: usize,
}

impl Builder {
    fn field(&mut self, field: &Field) -> Option<usize> {
        let Selector::Css(css) = &field.selector else { return None };
        if field.nested.is_some() {
            return None;
        }
        let want = match &field.take {
            Take::Text => Want::Text,
            // scraper looks attributes up by their exact (lower-case) name.
            Take::Attr(name) if name.bytes().any(|c| c.is_ascii_uppercase()) => return None,
            Take::Attr(name) => Want::Attr(name.as_bytes().into()),
            Take::InnerHtml | Take::OuterHtml => return None,
        };
        self.target(css, want)
    }

    fn target(&mut self, css: &str, want: Want) -> Option<usize> {
        let list = selector::parse(css)?;
        let alternatives = list.into_iter().map(|complex| self.alternative(complex)).collect();
        if let Want::Attr(name) = &want {
            self.attribute(name);
        }
        self.targets.push(Target { alternatives, want });
        Some(self.targets.len() - 1)
    }

    fn alternative(&mut self, complex: Complex) -> Alternative {
        let mut parts = Vec::with_capacity(complex.parts.len());
        for (compound, combinator) in complex.parts {
            if compound.id.is_some() {
                self.attribute(b"id");
            }
            if !compound.classes.is_empty() {
                self.attribute(b"class");
            }
            for test in &compound.attrs {
                self.attribute(&test.name);
            }
            let index = match self.compounds.iter().position(|known| *known == compound) {
                Some(index) => index,
                None => {
                    self.compounds.push(compound);
                    self.compounds.len() - 1
                }
            };
            parts.push((index, combinator));
        }
        let first_state = self.states;
        self.states += parts.len().saturating_sub(1);
        Alternative { parts, first_state }
    }

    fn attribute(&mut self, name: &[u8]) {
        if !self.attributes.iter().any(|known| **known == *name) {
            self.attributes.push(name.into());
        }
    }

    fn finish(self) -> Plan {
        Plan { compounds: self.compounds, targets: self.targets, attributes: self.attributes }
    }
}
