//! Checking a [`Model`] once, up front, and turning its selectors into ready-to-run ones, so
//! that extraction itself never meets a bad definition: every mistake a spider file can hold is
//! a [`ModelError`] that names the model, the field and the problem.

use std::fmt;

use regex::Regex;
use thiserror::Error;

use super::model::{Field, Model, Selector, Take};
use super::nesting::MAX_JSONPATH_NESTING;

/// A checked model, ready to run on pages. Cheap to share between threads (`Send + Sync`).
#[derive(Debug, Clone)]
pub struct CompiledModel {
    pub(super) name: String,
    pub(super) root: Option<Compiled>,
    pub(super) fields: Vec<CompiledField>,
    /// The streaming path, when every selector of the model allows it.
    pub(super) fast: Option<std::sync::Arc<super::fast::FastModel>>,
}

#[derive(Debug, Clone)]
pub(super) struct CompiledField {
    pub(super) name: String,
    pub(super) selector: Compiled,
    pub(super) take: Take,
    pub(super) list: bool,
    pub(super) required: bool,
    pub(super) filter: Option<Regex>,
    pub(super) nested: Option<CompiledModel>,
    pub(super) dig: bool,
}

/// A parsed selector of any kind.
#[derive(Debug, Clone)]
pub(super) enum Compiled {
    Css(scraper::Selector),
    // Shared: skyscraper's expressions are not `Clone`.
    XPath(std::sync::Arc<skyscraper::xpath::Xpath>),
    Regex(Regex),
    Json(serde_json_path::JsonPath),
}

impl CompiledModel {
    /// The model's name, as its definition gives it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether any selector of this model (nested ones included) is XPath, so that a page
    /// parses its XPath tree only when some model needs it.
    pub fn uses_xpath(&self) -> bool {
        let is_xpath = |c: &Compiled| matches!(c, Compiled::XPath(_));
        self.root.as_ref().is_some_and(is_xpath)
            || self
                .fields
                .iter()
                .any(|f| is_xpath(&f.selector) || f.nested.as_ref().is_some_and(CompiledModel::uses_xpath))
    }
}

/// A model definition that cannot run.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("model `{model}`{place}: {problem}")]
pub struct ModelError {
    /// The top-level model's name.
    pub model: String,
    /// Where in the model the problem is.
    pub place: Place,
    /// What is wrong there.
    pub problem: Problem,
}

/// Where in a model the problem is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// The model as a whole (its name, its field list).
    Model,
    /// The root selector of the model, or of the nested model at this field path.
    Root,
    /// A field, by its dotted path from the top model (`author.name`).
    Field(String),
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Model => Ok(()),
            Place::Root => f.write_str(", root"),
            Place::Field(path) => write!(f, ", field `{path}`"),
        }
    }
}

