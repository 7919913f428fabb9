//! The XPath side of the collector: expressions checked when their callback is registered, and
//! one page's matches with the values their [`XPathNode`] handles read.
//!
//! The expressions run through kumo-parse's extraction — a model whose root is the
//! expression, over the page's one [`Document`] — so a callback reads exactly what an `xpath`
//! field of a spider file reads: the same parse, text trimmed with whitespace collapsed,
//! attributes trimmed, HTML serialized as for CSS matches.
//!
//! What a handle asks for (its text, an attribute, a child query) is computed for every match
//! of the expression at once, on the first ask, and kept for the page: the other matches'
//! handles read it from there, so a page runs the expression once per kind of ask, not once
//! per match and ask.

use std::cell::RefCell;
use std::rc::Rc;

use kumo_core::{Response, Url};
use kumo_parse::CompiledModel;
use kumo_parse::extract::{Document, Field, Model, Problem, Selector, Take};
use serde_json::Value;

use super::xpath_node::XPathNode;

/// An XPath expression that does not parse, refused when its callback is registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad XPath expression {expression:?}: {reason}")]
pub struct XPathError {
    /// The expression as given.
    pub expression: String,
    /// Why it was refused.
    pub reason: String,
}

impl XPathError {
    fn new(expression: &str, problem: Problem) -> Self {
        let reason = match problem {
            Problem::XPath { reason, .. } => reason,
            other => other.to_string(),
        };
        XPathError { expression: expression.to_owned(), reason }
    }
}

/// An expression that parses, ready to run on pages.
pub(super) struct XPathQuery {
    expression: String,
}

impl XPathQuery {
    pub(super) fn parse(expression: &str) -> Result<Self, XPathError> {
        probe(expression, &Ask::text())
            .map(|_| XPathQuery { expression: expression.to_owned() })
            .map_err(|problem| XPathError::new(expression, problem))
    }
}

/// Whether `on_xpath` callbacks run on `resp`: HTML, or XML by its content type (`text/xml`,
/// `application/xml`, any `+xml` type such as RSS or Atom).
pub(super) fn reads(resp: &Response) -> bool {
    resp.is_html()
        || resp.content_type().is_some_and(|ct| {
            let essence = ct.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
            essence == "text/xml" || essence == "application/xml" || essence.ends_with("+xml")
        })
}

/// One kind of value a handle asks for: what `take` gives of the `child` matches inside the
/// node, the first that has a value or (`list`) all of them.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Ask {
    child: String,
    take: Take,
    list: bool,
}

impl Ask {
    /// The node's own text.
    pub(super) fn text() -> Self {
        Ask::first(".", Take::Text)
    }

    pub(super) fn first(child: &str, take: Take) -> Self {
        Ask { child: child.to_owned(), take, list: false }
    }

    pub(super) fn all(child: &str, take: Take) -> Self {
        Ask { child: child.to_owned(), take, list: true }
    }
}

/// The name of the one field of a probe model.
const VALUE: &str = "value";

/// A model with one item per element `root` selects and one field: what `ask` gives inside it.
fn probe(root: &str, ask: &Ask) -> Result<CompiledModel, Problem> {
    let mut field = Field::xpath(VALUE, ask.child.as_str()).take(ask.take.clone());
    if ask.list {
        field = field.list();
    }
    Model::new(format!("on_xpath {root:?}"), vec![field])
        .with_root(Selector::xpath(root))
        .compile()
        .map_err(|e| e.problem)
}

/// One page as the `on_xpath` callbacks see it. Not `Send` (it holds the page's parse): it
/// lives inside one analyze call.
pub(super) struct XPathPage<'d> {
    doc: Document<'d>,
    /// What was asked so far. A page asks a handful of distinct things: a list is enough.
    answers: RefCell<Vec<Answer>>,
    issues: RefCell<Vec<String>>,
}

/// What `ask` gave for each match of `root`, in document order.
struct Answer {
    root: String,
    ask: Ask,
    values: Rc<[Value]>,
}

impl<'d> XPathPage<'d> {
    pub(super) fn new(body: &'d str, url: &'d Url) -> Self {
        XPathPage {
            doc: Document::new(body, false, url),
            answers: RefCell::new(Vec::new()),
            issues: RefCell::new(Vec::new()),
        }
    }

    /// A handle on each element `query` selects, in document order.
    pub(super) fn nodes<'p>(&'p self, query: &'p XPathQuery) -> impl Iterator<Item = XPathNode<'p>> {
        // Counting the matches computes their text, which most callbacks read anyway.
        let count = self.values(&query.expression, &Ask::text()).len();
        (0..count).map(move |index| XPathNode::new(self, &query.expression, index))
    }

    /// What `ask` gives for the `index`th match of `root` (`Null` when nothing).
    pub(super) fn value(&self, root: &str, ask: &Ask, index: usize) -> Value {
        self.values(root, ask).get(index).cloned().unwrap_or(Value::Null)
    }

    fn values(&self, root: &str, ask: &Ask) -> Rc<[Value]> {
        if let Some(known) = self.answers.borrow().iter().find(|a| a.root == root && a.ask == *ask) {
            return known.values.clone();
        }
        let values: Rc<[Value]> = match probe(root, ask) {
            Ok(model) => {
                let found = model.extract_from(&self.doc);
                found.issues.into_iter().for_each(|issue| self.note(issue));
                // No field is required, so every match is a (valid) item.
                found
                    .items
                    .into_iter()
                    .map(|item| item.0.into_iter().next().map_or(Value::Null, |(_, v)| v))
                    .collect()
            }
            // Only a child expression can be bad here: the root was checked when registered.
            Err(problem) => {
                self.note(format!("on_xpath {root:?}: {problem}"));
                Rc::from([])
            }
        };
        self.answers.borrow_mut().push(Answer {
            root: root.to_owned(),
            ask: ask.clone(),
            values: values.clone(),
        });
        values
    }

    fn note(&self, issue: String) {
        let mut issues = self.issues.borrow_mut();
        if !issues.contains(&issue) {
            issues.push(issue);
        }
    }

    /// What could not run on this page, once each.
    pub(super) fn into_issues(self) -> Vec<String> {
        self.issues.into_inner()
    }
}
