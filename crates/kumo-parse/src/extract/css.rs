//! CSS selectors over scraper's DOM: finding matches in the page or inside a match, and taking
//! text, an attribute or HTML from them.

use scraper::error::SelectorErrorKind;
use scraper::{ElementRef, Html, Selector};

use super::compile::Problem;
use super::limits::{Budget, ExtractError};
use super::model::Take;
use super::value::collapse;

/// Matches of `selector` in the whole page, in document order.
pub(super) fn select_page<'d>(
    html: &'d Html,
    selector: &Selector,
    budget: &Budget,
) -> Result<Vec<ElementRef<'d>>, ExtractError> {
    collect(html.select(selector), budget)
}

/// Matches of `selector` among the descendants of `scope` (`:scope` names `scope` itself).
pub(super) fn select_in<'d>(
    scope: ElementRef<'d>,
    selector: &Selector,
    budget: &Budget,
) -> Result<Vec<ElementRef<'d>>, ExtractError> {
    collect(scope.select(selector), budget)
}

/// The matches, checking the page's time budget now and then (a long page has many).
fn collect<'d>(
    found: impl Iterator<Item = ElementRef<'d>>,
    budget: &Budget,
) -> Result<Vec<ElementRef<'d>>, ExtractError> {
    let mut out = Vec::new();
    for element in found {
        if out.len() % 256 == 255 {
            budget.check()?;
        }
        out.push(element);
    }
    Ok(out)
}

/// What `take` asks of one element; `None` when the attribute is absent.
pub(super) fn take(element: ElementRef<'_>, take: &Take) -> Option<String> {
    match take {
        Take::Text => {
            let text: String = element.text().collect();
            Some(collapse(&text))
        }
        Take::Attr(name) => element.value().attr(name).map(|v| v.trim().to_owned()),
        Take::InnerHtml => Some(element.inner_html()),
        Take::OuterHtml => Some(element.html()),
    }
}

/// Parses a CSS selector list, with a one-line reason when it is not valid.
pub(super) fn compile(selector: &str) -> Result<Selector, Problem> {
    Selector::parse(selector).map_err(|e| Problem::Css { selector: selector.to_owned(), reason: reason(&e) })
}

/// scraper words most errors well but prints the rest as a multi-line "report this" debug
/// dump of a selectors-crate kind; those read better as the kind's name in words
/// (`DanglingCombinator` → "dangling combinator").
fn reason(error: &SelectorErrorKind) -> String {
    match error {
        SelectorErrorKind::EndOfLine => "unexpected end of the selector".to_owned(),
        SelectorErrorKind::UnexpectedSelectorParseError(kind) => {
            let name = format!("{kind:?}");
            let name = name.split('(').next().unwrap_or(&name);
            let mut words = String::with_capacity(name.len() + 8);
            for (i, c) in name.chars().enumerate() {
                if c.is_uppercase() && i > 0 {
                    words.push(' ');
                }
                words.extend(c.to_lowercase());
            }
            words
        }
        other => other.to_string().to_lowercase(),
    }
}