/// What is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Problem {
    /// A CSS selector that does not parse.
    #[error("invalid CSS selector {selector:?}: {reason}")]
    Css {
        /// The selector as written.
        selector: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An XPath expression that does not parse, or nests past
    /// [`MAX_XPATH_NESTING`](crate::extract::MAX_XPATH_NESTING) or
    /// [`MAX_XPATH_CLAUSES`](crate::extract::MAX_XPATH_CLAUSES).
    #[error("invalid XPath {expression:?}: {reason}")]
    XPath {
        /// The expression as written.
        expression: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A regex that does not build: bad syntax, or past
    /// [`REGEX_SIZE_LIMIT`](crate::extract::REGEX_SIZE_LIMIT) or
    /// [`REGEX_NEST_LIMIT`](crate::extract::REGEX_NEST_LIMIT).
    #[error("invalid regex {pattern:?}: {reason}")]
    Regex {
        /// The pattern as written.
        pattern: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A JSONPath that does not parse, or nests past [`MAX_JSONPATH_NESTING`].
    #[error("invalid JSONPath {path:?}: {reason}")]
    JsonPath {
        /// The path as written.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A combination of settings that cannot work (stated in the message).
    #[error("{0}")]
    Invalid(String),
}

/// What the selectors of a model run inside: the whole page, or one match of an enclosing
/// selector. A match belongs to one parse tree, so only selectors over that tree (and regex,
/// which reads the match's source) can look inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    Page,
    Css,
    XPath,
    Json,
}

impl Context {
    fn of(selector: &Selector) -> Option<Context> {
        match selector {
            Selector::Css(_) => Some(Context::Css),
            Selector::XPath(_) => Some(Context::XPath),
            Selector::Json(_) => Some(Context::Json),
            Selector::Regex(_) => None,
        }
    }

    fn allows(self, selector: &Selector) -> bool {
        self == Context::Page || matches!(selector, Selector::Regex(_)) || Context::of(selector) == Some(self)
    }
}

impl Model {
    /// Checks every part of the model and parses its selectors and patterns.
    pub fn compile(&self) -> Result<CompiledModel, ModelError> {
        let err = |place: Place, problem: String| ModelError {
            model: self.name.clone(),
            place,
            problem: Problem::Invalid(problem),
        };
        if self.name.trim().is_empty() {
            return Err(err(Place::Model, "the model has no name".to_owned()));
        }
        let root = match &self.root {
            None => None,
            Some(Selector::Regex(_)) => {
                return Err(err(Place::Root, "a root must be a css, xpath or json selector".to_owned()));
            }
            Some(root) => Some(compile_selector(root).map_err(|problem| ModelError {
                model: self.name.clone(),
                place: Place::Root,
                problem,
            })?),
        };
        let context = self.root.as_ref().and_then(Context::of).unwrap_or(Context::Page);
        let fields = compile_fields(&self.name, "", &self.fields, context)?;
        let fast = super::fast::FastModel::new(self).map(std::sync::Arc::new);
        Ok(CompiledModel { name: self.name.clone(), root, fields, fast })
    }
}

fn compile_fields(
    model: &str,
    prefix: &str,
    fields: &[Field],
    context: Context,
) -> Result<Vec<CompiledField>, ModelError> {
    let at = |place: Place, problem: Problem| ModelError { model: model.to_owned(), place, problem };
    if fields.is_empty() {
        let place = if prefix.is_empty() {
            Place::Model
        } else {
            Place::Field(prefix.trim_end_matches('.').to_owned())
        };
        return Err(at(place, Problem::Invalid("no fields".to_owned())));
    }
    let mut compiled = Vec::with_capacity(fields.len());
    for (i, field) in fields.iter().enumerate() {
        let path = format!("{prefix}{}", field.name);
        let place = || Place::Field(path.clone());
        let invalid = |text: &str| at(place(), Problem::Invalid(text.to_owned()));
        if field.name.trim().is_empty() {
            return Err(at(
                Place::Field(format!("{prefix}#{}", i + 1)),
                Problem::Invalid("the field has no name".to_owned()),
            ));
        }
        if fields[..i].iter().any(|f| f.name == field.name) {
            return Err(invalid("the name is used by an earlier field of the same model"));
        }
        check_combination(field, context).map_err(invalid)?;
        let selector = compile_selector(&field.selector).map_err(|p| at(place(), p))?;
        let filter = match &field.regex {
            Some(pattern) => Some(super::regex::build(pattern).map_err(|p| at(place(), p))?),
            None => None,
        };
        let nested = match &field.nested {
            Some(sub) => {
                let sub_context = Context::of(&field.selector).unwrap_or(context);
                let sub_fields = compile_fields(model, &format!("{path}."), &sub.fields, sub_context)?;
                Some(CompiledModel { name: sub.name.clone(), root: None, fields: sub_fields, fast: None })
            }
            None => None,
        };
        compiled.push(CompiledField {
            name: field.name.clone(),
            selector,
            take: field.take.clone(),
            list: field.list,
            required: field.required,
            filter,
            nested,
            dig: field.dig,
        });
    }
    Ok(compiled)
}

/// Settings that parse on their own but cannot work together.
fn check_combination(field: &Field, context: Context) -> Result<(), &'static str> {
    let markup = matches!(field.selector, Selector::Css(_) | Selector::XPath(_));
    if !context.allows(&field.selector) {
        return Err(match context {
            Context::Css => "inside a css match, fields must use css or regex selectors",
            Context::XPath => "inside an xpath match, fields must use xpath or regex selectors",
            Context::Json => "inside a json match, fields must use json or regex selectors",
            Context::Page => unreachable!("the page allows every selector"),
        });
    }
    if field.take != Take::Text && !markup {
        return Err("`attr` and `take` apply to css and xpath matches only");
    }
    if let Some(sub) = &field.nested {
        if matches!(field.selector, Selector::Regex(_)) {
            return Err("nested `fields` need a css, xpath or json selector to look inside");
        }
        if field.take != Take::Text || field.regex.is_some() || field.dig {
            return Err("nested `fields` do not combine with `attr`, `take`, a `regex` filter or `dig`");
        }
        if sub.root.is_some() {
            return Err("a nested model has no root: its items are the field's matches");
        }
    }
    if field.dig && matches!(field.take, Take::InnerHtml | Take::OuterHtml) {
        return Err("`dig` needs URLs: take the text or an attribute, not HTML");
    }
    Ok(())
}

fn compile_selector(selector: &Selector) -> Result<Compiled, Problem> {
    match selector {
        Selector::Css(css) => super::css::compile(css).map(Compiled::Css),
        Selector::XPath(expression) => {
            super::xpath::compile(expression).map(|x| Compiled::XPath(std::sync::Arc::new(x)))
        }
        Selector::Regex(pattern) => super::regex::build(pattern).map(Compiled::Regex),
        Selector::Json(path) if super::nesting::measure(path, true, &[]).brackets > MAX_JSONPATH_NESTING => {
            Err(Problem::JsonPath {
                path: path.clone(),
                reason: format!("JSONPath nested deeper than {MAX_JSONPATH_NESTING} brackets or calls"),
            })
        }
        Selector::Json(path) => serde_json_path::JsonPath::parse(path)
            .map(Compiled::Json)
            .map_err(|e| Problem::JsonPath { path: path.clone(), reason: e.to_string() }),
    }
}
