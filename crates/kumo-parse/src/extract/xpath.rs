//! XPath 3.1 over HTML with skyscraper: compiling expressions, running them on the page's
//! XPath tree (or relative to a match), and taking text, an attribute or HTML from the result.
//! Results may be elements, text or attribute nodes, or atomic values (`count(//a)`).

use skyscraper::xpath::grammar::XpathItemTreeNode;
use skyscraper::xpath::grammar::data_model::XpathItem;
use skyscraper::xpath::{Xpath, XpathItemTree};

use super::compile::Problem;
use super::model::Take;
use super::nesting::{MAX_XPATH_CLAUSES, MAX_XPATH_NESTING, XPATH_KEYWORDS, measure};
use super::value::collapse;
use super::xpath_html;

pub(super) fn compile(expression: &str) -> Result<Xpath, Problem> {
    // skyscraper's parser recurses per level: refuse deep nesting before it can overflow.
    let nesting = measure(expression, false, &XPATH_KEYWORDS);
    let refuse = |reason: String| Err(Problem::XPath { expression: expression.to_owned(), reason });
    if nesting.brackets > MAX_XPATH_NESTING {
        return refuse(format!("XPath nested deeper than {MAX_XPATH_NESTING} brackets or calls"));
    }
    if nesting.keywords > MAX_XPATH_CLAUSES {
        return refuse(format!("XPath with more than {MAX_XPATH_CLAUSES} nested then/else/return clauses"));
    }
    skyscraper::xpath::parse(expression).map_err(|e| {
        let message = e.to_string();
        let reason = message.strip_prefix("Error parsing expression: ").unwrap_or(&message);
        Problem::XPath { expression: expression.to_owned(), reason: reason.to_owned() }
    })
}

/// Results of `xpath` over the whole page, or relative to `scope`. Inside a match skyscraper
/// reads a leading `//` as "below the match" too; `.//x` says so in any XPath engine.
pub(super) fn select<'t>(
    xpath: &Xpath,
    tree: &'t XpathItemTree,
    scope: Option<&'t XpathItemTreeNode>,
) -> Result<Vec<XpathItem<'t>>, String> {
    let found = match scope {
        None => xpath.apply(tree),
        Some(node) => xpath.apply_to_item(tree, XpathItem::Node(node)),
    };
    found.map(|set| set.into_iter().collect()).map_err(|e| e.to_string())
}

/// The node a nested model can look inside: an element or the document.
pub(super) fn scope_of<'t>(item: &XpathItem<'t>) -> Option<&'t XpathItemTreeNode> {
    match item {
        XpathItem::Node(node @ (XpathItemTreeNode::ElementNode(_) | XpathItemTreeNode::DocumentNode(_))) => {
            Some(node)
        }
        _ => None,
    }
}

/// What `take` asks of one result; `None` when it has nothing of that kind.
pub(super) fn take(item: &XpathItem<'_>, tree: &XpathItemTree, take: &Take) -> Option<String> {
    let node = match item {
        XpathItem::Node(node) => *node,
        XpathItem::AnyAtomicType(atomic) => {
            return (*take == Take::Text).then(|| collapse(&atomic.to_string()));
        }
        XpathItem::Function(_) => return None,
    };
    match (node, take) {
        (XpathItemTreeNode::ElementNode(element), Take::Attr(name)) => {
            element.get_attribute(tree, name).map(|v| v.trim().to_owned())
        }
        (_, Take::Attr(_)) => None,
        // `@href` selects the attribute itself: its value is its text.
        (XpathItemTreeNode::AttributeNode(attribute), _) => Some(attribute.value.trim().to_owned()),
        (node, Take::Text) => Some(collapse(&text(node, tree))),
        (node, Take::InnerHtml) => Some(xpath_html::inner(node, tree)),
        (node, Take::OuterHtml) => Some(xpath_html::outer(node, tree)),
    }
}

/// The node's HTML source, as the regex selector reads a match.
pub(super) fn source(node: &XpathItemTreeNode, tree: &XpathItemTree) -> String {
    xpath_html::outer(node, tree)
}

/// All text below `node`, in document order. Walks the arena iteratively (skyscraper's own
/// `text_content` recurses, which a deeply nested page could turn into a stack overflow).
fn text(node: &XpathItemTreeNode, tree: &XpathItemTree) -> String {
    if let XpathItemTreeNode::TextNode(text) = node {
        return text.content.clone();
    }
    let mut out = String::new();
    for descendant in node.descendants(tree) {
        if let XpathItemTreeNode::TextNode(text) = descendant {
            out.push_str(&text.content);
        }
    }
    out
}
